"""
Encoder-processor-decoder graph network on an icosahedral mesh (GraphCast-style).

grid (lat/lon nodes) --encoder--> mesh nodes --processor x L--> mesh nodes --decoder--> grid

Edges carry their geometry (great-circle length and relative 3-D position) as features. All
aggregations are sums over incoming edges, except the optional max-pooling readout.
"""
import math
from contextlib import contextmanager

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

try:  # optional fused scatter kernels
    from torch_scatter import scatter_sum
except ImportError:  # pragma: no cover
    scatter_sum = None


@contextmanager
def _range(name):
    torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        torch.cuda.nvtx.range_pop()


def latlon_to_xyz(lat_deg, lon_deg):
    """Unit-sphere coordinates; float64 so that short mesh edges keep their precision."""
    lat = torch.deg2rad(lat_deg.double())
    lon = torch.deg2rad(lon_deg.double())
    return torch.stack([torch.cos(lat) * torch.cos(lon), torch.cos(lat) * torch.sin(lon), torch.sin(lat)], dim=-1)


def edge_geometry(src_xyz, dst_xyz, senders, receivers):
    """Per-edge features: great-circle length and the sender position relative to the receiver."""
    s = src_xyz[senders]
    r = dst_xyz[receivers]
    cos_angle = (s * r).sum(-1).clamp(-1.0, 1.0)
    length = torch.arccos(cos_angle)
    rel = s - r
    feats = torch.cat([length[:, None], rel], dim=-1)
    scale = length.max()
    return (feats / scale).float()


def aggregate_sum(src, index, num_nodes):
    if scatter_sum is not None and src.is_cuda:
        return scatter_sum(src, index, dim=0, dim_size=num_nodes)
    out = src.new_zeros((num_nodes,) + src.shape[1:])
    return out.index_add_(0, index, src)


def aggregate_max(src, index, num_nodes):
    out = src.new_full((num_nodes,) + src.shape[1:], float("-inf"))
    idx = index.view(-1, *([1] * (src.dim() - 1))).expand_as(src)
    out = out.scatter_reduce(0, idx, src, reduce="amax", include_self=True)
    return torch.where(torch.isinf(out), torch.zeros_like(out), out)


def mlp(in_dim, hidden, out_dim, layer_norm=True):
    layers = [nn.Linear(in_dim, hidden), nn.SiLU(), nn.Linear(hidden, out_dim)]
    if layer_norm:
        layers.append(nn.LayerNorm(out_dim))
    return nn.Sequential(*layers)


class InteractionNetwork(nn.Module):
    """Edge update from (edge, sender, receiver); node update from (node, sum of incoming edges)."""

    def __init__(self, node_dim, edge_dim, hidden):
        super().__init__()
        self.edge_mlp = mlp(edge_dim + 2 * node_dim, hidden, edge_dim)
        self.node_mlp = mlp(node_dim + edge_dim, hidden, node_dim)

    def forward(self, x_src, x_dst, e, senders, receivers):
        e_new = self.edge_mlp(torch.cat([e, x_src[senders], x_dst[receivers]], dim=-1))
        agg = aggregate_sum(e_new, receivers, x_dst.shape[0])
        x_new = self.node_mlp(torch.cat([x_dst, agg], dim=-1))
        return x_dst + x_new, e + e_new


class MeshGNN(nn.Module):
    def __init__(self, grid_latlon, mesh_latlon, g2m, mesh_edges, m2g, in_vars, out_vars,
                 hidden=512, processor_layers=16, use_checkpoint=True, readout_max=False):
        super().__init__()
        grid_xyz = latlon_to_xyz(grid_latlon[:, 0], grid_latlon[:, 1])
        mesh_xyz = latlon_to_xyz(mesh_latlon[:, 0], mesh_latlon[:, 1])
        self.register_buffer("grid_static", grid_xyz.float(), persistent=False)
        self.register_buffer("mesh_static", mesh_xyz.float(), persistent=False)
        # keep the fp64 positions so the geometry can be rebuilt when the mesh is refined
        self._grid_xyz64 = grid_xyz
        self._mesh_xyz64 = mesh_xyz

        for name, (snd, rcv) in {"g2m": g2m, "mesh": mesh_edges, "m2g": m2g}.items():
            self.register_buffer(f"{name}_snd", snd.long(), persistent=False)
            self.register_buffer(f"{name}_rcv", rcv.long(), persistent=False)
        self.register_buffer("g2m_feat", edge_geometry(grid_xyz, mesh_xyz, g2m[0], g2m[1]), persistent=False)
        self.register_buffer("mesh_feat", edge_geometry(mesh_xyz, mesh_xyz, *mesh_edges), persistent=False)
        self.register_buffer("m2g_feat", edge_geometry(mesh_xyz, grid_xyz, m2g[0], m2g[1]), persistent=False)

        self.grid_embed = mlp(in_vars + 3, hidden, hidden)
        self.mesh_embed = mlp(3, hidden, hidden)
        self.edge_embed = nn.ModuleDict({k: mlp(4, hidden, hidden) for k in ("g2m", "mesh", "m2g")})
        self.encoder = InteractionNetwork(hidden, hidden, hidden)
        self.processor = nn.ModuleList([InteractionNetwork(hidden, hidden, hidden) for _ in range(processor_layers)])
        self.decoder = InteractionNetwork(hidden, hidden, hidden)
        self.head = mlp(hidden, hidden, out_vars, layer_norm=False)
        self.use_checkpoint = use_checkpoint
        self.readout_max = readout_max

    @torch.no_grad()
    def refresh_geometry(self, device):
        """Recompute edge features on the device in float64 after the mesh was edited."""
        g = self._grid_xyz64.to(device)
        m = self._mesh_xyz64.to(device)
        self.g2m_feat = edge_geometry(g, m, self.g2m_snd, self.g2m_rcv)
        self.mesh_feat = edge_geometry(m, m, self.mesh_snd, self.mesh_rcv)
        self.m2g_feat = edge_geometry(m, g, self.m2g_snd, self.m2g_rcv)

    def _process(self, h_mesh, e_mesh):
        for layer in self.processor:
            if self.use_checkpoint and self.training:
                h_mesh, e_mesh = checkpoint(layer, h_mesh, h_mesh, e_mesh, self.mesh_snd, self.mesh_rcv,
                                            use_reentrant=False)
            else:
                h_mesh, e_mesh = layer(h_mesh, h_mesh, e_mesh, self.mesh_snd, self.mesh_rcv)
        return h_mesh

    def forward(self, x):
        """x: (num_grid_nodes, in_vars) normalised state at time t; returns the residual for t+1."""
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with _range("encoder"):
                h_grid = self.grid_embed(torch.cat([x, self.grid_static], dim=-1))
                h_mesh = self.mesh_embed(self.mesh_static)
                e = self.edge_embed["g2m"](self.g2m_feat)
                h_mesh, _ = self.encoder(h_grid, h_mesh, e, self.g2m_snd, self.g2m_rcv)
            with _range("processor"):
                h_mesh = self._process(h_mesh, self.edge_embed["mesh"](self.mesh_feat))
            with _range("decoder"):
                e = self.edge_embed["m2g"](self.m2g_feat)
                h_grid, _ = self.decoder(h_mesh, h_grid, e, self.m2g_snd, self.m2g_rcv)
                if self.readout_max:
                    pooled = aggregate_max(h_mesh[self.m2g_snd], self.m2g_rcv, h_grid.shape[0])
                    h_grid = h_grid + pooled
                out = self.head(h_grid)
        return out.float()


def rollout_loss(model, states, weights, steps):
    """Autoregressive multi-step loss; states: (steps + 1, nodes, vars); weights: per-latitude area."""
    loss = 0.0
    x = states[0]
    for t in range(steps):
        x = x + model(x)
        err = (x - states[t + 1]) ** 2
        loss = loss + (err.mean(-1) * weights).sum() / weights.sum()
    return loss / steps


def lat_weights(lat_deg):
    w = torch.cos(torch.deg2rad(lat_deg))
    return w / w.mean()


def count_params(model):
    n = sum(p.numel() for p in model.parameters())
    return f"{n / 1e6:.1f}M parameters, {math.ceil(n * 4 / 2**20)} MiB fp32"
