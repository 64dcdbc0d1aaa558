import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_scatter import scatter

__all__ = ['Net', 'ParNet', 'EmbNet', 'GNNLayer']

ACTS = {
    'relu': nn.ReLU,
    'silu': nn.SiLU,
    'gelu': nn.GELU,
}


class MLP(nn.Module):
    def __init__(self, units_list, act='silu', act_last=False, norm=None):
        super().__init__()
        layers = []
        for i in range(len(units_list) - 1):
            layers.append(nn.Linear(units_list[i], units_list[i + 1]))
            is_last = i == len(units_list) - 2
            if not is_last or act_last:
                if norm == 'batch':
                    layers.append(nn.BatchNorm1d(units_list[i + 1]))
                layers.append(ACTS[act]())
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class GNNLayer(nn.Module):
    """Anisotropic edge-gated GNN layer on a sparse KNN graph.

    h: (n_nodes, units), e: (n_edges, units), edge_index: (2, n_edges) with (src, dst).
    """

    def __init__(self, units, act='silu', agg='mean'):
        super().__init__()
        self.units = units
        self.agg = agg
        self.act = ACTS[act]()
        self.A = nn.Linear(units, units)
        self.B = nn.Linear(units, units)
        self.C = nn.Linear(units, units)
        self.D = nn.Linear(units, units)
        self.E = nn.Linear(units, units)
        self.norm_h = nn.BatchNorm1d(units)
        self.norm_e = nn.BatchNorm1d(units)

    def forward(self, h, e, edge_index):
        src, dst = edge_index
        n_nodes = h.size(0)
        Ah, Bh, Dh, Eh = self.A(h), self.B(h), self.D(h), self.E(h)
        Ce = self.C(e)

        # edge update
        e_new = Ce + Dh[src] + Eh[dst]
        gate = torch.sigmoid(e_new)

        # node update: gated aggregation over incoming edges
        msg = gate * Bh[src]
        agg = scatter(msg, dst, dim=0, dim_size=n_nodes, reduce=self.agg)
        h_new = Ah + agg

        h = h + self.act(self.norm_h(h_new))
        e = e + self.act(self.norm_e(e_new))
        return h, e


class EmbNet(nn.Module):
    def __init__(self, depth=12, units=32, act='silu', agg='mean', feats=2):
        super().__init__()
        self.depth = depth
        self.units = units
        self.v_lin0 = nn.Linear(feats, units)
        self.e_lin0 = nn.Linear(1, units)
        self.layers = nn.ModuleList([GNNLayer(units, act=act, agg=agg) for _ in range(depth)])

    def reset_parameters(self):
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x, edge_index, edge_attr):
        h = self.v_lin0(x)
        e = self.e_lin0(edge_attr)
        for layer in self.layers:
            h, e = layer(h, e, edge_index)
        return e


class ParNet(MLP):
    """Maps edge embeddings to one logit per edge (the heatmap theta)."""

    def __init__(self, depth=3, units=32, preds=1, act='silu'):
        self.units = units
        self.preds = preds
        super().__init__([units] * depth + [preds], act=act)

    def forward(self, x):
        return super().forward(x).squeeze(dim=-1)


class Net(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.emb_net = EmbNet(depth=args.emb_depth, units=args.net_units, act=args.net_act, agg=args.emb_agg)
        self.par_net = ParNet(depth=args.par_depth, units=args.net_units, act=args.net_act)
        self.emb_net.reset_parameters()

    def forward(self, x, edge_index, edge_attr, emb_net=None):
        emb = self.emb_net(x, edge_index, edge_attr) if emb_net is None else emb_net(x, edge_index, edge_attr)
        return self.par_net(emb)

    def num_parameters(self):
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def knn_graph(x, k):
    """Dense k-nearest-neighbour graph for one instance x: (n, 2). Returns edge_index (2, n*k) and distances."""
    n = x.size(0)
    dist = torch.cdist(x, x, p=2)
    dist.fill_diagonal_(math.inf)
    topk_dist, topk_idx = dist.topk(k, dim=-1, largest=False)
    src = torch.arange(n, device=x.device).repeat_interleave(k)
    dst = topk_idx.reshape(-1)
    return torch.stack([src, dst], dim=0), topk_dist.reshape(-1, 1)


def edge_logits_to_dense(n, edge_index, logits, fill=-math.inf):
    dense = torch.full((n, n), fill, device=logits.device, dtype=logits.dtype)
    dense[edge_index[0], edge_index[1]] = logits
    return dense


def edge_softmax_entropy(n, edge_index, logits):
    dense = edge_logits_to_dense(n, edge_index, logits)
    logp = F.log_softmax(dense, dim=-1)
    p = logp.exp()
    return -(p * torch.nan_to_num(logp, neginf=0.)).sum(-1).mean()
