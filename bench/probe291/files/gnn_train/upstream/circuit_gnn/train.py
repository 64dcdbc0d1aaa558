"""Train a GNN + recipe encoder to predict post-synthesis QoR (delay, area).

    python train.py --config configs/aig_sage.yaml
    python train.py --config configs/aig_sage.yaml --eval_only --ckpt runs/aig_sage/best.pt
"""
import argparse
import logging
import math
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml

import dgl
import dgl.nn as dglnn
from dgl.dataloading import GraphDataLoader

from data.aig_dataset import AIGQoRDataset, collate, SYNTH_OPS

logger = logging.getLogger("qor")


# --------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------
class AIGEncoder(nn.Module):
    def __init__(self, in_dim, hidden, num_layers=4, dropout=0.1, conv="sage"):
        super().__init__()
        self.layers = nn.ModuleList()
        self.norms = nn.ModuleList()
        for i in range(num_layers):
            d_in = in_dim if i == 0 else hidden
            if conv == "sage":
                self.layers.append(dglnn.SAGEConv(d_in, hidden, aggregator_type="mean"))
            elif conv == "gcn":
                self.layers.append(dglnn.GraphConv(d_in, hidden, allow_zero_in_degree=True))
            else:
                self.layers.append(dglnn.GINConv(nn.Linear(d_in, hidden), aggregator_type="sum"))
            self.norms.append(nn.BatchNorm1d(hidden))
        self.dropout = nn.Dropout(dropout)
        self.edge_gate = nn.Linear(1, 1)

    def forward(self, g, h):
        # complemented fanins are modelled as a learned per-edge scale
        ew = torch.sigmoid(self.edge_gate(g.edata["inv"])).squeeze(-1)
        for conv, norm in zip(self.layers, self.norms):
            h = conv(g, h, edge_weight=ew)
            h = self.dropout(F.relu(norm(h)))
        with g.local_scope():
            g.ndata["h"] = h
            hg = torch.cat([dgl.mean_nodes(g, "h"), dgl.max_nodes(g, "h")], dim=1)
        return hg


class RecipeEncoder(nn.Module):
    def __init__(self, num_ops, dim, max_len=20):
        super().__init__()
        self.emb = nn.Embedding(num_ops + 1, dim, padding_idx=0)
        self.pos = nn.Parameter(torch.zeros(1, max_len, dim))
        layer = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=2 * dim, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)

    def forward(self, r):
        mask = r == 0
        x = self.emb(r) + self.pos[:, :r.size(1)]
        x = self.encoder(x, src_key_padding_mask=mask)
        x = x.masked_fill(mask.unsqueeze(-1), 0.0)
        return x.sum(1) / (~mask).sum(1, keepdim=True).clamp(min=1)


class QoRNet(nn.Module):
    def __init__(self, in_dim, hidden=128, num_layers=4, conv="sage"):
        super().__init__()
        self.graph_enc = AIGEncoder(in_dim, hidden, num_layers, conv=conv)
        self.recipe_enc = RecipeEncoder(len(SYNTH_OPS), hidden)
        self.head = nn.Sequential(nn.Linear(3 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, 2))

    def forward(self, g, recipe):
        hg = self.graph_enc(g, g.ndata["feat"])
        hr = self.recipe_enc(recipe)
        return self.head(torch.cat([hg, hr], dim=1))


# --------------------------------------------------------------------------
# utils
# --------------------------------------------------------------------------
def load_config(path):
    with open(path) as f:
        return yaml.safe_load(f)


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    dgl.seed(seed)


def mape(pred, target):
    return ((pred - target).abs() / target.abs().clamp(min=1e-6)).mean(0)


@torch.no_grad()
def evaluate(model, loader, device, amp):
    model.eval()
    preds, targets = [], []
    for bg, recipe, target in loader:
        bg = bg.to(device)
        recipe = recipe.to(device)
        with torch.autocast(device_type="cuda", enabled=amp):
            out = model(bg, recipe)
        preds.append(out.float().cpu())
        targets.append(target)
    preds = torch.cat(preds)
    targets = torch.cat(targets)
    err = mape(preds, targets)
    return {"mape_delay": err[0].item(), "mape_area": err[1].item()}


def profile_inference(model, dataset, n=20):
    """Latency of one forward on the largest design graph (for the paper table)."""
    model.eval()
    gi = max(range(len(dataset.graphs)), key=lambda i: dataset.graphs[i].num_nodes())
    g = dataset.graphs[gi].to('cuda')
    recipe = torch.ones(1, 20, dtype=torch.long, device='cuda')
    with torch.no_grad():
        for _ in range(3):
            model(g, recipe)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            model(g, recipe)
        torch.cuda.synchronize()  # wait for the timed forwards
    ms = (time.perf_counter() - t0) / n * 1000
    logger.info("largest graph: %d nodes %d edges, %.2f ms / forward",
                g.num_nodes(), g.num_edges(), ms)
    return ms


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--eval_only", action="store_true")
    parser.add_argument("--ckpt", default=None)
    args = parser.parse_args()
    cfg = load_config(args.config)

    out_dir = cfg["train"]["out_dir"]
    os.makedirs(out_dir, exist_ok=True)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    seed_all(cfg.get("seed", 0))

    device = torch.device(cfg.get("device", "cuda:0"))
    amp = cfg["train"].get("amp", False)
    torch.backends.cuda.matmul.allow_tf32 = cfg["train"].get("tf32", True)
    torch.backends.cudnn.allow_tf32 = cfg["train"].get("tf32", True)

    use_uva = cfg["data"].get("use_uva", False)
    train_set = AIGQoRDataset(cfg["data"]["root"], "train", use_uva=use_uva)
    val_set = AIGQoRDataset(cfg["data"]["root"], "val", use_uva=use_uva)
    train_loader = GraphDataLoader(train_set, batch_size=cfg["train"]["batch_size"], shuffle=True,
                                   collate_fn=collate, num_workers=cfg["data"].get("num_workers", 4),
                                   pin_memory=torch.cuda.is_available())
    val_loader = GraphDataLoader(val_set, batch_size=cfg["train"]["batch_size"], shuffle=False,
                                 collate_fn=collate, num_workers=cfg["data"].get("num_workers", 4))

    in_dim = train_set.graphs[0].ndata["feat"].shape[1]
    model = QoRNet(in_dim, cfg["model"]["hidden"], cfg["model"]["num_layers"], cfg["model"]["conv"]).to(device)
    logger.info("params: %.2fM", sum(p.numel() for p in model.parameters()) / 1e6)

    if args.eval_only:
        state = torch.load(args.ckpt, map_location=device)
        model.load_state_dict(state["model"])
        logger.info("val: %s", evaluate(model, val_loader, device, amp))
        profile_inference(model, val_set)
        return

    opt = torch.optim.Adam(model.parameters(), lr=cfg["train"]["lr"], weight_decay=cfg["train"].get("wd", 0.0))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cfg["train"]["epochs"])
    scaler = torch.cuda.amp.GradScaler(enabled=amp)

    best = math.inf
    for epoch in range(cfg["train"]["epochs"]):
        model.train()
        t0 = time.time()
        tot = 0.0
        for bg, recipe, target in train_loader:
            bg = bg.to(device)
            recipe = recipe.to(device)
            target = target.to(device)
            opt.zero_grad()
            with torch.cuda.amp.autocast(enabled=amp):
                pred = model(bg, recipe)
                loss = F.smooth_l1_loss(pred, target)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            tot += loss.item() * target.size(0)
        sched.step()
        res = evaluate(model, val_loader, device, amp)
        score = res["mape_delay"] + res["mape_area"]
        logger.info("epoch %3d loss %.4f val %s (%.1fs, peak mem %.0f MB)", epoch, tot / len(train_set), res,
                    time.time() - t0, torch.cuda.max_memory_allocated() / 2**20)
        if score < best:
            best = score
            torch.save({"model": model.state_dict(), "cfg": cfg, "epoch": epoch}, os.path.join(out_dir, "best.pt"))
    logger.info("best val score %.4f", best)


if __name__ == "__main__":
    main()
