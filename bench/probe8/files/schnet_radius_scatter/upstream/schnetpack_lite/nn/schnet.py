"""SchNet: continuous-filter convolutional network for molecules and materials.

Graph construction uses torch_cluster.radius_graph when it is importable (fast, O(N) cell
lists) and a dense O(N^2) fallback otherwise. Message aggregation uses torch_scatter.
"""
import math
from typing import Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_scatter import scatter

try:
    from torch_cluster import radius_graph

    HAS_TORCH_CLUSTER = True
except ImportError:  # pragma: no cover
    HAS_TORCH_CLUSTER = False


def _radius_graph_dense(pos: torch.Tensor, r: float, batch: Optional[torch.Tensor] = None,
                        max_num_neighbors: int = 32) -> torch.Tensor:
    """O(N^2) radius graph; fine for molecules of up to a few hundred atoms per batch."""
    if batch is None:
        batch = torch.zeros(pos.size(0), dtype=torch.long, device=pos.device)
    dist = torch.cdist(pos, pos)
    same = batch.unsqueeze(0) == batch.unsqueeze(1)
    adj = (dist < r) & same
    adj.fill_diagonal_(False)
    # keep at most max_num_neighbors per target, nearest first
    dist = dist.masked_fill(~adj, float("inf"))
    k = min(max_num_neighbors, pos.size(0))
    knn_d, knn_i = dist.topk(k, dim=1, largest=False)
    valid = torch.isfinite(knn_d)
    tgt = torch.arange(pos.size(0), device=pos.device).unsqueeze(1).expand_as(knn_i)
    return torch.stack([knn_i[valid], tgt[valid]], dim=0)


def build_graph(pos: torch.Tensor, cutoff: float, batch: Optional[torch.Tensor], max_neighbors: int):
    if HAS_TORCH_CLUSTER:
        edge_index = radius_graph(pos, r=cutoff, batch=batch, loop=False, max_num_neighbors=max_neighbors)
    else:
        edge_index = _radius_graph_dense(pos, cutoff, batch, max_neighbors)
    row, col = edge_index
    vec = pos[row] - pos[col]
    dist = vec.norm(dim=-1)
    return edge_index, dist, vec


class ShiftedSoftplus(nn.Module):
    def __init__(self):
        super().__init__()
        self.shift = math.log(2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x) - self.shift


class GaussianSmearing(nn.Module):
    def __init__(self, start: float = 0.0, stop: float = 5.0, num_gaussians: int = 50, trainable: bool = False):
        super().__init__()
        offset = torch.linspace(start, stop, num_gaussians)
        width = torch.full_like(offset, offset[1] - offset[0])
        if trainable:
            self.offset = nn.Parameter(offset)
            self.width = nn.Parameter(width)
        else:
            self.register_buffer("offset", offset)
            self.register_buffer("width", width)

    def forward(self, dist: torch.Tensor) -> torch.Tensor:
        coeff = -0.5 / self.width.pow(2)
        d = dist.unsqueeze(-1) - self.offset
        return torch.exp(coeff * d.pow(2))


class CosineCutoff(nn.Module):
    def __init__(self, cutoff: float):
        super().__init__()
        self.register_buffer("cutoff", torch.tensor(cutoff))

    def forward(self, dist: torch.Tensor) -> torch.Tensor:
        c = 0.5 * (torch.cos(dist * math.pi / self.cutoff) + 1.0)
        return c * (dist < self.cutoff).to(dist.dtype)


class CFConv(nn.Module):
    def __init__(self, n_atom_basis: int, n_filters: int, n_rbf: int, cutoff: float):
        super().__init__()
        self.in2f = nn.Linear(n_atom_basis, n_filters, bias=False)
        self.f2out = nn.Sequential(nn.Linear(n_filters, n_atom_basis), ShiftedSoftplus(),
                                   nn.Linear(n_atom_basis, n_atom_basis))
        self.filter_net = nn.Sequential(nn.Linear(n_rbf, n_filters), ShiftedSoftplus(),
                                        nn.Linear(n_filters, n_filters))
        self.cutoff_fn = CosineCutoff(cutoff)

    def forward(self, x, edge_index, dist, rbf):
        row, col = edge_index
        W = self.filter_net(rbf) * self.cutoff_fn(dist).unsqueeze(-1)
        h = self.in2f(x)
        msg = h[row] * W
        agg = scatter(msg, col, dim=0, dim_size=x.size(0), reduce="sum")
        return self.f2out(agg)


class SchNet(nn.Module):
    def __init__(self, n_atom_basis: int = 128, n_filters: int = 128, n_interactions: int = 6,
                 n_rbf: int = 50, cutoff: float = 5.0, max_z: int = 100, max_neighbors: int = 32,
                 readout: str = "sum", mean: float = 0.0, std: float = 1.0,
                 atomref: Optional[torch.Tensor] = None):
        super().__init__()
        self.cutoff = cutoff
        self.max_neighbors = max_neighbors
        self.readout = readout
        self.embedding = nn.Embedding(max_z, n_atom_basis, padding_idx=0)
        self.rbf = GaussianSmearing(0.0, cutoff, n_rbf)
        self.interactions = nn.ModuleList(
            [CFConv(n_atom_basis, n_filters, n_rbf, cutoff) for _ in range(n_interactions)]
        )
        self.head = nn.Sequential(nn.Linear(n_atom_basis, n_atom_basis // 2), ShiftedSoftplus(),
                                  nn.Linear(n_atom_basis // 2, 1))
        self.register_buffer("mean", torch.tensor(mean))
        self.register_buffer("std", torch.tensor(std))
        if atomref is not None:
            self.atomref = nn.Embedding.from_pretrained(atomref.view(-1, 1), freeze=True)
        else:
            self.atomref = None

    def forward(self, z: torch.Tensor, pos: torch.Tensor, batch: Optional[torch.Tensor] = None,
                return_forces: bool = False) -> Dict[str, torch.Tensor]:
        if batch is None:
            batch = torch.zeros_like(z)
        if return_forces:
            pos = pos.requires_grad_(True)
        edge_index, dist, _ = build_graph(pos, self.cutoff, batch, self.max_neighbors)
        rbf = self.rbf(dist)
        h = self.embedding(z)
        for block in self.interactions:
            h = h + block(h, edge_index, dist, rbf)
        atom_e = self.head(h) * self.std + self.mean
        if self.atomref is not None:
            atom_e = atom_e + self.atomref(z)
        energy = scatter(atom_e, batch, dim=0, reduce=self.readout).squeeze(-1)
        out = {"energy": energy}
        if return_forces:
            (grad,) = torch.autograd.grad(energy.sum(), pos, create_graph=self.training)
            out["forces"] = -grad
        return out

    @classmethod
    def load(cls, path: str, device: str = "cuda", **overrides) -> "SchNet":
        ckpt = torch.load(path, map_location=device)
        hparams = dict(ckpt["hparams"])
        hparams.update(overrides)
        model = cls(**hparams)
        model.load_state_dict(ckpt["state_dict"])
        return model.to(device).eval()


def energy_force_loss(pred: Dict[str, torch.Tensor], batch: Dict[str, torch.Tensor], rho: float = 0.99):
    loss_e = F.mse_loss(pred["energy"], batch["energy"])
    if "forces" not in pred:
        return loss_e, {"loss_e": loss_e.detach()}
    loss_f = F.mse_loss(pred["forces"], batch["forces"])
    loss = (1 - rho) * loss_e + rho * loss_f
    return loss, {"loss_e": loss_e.detach(), "loss_f": loss_f.detach()}
