"""
DynaIP: part-based motion dynamics learning for sparse inertial pose estimation.

The network has three stages:
  1. a shared IMU encoder with a pseudo-velocity regression head for the leaf joints
     (velocities are supervised with the Xsens ground truth, which is why real Xsens data helps),
  2. one recurrent branch per body part (upper body, lower body, root) that consumes the encoder
     features, the velocities and the IMUs that belong to the part,
  3. a fusion step that assembles the 24 SMPL joints (6D) from the part outputs.

All tensors are created on the device of the input, so the module works unchanged on CPU and GPU.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N_JOINTS = 24
PART_IMUS = {                       # IMU indices (left forearm, right forearm, left leg, right leg, head, pelvis)
    'upper': [0, 1, 4, 5],
    'lower': [2, 3, 5],
    'root': [5],
}
PART_JOINTS = {
    'upper': [3, 6, 9, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21],
    'lower': [1, 2, 4, 5, 7, 8, 10, 11],
    'root': [0],
}
LEAF_JOINTS = [20, 21, 7, 8, 15]


def _rnn(kind, n_in, n_hidden, n_layers, dropout, bidirectional=False):
    cls = {'lstm': nn.LSTM, 'gru': nn.GRU}[kind]
    return cls(n_in, n_hidden, n_layers, batch_first=True, bidirectional=bidirectional,
               dropout=dropout if n_layers > 1 else 0.)


class IMUEncoder(nn.Module):
    def __init__(self, n_imu=6, hidden=256, rnn='lstm', num_layers=2, dropout=0.2):
        super().__init__()
        self.n_imu = n_imu
        self.inp = nn.Sequential(nn.Linear(n_imu * 12, hidden), nn.LeakyReLU(0.1), nn.Dropout(dropout))
        self.rnn = _rnn(rnn, hidden, hidden, num_layers, dropout)
        self.vel_head = nn.Linear(hidden, len(LEAF_JOINTS) * 3)

    def forward(self, imu, state=None):
        h = self.inp(imu)
        h, state = self.rnn(h, state)
        return h, self.vel_head(h), state


class PartBranch(nn.Module):
    def __init__(self, part, hidden=256, rnn='lstm', num_layers=2, dropout=0.2):
        super().__init__()
        self.part = part
        n_in = hidden + len(LEAF_JOINTS) * 3 + len(PART_IMUS[part]) * 12
        self.inp = nn.Sequential(nn.Linear(n_in, hidden), nn.LeakyReLU(0.1), nn.Dropout(dropout))
        self.rnn = _rnn(rnn, hidden, hidden, num_layers, dropout)
        self.out = nn.Linear(hidden, len(PART_JOINTS[part]) * 6)

    def forward(self, feat, vel, imu, state=None):
        B, T = feat.shape[:2]
        imu_part = imu.view(B, T, -1, 12)[:, :, PART_IMUS[self.part]].reshape(B, T, -1)
        h = self.inp(torch.cat([feat, vel, imu_part], dim=-1))
        h, state = self.rnn(h, state)
        return self.out(h).view(B, T, -1, 6), state


class DynaIP(nn.Module):
    def __init__(self, n_imu=6, hidden=256, rnn='lstm', num_layers=2, dropout=0.2, use_pseudo_velocity=True):
        super().__init__()
        self.n_imu = n_imu
        self.use_pseudo_velocity = use_pseudo_velocity
        self.encoder = IMUEncoder(n_imu, hidden, rnn, num_layers, dropout)
        self.branches = nn.ModuleDict({p: PartBranch(p, hidden, rnn, num_layers, dropout) for p in PART_JOINTS})
        identity6d = torch.tensor([1., 0., 0., 0., 1., 0.])
        self.register_buffer('identity6d', identity6d, persistent=False)
        self._online_state = None
        self._online_buffer = None

    def assemble(self, parts, B, T):
        pose = self.identity6d.expand(B, T, N_JOINTS, 6).clone()
        for p, out in parts.items():
            pose[:, :, PART_JOINTS[p]] = out
        # SMPL hands (22, 23) are not estimated: identity
        return pose

    def forward(self, imu):
        """
        :param imu: [B, T, n_imu * 12] (9 rotation + 3 acceleration per IMU, root-normalised)
        :return: dict with pose_r6d [B, T, 24, 6] and leaf_vel [B, T, 15]
        """
        B, T, _ = imu.shape
        feat, vel, _ = self.encoder(imu)
        vel_in = vel if self.use_pseudo_velocity else torch.zeros_like(vel)
        parts = {p: br(feat, vel_in, imu)[0] for p, br in self.branches.items()}
        return {'pose_r6d': self.assemble(parts, B, T), 'leaf_vel': vel}

    # -------------------------------------------------------------------------------- online mode
    def reset_online(self):
        self._online_state = None
        self._online_buffer = None

    @torch.no_grad()
    def forward_online(self, imu_frame, past=20, future=5):
        """
        Sliding-window online inference (same protocol as TransPose: 20 past + 5 future frames).
        The window is re-run each frame; the prediction for the frame `future` steps ago is returned.

        :param imu_frame: [B, n_imu * 12]
        :return: [B, 24, 6]
        """
        x = imu_frame.unsqueeze(1)
        if self._online_buffer is None:
            self._online_buffer = x.repeat(1, past + future + 1, 1)
        else:
            self._online_buffer = torch.cat([self._online_buffer[:, 1:], x], dim=1)
        out = self.forward(self._online_buffer)['pose_r6d']
        return out[:, past]


def r6d_regulariser(pose_r6d):
    """
    Encourage the two 6D columns to be unit-length and orthogonal (used with a small weight).
    """
    a, b = pose_r6d[..., :3], pose_r6d[..., 3:]
    return ((a.norm(dim=-1) - 1) ** 2 + (b.norm(dim=-1) - 1) ** 2 + (a * b).sum(-1) ** 2).mean()


def count_parameters(model):
    return {name: sum(p.numel() for p in m.parameters()) for name, m in
            [('encoder', model.encoder)] + [('branch_' + k, v) for k, v in model.branches.items()]}


if __name__ == '__main__':
    m = DynaIP()
    x = torch.randn(2, 300, 72)
    y = m(x)
    print({k: tuple(v.shape) for k, v in y.items()})
    print(count_parameters(m))
