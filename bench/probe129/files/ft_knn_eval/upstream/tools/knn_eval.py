#!/usr/bin/env python3
"""Weighted k-NN classification on pre-extracted timm features (DINO-style evaluation).

Features come from extract_features.py (one .npy + one .txt of file names per split). The
train bank is sharded across all local GPUs; each rank scores its shard of the test set
against the full bank and the predictions are gathered on rank 0.

    python tools/knn_eval.py --train feats/in1k_train --test feats/in1k_val --k 20 --temperature 0.07
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--train', required=True, help='prefix of train features (.npy/.txt)')
    p.add_argument('--test', required=True, help='prefix of test features (.npy/.txt)')
    p.add_argument('--labels-from-path', action='store_true', default=True,
                   help='derive class label from parent directory of each file')
    p.add_argument('--k', type=int, nargs='+', default=[10, 20, 100, 200])
    p.add_argument('--temperature', type=float, default=0.07)
    p.add_argument('--chunk', type=int, default=1024, help='test rows scored per matmul')
    p.add_argument('--backend', default='nccl')
    p.add_argument('--port', type=int, default=23456)
    p.add_argument('--world-size', type=int, default=None, help='defaults to number of visible GPUs')
    return p.parse_args()


def load_split(prefix):
    feats = np.load(prefix + '.npy').astype(np.float32)
    with open(prefix + '.txt') as f:
        names = [line.strip() for line in f]
    assert len(names) == feats.shape[0], f'{prefix}: {len(names)} names vs {feats.shape[0]} rows'
    return feats, names


def labels_from_names(names, class_to_idx=None):
    classes = [os.path.basename(os.path.dirname(n)) for n in names]
    if class_to_idx is None:
        class_to_idx = {c: i for i, c in enumerate(sorted(set(classes)))}
    return np.array([class_to_idx[c] for c in classes], dtype=np.int64), class_to_idx


@torch.no_grad()
def knn_predict(test_feats, bank_feats, bank_labels, num_classes, k, temperature, chunk):
    """Returns (N_test, num_classes) class scores for the largest k; smaller k reuse the same topk."""
    preds = []
    for i in range(0, test_feats.shape[0], chunk):
        q = test_feats[i:i + chunk]
        sim = q @ bank_feats.T  # cosine, features are l2-normalized
        top_sim, top_idx = sim.topk(k, dim=1, largest=True, sorted=True)
        top_labels = bank_labels[top_idx]
        weights = (top_sim / temperature).exp()
        scores = torch.zeros(q.shape[0], num_classes, device=q.device)
        scores.scatter_add_(1, top_labels, weights)
        preds.append(scores)
    return torch.cat(preds, dim=0)


def worker(rank, world_size, args, train, test):
    os.environ['MASTER_ADDR'] = '127.0.0.1'
    os.environ['MASTER_PORT'] = str(args.port)
    torch.cuda.set_device(rank)
    dist.init_process_group(args.backend, rank=rank, world_size=world_size)
    device = torch.device(f'cuda:{rank}')

    train_feats, train_labels, num_classes = train
    test_feats, test_labels = test

    bank = F.normalize(torch.from_numpy(train_feats).cuda(rank), dim=1).half()
    bank_labels = torch.from_numpy(train_labels).to(device)

    # shard the test set across ranks
    shard = np.array_split(np.arange(test_feats.shape[0]), world_size)[rank]
    q = F.normalize(torch.from_numpy(test_feats[shard]).to(device), dim=1).half()
    y = torch.from_numpy(test_labels[shard]).to(device)

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    start_evt.record()

    max_k = max(args.k)
    results = {}
    scores_full = None
    for k in sorted(args.k, reverse=True):
        scores = knn_predict(q, bank, bank_labels, num_classes, k, args.temperature, args.chunk)
        correct = (scores.argmax(dim=1) == y).sum()
        total = torch.tensor(y.numel(), device=device)
        if args.backend == 'nccl':
            # NCCL reduces in place on device tensors
            dist.all_reduce(correct)
            dist.all_reduce(total)
        else:
            correct, total = correct.cpu(), total.cpu()
            dist.all_reduce(correct)
            dist.all_reduce(total)
        results[k] = 100. * correct.item() / total.item()
        if k == max_k:
            scores_full = scores

    end_evt.record()
    torch.cuda.synchronize()
    elapsed = start_evt.elapsed_time(end_evt) / 1000.

    if rank == 0:
        for k in sorted(results):
            print(f'{k:>4}-NN top1: {results[k]:.2f}')
        print(f'scored {test_feats.shape[0]} x {train_feats.shape[0]} in {elapsed:.1f}s on {world_size} GPU(s), '
              f'score tensor {tuple(scores_full.shape)}')
    dist.barrier()
    dist.destroy_process_group()


def main():
    args = parse_args()
    t0 = time.time()
    train_feats, train_names = load_split(args.train)
    test_feats, test_names = load_split(args.test)
    train_labels, class_to_idx = labels_from_names(train_names)
    test_labels, _ = labels_from_names(test_names, class_to_idx)
    print(f'loaded features in {time.time() - t0:.1f}s: train {train_feats.shape}, test {test_feats.shape}, '
          f'{len(class_to_idx)} classes')

    world_size = args.world_size or torch.cuda.device_count()
    mp.spawn(
        worker,
        args=(world_size, args, (train_feats, train_labels, len(class_to_idx)), (test_feats, test_labels)),
        nprocs=world_size,
        join=True,
    )


if __name__ == '__main__':
    main()
