"""
Bidirectional RNN of Deep Inertial Poser.

Input : 6 IMUs x (3x3 orientation + 3 acceleration) = 72 features per frame, root-normalised.
Output: 15 SMPL joint rotations as flattened 3x3 matrices (135), plus a Gaussian over the 18 input
        accelerations used as an auxiliary reconstruction task (the "acc NLL" term of the paper).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


SMPL_MAJOR_JOINTS = [1, 2, 3, 4, 5, 6, 9, 12, 13, 14, 15, 16, 17, 18, 19]


class BiRNN(nn.Module):
    def __init__(self, input_size=72, output_size=135, hidden_size=512, num_layers=2, dropout=0.2,
                 predict_acc=True, bidirectional=True):
        super(BiRNN, self).__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.num_directions = 2 if bidirectional else 1
        self.predict_acc = predict_acc

        self.input_proj = nn.Sequential(nn.Linear(input_size, hidden_size), nn.ReLU(), nn.Dropout(dropout))
        self.lstm = nn.LSTM(hidden_size, hidden_size, num_layers=num_layers, batch_first=True,
                            dropout=dropout if num_layers > 1 else 0., bidirectional=bidirectional)
        feat = hidden_size * self.num_directions
        self.pose_head = nn.Linear(feat, output_size)
        if predict_acc:
            self.acc_mean = nn.Linear(feat, 18)
            self.acc_logvar = nn.Linear(feat, 18)
        self.reset_parameters()

    def reset_parameters(self):
        for name, p in self.lstm.named_parameters():
            if 'weight_ih' in name:
                nn.init.xavier_uniform_(p)
            elif 'weight_hh' in name:
                nn.init.orthogonal_(p)
            elif 'bias' in name:
                p.data.zero_()
                # forget gate bias = 1
                n = p.size(0)
                p.data[n // 4:n // 2].fill_(1.)

    def init_hidden(self, batch_size):
        weight = next(self.parameters())
        shape = (self.num_layers * self.num_directions, batch_size, self.hidden_size)
        if weight.is_cuda:
            return (torch.zeros(*shape).cuda(weight.get_device()), torch.zeros(*shape).cuda(weight.get_device()))
        return (torch.zeros(*shape), torch.zeros(*shape))

    def forward(self, x, hidden=None):
        """
        :param x: [B, T, 72]
        :return: pose [B, T, 135], acc mean [B, T, 18], acc log-variance [B, T, 18]
        """
        if hidden is None:
            hidden = self.init_hidden(x.size(0))
        # cuDNN complains about non-contiguous weights after DataParallel replication
        self.lstm.flatten_parameters()
        h = self.input_proj(x)
        h, _ = self.lstm(h, hidden)
        pose = self.pose_head(h)
        if not self.predict_acc:
            return pose, None, None
        return pose, self.acc_mean(h), self.acc_logvar(h).clamp(-10., 10.)

    @torch.no_grad()
    def forward_online(self, x, past=20, future=5):
        """
        Sliding-window online inference as in the paper (20 past + 5 future frames).

        :param x: [T, 72] single sequence.
        :return: [T, 135]
        """
        T = x.size(0)
        out = []
        for t in range(T):
            s, e = max(0, t - past), min(T, t + future + 1)
            y = self.forward(x[s:e].unsqueeze(0))[0][0]
            out.append(y[t - s])
        return torch.stack(out)


def pose_loss(pred, target, mask):
    """
    Masked MSE on rotation matrices (summed over joints, averaged over valid frames).
    """
    err = ((pred - target) ** 2).sum(dim=-1)
    return (err * mask).sum() / mask.sum().clamp(min=1.)


def acc_nll_loss(mean, logvar, target, mask):
    """
    Gaussian negative log-likelihood of the measured accelerations.
    """
    nll = 0.5 * (logvar + (target - mean) ** 2 / logvar.exp() + math.log(2 * math.pi))
    return (nll.sum(dim=-1) * mask).sum() / mask.sum().clamp(min=1.)


def rot_mats_to_smpl_pose(pose, device=None):
    """
    Fill the 15 predicted joints into a full 24-joint SMPL pose (identity elsewhere).

    :param pose: [..., 135]
    :return: [..., 24, 3, 3]
    """
    device = pose.device if device is None else device
    lead = pose.shape[:-1]
    full = torch.eye(3, device=device).repeat(*lead, 24, 1, 1)
    full[..., SMPL_MAJOR_JOINTS, :, :] = pose.view(*lead, 15, 3, 3)
    return full


def orthonormalize(r):
    """
    Project predicted 3x3 matrices to SO(3) with SVD (used at test time only).
    """
    u, _, v = torch.svd(r.view(-1, 3, 3))
    det = torch.det(torch.bmm(u, v.transpose(1, 2)))
    s = torch.ones_like(u[:, 0])
    s[:, 2] = det
    return torch.bmm(u * s.unsqueeze(1), v.transpose(1, 2)).view_as(r)


def export_torchscript(model, path, seq_len=26, device='cuda'):
    """
    Trace the online window (20 past + 1 + 5 future frames) for the C++ live viewer.
    """
    model = model.to(device).eval()
    example = torch.zeros(1, seq_len, 72, device=device)
    with torch.no_grad():
        traced = torch.jit.trace(lambda x: model(x)[0], example, check_trace=False)
    traced.save(path)
    return path
