# coding: utf-8
"""DeepFM trainer for the Avazu / Criteo libsvm-style field-aware dumps.

Multi-GPU via torch.distributed.launch + apex:

    python -m torch.distributed.launch --nproc_per_node=4 deepfm/train.py \
        --train data/avazu/train.ffm --valid data/avazu/valid.ffm --opt_level O1

apex.amp O1 keeps the FM second-order term in fp32 (it is a sum of squares and overflows in fp16 on
Criteo-scale fields), everything else runs in half precision.
"""
import argparse
import logging
import os
import random
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from sklearn.metrics import log_loss, roc_auc_score
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from apex import amp
from apex.optimizers import FusedAdam
from apex.parallel import DistributedDataParallel as ApexDDP
from apex.parallel import convert_syncbn_model

logger = logging.getLogger("deepfm")


class FFMDataset(Dataset):
    """label field:feat:val field:feat:val ...  (one row per line, feat already globally indexed)."""

    def __init__(self, path, num_fields):
        self.num_fields = num_fields
        idx, val, lab = [], [], []
        with open(path) as f:
            for line in f:
                parts = line.split()
                lab.append(float(parts[0]))
                row_i = [0] * num_fields
                row_v = [0.0] * num_fields
                for tok in parts[1:]:
                    field, feat, v = tok.split(":")
                    row_i[int(field)] = int(feat)
                    row_v[int(field)] = float(v)
                idx.append(row_i)
                val.append(row_v)
        self.idx = torch.tensor(idx, dtype=torch.long)
        self.val = torch.tensor(val, dtype=torch.float)
        self.lab = torch.tensor(lab, dtype=torch.float)

    def __len__(self):
        return self.lab.numel()

    def __getitem__(self, i):
        return self.idx[i], self.val[i], self.lab[i]


class DeepFM(nn.Module):
    def __init__(self, feature_size, num_fields, embedding_size=10, hidden=(400, 400, 400), dropout=0.5):
        super().__init__()
        self.first_order = nn.Embedding(feature_size, 1)
        self.second_order = nn.Embedding(feature_size, embedding_size)
        nn.init.normal_(self.first_order.weight, std=1e-4)
        nn.init.normal_(self.second_order.weight, std=1e-4)
        self.bias = nn.Parameter(torch.zeros(1))
        layers, d = [], num_fields * embedding_size
        for h in hidden:
            layers += [nn.Linear(d, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(dropout)]
            d = h
        layers.append(nn.Linear(d, 1))
        self.dnn = nn.Sequential(*layers)

    def fm(self, emb):
        # 0.5 * ((sum v)^2 - sum v^2), kept in fp32 by the amp whitelist below
        square_of_sum = emb.sum(dim=1).pow(2)
        sum_of_square = emb.pow(2).sum(dim=1)
        return 0.5 * (square_of_sum - sum_of_square).sum(dim=1, keepdim=True)

    def forward(self, feat_idx, feat_val):
        w = self.first_order(feat_idx).squeeze(-1) * feat_val
        v = self.second_order(feat_idx) * feat_val.unsqueeze(-1)
        y_first = w.sum(dim=1, keepdim=True)
        y_second = self.fm(v.float())
        y_deep = self.dnn(v.flatten(1))
        return (self.bias + y_first + y_second + y_deep).squeeze(1)


# apex O1: force the FM interaction to run in fp32
amp.register_float_function(DeepFM, "fm")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", required=True)
    parser.add_argument("--valid", required=True)
    parser.add_argument("--feature_size", type=int, default=1544489)
    parser.add_argument("--num_fields", type=int, default=22)
    parser.add_argument("--embedding_size", type=int, default=10)
    parser.add_argument("--batch_size", type=int, default=2048)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--l2", type=float, default=1e-6)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--opt_level", default="O1", choices=["O0", "O1", "O2"])
    parser.add_argument("--sync_bn", action="store_true")
    parser.add_argument("--seed", type=int, default=2019)
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--save", default="deepfm.pt")
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def evaluate(model, loader):
    model.eval()
    ys, ps = [], []
    with torch.no_grad():
        for feat_idx, feat_val, label in loader:
            feat_idx, feat_val = feat_idx.cuda(non_blocking=True), feat_val.cuda(non_blocking=True)
            ps.append(torch.sigmoid(model(feat_idx, feat_val)).float().cpu())
            ys.append(label)
    model.train()
    y = torch.cat(ys).numpy()
    p = torch.cat(ps).numpy()
    return roc_auc_score(y, p), log_loss(y, p)


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stdout)
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
    world = dist.get_world_size() if distributed else 1
    rank = dist.get_rank() if distributed else 0
    set_seed(args.seed)

    train_set = FFMDataset(args.train, args.num_fields)
    valid_set = FFMDataset(args.valid, args.num_fields)
    sampler = DistributedSampler(train_set) if distributed else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=sampler is None, sampler=sampler,
                              num_workers=4, pin_memory=True, drop_last=True)
    valid_loader = DataLoader(valid_set, batch_size=args.batch_size * 4, shuffle=False, num_workers=4,
                              pin_memory=True)

    model = DeepFM(args.feature_size, args.num_fields, args.embedding_size)
    if args.sync_bn and distributed:
        model = convert_syncbn_model(model)
    model = model.cuda()
    optimizer = FusedAdam(model.parameters(), lr=args.lr, weight_decay=args.l2)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level,
                                      keep_batchnorm_fp32=None if args.opt_level == "O1" else True,
                                      loss_scale="dynamic")
    if distributed:
        model = ApexDDP(model, delay_allreduce=True)
    criterion = nn.BCEWithLogitsLoss()

    best_auc = 0.0
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        t0 = time.time()
        tot, n = 0.0, 0
        for it, (feat_idx, feat_val, label) in enumerate(train_loader):
            feat_idx = feat_idx.cuda(non_blocking=True)
            feat_val = feat_val.cuda(non_blocking=True)
            label = label.cuda(non_blocking=True)
            logits = model(feat_idx, feat_val)
            loss = criterion(logits.float(), label)
            optimizer.zero_grad()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
            tot += loss.item()
            n += 1
            if rank == 0 and it % 500 == 0:
                logger.info("epoch %d iter %d loss %.5f (%.1f it/s)", epoch, it, tot / n, n / (time.time() - t0))
        if rank == 0:
            auc, ll = evaluate(model, valid_loader)
            logger.info("epoch %d done in %.0fs  valid AUC %.5f  logloss %.5f", epoch, time.time() - t0, auc, ll)
            if auc > best_auc:
                best_auc = auc
                state = model.module.state_dict() if distributed else model.state_dict()
                torch.save({"model": state, "amp": amp.state_dict(), "epoch": epoch}, args.save)
        if distributed:
            dist.barrier()
    if rank == 0:
        logger.info("best valid AUC %.5f (world size %d)", best_auc, world)


if __name__ == "__main__":
    main()
