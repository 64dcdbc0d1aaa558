"""Anisotropic edge-gated GNN over the KNN graph (DIMES, TSP-KNN).

Node features: coordinates; edge features: Euclidean length of the KNN edge.
Output: one logit per directed KNN edge, i.e. the (sparse) heatmap theta_ij.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_scatter import scatter, scatter_softmax


ACTIVATIONS = {
    'relu': nn.ReLU,
    'silu': nn.SiLU,
    'gelu': nn.GELU,
    'tanh': nn.Tanh,
}


class EmbLayer(nn.Module):
    """One layer of the edge-gated graph conv (Bresson & Laurent 2018), sparse version."""

    def __init__(self, units, act, aggr='add'):
        super().__init__()
        self.units = units
        self.aggr = aggr
        self.act = ACTIVATIONS[act]()
        self.A = nn.Linear(units, units)
        self.B = nn.Linear(units, units)
        self.C = nn.Linear(units, units)
        self.U = nn.Linear(units, units)
        self.V = nn.Linear(units, units)
        self.bn_x = nn.BatchNorm1d(units)
        self.bn_e = nn.BatchNorm1d(units)

    def forward(self, x, e, edge_index):
        src, dst = edge_index
        n = x.size(0)
        Ax, Bx, Ux, Vx = self.A(x), self.B(x), self.U(x), self.V(x)
        e_new = Ax[src] + Bx[dst] + self.C(e)
        gates = torch.sigmoid(e_new)
        if self.aggr == 'add':
            agg = scatter(gates * Vx[dst], src, dim=0, dim_size=n, reduce='sum')
            norm = scatter(gates, src, dim=0, dim_size=n, reduce='sum') + 1e-20
            agg = agg / norm
        elif self.aggr == 'mean':
            agg = scatter(gates * Vx[dst], src, dim=0, dim_size=n, reduce='mean')
        elif self.aggr == 'max':
            agg = scatter(gates * Vx[dst], src, dim=0, dim_size=n, reduce='max')
        else:
            raise ValueError(self.aggr)
        x = x + self.act(self.bn_x(Ux + agg))
        e = e + self.act(self.bn_e(e_new))
        return x, e


class EmbNet(nn.Module):
    def __init__(self, depth, units, act, aggr='add'):
        super().__init__()
        self.v_lin0 = nn.Linear(2, units)
        self.e_lin0 = nn.Linear(1, units)
        self.layers = nn.ModuleList([EmbLayer(units, act, aggr) for _ in range(depth)])

    def forward(self, x, edge_index, edge_attr):
        x = self.v_lin0(x)
        e = self.e_lin0(edge_attr)
        for layer in self.layers:
            x, e = layer(x, e, edge_index)
        return x, e


class ParNet(nn.Module):
    """MLP head mapping edge embeddings to heatmap logits."""

    def __init__(self, depth, units, act, final_act=None):
        super().__init__()
        layers = []
        for _ in range(depth - 1):
            layers += [nn.Linear(units, units), ACTIVATIONS[act]()]
        layers.append(nn.Linear(units, 1))
        self.mlp = nn.Sequential(*layers)
        self.final_act = final_act

    def forward(self, e):
        out = self.mlp(e).squeeze(-1)
        if self.final_act is not None:
            out = self.final_act(out)
        return out


class Net(nn.Module):
    def __init__(self, units, act, emb_depth, par_depth, aggr='add', normalize_heatmap=False):
        super().__init__()
        self.emb_net = EmbNet(emb_depth, units, act, aggr)
        self.par_net = ParNet(par_depth, units, act)
        self.normalize_heatmap = normalize_heatmap

    def forward(self, x, edge_index, edge_attr):
        _, e = self.emb_net(x, edge_index, edge_attr)
        par = self.par_net(e)
        if self.normalize_heatmap:
            # log-softmax over the outgoing KNN edges of every node
            par = torch.log(scatter_softmax(par, edge_index[0], dim=0) + 1e-10)
        return par

    @torch.no_grad()
    def heatmap_dense(self, x, edge_index, edge_attr, n_nodes):
        """Dense (n x n) heatmap for MCTS / visualisation; zeros outside the KNN graph."""
        par = self.forward(x, edge_index, edge_attr)
        dense = torch.zeros(n_nodes, n_nodes, device=par.device, dtype=par.dtype)
        dense[edge_index[0], edge_index[1]] = par.softmax(0) if not self.normalize_heatmap else par.exp()
        return dense


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
