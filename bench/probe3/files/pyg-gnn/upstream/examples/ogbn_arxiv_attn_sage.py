"""ogbn-arxiv: GraphSAGE with an edge-attention branch and GCN-normalised propagation.

Requires torch_geometric with the optional torch_scatter / torch_sparse wheels:
    pip install torch_geometric
    pip install torch_scatter torch_sparse -f https://data.pyg.org/whl/torch-2.1.0+cu121.html
"""
import argparse
import time

import torch
import torch.nn.functional as F
import torch_geometric.transforms as T
from ogb.nodeproppred import Evaluator, PygNodePropPredDataset
from torch_geometric.nn import SAGEConv
from torch_scatter import scatter_add, scatter_max, scatter_mean
from torch_sparse import SparseTensor, matmul


class EdgeAttentionConv(torch.nn.Module):
    """Single-head additive attention over incoming edges (GAT-style), written with scatter ops."""

    def __init__(self, in_channels, out_channels, negative_slope=0.2):
        super().__init__()
        self.lin = torch.nn.Linear(in_channels, out_channels, bias=False)
        self.att_src = torch.nn.Linear(out_channels, 1, bias=False)
        self.att_dst = torch.nn.Linear(out_channels, 1, bias=False)
        self.negative_slope = negative_slope

    def reset_parameters(self):
        self.lin.reset_parameters()
        self.att_src.reset_parameters()
        self.att_dst.reset_parameters()

    def forward(self, x, edge_index):
        src, dst = edge_index
        h = self.lin(x)
        alpha = (self.att_src(h)[src] + self.att_dst(h)[dst]).squeeze(-1)
        alpha = F.leaky_relu(alpha, self.negative_slope)
        # numerically stable softmax over the incoming edges of every node
        alpha_max = scatter_max(alpha, dst, dim=0, dim_size=x.size(0))[0]
        alpha = torch.exp(alpha - alpha_max[dst])
        denom = scatter_add(alpha, dst, dim=0, dim_size=x.size(0))
        alpha = alpha / (denom[dst] + 1e-16)
        alpha = F.dropout(alpha, p=0.1, training=self.training)
        out = scatter_add(h[src] * alpha.unsqueeze(-1), dst, dim=0, dim_size=x.size(0))
        return out


class AttnSAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers, dropout):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        self.bns = torch.nn.ModuleList()
        self.convs.append(SAGEConv(in_channels, hidden_channels, aggr="max"))
        self.bns.append(torch.nn.BatchNorm1d(hidden_channels))
        for _ in range(num_layers - 2):
            self.convs.append(SAGEConv(hidden_channels, hidden_channels))
            self.bns.append(torch.nn.BatchNorm1d(hidden_channels))
        self.convs.append(SAGEConv(hidden_channels, out_channels))
        self.attn = EdgeAttentionConv(in_channels, hidden_channels)
        self.gate = torch.nn.Linear(2 * hidden_channels, hidden_channels)
        self.dropout = dropout

    def reset_parameters(self):
        for conv in self.convs:
            conv.reset_parameters()
        for bn in self.bns:
            bn.reset_parameters()
        self.attn.reset_parameters()

    def forward(self, x, adj_t, edge_index):
        a = self.attn(x, edge_index)
        for i, conv in enumerate(self.convs[:-1]):
            x = conv(x, adj_t)
            if i == 0:
                x = self.gate(torch.cat([x, a], dim=-1))
            x = self.bns[i](x)
            x = F.relu(x)
            x = F.dropout(x, p=self.dropout, training=self.training)
        x = self.convs[-1](x, adj_t)
        return x.log_softmax(dim=-1)


def gcn_propagate(adj_t, x, hops=2):
    """Parameter-free SGC-style smoothing used as an extra input feature."""
    adj_t = adj_t.set_diag()
    deg = adj_t.sum(dim=1).to(torch.float)
    deg_inv_sqrt = deg.pow(-0.5)
    deg_inv_sqrt[deg_inv_sqrt == float("inf")] = 0
    adj_t = deg_inv_sqrt.view(-1, 1) * adj_t * deg_inv_sqrt.view(1, -1)
    for _ in range(hops):
        x = matmul(adj_t, x, reduce="sum")
    return x


def label_homophily(edge_index, y, num_nodes):
    src, dst = edge_index
    same = (y[src] == y[dst]).float().view(-1)
    return scatter_mean(same, dst, dim=0, dim_size=num_nodes).mean().item()


def train(model, data, train_idx, optimizer):
    model.train()
    optimizer.zero_grad()
    out = model(data.x, data.adj_t, data.edge_index)[train_idx]
    loss = F.nll_loss(out, data.y.squeeze(1)[train_idx])
    loss.backward()
    optimizer.step()
    return loss.item()


@torch.no_grad()
def test(model, data, split_idx, evaluator):
    model.eval()
    out = model(data.x, data.adj_t, data.edge_index)
    y_pred = out.argmax(dim=-1, keepdim=True)
    results = []
    for split in ("train", "valid", "test"):
        results.append(evaluator.eval({"y_true": data.y[split_idx[split]],
                                       "y_pred": y_pred[split_idx[split]]})["acc"])
    return results


def main():
    parser = argparse.ArgumentParser(description="OGBN-Arxiv (AttnSAGE)")
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--root", type=str, default="data/ogb")
    parser.add_argument("--num_layers", type=int, default=3)
    parser.add_argument("--hidden_channels", type=int, default=256)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(args)

    device = torch.device(f"cuda:{args.device}" if torch.cuda.is_available() else "cpu")

    dataset = PygNodePropPredDataset(name="ogbn-arxiv", root=args.root, transform=T.ToSparseTensor())
    data = dataset[0]
    data.adj_t = data.adj_t.to_symmetric()
    row, col, _ = data.adj_t.coo()
    data.edge_index = torch.stack([col, row], dim=0)
    data.x = torch.cat([data.x, gcn_propagate(data.adj_t, data.x)], dim=-1)
    data = data.to(device)
    print(f"label homophily: {label_homophily(data.edge_index, data.y.view(-1), data.num_nodes):.3f}")

    split_idx = dataset.get_idx_split()
    train_idx = split_idx["train"].to(device)

    model = AttnSAGE(data.num_features, args.hidden_channels, dataset.num_classes, args.num_layers,
                     args.dropout).to(device)
    evaluator = Evaluator(name="ogbn-arxiv")

    for run in range(args.runs):
        model.reset_parameters()
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
        best_valid, best_test = 0.0, 0.0
        t0 = time.time()
        for epoch in range(1, 1 + args.epochs):
            loss = train(model, data, train_idx, optimizer)
            train_acc, valid_acc, test_acc = test(model, data, split_idx, evaluator)
            if valid_acc > best_valid:
                best_valid, best_test = valid_acc, test_acc
            if epoch % 50 == 0:
                print(f"Run {run:02d} Epoch {epoch:03d} loss {loss:.4f} train {100 * train_acc:.2f}% "
                      f"valid {100 * valid_acc:.2f}% test {100 * test_acc:.2f}% ({time.time() - t0:.1f}s)")
        print(f"Run {run:02d}: best valid {100 * best_valid:.2f}%, test {100 * best_test:.2f}%")
        if torch.cuda.is_available():
            print(f"peak memory {torch.cuda.max_memory_allocated() / 2 ** 20:.0f} MiB")


if __name__ == "__main__":
    main()
