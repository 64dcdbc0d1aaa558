"""Smooth edition (se_e2_a) descriptor, PyTorch backend.

Environment matrix -> per-type embedding nets -> G^T R R^T G.
The environment matrix can be built either by the C++/CUDA op shipped in libdeepmd_op_pt.so
or by the reference PyTorch implementation below; compressed models use the tabulated
embedding op, which only exists in the compiled library.
"""
import logging
import os
from typing import List, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn

log = logging.getLogger(__name__)

LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))
DEVICE = torch.device(f"cuda:{LOCAL_RANK}" if torch.cuda.is_available() else "cpu")
GLOBAL_PT_FLOAT_PRECISION = torch.float64
GLOBAL_NP_FLOAT_PRECISION = np.float64
PRECISION_DICT = {
    "float16": torch.float16,
    "float32": torch.float32,
    "float64": torch.float64,
    "default": GLOBAL_PT_FLOAT_PRECISION,
}

_OP_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "libdeepmd_op_pt.so")
try:
    torch.ops.load_library(_OP_LIB)
    HAS_CUSTOM_OP = True
except (OSError, RuntimeError):
    log.info("libdeepmd_op_pt.so not found; using the PyTorch environment matrix")
    HAS_CUSTOM_OP = False


def compute_smooth_weight(distance: torch.Tensor, rmin: float, rmax: float) -> torch.Tensor:
    if rmin >= rmax:
        raise ValueError("rcut_smth must be smaller than rcut")
    uu = (distance - rmin) / (rmax - rmin)
    uu = torch.clamp(uu, 0.0, 1.0)
    vv = uu * uu * uu * (-6.0 * uu * uu + 15.0 * uu - 10.0) + 1.0
    return vv


def _prod_env_mat_torch(coord: torch.Tensor, nlist: torch.Tensor, rcut: float, rcut_smth: float,
                        protection: float = 0.0) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """coord: nf x nall x 3, nlist: nf x nloc x nnei (padding = -1)."""
    nf, nloc, nnei = nlist.shape
    mask = nlist >= 0
    nlist_ = torch.where(mask, nlist, torch.zeros_like(nlist))
    coord_l = coord[:, :nloc].reshape(nf, nloc, 1, 3)
    index = nlist_.reshape(nf, -1).unsqueeze(-1).expand(-1, -1, 3)
    coord_r = torch.gather(coord, 1, index).reshape(nf, nloc, nnei, 3)
    diff = coord_r - coord_l
    length = torch.linalg.norm(diff, dim=-1, keepdim=True)
    length = length + (~mask.unsqueeze(-1)).to(length.dtype)
    t0 = 1.0 / (length + protection)
    t1 = diff / (length + protection) ** 2
    weight = compute_smooth_weight(length, rcut_smth, rcut) * mask.unsqueeze(-1)
    env_mat = torch.cat([t0, t1], dim=-1) * weight
    return env_mat, diff * mask.unsqueeze(-1), weight


def prod_env_mat(coord, nlist, atype, mean, stddev, rcut, rcut_smth, use_op: bool = True):
    if use_op and HAS_CUSTOM_OP and coord.is_cuda:
        env_mat, diff, sw = torch.ops.deepmd.prod_env_mat_a(coord, nlist, atype, mean, stddev, rcut, rcut_smth)
    else:
        env_mat, diff, sw = _prod_env_mat_torch(coord, nlist, rcut, rcut_smth)
        t_avg = mean[atype]
        t_std = stddev[atype]
        env_mat = (env_mat - t_avg) / t_std
    return env_mat, diff, sw


class EmbeddingNet(nn.Module):
    def __init__(self, in_dim: int, neurons: List[int], precision: str = "default", resnet_dt: bool = False,
                 seed: Optional[int] = None):
        super().__init__()
        self.dtype = PRECISION_DICT[precision]
        dims = [in_dim] + list(neurons)
        gen = torch.Generator().manual_seed(seed) if seed is not None else None
        self.layers = nn.ModuleList()
        self.idt = nn.ParameterList() if resnet_dt else None
        for d_in, d_out in zip(dims[:-1], dims[1:]):
            lin = nn.Linear(d_in, d_out, dtype=self.dtype, device=DEVICE)
            with torch.no_grad():
                lin.weight.normal_(0.0, 1.0 / np.sqrt(d_in + d_out), generator=gen)
                lin.bias.normal_(0.0, 1.0, generator=gen)
            self.layers.append(lin)
            if resnet_dt:
                self.idt.append(nn.Parameter(torch.full((d_out,), 0.1, dtype=self.dtype, device=DEVICE)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, lin in enumerate(self.layers):
            y = torch.tanh(lin(x))
            if self.idt is not None:
                y = y * self.idt[i]
            if y.shape[-1] == x.shape[-1]:
                x = x + y
            elif y.shape[-1] == 2 * x.shape[-1]:
                x = torch.cat([x, x], dim=-1) + y
            else:
                x = y
        return x


class DescrptSeA(nn.Module):
    def __init__(self, rcut: float, rcut_smth: float, sel: List[int], neuron: List[int] = (25, 50, 100),
                 axis_neuron: int = 16, precision: str = "default", resnet_dt: bool = False,
                 env_protection: float = 0.0, seed: Optional[int] = None):
        super().__init__()
        self.rcut = rcut
        self.rcut_smth = rcut_smth
        self.sel = list(sel)
        self.ntypes = len(sel)
        self.nnei = sum(sel)
        self.neuron = list(neuron)
        self.axis_neuron = axis_neuron
        self.prec = PRECISION_DICT[precision]
        self.env_protection = env_protection
        self.sec = np.cumsum([0] + self.sel).tolist()
        self.filter_layers = nn.ModuleList(
            [EmbeddingNet(1, self.neuron, precision, resnet_dt, seed) for _ in range(self.ntypes)]
        )
        wanted_shape = (self.ntypes, self.nnei, 4)
        self.register_buffer("mean", torch.zeros(wanted_shape, dtype=self.prec, device=DEVICE))
        self.register_buffer("stddev", torch.ones(wanted_shape, dtype=self.prec, device=DEVICE))
        self.compress = False
        self.compress_info = nn.ParameterList()
        self.compress_data = nn.ParameterList()

    def get_dim_out(self) -> int:
        return self.neuron[-1] * self.axis_neuron

    def compute_input_stats(self, sampled: List[dict]):
        """Mean / std of the environment matrix, accumulated on the host in float64."""
        sumr, sumr2, suma, suma2, sumn = [], [], [], [], []
        for frame in sampled:
            env_mat, _, _ = _prod_env_mat_torch(frame["coord"], frame["nlist"], self.rcut, self.rcut_smth)
            env_mat = env_mat.detach().cpu().double().numpy()
            atype = frame["atype"].cpu().numpy()
            for t in range(self.ntypes):
                sel = env_mat[atype == t]
                sumr.append(sel[..., 0].sum())
                sumr2.append((sel[..., 0] ** 2).sum())
                suma.append(sel[..., 1:].sum() / 3.0)
                suma2.append((sel[..., 1:] ** 2).sum() / 3.0)
                sumn.append(sel.shape[0] * sel.shape[1])
        n = max(float(np.sum(sumn)), 1.0)
        avg_r = np.sum(sumr) / n
        std_r = np.sqrt(max(np.sum(sumr2) / n - avg_r ** 2, 1e-2))
        std_a = np.sqrt(max(np.sum(suma2) / n - (np.sum(suma) / n) ** 2, 1e-2))
        mean = np.zeros((self.ntypes, self.nnei, 4), dtype=GLOBAL_NP_FLOAT_PRECISION)
        mean[..., 0] = avg_r
        stddev = np.ones_like(mean)
        stddev[..., 0] = std_r
        stddev[..., 1:] = std_a
        self.mean.copy_(torch.from_numpy(mean))
        self.stddev.copy_(torch.from_numpy(stddev))

    def enable_compression(self, table_data: dict, table_config: List[float]):
        for ii in range(self.ntypes):
            info = torch.as_tensor(table_config + [ii], dtype=self.prec, device="cpu")
            data = torch.as_tensor(table_data[f"filter_net_{ii}"], dtype=self.prec, device=DEVICE)
            self.compress_info.append(nn.Parameter(info, requires_grad=False))
            self.compress_data.append(nn.Parameter(data, requires_grad=False))
        self.compress = True

    def forward(self, coord_ext: torch.Tensor, atype_ext: torch.Tensor, nlist: torch.Tensor):
        nf, nloc, _ = nlist.shape
        atype = atype_ext[:, :nloc]
        dmatrix, diff, sw = prod_env_mat(
            coord_ext, nlist, atype, self.mean, self.stddev, self.rcut, self.rcut_smth
        )
        dmatrix = dmatrix.view(-1, self.nnei, 4).to(self.prec)
        nfnl = dmatrix.shape[0]
        xyz_scatter = torch.zeros([nfnl, 4, self.neuron[-1]], dtype=self.prec, device=coord_ext.device)
        for ii, ll in enumerate(self.filter_layers):
            rr = dmatrix[:, self.sec[ii]:self.sec[ii + 1], :]
            if self.compress:
                ss = rr[:, :, :1]
                gr = torch.ops.deepmd.tabulate_fusion_se_a(
                    self.compress_data[ii].contiguous(),
                    self.compress_info[ii].cpu().contiguous(),
                    ss.contiguous(),
                    rr.contiguous(),
                    self.neuron[-1],
                )[0]
                xyz_scatter = xyz_scatter + gr
            else:
                ss = rr[:, :, :1]
                gg = ll(ss)
                xyz_scatter = xyz_scatter + torch.matmul(rr.permute(0, 2, 1), gg)
        xyz_scatter = xyz_scatter / self.nnei
        rot_mat = xyz_scatter[:, 1:4, :].permute(0, 2, 1)
        xyz_axis = xyz_scatter[:, :, : self.axis_neuron]
        result = torch.matmul(xyz_scatter.permute(0, 2, 1), xyz_axis)
        result = result.view(nf, nloc, self.get_dim_out())
        rot_mat = rot_mat.view(nf, nloc, self.neuron[-1], 3)
        return result.to(GLOBAL_PT_FLOAT_PRECISION), rot_mat, diff, sw
