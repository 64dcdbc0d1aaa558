"""
Graph neural networks over function-call graphs (FCGs).

Every node of an FCG is a function of the binary (internal or imported API);
node features are opcode / API-category histograms produced by
data/fcg_dataset.py. A graph-level readout concatenates mean, max and sum
pooling of all layer outputs (jumping knowledge), followed by an MLP head that
predicts either benign/malicious or the malware family.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.nn import GINConv, SAGEConv, GCNConv, BatchNorm
from torch_scatter import scatter_add, scatter_max, scatter_mean


def make_mlp(in_dim, hidden, out_dim, layers=2, dropout=0.0, norm=True):
    mods = []
    dims = [in_dim] + [hidden] * (layers - 1) + [out_dim]
    for i in range(len(dims) - 1):
        mods.append(nn.Linear(dims[i], dims[i + 1]))
        if i < len(dims) - 2:
            if norm:
                mods.append(nn.BatchNorm1d(dims[i + 1]))
            mods.append(nn.ReLU())
            if dropout > 0:
                mods.append(nn.Dropout(dropout))
    return nn.Sequential(*mods)


class Readout(nn.Module):
    """mean || max || sum pooling over the nodes of each graph in the batch."""

    def __init__(self, modes=("mean", "max", "sum")):
        super().__init__()
        self.modes = tuple(modes)

    @property
    def factor(self):
        return len(self.modes)

    def forward(self, x, batch, num_graphs):
        outs = []
        for m in self.modes:
            if m == "mean":
                outs.append(scatter_mean(x, batch, dim=0, dim_size=num_graphs))
            elif m == "max":
                outs.append(scatter_max(x, batch, dim=0, dim_size=num_graphs)[0])
            elif m == "sum":
                outs.append(scatter_add(x, batch, dim=0, dim_size=num_graphs))
            else:
                raise ValueError(f"unknown readout {m}")
        return torch.cat(outs, dim=-1)


class FCGEncoder(nn.Module):
    def __init__(self, in_dim, hidden=128, num_layers=4, conv="gin", dropout=0.2, jk=True):
        super().__init__()
        self.jk = jk
        self.dropout = dropout
        self.convs = nn.ModuleList()
        self.norms = nn.ModuleList()
        dim = in_dim
        for _ in range(num_layers):
            if conv == "gin":
                c = GINConv(make_mlp(dim, hidden, hidden, layers=2), train_eps=True)
            elif conv == "sage":
                c = SAGEConv(dim, hidden, aggr="mean")
            elif conv == "gcn":
                c = GCNConv(dim, hidden, cached=False, add_self_loops=True)
            else:
                raise ValueError(f"unknown conv {conv}")
            self.convs.append(c)
            self.norms.append(BatchNorm(hidden))
            dim = hidden
        self.out_dim = hidden * num_layers if jk else hidden

    def forward(self, x, edge_index):
        hs = []
        for conv, norm in zip(self.convs, self.norms):
            x = conv(x, edge_index)
            x = norm(x)
            x = F.relu(x)
            x = F.dropout(x, p=self.dropout, training=self.training)
            hs.append(x)
        return torch.cat(hs, dim=-1) if self.jk else hs[-1]


class FCGClassifier(nn.Module):
    def __init__(self, in_dim, num_classes, hidden=128, num_layers=4, conv="gin", dropout=0.2,
                 readout=("mean", "max", "sum"), api_vocab=0, api_dim=32):
        super().__init__()
        # optional learned embedding for imported-API node ids (0 = internal function)
        self.api_emb = nn.Embedding(api_vocab, api_dim, padding_idx=0) if api_vocab > 0 else None
        enc_in = in_dim + (api_dim if self.api_emb is not None else 0)
        self.encoder = FCGEncoder(enc_in, hidden, num_layers, conv, dropout)
        self.readout = Readout(readout)
        self.head = make_mlp(self.encoder.out_dim * self.readout.factor, hidden * 2, num_classes,
                             layers=3, dropout=dropout, norm=False)

    def forward(self, data):
        x = data.x
        if self.api_emb is not None:
            x = torch.cat([x, self.api_emb(data.api_id)], dim=-1)
        h = self.encoder(x, data.edge_index)
        g = self.readout(h, data.batch, data.num_graphs)
        return self.head(g)

    @torch.no_grad()
    def node_importance(self, data):
        """Gradient-free saliency: L2 norm of each node's final embedding (used by explain.py)."""
        x = data.x
        if self.api_emb is not None:
            x = torch.cat([x, self.api_emb(data.api_id)], dim=-1)
        h = self.encoder(x, data.edge_index)
        return h.norm(dim=-1)


def build_model(cfg, in_dim, num_classes, api_vocab=0):
    m = cfg["model"]
    return FCGClassifier(in_dim, num_classes, hidden=m.get("hidden", 128), num_layers=m.get("layers", 4),
                         conv=m.get("conv", "gin"), dropout=m.get("dropout", 0.2),
                         readout=tuple(m.get("readout", ["mean", "max", "sum"])),
                         api_vocab=api_vocab, api_dim=m.get("api_dim", 32))
