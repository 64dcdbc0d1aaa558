r"""
    PIP (Physical Inertial Poser) network: kinematics module (5 RNNs, run on the GPU) followed by the
    physics-aware motion optimizer (PD controller + dual QP, run on CPU with pybullet).
"""

import torch
from torch.nn.functional import relu
from config import *
import articulate as art
from articulate.utils.torch import RNN, RNNWithInit
from dynamics import PhysicsOptimizer


def normalize_and_concat(glb_acc, glb_rot):
    r"""
    Root-relative normalisation of the 6 IMU readings (the last one is the pelvis sensor).

    :param glb_acc: [N, 6, 3] global accelerations.
    :param glb_rot: [N, 6, 3, 3] global orientations.
    :return: [N, 72] network input.
    """
    glb_acc = glb_acc.view(-1, 6, 3)
    glb_rot = glb_rot.view(-1, 6, 3, 3)
    acc = torch.cat((glb_acc[:, :5] - glb_acc[:, 5:], glb_acc[:, 5:]), dim=1).bmm(glb_rot[:, -1]) / acc_scale
    ori = torch.cat((glb_rot[:, 5:].transpose(2, 3).matmul(glb_rot[:, :5]), glb_rot[:, 5:]), dim=1)
    data = torch.cat((acc.flatten(1), ori.flatten(1)), dim=1)
    return data


class PIP(torch.nn.Module):
    name = 'PIP'
    n_hid = 256

    def __init__(self, use_physics=True):
        super(PIP, self).__init__()
        self.rnn1 = RNNWithInit(input_size=72,
                                output_size=joint_set.n_leaf * 3,
                                hidden_size=self.n_hid,
                                num_rnn_layer=2,
                                dropout=0.4)
        self.rnn2 = RNN(input_size=72 + joint_set.n_leaf * 3,
                        output_size=joint_set.n_full * 3,
                        hidden_size=self.n_hid,
                        num_rnn_layer=2,
                        dropout=0.4)
        self.rnn3 = RNN(input_size=72 + joint_set.n_full * 3,
                        output_size=joint_set.n_reduced * 6,
                        hidden_size=self.n_hid,
                        num_rnn_layer=2,
                        dropout=0.4)
        self.rnn4 = RNNWithInit(input_size=72 + joint_set.n_full * 3,
                                output_size=24 * 3,
                                hidden_size=self.n_hid,
                                num_rnn_layer=2,
                                dropout=0.4)
        self.rnn5 = RNN(input_size=72 + joint_set.n_full * 3,
                        output_size=2,
                        hidden_size=64,
                        num_rnn_layer=2,
                        dropout=0.4)

        body_model = art.ParametricModel(paths.smpl_file)
        self.inverse_kinematics_R = body_model.inverse_kinematics_R
        self.forward_kinematics = body_model.forward_kinematics
        self.use_physics = use_physics
        self.dynamics_optimizer = PhysicsOptimizer(debug=False) if use_physics else None
        self.rnn_states = [None for _ in range(5)]

        # the released weights were saved on a GPU machine; keep them on the GPU
        self.load_state_dict(torch.load(paths.weights_file, map_location=lambda storage, loc: storage.cuda()))
        self.eval()

    def _reduced_glb_6d_to_full_local_mat(self, root_rotation, glb_reduced_pose):
        glb_reduced_pose = art.math.r6d_to_rotation_matrix(glb_reduced_pose).view(-1, joint_set.n_reduced, 3, 3)
        global_full_pose = torch.eye(3, device=glb_reduced_pose.device).repeat(glb_reduced_pose.shape[0], 24, 1, 1)
        global_full_pose[:, joint_set.reduced] = glb_reduced_pose
        pose = self.inverse_kinematics_R(global_full_pose).view(-1, 24, 3, 3)
        pose[:, joint_set.ignored] = torch.eye(3, device=pose.device)
        pose[:, 0] = root_rotation.view(-1, 3, 3)
        return pose

    def forward(self, x):
        r"""
        Forward for training.

        :param x: A list in length [batch_size] which contains 3-tuple
                  (tensor [num_frames, 72], tensor [15], tensor [72]).
        """
        x, lj_init, jvel_init = list(zip(*x))
        leaf_joint = self.rnn1(list(zip(x, lj_init)))
        full_joint = self.rnn2([torch.cat(_, dim=-1) for _ in zip(leaf_joint, x)])
        global_6d_pose = self.rnn3([torch.cat(_, dim=-1) for _ in zip(full_joint, x)])
        joint_velocity = self.rnn4(list(zip([torch.cat(_, dim=-1) for _ in zip(full_joint, x)], jvel_init)))
        contact = self.rnn5([torch.cat(_, dim=-1) for _ in zip(full_joint, x)])
        return leaf_joint, full_joint, global_6d_pose, joint_velocity, contact

    @torch.no_grad()
    def predict(self, glb_acc, glb_rot, init_pose):
        r"""
        Predict the results for evaluation.

        :param glb_acc: A tensor that can reshape to [num_frames, 6, 3].
        :param glb_rot: A tensor that can reshape to [num_frames, 6, 3, 3].
        :param init_pose: A tensor that can reshape to [1, 24, 3, 3].
        :return: Pose tensor in shape [num_frames, 24, 3, 3] and
                 translation tensor in shape [num_frames, 3].
        """
        self.dynamics_optimizer.reset_states()
        imu = normalize_and_concat(glb_acc, glb_rot).cuda()
        lj_init = self.forward_kinematics(init_pose.view(1, 24, 3, 3))[1][0, joint_set.leaf].view(-1).cuda()
        jvel_init = torch.zeros(24 * 3).cuda()
        x = (imu, lj_init, jvel_init)
        leaf_joint, full_joint, global_6d_pose, joint_velocity, contact = [_[0] for _ in self.forward([x])]

        # the physics module runs on CPU (pybullet + qpsolvers)
        global_6d_pose, joint_velocity, contact = global_6d_pose.cpu(), joint_velocity.cpu(), contact.cpu()
        glb_rot, glb_acc = glb_rot.cpu(), glb_acc.cpu()
        pose = self._reduced_glb_6d_to_full_local_mat(glb_rot.view(-1, 6, 3, 3)[:, -1], global_6d_pose)
        joint_velocity = joint_velocity.view(-1, 24, 3).bmm(glb_rot.view(-1, 6, 3, 3)[:, -1].transpose(1, 2)) * vel_scale
        if not self.use_physics:
            tran = torch.zeros(pose.shape[0], 3)
            return pose, tran

        pose_opt, tran_opt = [], []
        for p, v, c, a in zip(pose, joint_velocity, contact, glb_acc.view(-1, 6, 3)):
            p, t = self.dynamics_optimizer.optimize_frame(p, v, c, a)
            pose_opt.append(p)
            tran_opt.append(t)
        pose_opt, tran_opt = torch.stack(pose_opt), torch.stack(tran_opt)
        return pose_opt, tran_opt

    @torch.no_grad()
    def forward_online(self, glb_acc, glb_rot, init_pose=None):
        r"""
        Online (per-frame) inference used by the live demo. States are kept in `self.rnn_states`.

        :param glb_acc: [6, 3] global accelerations of the current frame.
        :param glb_rot: [6, 3, 3] global orientations of the current frame.
        :param init_pose: [24, 3, 3] initial pose, only needed for the first frame.
        """
        imu = normalize_and_concat(glb_acc.view(1, 6, 3), glb_rot.view(1, 6, 3, 3)).cuda()
        if self.rnn_states[0] is None:
            lj_init = self.forward_kinematics(init_pose.view(1, 24, 3, 3))[1][0, joint_set.leaf].view(-1)
            h = self.rnn1.init_net(lj_init.cuda()).view(1, 2, 2, self.n_hid).permute(1, 2, 0, 3)
            self.rnn_states[0] = (h[0].contiguous(), h[1].contiguous())
            h = self.rnn4.init_net(torch.zeros(24 * 3, device=imu.device)).view(1, 2, 2, self.n_hid).permute(1, 2, 0, 3)
            self.rnn_states[3] = (h[0].contiguous(), h[1].contiguous())

        def step(net, x, i):
            y, self.rnn_states[i] = net.rnn(relu(net.linear1(x)).unsqueeze(0), self.rnn_states[i])
            return net.linear2(y.squeeze(0))

        leaf_joint = step(self.rnn1, imu, 0)
        full_joint = step(self.rnn2, torch.cat((leaf_joint, imu), dim=1), 1)
        global_6d_pose = step(self.rnn3, torch.cat((full_joint, imu), dim=1), 2)
        joint_velocity = step(self.rnn4, torch.cat((full_joint, imu), dim=1), 3)
        contact = step(self.rnn5, torch.cat((full_joint, imu), dim=1), 4)

        glb_rot = glb_rot.view(-1, 6, 3, 3).cpu()
        pose = self._reduced_glb_6d_to_full_local_mat(glb_rot[:, -1], global_6d_pose.cpu())[0]
        joint_velocity = joint_velocity.cpu().view(24, 3).mm(glb_rot[0, -1].t()) * vel_scale
        return self.dynamics_optimizer.optimize_frame(pose, joint_velocity, contact.cpu()[0], glb_acc.view(6, 3).cpu())

    def reset_online(self):
        self.rnn_states = [None for _ in range(5)]
        if self.dynamics_optimizer is not None:
            self.dynamics_optimizer.reset_states()

    @torch.no_grad()
    def predict_kinematics_only(self, glb_acc, glb_rot, init_pose):
        r"""
        Ablation "w/o physics": pose from the kinematics module, translation from integrating the
        predicted root velocity (no PD controller, no QP).
        """
        imu = normalize_and_concat(glb_acc, glb_rot).to(self.rnn1.linear1.weight.device)
        lj_init = self.forward_kinematics(init_pose.view(1, 24, 3, 3))[1][0, joint_set.leaf].view(-1)
        jvel_init = torch.zeros(24 * 3, device=imu.device)
        x = (imu, lj_init.to(imu.device), jvel_init)
        _, _, global_6d_pose, joint_velocity, _ = [_[0] for _ in self.forward([x])]
        glb_rot = glb_rot.view(-1, 6, 3, 3).cpu()
        pose = self._reduced_glb_6d_to_full_local_mat(glb_rot[:, -1], global_6d_pose.cpu())
        root_vel = joint_velocity.cpu().view(-1, 24, 3)[:, 0].unsqueeze(1).bmm(glb_rot[:, -1].transpose(1, 2))
        tran = torch.cumsum(root_vel.squeeze(1) * vel_scale / 60, dim=0)
        return pose, tran
