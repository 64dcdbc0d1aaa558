"""Measure wall-clock time per epoch and peak GPU memory of the contrastive modes in PyGCL.

Example:
    CUDA_VISIBLE_DEVICES=0 python benchmarks/profile_memory.py --dataset Cora --mode L2L --epochs 50
"""
import argparse
import json
import os
import os.path as osp
import subprocess
import time

import torch
import GCL.losses as L
import GCL.augmentors as A
import torch_geometric.transforms as T
from torch.optim import Adam
from torch_geometric.datasets import Planetoid, Amazon, Coauthor
from GCL.models import DualBranchContrast, WithinEmbedContrast
from torch_geometric.nn import GCNConv


class GConv(torch.nn.Module):
    def __init__(self, input_dim, hidden_dim, num_layers=2):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            [GCNConv(input_dim if i == 0 else hidden_dim, hidden_dim) for i in range(num_layers)])
        self.activation = torch.nn.PReLU(hidden_dim)

    def forward(self, x, edge_index, edge_weight=None):
        z = x
        for conv in self.layers:
            z = self.activation(conv(z, edge_index, edge_weight))
        return z


def load(name, root):
    if name in ('Cora', 'CiteSeer', 'PubMed'):
        return Planetoid(root, name, transform=T.NormalizeFeatures())
    if name in ('Computers', 'Photo'):
        return Amazon(root, name, transform=T.NormalizeFeatures())
    if name in ('CS', 'Physics'):
        return Coauthor(root, name, transform=T.NormalizeFeatures())
    raise ValueError(name)


def gpu_info():
    try:
        out = subprocess.check_output(
            ['nvidia-smi', '--query-gpu=name,driver_version,memory.total', '--format=csv,noheader'])
        return out.decode().strip().splitlines()
    except (OSError, subprocess.CalledProcessError):
        return []


def build_contrast(mode):
    if mode == 'L2L':
        return DualBranchContrast(loss=L.InfoNCE(tau=0.2), mode='L2L', intraview_negs=True)
    if mode == 'BarlowTwins':
        return WithinEmbedContrast(loss=L.BarlowTwins())
    if mode == 'VICReg':
        return WithinEmbedContrast(loss=L.VICReg())
    raise ValueError(mode)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--dataset', default='Cora')
    parser.add_argument('--mode', default='L2L', choices=['L2L', 'BarlowTwins', 'VICReg'])
    parser.add_argument('--epochs', type=int, default=50)
    parser.add_argument('--hidden', type=int, default=256)
    parser.add_argument('--out', default='benchmarks/results')
    args = parser.parse_args()

    assert torch.cuda.is_available(), 'this benchmark needs a CUDA device'
    device = torch.device('cuda', torch.cuda.current_device())
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    dataset = load(args.dataset, osp.join(osp.expanduser('~'), 'datasets', args.dataset))
    data = dataset[0].to(device, non_blocking=True)

    aug1 = A.Compose([A.EdgeRemoving(pe=0.3), A.FeatureMasking(pf=0.3)])
    aug2 = A.Compose([A.EdgeRemoving(pe=0.3), A.FeatureMasking(pf=0.3)])
    encoder = GConv(dataset.num_features, args.hidden).to(device)
    contrast = build_contrast(args.mode).to(device)
    optimizer = Adam(encoder.parameters(), lr=0.001)

    # warm-up so that cuDNN / cuBLAS handles are created before measuring
    for _ in range(3):
        x1, ei1, _ = aug1(data.x, data.edge_index)
        x2, ei2, _ = aug2(data.x, data.edge_index)
        loss = contrast(h1=encoder(x1, ei1), h2=encoder(x2, ei2))
        loss.backward()
    optimizer.zero_grad()

    torch.cuda.synchronize(device)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(device)

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    epoch_ms = []
    wall = time.perf_counter()
    for epoch in range(args.epochs):
        start_evt.record()
        optimizer.zero_grad()
        x1, ei1, _ = aug1(data.x, data.edge_index)
        x2, ei2, _ = aug2(data.x, data.edge_index)
        h1, h2 = encoder(x1, ei1), encoder(x2, ei2)
        loss = contrast(h1=h1, h2=h2)
        loss.backward()
        optimizer.step()
        end_evt.record()
        torch.cuda.synchronize()
        epoch_ms.append(start_evt.elapsed_time(end_evt))
    wall = time.perf_counter() - wall

    peak_mb = torch.cuda.max_memory_allocated(device) / 2 ** 20
    reserved_mb = torch.cuda.max_memory_reserved(device) / 2 ** 20
    result = {
        'dataset': args.dataset,
        'mode': args.mode,
        'hidden': args.hidden,
        'num_nodes': int(data.num_nodes),
        'num_edges': int(data.num_edges),
        'epoch_ms_mean': sum(epoch_ms) / len(epoch_ms),
        'epoch_ms_min': min(epoch_ms),
        'wall_s': wall,
        'peak_allocated_mb': peak_mb,
        'peak_reserved_mb': reserved_mb,
        'device_name': torch.cuda.get_device_name(device),
        'gpus': gpu_info(),
        'torch': torch.__version__,
        'cuda': torch.version.cuda,
    }
    print(json.dumps(result, indent=2))

    os.makedirs(args.out, exist_ok=True)
    with open(osp.join(args.out, f'{args.dataset}_{args.mode}.json'), 'w') as f:
        json.dump(result, f, indent=2)


if __name__ == '__main__':
    main()
