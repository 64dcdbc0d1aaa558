"""Multi-GPU GCN training on ogbn-papers100M with NeighborLoader.

Each spawned process drives one GPU; node features stay in (shared) host
memory and mini-batches are gathered on the CPU by the loader workers.
"""
import argparse
import os
import os.path as osp
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from ogb.nodeproppred import PygNodePropPredDataset
from torch.nn.parallel import DistributedDataParallel
from torchmetrics import Accuracy

import torch_geometric
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GCNConv


class GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers,
                 dropout=0.5):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        self.convs.append(GCNConv(in_channels, hidden_channels))
        for _ in range(num_layers - 2):
            self.convs.append(GCNConv(hidden_channels, hidden_channels))
        self.convs.append(GCNConv(hidden_channels, out_channels))
        self.dropout = dropout

    def forward(self, x, edge_index):
        for conv in self.convs[:-1]:
            x = conv(x, edge_index).relu()
            x = F.dropout(x, p=self.dropout, training=self.training)
        return self.convs[-1](x, edge_index)


def get_num_workers(world_size: int) -> int:
    num_workers = None
    if hasattr(os, "sched_getaffinity"):
        try:
            num_workers = len(os.sched_getaffinity(0)) // (2 * world_size)
        except Exception:
            pass
    if num_workers is None:
        num_workers = os.cpu_count() // (2 * world_size)
    return max(num_workers, 1)


def run_train(rank, data, world_size, model, epochs, batch_size, fan_out,
              split_idx, num_classes, wall_clock_start, eval_steps=100):

    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = '12355'
    dist.init_process_group('nccl', rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)

    split_idx['train'] = split_idx['train'].split(
        split_idx['train'].size(0) // world_size, dim=0)[rank].clone()
    model = DistributedDataParallel(model.to(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01,
                                 weight_decay=5e-4)

    num_work = get_num_workers(world_size)
    kwargs = dict(
        num_neighbors=[fan_out] * 3,
        batch_size=batch_size,
        num_workers=num_work,
        persistent_workers=True,
    )
    train_loader = NeighborLoader(data, input_nodes=split_idx['train'],
                                  shuffle=True, drop_last=True, **kwargs)
    if rank == 0:
        eval_loader = NeighborLoader(data, input_nodes=split_idx['valid'],
                                     **kwargs)
        test_loader = NeighborLoader(data, input_nodes=split_idx['test'],
                                     **kwargs)

    eval_steps = 1000
    acc = Accuracy(task="multiclass", num_classes=num_classes).to(rank)
    if rank == 0:
        prep_time = round(time.perf_counter() - wall_clock_start, 2)
        print("Total time before training begins (prep_time) =", prep_time,
              "seconds")
        print("Beginning training...")

    for epoch in range(epochs):
        for i, batch in enumerate(train_loader):
            if i == 10:
                start = time.time()
            batch = batch.to(rank)
            batch.y = batch.y.to(torch.long)
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index)
            loss = F.cross_entropy(out[:batch_size], batch.y[:batch_size])
            loss.backward()
            optimizer.step()
            if rank == 0 and i % 10 == 0:
                print(f'Epoch: {epoch:02d}, Iteration: {i}, Loss: {loss:.4f}')
        nb = i + 1.0
        dist.barrier()
        if rank == 0:
            print(f"Average Training Iteration Time: {(time.time() - start) / (nb - 10)} s/iter")
            print(f"Peak GPU memory: "
                  f"{torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
            acc_sum = 0.0
            with torch.no_grad():
                for i, batch in enumerate(eval_loader):
                    if i >= eval_steps:
                        break
                    batch = batch.to(rank, non_blocking=True)
                    batch.y = batch.y.to(torch.long)
                    out = model.module(batch.x, batch.edge_index)
                    acc_sum += acc(out[:batch_size].softmax(dim=-1),
                                   batch.y[:batch_size])
            print(f"Validation Accuracy: {acc_sum/(i) * 100.0:.4f}%", )
        dist.barrier()

    if rank == 0:
        model.eval()
        acc_sum = 0.0
        with torch.no_grad():
            for i, batch in enumerate(test_loader):
                batch = batch.to(device=rank, non_blocking=True)
                batch.y = batch.y.to(torch.long)
                out = model.module(batch.x, batch.edge_index)
                acc_sum += acc(out[:batch_size].softmax(dim=-1),
                               batch.y[:batch_size])
            print(f"Test Accuracy: {acc_sum/(i) * 100.0:.4f}%", )
        total_time = round(time.perf_counter() - wall_clock_start, 2)
        print("Total Program Runtime (total_time) =", total_time, "seconds")
    dist.destroy_process_group()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--hidden_channels', type=int, default=256)
    parser.add_argument('--num_layers', type=int, default=2)
    parser.add_argument('--lr', type=float, default=0.001)
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--batch_size', type=int, default=1024)
    parser.add_argument('--fan_out', type=int, default=30)
    parser.add_argument('--n_devices', type=int, default=-1,
                        help='1-8 to use that many GPUs. -1 to use all GPUs')
    parser.add_argument('--dataset_root', type=str, default='/workspace/data')
    args = parser.parse_args()
    wall_clock_start = time.perf_counter()

    dataset = PygNodePropPredDataset(name='ogbn-papers100M',
                                     root=args.dataset_root)
    split_idx = dataset.get_idx_split()
    data = dataset[0]
    data.y = data.y.reshape(-1)
    # Keep features in shared memory so that every spawned process can read
    # them without a copy:
    data.x.share_memory_()

    model = GCN(dataset.num_features, args.hidden_channels,
                dataset.num_classes, args.num_layers)

    print("Data =", data)
    if args.n_devices == -1:
        world_size = torch.cuda.device_count()
    else:
        world_size = args.n_devices
    print('Let\'s use', world_size, 'GPUs!')
    mp.spawn(
        run_train,
        args=(data, world_size, model, args.epochs, args.batch_size,
              args.fan_out, split_idx, dataset.num_classes,
              wall_clock_start),
        nprocs=world_size, join=True)
