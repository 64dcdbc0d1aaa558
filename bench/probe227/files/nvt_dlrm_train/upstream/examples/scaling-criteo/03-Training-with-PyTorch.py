#!/usr/bin/env python
# Copyright (c) 2021, NVIDIA CORPORATION.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# ==============================================================================
"""Scaling Criteo: Training with PyTorch.

Trains a DLRM-style model on the parquet files written by 02-ETL-with-NVTabular using
the NVTabular asynchronous PyTorch dataloader (TorchAsyncItr). The dataloader reads
parquet row groups straight into GPU memory with cuDF and hands out CUDA tensors via
DLPack, so no host->device copy appears in the training loop.
"""
import argparse
import glob
import json
import logging
import os
import time
from time import time as now

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score

import nvtabular as nvt
from nvtabular.framework_utils.torch.utils import process_epoch
from nvtabular.loader.torch import DLDataLoader, TorchAsyncItr
from merlin.io import Dataset

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
log = logging.getLogger("train")

BATCH_SIZE = int(os.environ.get("BATCH_SIZE", 64 * 1024))
PARTS_PER_CHUNK = int(os.environ.get("PARTS_PER_CHUNK", 2))


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", default=os.environ.get("OUTPUT_DATA_DIR", "/raid/data/criteo/test_dask/output"))
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--emb-lr", type=float, default=0.05)
    p.add_argument("--embedding-dim", type=int, default=128)
    p.add_argument("--bottom-mlp", default="512,256,128")
    p.add_argument("--top-mlp", default="1024,1024,512,256,1")
    p.add_argument("--amp", action="store_true")
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=-1)
    p.add_argument("--log-every", type=int, default=200)
    return p.parse_args()


class DotInteraction(nn.Module):
    """Pairwise dot products between the bottom MLP output and every embedding vector."""

    def forward(self, bottom_out, emb_list):
        b, d = bottom_out.shape
        t = torch.cat([bottom_out.unsqueeze(1)] + [e.unsqueeze(1) for e in emb_list], dim=1)
        z = torch.bmm(t, t.transpose(1, 2))
        n = t.shape[1]
        li, lj = torch.tril_indices(n, n, offset=-1, device=z.device)
        flat = z[:, li, lj]
        return torch.cat([bottom_out, flat], dim=1)


def mlp(sizes, final_act=True):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or final_act:
            layers.append(nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    def __init__(self, embedding_table_shapes, num_continuous, emb_dim, bottom, top):
        super().__init__()
        self.embeddings = nn.ModuleList(
            [nn.Embedding(card, emb_dim, sparse=True) for _, (card, _) in embedding_table_shapes.items()]
        )
        self.bottom = mlp([num_continuous] + bottom)
        self.interaction = DotInteraction()
        n = len(embedding_table_shapes) + 1
        top_in = bottom[-1] + n * (n - 1) // 2
        self.top = mlp([top_in] + top, final_act=False)

    def forward(self, x_cat, x_cont):
        b = self.bottom(x_cont)
        embs = [emb(x_cat[:, i]) for i, emb in enumerate(self.embeddings)]
        return self.top(self.interaction(b, embs)).squeeze(1)


def make_loader(paths, cats, conts, labels, shuffle, device):
    ds = Dataset(paths, engine="parquet", part_mem_fraction=0.1)
    itr = TorchAsyncItr(
        ds,
        batch_size=BATCH_SIZE,
        cats=cats,
        conts=conts,
        labels=labels,
        shuffle=shuffle,
        parts_per_chunk=PARTS_PER_CHUNK,
        device=device,
    )
    return DLDataLoader(itr, batch_size=None, collate_fn=lambda x: x, pin_memory=False, num_workers=0)


def evaluate(model, loader, max_steps=-1):
    model.eval()
    preds, ys = [], []
    with torch.no_grad():
        for step, (x_cat, x_cont, y) in enumerate(loader):
            logits = model(x_cat.long(), x_cont.float())
            preds.append(torch.sigmoid(logits.float()).cpu().numpy())
            ys.append(y.cpu().numpy())
            if max_steps > 0 and step >= max_steps:
                break
    model.train()
    return roc_auc_score(np.concatenate(ys), np.concatenate(preds))


def main():
    args = get_args()
    torch.cuda.set_device(args.gpu)
    device = torch.device("cuda", args.gpu)

    output_path = os.path.join(args.data_dir, "output")
    workflow = nvt.Workflow.load(os.path.join(output_path, "workflow"))
    embedding_table_shapes = nvt.ops.get_embedding_sizes(workflow)
    schema = workflow.output_schema
    cats = [c for c in schema.column_names if c.startswith("C")]
    conts = [c for c in schema.column_names if c.startswith("I")]
    labels = ["label"]

    train_paths = sorted(glob.glob(os.path.join(output_path, "train", "*.parquet")))
    valid_paths = sorted(glob.glob(os.path.join(output_path, "valid", "*.parquet")))
    log.info("train files %d valid files %d", len(train_paths), len(valid_paths))

    train_loader = make_loader(train_paths, cats, conts, labels, True, args.gpu)
    valid_loader = make_loader(valid_paths, cats, conts, labels, False, args.gpu)

    bottom = [int(x) for x in args.bottom_mlp.split(",")]
    top = [int(x) for x in args.top_mlp.split(",")]
    model = DLRM(embedding_table_shapes, len(conts), args.embedding_dim, bottom, top)
    model = model.cuda()

    dense_params = [p for n, p in model.named_parameters() if not n.startswith("embeddings")]
    sparse_params = [p for n, p in model.named_parameters() if n.startswith("embeddings")]
    opt_dense = torch.optim.Adam(dense_params, lr=args.lr)
    opt_sparse = torch.optim.SparseAdam(sparse_params, lr=args.emb_lr)
    loss_fn = nn.BCEWithLogitsLoss()
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    global_step = 0
    for epoch in range(args.epochs):
        torch.cuda.synchronize()
        start = now()
        seen = 0
        for step, (x_cat, x_cont, y) in enumerate(train_loader):
            with torch.cuda.amp.autocast(enabled=args.amp):
                logits = model(x_cat.long(), x_cont.float())
                loss = loss_fn(logits.float(), y.float())
            opt_dense.zero_grad(set_to_none=True)
            opt_sparse.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt_dense)
            scaler.step(opt_sparse)
            scaler.update()
            seen += y.shape[0]
            global_step += 1
            if global_step % args.log_every == 0:
                torch.cuda.synchronize(device)
                el = now() - start
                log.info("epoch %d step %d loss %.5f  %.0f samples/s  mem %.1f GB", epoch, step, loss.item(),
                         seen / el, torch.cuda.memory_allocated(device) / 1e9)
            if args.max_steps > 0 and global_step >= args.max_steps:
                break
        torch.cuda.synchronize()  # wait for the last step before timing
        train_time = now() - start
        auc = evaluate(model, valid_loader, max_steps=200)
        log.info("epoch %d done in %.1fs, valid AUC %.5f", epoch, train_time, auc)

    ckpt = os.path.join(args.data_dir, "dlrm_nvt.pt")
    torch.save({"model": model.state_dict(), "args": vars(args)}, ckpt)
    with open(os.path.join(args.data_dir, "train_stats.json"), "w") as f:
        json.dump({"auc": float(auc), "train_time": train_time, "gpu": torch.cuda.get_device_name(device)}, f)


if __name__ == "__main__":
    main()
