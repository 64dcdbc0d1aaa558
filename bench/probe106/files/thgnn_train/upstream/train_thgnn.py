"""
THGNN: Temporal and Heterogeneous Graph Neural Network for stock movement prediction.

Each trading day is one graph: nodes are stocks, positive / negative edges come from the
rolling 20-day return correlation (top / bottom quantiles), and every stock additionally
belongs to one industry group.  Node features are the last 20 days of 6 price/volume
features, encoded by a GRU.

    python train_thgnn.py --data_dir data/daily_graphs --device 0
"""
import argparse
import os
import pickle
import random
import time
from glob import glob

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.nn import GATConv
from torch_scatter import scatter_mean
from tqdm import tqdm

parser = argparse.ArgumentParser()
parser.add_argument("--data_dir", type=str, default="data/daily_graphs")
parser.add_argument("--device", type=str, default="0", help="CUDA_VISIBLE_DEVICES")
parser.add_argument("--epochs", type=int, default=60)
parser.add_argument("--lr", type=float, default=2e-4)
parser.add_argument("--weight_decay", type=float, default=1e-5)
parser.add_argument("--hidden", type=int, default=64)
parser.add_argument("--heads", type=int, default=8)
parser.add_argument("--dropout", type=float, default=0.2)
parser.add_argument("--seed", type=int, default=2022)
parser.add_argument("--train_end", type=str, default="2019-12-31")
parser.add_argument("--valid_end", type=str, default="2020-12-31")
parser.add_argument("--save_path", type=str, default="checkpoints/thgnn_best.pt")
args = parser.parse_args()

os.environ["CUDA_VISIBLE_DEVICES"] = args.device


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


class SemanticAttention(nn.Module):
    """Attention over the relation-specific embeddings (self / pos / neg / industry)."""

    def __init__(self, in_features, hidden=128):
        super().__init__()
        self.project = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.Tanh(),
            nn.Linear(hidden, 1, bias=False),
        )

    def forward(self, z):
        # z: [N, R, F]
        w = self.project(z).mean(0)  # [R, 1]
        beta = torch.softmax(w, dim=0)  # [R, 1]
        beta = beta.expand((z.shape[0],) + beta.shape)  # [N, R, 1]
        return (beta * z).sum(1), beta[0].squeeze(-1)


class THGNN(nn.Module):
    def __init__(self, in_features=6, hidden=64, heads=8, dropout=0.2):
        super().__init__()
        self.encoding = nn.GRU(input_size=in_features, hidden_size=hidden, num_layers=1, batch_first=True)
        self.pos_gat = GATConv(hidden, hidden // heads, heads=heads, dropout=dropout)
        self.neg_gat = GATConv(hidden, hidden // heads, heads=heads, dropout=dropout)
        self.mlp_self = nn.Linear(hidden, hidden)
        self.mlp_pos = nn.Linear(hidden, hidden)
        self.mlp_neg = nn.Linear(hidden, hidden)
        self.mlp_ind = nn.Linear(hidden, hidden)
        self.semantic = SemanticAttention(hidden)
        self.predictor = nn.Sequential(
            nn.Linear(hidden, hidden),
            nn.ELU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, 1),
        )

    def forward(self, features, pos_edge_index, neg_edge_index, industry_index):
        _, h = self.encoding(features)  # h: [1, N, hidden]
        h = h.squeeze(0)
        pos = self.pos_gat(h, pos_edge_index)
        neg = self.neg_gat(h, neg_edge_index)
        ind = scatter_mean(h, industry_index, dim=0)[industry_index]  # industry context per stock
        z = torch.stack(
            [
                F.elu(self.mlp_self(h)),
                F.elu(self.mlp_pos(pos)),
                F.elu(self.mlp_neg(neg)),
                F.elu(self.mlp_ind(ind)),
            ],
            dim=1,
        )
        z, beta = self.semantic(z)
        return self.predictor(z).squeeze(-1), beta


def load_day_graphs(data_dir):
    files = sorted(glob(os.path.join(data_dir, "*.pkl")))
    days = []
    for f in tqdm(files, desc="loading graphs"):
        with open(f, "rb") as fh:
            g = pickle.load(fh)
        g["date"] = pd.Timestamp(os.path.basename(f)[:-4])
        days.append(g)
    return days


def split_days(days, train_end, valid_end):
    train_end, valid_end = pd.Timestamp(train_end), pd.Timestamp(valid_end)
    train = [d for d in days if d["date"] <= train_end]
    valid = [d for d in days if train_end < d["date"] <= valid_end]
    test = [d for d in days if d["date"] > valid_end]
    return train, valid, test


def day_ic(pred, label):
    p = pred - pred.mean()
    l = label - label.mean()
    return (p * l).sum() / (p.norm() * l.norm() + 1e-8)


def run_epoch(model, days, optimizer=None):
    training = optimizer is not None
    model.train(training)
    losses, ics = [], []
    order = np.random.permutation(len(days)) if training else np.arange(len(days))
    for i in order:
        g = days[i]
        features = g["features"].float().cuda()  # [N, T, F]
        pos_edge_index = g["pos_edge_index"].long().cuda()
        neg_edge_index = g["neg_edge_index"].long().cuda()
        industry_index = g["industry"].long().cuda()
        label = g["label"].float().cuda()  # next-day return, cross-sectionally ranked
        mask = torch.isfinite(label)

        with torch.set_grad_enabled(training):
            pred, _ = model(features, pos_edge_index, neg_edge_index, industry_index)
            loss = F.mse_loss(pred[mask], label[mask]) - 0.5 * day_ic(pred[mask], label[mask])
            if training:
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 3.0)
                optimizer.step()
        losses.append(loss.item())
        ics.append(day_ic(pred[mask].detach(), label[mask]).item())
    return float(np.mean(losses)), float(np.mean(ics)), float(np.mean(ics) / (np.std(ics) + 1e-8))


@torch.no_grad()
def predict(model, days):
    model.eval()
    frames = []
    for g in days:
        pred, beta = model(
            g["features"].float().cuda(),
            g["pos_edge_index"].long().cuda(),
            g["neg_edge_index"].long().cuda(),
            g["industry"].long().cuda(),
        )
        frames.append(pd.DataFrame({"datetime": g["date"], "instrument": g["codes"], "score": pred.cpu().numpy()}))
    return pd.concat(frames).set_index(["datetime", "instrument"]).sort_index()


def main():
    set_seed(args.seed)
    days = load_day_graphs(args.data_dir)
    train_days, valid_days, test_days = split_days(days, args.train_end, args.valid_end)
    print(f"train {len(train_days)} / valid {len(valid_days)} / test {len(test_days)} days")

    in_features = train_days[0]["features"].shape[-1]
    model = THGNN(in_features=in_features, hidden=args.hidden, heads=args.heads, dropout=args.dropout).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    print(model)
    print("params:", sum(p.numel() for p in model.parameters()))

    best_icir, best_epoch = -np.inf, -1
    os.makedirs(os.path.dirname(args.save_path), exist_ok=True)
    for epoch in range(args.epochs):
        t0 = time.time()
        tr_loss, tr_ic, _ = run_epoch(model, train_days, optimizer)
        va_loss, va_ic, va_icir = run_epoch(model, valid_days)
        print(
            f"epoch {epoch:03d} | train loss {tr_loss:.4f} ic {tr_ic:.4f} | "
            f"valid loss {va_loss:.4f} ic {va_ic:.4f} icir {va_icir:.3f} | {time.time() - t0:.1f}s"
        )
        if va_icir > best_icir:
            best_icir, best_epoch = va_icir, epoch
            torch.save(model.state_dict(), args.save_path)

    print(f"best valid ICIR {best_icir:.3f} @ epoch {best_epoch}")
    model.load_state_dict(torch.load(args.save_path))
    pred = predict(model, test_days)
    pred.to_pickle(os.path.join(os.path.dirname(args.save_path), "pred_test.pkl"))
    _, te_ic, te_icir = run_epoch(model, test_days)
    print(f"test IC {te_ic:.4f} ICIR {te_icir:.3f}")


if __name__ == "__main__":
    main()
