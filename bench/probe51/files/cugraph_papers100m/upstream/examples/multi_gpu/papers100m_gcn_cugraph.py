# Multi-node, multi-GPU GCN on ogbn-papers100M with cuGraph-PyG.
#
# Launch with torchrun, e.g.
#   torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d \
#       --rdzv-endpoint $HEAD:29500 papers100m_gcn_cugraph.py
#
# The graph is partitioned across workers with cuGraph's distributed
# GraphStore; features live in WholeGraph-backed tensors.
import argparse
import json
import os
import os.path as osp
import time
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from ogb.nodeproppred import PygNodePropPredDataset
from torch.nn.parallel import DistributedDataParallel

import torch_geometric

from cugraph.gnn import (
    cugraph_comms_create_unique_id,
    cugraph_comms_init,
    cugraph_comms_shutdown,
)
from pylibwholegraph.torch.initialize import finalize as wm_finalize
from pylibwholegraph.torch.initialize import init as wm_init

import cupy
import rmm
from rmm.allocators.cupy import rmm_cupy_allocator
from rmm.allocators.torch import rmm_torch_allocator

warnings.filterwarnings("ignore", ".*is in beta.*")

os.environ["CUDF_SPILL"] = "1"
os.environ["LIBCUDF_CUFILE_POLICY"] = "OFF"


def init_pytorch_worker(global_rank, local_rank, world_size, cugraph_id):
    rmm.reinitialize(
        devices=local_rank,
        managed_memory=True,
        pool_allocator=True,
    )
    cupy.cuda.Device(local_rank).use()
    cupy.cuda.set_allocator(rmm_cupy_allocator)
    torch.cuda.change_current_allocator(rmm_torch_allocator)
    torch.cuda.set_device(local_rank)

    cugraph_comms_init(rank=global_rank, world_size=world_size,
                       uid=cugraph_id, device=local_rank)
    wm_init(global_rank, world_size, local_rank,
            torch.cuda.device_count())


def partition_data(dataset, split_idx, edge_path, feature_path, label_path,
                   meta_path):
    data = dataset[0]

    os.makedirs(edge_path, exist_ok=True)
    for r, e in enumerate(torch.tensor_split(data.edge_index,
                                             torch.distributed.get_world_size(),
                                             dim=1)):
        rank_path = osp.join(edge_path, f"rank={r}.pt")
        torch.save(e.clone(), rank_path)

    os.makedirs(feature_path, exist_ok=True)
    for r, f in enumerate(torch.tensor_split(data.x,
                                             torch.distributed.get_world_size())):
        rank_path = osp.join(feature_path, f"rank={r}_x.pt")
        torch.save(f.clone(), rank_path)

    os.makedirs(label_path, exist_ok=True)
    for d, i in split_idx.items():
        i_parts = torch.tensor_split(i, torch.distributed.get_world_size())
        for r, i_part in enumerate(i_parts):
            rank_path = osp.join(label_path, f"rank={r}")
            os.makedirs(rank_path, exist_ok=True)
            torch.save(i_part, osp.join(rank_path, f"{d}.pt"))

    meta = dict(num_classes=int(dataset.num_classes),
                num_features=int(dataset.num_features),
                num_nodes=int(data.num_nodes))
    with open(meta_path, "w") as f:
        json.dump(meta, f)


def load_partitioned_data(rank, edge_path, feature_path, label_path,
                          meta_path, wg_mem_type):
    from cugraph_pyg.data import GraphStore, WholeFeatureStore

    graph_store = GraphStore(is_multi_gpu=True)
    feature_store = WholeFeatureStore(memory_type=wg_mem_type)

    with open(meta_path) as f:
        meta = json.load(f)

    split_idx = {}
    for split in ["train", "test", "valid"]:
        path = osp.join(label_path, f"rank={rank}", f"{split}.pt")
        split_idx[split] = torch.load(path)

    x = torch.load(osp.join(feature_path, f"rank={rank}_x.pt"))
    feature_store["node", "x", None] = x
    ei = torch.load(osp.join(edge_path, f"rank={rank}.pt"))
    graph_store[dict(edge_type=("node", "rel", "node"), layout="coo",
                     is_sorted=False, size=(meta["num_nodes"],
                                            meta["num_nodes"]))] = ei
    return (feature_store, graph_store), split_idx, meta


def run_train(global_rank, data, split_idx, world_size, device, model,
              epochs, batch_size, fan_out, num_classes, wall_clock_start,
              num_layers=3):
    from cugraph_pyg.loader import NeighborLoader

    optimizer = torch.optim.Adam(model.parameters(), lr=0.001,
                                 weight_decay=0.0005)

    kwargs = dict(num_neighbors=[fan_out] * num_layers,
                  batch_size=batch_size)
    train_loader = NeighborLoader(data, input_nodes=split_idx["train"],
                                  replace=False, shuffle=True,
                                  drop_last=True, **kwargs)
    eval_loader = NeighborLoader(data, input_nodes=split_idx["valid"],
                                 **kwargs)
    test_loader = NeighborLoader(data, input_nodes=split_idx["test"],
                                 **kwargs)

    if global_rank == 0:
        prep_time = round(time.perf_counter() - wall_clock_start, 2)
        print("Total time before training begins (prep_time) =", prep_time,
              "seconds")

    for epoch in range(epochs):
        model.train()
        start = time.time()
        for i, batch in enumerate(train_loader):
            batch = batch.to(device)
            batch.y = batch.y.view(-1).to(torch.long)
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index)
            loss = F.cross_entropy(out[:batch.batch_size],
                                   batch.y[:batch.batch_size])
            loss.backward()
            optimizer.step()
            if global_rank == 0 and i % 10 == 0:
                print(f"Epoch: {epoch:02d}, Iteration: {i}, "
                      f"Loss: {loss:.4f}")
        torch.cuda.synchronize()
        if global_rank == 0:
            print(f"Epoch time: {time.time() - start:.2f}s")

        model.eval()
        correct = total = 0
        with torch.no_grad():
            for batch in eval_loader:
                batch = batch.to(device)
                out = model(batch.x, batch.edge_index)[:batch.batch_size]
                y = batch.y[:batch.batch_size].view(-1).to(torch.long)
                correct += int((out.argmax(-1) == y).sum())
                total += y.numel()
        acc = torch.tensor([correct, total], device=device)
        torch.distributed.all_reduce(acc)
        if global_rank == 0:
            print(f"Validation Accuracy: {acc[0] / acc[1] * 100.0:.4f}%")

    with torch.no_grad():
        correct = total = 0
        for batch in test_loader:
            batch = batch.to(device)
            out = model(batch.x, batch.edge_index)[:batch.batch_size]
            y = batch.y[:batch.batch_size].view(-1).to(torch.long)
            correct += int((out.argmax(-1) == y).sum())
            total += y.numel()
    if global_rank == 0:
        print(f"Test Accuracy: {correct / max(total, 1) * 100.0:.4f}%")
        total_time = round(time.perf_counter() - wall_clock_start, 2)
        print("Total Program Runtime (total_time) =", total_time, "seconds")

    wm_finalize()
    cugraph_comms_shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden_channels", type=int, default=256)
    parser.add_argument("--num_layers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch_size", type=int, default=1024)
    parser.add_argument("--fan_out", type=int, default=30)
    parser.add_argument("--dataset_root", type=str, default="datasets")
    parser.add_argument("--skip_partition", action="store_true")
    parser.add_argument("--wg_mem_type", type=str, default="distributed",
                        choices=["distributed", "continuous", "chunked"])
    args = parser.parse_args()
    wall_clock_start = time.perf_counter()

    if "LOCAL_RANK" in os.environ:
        torch.distributed.init_process_group("nccl")
        world_size = torch.distributed.get_world_size()
        global_rank = torch.distributed.get_rank()
        local_rank = int(os.environ["LOCAL_RANK"])
        device = torch.device(local_rank)

        # Create the uid needed for cuGraph comms
        if global_rank == 0:
            cugraph_id = [cugraph_comms_create_unique_id()]
        else:
            cugraph_id = [None]
        torch.distributed.broadcast_object_list(cugraph_id, src=0,
                                                device=device)
        cugraph_id = cugraph_id[0]

        init_pytorch_worker(global_rank, local_rank, world_size, cugraph_id)

        dataset_root = osp.join(args.dataset_root, "ogbn_papers100M")
        edge_path = osp.join(dataset_root, "edge_partitions")
        feature_path = osp.join(dataset_root, "feature_partitions")
        label_path = osp.join(dataset_root, "label_partitions")
        meta_path = osp.join(dataset_root, "meta.json")

        if not args.skip_partition and global_rank == 0:
            dataset = PygNodePropPredDataset(name="ogbn-papers100M",
                                             root=args.dataset_root)
            split_idx = dataset.get_idx_split()
            partition_data(dataset, split_idx, edge_path, feature_path,
                           label_path, meta_path)
        torch.distributed.barrier()

        data, split_idx, meta = load_partitioned_data(
            global_rank, edge_path, feature_path, label_path, meta_path,
            args.wg_mem_type)

        model = torch_geometric.nn.models.GCN(
            meta["num_features"], args.hidden_channels, args.num_layers,
            meta["num_classes"]).to(device)
        model = DistributedDataParallel(model, device_ids=[local_rank])

        run_train(global_rank, data, split_idx, world_size, device, model,
                  args.epochs, args.batch_size, args.fan_out,
                  meta["num_classes"], wall_clock_start, args.num_layers)
    else:
        warnings.warn("This script should be run with 'torchrun'.  Exiting.")
