"""
[Semi-Supervised Classification with Graph Convolutional Networks]
(https://arxiv.org/abs/1609.02907)

Written with DGL's sparse matrix API (dgl.sparse).
"""

import argparse

import dgl.sparse as dglsp
import torch
import torch.nn as nn
import torch.nn.functional as F
from dgl.data import CoraGraphDataset, CiteseerGraphDataset, PubmedGraphDataset
from torch.optim import Adam


class GCN(nn.Module):
    def __init__(self, in_size, out_size, hidden_size=16):
        super().__init__()

        # Two-layer GCN.
        self.W1 = nn.Linear(in_size, hidden_size)
        self.W2 = nn.Linear(hidden_size, out_size)

    ############################################################################
    # (HIGHLIGHT) Take the advantage of DGL sparse APIs to implement the GCN
    # forward process.
    ############################################################################
    def forward(self, A_norm, X):
        X = A_norm @ self.W1(X)
        X = F.relu(X)
        X = F.dropout(X, p=0.5, training=self.training)
        X = A_norm @ self.W2(X)
        return X


def evaluate(g, pred):
    label, val_mask, test_mask = g.ndata["label"], g.ndata["val_mask"], g.ndata["test_mask"]

    # Compute accuracy on validation/test set.
    val_acc = (pred[val_mask] == label[val_mask]).float().mean()
    test_acc = (pred[test_mask] == label[test_mask]).float().mean()
    return val_acc, test_acc


def train(model, g, A_norm, X, epochs=200, lr=1e-2, wd=5e-4):
    label = g.ndata["label"]
    train_mask = g.ndata["train_mask"]
    optimizer = Adam(model.parameters(), lr=lr, weight_decay=wd)
    best_val, best_test = 0.0, 0.0

    for epoch in range(epochs):
        model.train()

        # Forward.
        logits = model(A_norm, X)

        # Compute loss with nodes in the training set.
        loss = F.cross_entropy(logits[train_mask], label[train_mask])

        # Backward.
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        # Compute prediction.
        pred = logits.argmax(dim=1)

        # Evaluate the prediction.
        val_acc, test_acc = evaluate(g, pred)
        if val_acc > best_val:
            best_val, best_test = val_acc.item(), test_acc.item()
        if epoch % 5 == 0:
            print(
                f"In epoch {epoch}, loss: {loss:.3f}, val acc: {val_acc:.3f}"
                f", test acc: {test_acc:.3f}"
            )
    return best_val, best_test


def normalized_adjacency(g, dev):
    # Create the adjacency matrix of graph.
    indices = torch.stack(g.edges())
    N = g.num_nodes()
    A = dglsp.spmatrix(indices, shape=(N, N))

    ############################################################################
    # (HIGHLIGHT) Compute the symmetrically normalized adjacency matrix with
    # Sparse Matrix API
    ############################################################################
    I = dglsp.identity(A.shape, device=dev)
    A_hat = A + I
    D_hat = dglsp.diag(A_hat.sum(0))
    D_hat_invsqrt = D_hat ** -0.5
    return D_hat_invsqrt @ A_hat @ D_hat_invsqrt


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="cora", choices=["cora", "citeseer", "pubmed"])
    parser.add_argument("--epochs", type=int, default=200)
    args = parser.parse_args()

    # If CUDA is available, use GPU to accelerate the training, use CPU
    # otherwise.
    dev = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    # Load graph from the existing dataset.
    data_cls = {"cora": CoraGraphDataset, "citeseer": CiteseerGraphDataset,
                "pubmed": PubmedGraphDataset}[args.dataset]
    dataset = data_cls()
    g = dataset[0].to(dev)
    num_classes = dataset.num_classes
    X = g.ndata["feat"]

    A_norm = normalized_adjacency(g, dev)

    # Create GCN model.
    in_size = X.shape[1]
    out_size = num_classes
    model = GCN(in_size, out_size).to(dev)

    # Kick off training.
    best_val, best_test = train(model, g, A_norm, X, epochs=args.epochs)
    print(f"best val acc {best_val:.3f}, matching test acc {best_test:.3f}")
