"""DimeNet++ building blocks: triplet enumeration, radial/spherical bases, interaction block.

Triplets (k -> j -> i) are enumerated with a torch_sparse adjacency so that every directed
edge j->i meets every incoming edge k->j with k != i. Messages are aggregated with
index_add_ and normalised with a per-target edge softmax (attention variant).
"""
import math
from functools import lru_cache
from typing import Callable, List, Tuple

import numpy as np
import sympy as sym
import torch
import torch.nn as nn
from scipy import special as sp
from scipy.optimize import brentq
from torch_sparse import SparseTensor


def triplets(edge_index: torch.Tensor, num_nodes: int):
    """edge_index[0] = source j, edge_index[1] = target i. Returns triplet index tensors."""
    row, col = edge_index  # j -> i
    value = torch.arange(row.size(0), device=row.device)
    adj_t = SparseTensor(row=col, col=row, value=value, sparse_sizes=(num_nodes, num_nodes))
    adj_t_row = adj_t[row]
    num_triplets = adj_t_row.set_value(None).sum(dim=1).to(torch.long)

    idx_i = col.repeat_interleave(num_triplets)
    idx_j = row.repeat_interleave(num_triplets)
    idx_k = adj_t_row.storage.col()
    mask = idx_i != idx_k
    idx_i, idx_j, idx_k = idx_i[mask], idx_j[mask], idx_k[mask]

    idx_kj = adj_t_row.storage.value()[mask]
    idx_ji = adj_t_row.storage.row()[mask]
    return col, row, idx_i, idx_j, idx_k, idx_kj, idx_ji


def segment_softmax(x: torch.Tensor, index: torch.Tensor, num_segments: int) -> torch.Tensor:
    """Softmax of x over groups given by index (x: E x H)."""
    x_max = torch.full((num_segments, x.size(1)), float("-inf"), dtype=x.dtype, device=x.device)
    x_max = x_max.scatter_reduce(0, index.unsqueeze(-1).expand_as(x), x, reduce="amax", include_self=True)
    ex = torch.exp(x - x_max[index])
    denom = torch.zeros((num_segments, x.size(1)), dtype=x.dtype, device=x.device)
    denom.index_add_(0, index, ex)
    return ex / (denom[index] + 1e-16)


# ----------------------------------------------------------------------------- bases
def _sph_jn_zeros(n: int, k: int) -> np.ndarray:
    zeros = np.zeros((n, k), dtype=np.float64)
    zeros[0] = np.arange(1, k + 1) * np.pi
    points = np.arange(1, k + n) * np.pi
    racines = np.zeros(k + n - 1, dtype=np.float64)
    for i in range(1, n):
        for j in range(k + n - 1 - i):
            racines[j] = brentq(lambda r: sp.spherical_jn(i, r), points[j], points[j + 1])
        points = racines.copy()
        zeros[i][:k] = racines[:k]
    return zeros


@lru_cache(maxsize=8)
def _bessel_basis_sympy(n: int, k: int):
    x = sym.symbols("x")
    zeros = _sph_jn_zeros(n, k)
    funcs = []
    for order in range(n):
        f = sym.sqrt(2 / sym.pi) * sym.expand_func(sym.jn(order, x))
        for root in zeros[order]:
            norm = 1.0 / math.sqrt(0.5 * sp.spherical_jn(order + 1, root) ** 2)
            funcs.append(sym.lambdify([x], norm * f.subs(x, root * x), torch))
    return funcs


class Envelope(nn.Module):
    def __init__(self, exponent: int):
        super().__init__()
        self.p = exponent + 1
        self.a = -(self.p + 1) * (self.p + 2) / 2
        self.b = self.p * (self.p + 2)
        self.c = -self.p * (self.p + 1) / 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p, a, b, c = self.p, self.a, self.b, self.c
        x_p0 = x.pow(p - 1)
        x_p1 = x_p0 * x
        x_p2 = x_p1 * x
        return (1.0 / x + a * x_p0 + b * x_p1 + c * x_p2) * (x < 1.0).to(x.dtype)


class BesselBasis(nn.Module):
    def __init__(self, num_radial: int, cutoff: float = 5.0, envelope_exponent: int = 5):
        super().__init__()
        self.cutoff = cutoff
        self.envelope = Envelope(envelope_exponent)
        self.freq = nn.Parameter(torch.arange(1, num_radial + 1, dtype=torch.float32) * math.pi)

    def forward(self, dist: torch.Tensor) -> torch.Tensor:
        d = (dist / self.cutoff).unsqueeze(-1)
        return self.envelope(d) * torch.sin(self.freq * d)


class SphericalBasis(nn.Module):
    def __init__(self, num_spherical: int, num_radial: int, cutoff: float = 5.0, envelope_exponent: int = 5):
        super().__init__()
        self.num_spherical = num_spherical
        self.num_radial = num_radial
        self.cutoff = cutoff
        self.envelope = Envelope(envelope_exponent)
        self.bessel_funcs = _bessel_basis_sympy(num_spherical, num_radial)

    def _legendre(self, cos_t: torch.Tensor) -> List[torch.Tensor]:
        out = [torch.ones_like(cos_t), cos_t]
        for l in range(2, self.num_spherical):
            out.append(((2 * l - 1) * cos_t * out[-1] - (l - 1) * out[-2]) / l)
        return out[: self.num_spherical]

    def forward(self, dist: torch.Tensor, angle: torch.Tensor, idx_kj: torch.Tensor) -> torch.Tensor:
        d = dist / self.cutoff
        rbf = torch.stack([f(d) for f in self.bessel_funcs], dim=1)
        rbf = self.envelope(d).unsqueeze(-1) * rbf
        cbf = torch.stack(self._legendre(torch.cos(angle)), dim=1)
        n, k = self.num_spherical, self.num_radial
        out = (rbf[idx_kj].view(-1, n, k) * cbf.view(-1, n, 1)).view(-1, n * k)
        return out


# ----------------------------------------------------------------------------- blocks
def swish(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x)


class ResidualLayer(nn.Module):
    def __init__(self, hidden: int, act: Callable = swish):
        super().__init__()
        self.act = act
        self.lin1 = nn.Linear(hidden, hidden)
        self.lin2 = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.act(self.lin2(self.act(self.lin1(x))))


class InteractionPPBlock(nn.Module):
    def __init__(self, hidden: int, int_emb: int, basis_emb: int, num_spherical: int, num_radial: int,
                 num_before_skip: int = 1, num_after_skip: int = 2, attention: bool = False, heads: int = 4):
        super().__init__()
        self.attention = attention
        self.heads = heads
        self.lin_rbf1 = nn.Linear(num_radial, basis_emb, bias=False)
        self.lin_rbf2 = nn.Linear(basis_emb, hidden, bias=False)
        self.lin_sbf1 = nn.Linear(num_spherical * num_radial, basis_emb, bias=False)
        self.lin_sbf2 = nn.Linear(basis_emb, int_emb, bias=False)
        self.lin_kj = nn.Linear(hidden, hidden)
        self.lin_ji = nn.Linear(hidden, hidden)
        self.lin_down = nn.Linear(hidden, int_emb, bias=False)
        self.lin_up = nn.Linear(int_emb, hidden, bias=False)
        self.att = nn.Linear(int_emb, heads) if attention else None
        self.before_skip = nn.ModuleList([ResidualLayer(hidden) for _ in range(num_before_skip)])
        self.lin = nn.Linear(hidden, hidden)
        self.after_skip = nn.ModuleList([ResidualLayer(hidden) for _ in range(num_after_skip)])

    def forward(self, x, rbf, sbf, idx_kj, idx_ji):
        x_ji = swish(self.lin_ji(x))
        x_kj = swish(self.lin_kj(x))
        rbf = self.lin_rbf2(self.lin_rbf1(rbf))
        x_kj = swish(self.lin_down(x_kj * rbf))
        sbf = self.lin_sbf2(self.lin_sbf1(sbf))
        msg = x_kj[idx_kj] * sbf
        if self.attention:
            alpha = segment_softmax(self.att(msg), idx_ji, x.size(0))
            msg = (msg.view(msg.size(0), self.heads, -1) * alpha.unsqueeze(-1)).view_as(msg)
        agg = torch.zeros(x.size(0), msg.size(1), dtype=msg.dtype, device=msg.device)
        agg.index_add_(0, idx_ji, msg)
        x_kj = swish(self.lin_up(agg))
        h = x_ji + x_kj
        for layer in self.before_skip:
            h = layer(h)
        h = swish(self.lin(h)) + x
        for layer in self.after_skip:
            h = layer(h)
        return h


def triplet_geometry(pos: torch.Tensor, i, j, idx_i, idx_j, idx_k) -> Tuple[torch.Tensor, torch.Tensor]:
    dist = (pos[i] - pos[j]).pow(2).sum(dim=-1).sqrt()
    pos_ji = pos[idx_j] - pos[idx_i]
    pos_kj = pos[idx_k] - pos[idx_j]
    a = (pos_ji * pos_kj).sum(dim=-1)
    b = torch.cross(pos_ji, pos_kj, dim=-1).norm(dim=-1)
    angle = torch.atan2(b, a)
    return dist, angle
