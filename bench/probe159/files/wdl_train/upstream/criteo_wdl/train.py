# -*- coding: utf-8 -*-
"""
Wide & Deep on Criteo (Kaggle display advertising, 13 dense + 26 categorical fields).

Single GPU:
    python train.py --data_dir /data/criteo_npy --sparse
8 GPUs (see scripts/run_8p.sh):
    python -m torch.distributed.launch --nproc_per_node=8 train.py --data_dir /data/criteo_npy --amp

Mixed precision uses NVIDIA apex (O1 by default). Sparse embedding gradients + SparseAdam are only
used on a single GPU: NCCL has no sparse all-reduce, so the distributed run keeps dense gradients.
"""
import argparse
import math
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

try:
    from apex import amp
    HAS_APEX = True
except ImportError:
    amp = None
    HAS_APEX = False


def parse_args():
    parser = argparse.ArgumentParser(description='Wide&Deep Criteo trainer')
    parser.add_argument('--data_dir', default='/data/criteo_npy')
    parser.add_argument('--batch_size', type=int, default=4096, help='per-GPU batch size')
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--embedding_dim', type=int, default=16)
    parser.add_argument('--deep_layers', type=int, nargs='+', default=[1024, 512, 256])
    parser.add_argument('--dropout', type=float, default=0.2)
    parser.add_argument('--sparse', action='store_true', help='sparse embedding grads + SparseAdam (1 GPU only)')
    parser.add_argument('--amp', action='store_true', help='apex mixed precision')
    parser.add_argument('--opt_level', default='O1', type=str)
    parser.add_argument('--loss_scale', default='dynamic', type=str)
    parser.add_argument('--num_workers', type=int, default=8)
    parser.add_argument('--seed', type=int, default=1234)
    parser.add_argument('--log_interval', type=int, default=100)
    parser.add_argument('--resume', default='', type=str)
    parser.add_argument('--save_dir', default='./checkpoints')
    parser.add_argument('--profile', action='store_true', help='emit NVTX ranges for nsys')
    parser.add_argument('--local_rank', type=int, default=0, help='set by torch.distributed.launch')
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


class CriteoNpyDataset(Dataset):
    """Preprocessed Criteo: X_int.npy (N,13) log-transformed, X_cat.npy (N,26) hashed ids, y.npy (N,)."""

    def __init__(self, data_dir, split='train'):
        self.dense = np.load(os.path.join(data_dir, split, 'X_int.npy'), mmap_mode='r')
        self.cat = np.load(os.path.join(data_dir, split, 'X_cat.npy'), mmap_mode='r')
        self.label = np.load(os.path.join(data_dir, split, 'y.npy'), mmap_mode='r')
        with open(os.path.join(data_dir, 'field_dims.txt')) as f:
            self.field_dims = [int(x) for x in f.read().split()]

    def __len__(self):
        return len(self.label)

    def __getitem__(self, idx):
        dense = torch.from_numpy(np.log1p(np.maximum(self.dense[idx], 0)).astype(np.float32))
        cat = torch.from_numpy(self.cat[idx].astype(np.int64))
        label = torch.tensor(self.label[idx], dtype=torch.float32)
        return dense, cat, label


class WideDeep(nn.Module):
    def __init__(self, field_dims, num_dense, embedding_dim, deep_layers, dropout, sparse=False):
        super(WideDeep, self).__init__()
        # wide part: one scalar weight per categorical value + linear on dense features
        self.wide_embeddings = nn.ModuleList([nn.Embedding(n, 1, sparse=sparse) for n in field_dims])
        self.wide_dense = nn.Linear(num_dense, 1)
        # deep part
        self.deep_embeddings = nn.ModuleList([nn.Embedding(n, embedding_dim, sparse=sparse) for n in field_dims])
        layers = []
        in_dim = len(field_dims) * embedding_dim + num_dense
        for out_dim in deep_layers:
            layers += [nn.Linear(in_dim, out_dim), nn.BatchNorm1d(out_dim), nn.ReLU(inplace=True), nn.Dropout(dropout)]
            in_dim = out_dim
        layers.append(nn.Linear(in_dim, 1))
        self.deep = nn.Sequential(*layers)
        for emb in list(self.wide_embeddings) + list(self.deep_embeddings):
            nn.init.normal_(emb.weight, std=0.01)

    def forward(self, dense, cat):
        wide = self.wide_dense(dense)
        for i, emb in enumerate(self.wide_embeddings):
            wide = wide + emb(cat[:, i])
        deep_in = torch.cat([emb(cat[:, i]) for i, emb in enumerate(self.deep_embeddings)] + [dense], dim=1)
        logit = wide + self.deep(deep_in)
        return logit.squeeze(1)


class DataPrefetcher(object):
    """Overlaps the host->device copy of the next batch with compute on a side CUDA stream."""

    def __init__(self, loader):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.preload()

    def preload(self):
        try:
            self.next_dense, self.next_cat, self.next_label = next(self.loader)
        except StopIteration:
            self.next_dense = None
            self.next_cat = None
            self.next_label = None
            return
        with torch.cuda.stream(self.stream):
            self.next_dense = self.next_dense.cuda(non_blocking=True)
            self.next_cat = self.next_cat.cuda(non_blocking=True)
            self.next_label = self.next_label.cuda(non_blocking=True)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        dense, cat, label = self.next_dense, self.next_cat, self.next_label
        if dense is not None:
            dense.record_stream(torch.cuda.current_stream())
            cat.record_stream(torch.cuda.current_stream())
            label.record_stream(torch.cuda.current_stream())
        self.preload()
        return dense, cat, label


def build_optimizers(model, args):
    if args.sparse:
        sparse_params, dense_params = [], []
        for name, p in model.named_parameters():
            (sparse_params if 'embeddings' in name else dense_params).append(p)
        return [torch.optim.SparseAdam(sparse_params, lr=args.lr),
                torch.optim.Adam(dense_params, lr=args.lr)]
    return [torch.optim.Adam(model.parameters(), lr=args.lr)]


def evaluate(model, loader, args):
    model.eval()
    preds, labels = [], []
    with torch.no_grad():
        for dense, cat, label in loader:
            dense = dense.cuda(non_blocking=True)
            cat = cat.cuda(non_blocking=True)
            logit = model(dense, cat)
            preds.append(torch.sigmoid(logit).float())
            labels.append(label.cuda(non_blocking=True))
    preds = torch.cat(preds)
    labels = torch.cat(labels)
    if args.distributed:
        # every rank holds the same number of samples thanks to DistributedSampler padding
        all_preds = [torch.zeros_like(preds) for _ in range(args.world_size)]
        all_labels = [torch.zeros_like(labels) for _ in range(args.world_size)]
        dist.all_gather(all_preds, preds)
        dist.all_gather(all_labels, labels)
        preds, labels = torch.cat(all_preds), torch.cat(all_labels)
    model.train()
    auc = roc_auc_score(labels.cpu().numpy(), preds.cpu().numpy())
    logloss = F.binary_cross_entropy(preds, labels).item()
    return auc, logloss


def main():
    args = parse_args()
    args.world_size = int(os.environ.get('WORLD_SIZE', 1))
    args.distributed = args.world_size > 1
    if args.distributed and args.sparse:
        raise ValueError('--sparse needs sparse all-reduce, which NCCL does not have; run it on one GPU')

    torch.cuda.set_device(args.local_rank)
    if args.distributed:
        os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')
        dist.init_process_group(backend='nccl', init_method='env://')
    set_seed(args.seed + args.local_rank)
    torch.backends.cudnn.benchmark = True
    is_master = args.local_rank == 0

    train_set = CriteoNpyDataset(args.data_dir, 'train')
    val_set = CriteoNpyDataset(args.data_dir, 'val')
    train_sampler = DistributedSampler(train_set) if args.distributed else None
    val_sampler = DistributedSampler(val_set, shuffle=False) if args.distributed else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=(train_sampler is None),
                              sampler=train_sampler, num_workers=args.num_workers, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size * 4, shuffle=False, sampler=val_sampler,
                            num_workers=args.num_workers, pin_memory=True)

    model = WideDeep(train_set.field_dims, 13, args.embedding_dim, args.deep_layers, args.dropout,
                     sparse=args.sparse).cuda()
    optimizers = build_optimizers(model, args)
    if args.amp:
        assert HAS_APEX, 'install apex from https://github.com/NVIDIA/apex for --amp'
        loss_scale = args.loss_scale if args.loss_scale == 'dynamic' else float(args.loss_scale)
        model, optimizers = amp.initialize(model, optimizers, opt_level=args.opt_level, loss_scale=loss_scale)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))
        model.load_state_dict(ckpt['model'])
        for opt, state in zip(optimizers, ckpt['optimizers']):
            opt.load_state_dict(state)
        if args.amp and 'amp' in ckpt:
            amp.load_state_dict(ckpt['amp'])
        start_epoch = ckpt['epoch'] + 1

    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank],
                                                          output_device=args.local_rank)

    if is_master:
        n_params = sum(p.numel() for p in model.parameters())
        print('params: %.1fM, gpus: %d, device: %s' % (n_params / 1e6, args.world_size,
                                                      torch.cuda.get_device_name(args.local_rank)))

    criterion = nn.BCEWithLogitsLoss()
    step = 0
    for epoch in range(start_epoch, args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        prefetcher = DataPrefetcher(train_loader)
        dense, cat, label = prefetcher.next()
        torch.cuda.synchronize()  # start the clock after the first H2D copy has landed
        t0 = time.time()
        seen = 0
        while dense is not None:
            if args.profile:
                torch.cuda.nvtx.range_push('step_%d' % step)
            logit = model(dense, cat)
            loss = criterion(logit, label)
            for opt in optimizers:
                opt.zero_grad()
            if args.amp:
                with amp.scale_loss(loss, optimizers) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            for opt in optimizers:
                opt.step()
            if args.profile:
                torch.cuda.nvtx.range_pop()
            seen += label.size(0)
            step += 1
            if step % args.log_interval == 0 and is_master:
                torch.cuda.synchronize()
                elapsed = time.time() - t0
                print('epoch %d step %d loss %.5f  %.0f samples/s/gpu  mem %.0fMB' % (
                    epoch, step, loss.item(), seen / elapsed,
                    torch.cuda.max_memory_allocated() / 2 ** 20))
            dense, cat, label = prefetcher.next()

        auc, logloss = evaluate(model, val_loader, args)
        if is_master:
            print('== epoch %d  val AUC %.5f  logloss %.5f' % (epoch, auc, logloss))
            os.makedirs(args.save_dir, exist_ok=True)
            state = {'epoch': epoch,
                     'model': (model.module if args.distributed else model).state_dict(),
                     'optimizers': [opt.state_dict() for opt in optimizers]}
            if args.amp:
                state['amp'] = amp.state_dict()
            torch.save(state, os.path.join(args.save_dir, 'wdl_epoch%d.pt' % epoch))
        if args.distributed:
            dist.barrier()

    if args.distributed:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
