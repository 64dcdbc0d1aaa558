"""Multi-node multi-GPU example on ogbn-papers100m.

Example way to run using srun:
srun -l -N<num_nodes> --ntasks-per-node=<ngpu_per_node> \
--container-name=cont --container-image=<image_url> \
--container-mounts=/ogb-papers100m/:/workspace/dataset
python3 path_to_script.py

Or, with torchrun on every node:
torchrun --nnodes=$NNODES --nproc_per_node=8 --rdzv_backend=c10d \
    --rdzv_endpoint=$MASTER_ADDR:29500 papers100m_gcn_multinode.py
"""
import argparse
import os
import time
import warnings

import torch
import torch.distributed as dist
import torch.nn.functional as F
from ogb.nodeproppred import PygNodePropPredDataset
from torch.nn.parallel import DistributedDataParallel
from torchmetrics import Accuracy

import torch_geometric
from torch_geometric.loader import NeighborLoader

warnings.filterwarnings("ignore")


def get_num_workers() -> int:
    num_workers = None
    if hasattr(os, "sched_getaffinity"):
        try:
            num_workers = len(os.sched_getaffinity(0)) // 2
        except Exception:
            pass
    if num_workers is None:
        num_workers = os.cpu_count() // 2
    return num_workers


def get_local_rank_and_world():
    # torchrun exports LOCAL_RANK/RANK/WORLD_SIZE; SLURM exports SLURM_*.
    if "LOCAL_RANK" in os.environ:
        local_rank = int(os.environ["LOCAL_RANK"])
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
    else:
        local_rank = int(os.environ["SLURM_LOCALID"])
        rank = int(os.environ["SLURM_PROCID"])
        world_size = int(os.environ["SLURM_NTASKS"])
        os.environ.setdefault("MASTER_PORT", "29500")
    return local_rank, rank, world_size


def run(args, local_rank, rank, world_size, data, split_idx, model):
    nprocs = dist.get_world_size()
    torch.cuda.set_device(local_rank)
    device = torch.device(local_rank)
    # Split training indices into `world_size` many chunks:
    split_idx['train'] = split_idx['train'].split(
        split_idx['train'].size(0) // nprocs, dim=0)[rank].clone()
    split_idx['valid'] = split_idx['valid'].split(
        split_idx['valid'].size(0) // nprocs, dim=0)[rank].clone()
    split_idx['test'] = split_idx['test'].split(
        split_idx['test'].size(0) // nprocs, dim=0)[rank].clone()

    model = DistributedDataParallel(model.to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr,
                                 weight_decay=0.0005)

    num_work = get_num_workers()
    kwargs = dict(
        num_neighbors=[args.fan_out] * args.num_layers,
        batch_size=args.batch_size,
        num_workers=num_work,
        persistent_workers=True,
        pin_memory=True,
    )
    train_loader = NeighborLoader(data, input_nodes=split_idx['train'],
                                  shuffle=True, drop_last=True, **kwargs)
    val_loader = NeighborLoader(data, input_nodes=split_idx['valid'],
                                **kwargs)
    test_loader = NeighborLoader(data, input_nodes=split_idx['test'],
                                 **kwargs)

    eval_steps = 1000
    warmup_steps = 20
    acc = Accuracy(task="multiclass",
                   num_classes=data.num_classes).to(device)

    if rank == 0:
        print("Beginning training...")
    for epoch in range(args.epochs):
        model.train()
        for i, batch in enumerate(train_loader):
            if i == warmup_steps:
                torch.cuda.synchronize()
                start = time.time()
            batch = batch.to(device, non_blocking=True)
            batch.y = batch.y.to(torch.long)
            optimizer.zero_grad()
            with torch.autocast('cuda', dtype=torch.bfloat16,
                                enabled=args.bf16):
                out = model(batch.x, batch.edge_index)
                loss = F.cross_entropy(out[:batch.batch_size],
                                       batch.y[:batch.batch_size])
            loss.backward()
            optimizer.step()

            if rank == 0 and i % 10 == 0:
                print(f'Epoch: {epoch:02d}, Iteration: {i}, Loss: {loss:.4f}')

        dist.barrier()
        torch.cuda.synchronize(device)
        if rank == 0:
            sec_per_iter = (time.time() - start) / (i - warmup_steps)
            print(f"Avg Training Iteration Time: {sec_per_iter:.6f} s/iter")

        model.eval()
        acc_sum = 0.0
        with torch.no_grad():
            for i, batch in enumerate(val_loader):
                if i >= eval_steps:
                    break

                batch = batch.to(device, non_blocking=True)
                batch.y = batch.y.to(torch.long)
                out = model(batch.x, batch.edge_index)
                acc_sum += acc(out[:batch.batch_size].softmax(dim=-1),
                               batch.y[:batch.batch_size])
            acc_sum = torch.tensor(float(acc_sum), dtype=torch.float32,
                                   device=device)
            dist.all_reduce(acc_sum, op=dist.ReduceOp.SUM)
            num_batches = torch.tensor(float(i), dtype=torch.float32,
                                       device=acc_sum.device)
            dist.all_reduce(num_batches, op=dist.ReduceOp.SUM)
            if rank == 0:
                print(f"Validation Accuracy: {acc_sum/(num_batches) * 100.0:.4f}%", )
        dist.barrier()

    model.eval()
    acc_sum = 0.0
    with torch.no_grad():
        for i, batch in enumerate(test_loader):
            batch = batch.to(device, non_blocking=True)
            batch.y = batch.y.to(torch.long)
            out = model(batch.x, batch.edge_index)
            acc_sum += acc(out[:batch.batch_size].softmax(dim=-1),
                           batch.y[:batch.batch_size])
        acc_sum = torch.tensor(float(acc_sum), dtype=torch.float32,
                               device=device)
        dist.all_reduce(acc_sum, op=dist.ReduceOp.SUM)
        num_batches = torch.tensor(float(i), dtype=torch.float32,
                                   device=acc_sum.device)
        dist.all_reduce(num_batches, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"Test Accuracy: {acc_sum/(num_batches) * 100.0:.4f}%", )
    if rank == 0:
        print(f"Max GPU memory allocated: "
              f"{torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB")


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--hidden_channels', type=int, default=256)
    parser.add_argument('--num_layers', type=int, default=3)
    parser.add_argument('--lr', type=float, default=0.001)
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--batch_size', type=int, default=1024)
    parser.add_argument('--fan_out', type=int, default=30)
    parser.add_argument('--dataset_root', type=str,
                        default='/workspace/dataset')
    parser.add_argument('--bf16', action='store_true',
                        help='Run the forward pass under bfloat16 autocast.')
    args = parser.parse_args()

    local_rank, rank, world_size = get_local_rank_and_world()
    # Setup multi-node:
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    if rank == 0:
        print(f"Running on {world_size} GPUs "
              f"({torch.cuda.device_count()} per node)")

    dataset = PygNodePropPredDataset(name='ogbn-papers100M',
                                     root=args.dataset_root)
    split_idx = dataset.get_idx_split()
    data = dataset[0]
    data.y = data.y.reshape(-1)
    data.num_classes = dataset.num_classes
    model = torch_geometric.nn.models.GCN(dataset.num_features,
                                          args.hidden_channels,
                                          args.num_layers,
                                          dataset.num_classes)
    run(args, local_rank, rank, world_size, data, split_idx, model)
