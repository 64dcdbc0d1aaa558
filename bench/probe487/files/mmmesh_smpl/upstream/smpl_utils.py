import pickle

import numpy as np
import torch
import torch.nn as nn


class SMPL(nn.Module):
    """Minimal differentiable SMPL layer (pose given as rotation matrices).

    Loads the official SMPL pickles (basicModel_{m,f}_lbs_10_207_0_v1.0.0.pkl)
    and keeps every constant as a registered buffer so `.cuda()` on the parent
    module moves it.
    """

    def __init__(self, model_dir, gender='m'):
        super().__init__()
        fname = '%s/basicModel_%s_lbs_10_207_0_v1.0.0.pkl' % (model_dir, gender)
        with open(fname, 'rb') as f:
            params = pickle.load(f, encoding='latin1')
        self.register_buffer('J_regressor', torch.from_numpy(np.array(params['J_regressor'].todense())).float())
        self.register_buffer('weights', torch.from_numpy(params['weights']).float())
        self.register_buffer('posedirs', torch.from_numpy(params['posedirs']).float())
        self.register_buffer('v_template', torch.from_numpy(params['v_template']).float())
        self.register_buffer('shapedirs', torch.from_numpy(np.array(params['shapedirs'])).float())
        self.faces = params['f']
        kintree = params['kintree_table']
        self.parent = [int(kintree[0, i]) for i in range(1, kintree.shape[1])]

    def forward(self, rotmat, betas):
        B = betas.shape[0]
        v_shaped = self.v_template + torch.einsum('bl,mkl->bmk', betas, self.shapedirs)
        J = torch.einsum('bik,ji->bjk', v_shaped, self.J_regressor)
        eye = torch.eye(3, dtype=rotmat.dtype, device=rotmat.device)
        pose_feature = (rotmat[:, 1:] - eye).view(B, -1)
        v_posed = v_shaped + torch.matmul(pose_feature, self.posedirs.view(-1, 207).t()).view(B, -1, 3)

        results = [self._with_zeros(torch.cat([rotmat[:, 0], J[:, 0].unsqueeze(-1)], dim=2))]
        for i in range(1, 24):
            p = self.parent[i - 1]
            local = self._with_zeros(torch.cat([rotmat[:, i], (J[:, i] - J[:, p]).unsqueeze(-1)], dim=2))
            results.append(torch.matmul(results[p], local))
        stacked = torch.stack(results, dim=1)
        J_h = torch.cat([J, torch.zeros(B, 24, 1, dtype=J.dtype, device=J.device)], dim=2).unsqueeze(-1)
        deformed = stacked - self._pack(torch.matmul(stacked, J_h))
        T = torch.tensordot(deformed, self.weights, dims=([1], [1])).permute(0, 3, 1, 2)
        rest = torch.cat([v_posed, torch.ones(B, v_posed.shape[1], 1, dtype=v_posed.dtype, device=v_posed.device)], dim=2)
        v = torch.matmul(T, rest.unsqueeze(-1))[:, :, :3, 0]
        joints = torch.einsum('bik,ji->bjk', v, self.J_regressor)
        return v, joints

    @staticmethod
    def _with_zeros(x):
        pad = torch.tensor([[0.0, 0.0, 0.0, 1.0]], dtype=x.dtype, device=x.device).expand(x.shape[0], 1, 4)
        return torch.cat([x, pad], dim=1)

    @staticmethod
    def _pack(x):
        zeros = torch.zeros(x.shape[0], x.shape[1], 4, 3, dtype=x.dtype, device=x.device)
        return torch.cat([zeros, x], dim=3)

    def write_obj(self, verts, path):
        with open(path, 'w') as fp:
            for v in verts:
                fp.write('v %f %f %f\n' % (v[0], v[1], v[2]))
            for f in self.faces + 1:
                fp.write('f %d %d %d\n' % (f[0], f[1], f[2]))


def vertex_error(pred, gt):
    """Mean per-vertex L2 error in cm."""
    return (pred - gt).norm(dim=-1).mean() * 100.0


def joint_error(pred, gt):
    return (pred - gt).norm(dim=-1).mean() * 100.0
