"""
DTensor walkthrough: placements, redistribute and distribute_module.

    torchrun --standalone --nproc_per_node=4 dtensor_walkthrough.py

Each section prints from rank 0 only. On a single node every rank drives one GPU; the
DeviceMesh below is 1-D over all ranks, the 2-D part reshapes it as (2, world_size // 2).
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import (
    distribute_module,
    distribute_tensor,
    DTensor,
    Partial,
    Replicate,
    Shard,
)


def log0(msg: str) -> None:
    if dist.get_rank() == 0:
        print(msg, flush=True)


def placement_basics(mesh):
    # torch.manual_seed keeps the "global" tensor identical on all ranks
    torch.manual_seed(0)
    big_tensor = torch.randn(888, 12)
    # shard on dim 0: every rank keeps a contiguous block of rows on its GPU
    rowwise = distribute_tensor(big_tensor, mesh, placements=[Shard(0)])
    log0(f"rowwise local shape: {rowwise.to_local().shape}, device: {rowwise.device}")

    # replicate: each rank keeps the full tensor
    replica = distribute_tensor(big_tensor, mesh, placements=[Replicate()])
    log0(f"replica local shape: {replica.to_local().shape}")

    # Shard -> Replicate triggers an all-gather under the hood
    gathered = rowwise.redistribute(mesh, [Replicate()])
    torch.testing.assert_close(gathered.to_local().cpu(), big_tensor)

    # Partial -> Replicate is an all-reduce
    local = torch.ones(4, 4, device="cuda") * (dist.get_rank() + 1)
    partial = DTensor.from_local(local, mesh, [Partial()])
    reduced = partial.redistribute(mesh, [Replicate()])
    log0(f"all-reduced value: {reduced.to_local()[0, 0].item()}")


def two_d_mesh(world_size):
    if world_size % 2 != 0:
        log0("skipping 2-D mesh: world size is odd")
        return
    mesh_2d = init_device_mesh("cuda", (2, world_size // 2), mesh_dim_names=("replicate", "shard"))
    weight = torch.randn(64, 64)
    dweight = distribute_tensor(weight, mesh_2d, [Replicate(), Shard(0)])
    log0(f"2-D placements {dweight.placements}, local {tuple(dweight.to_local().shape)}")
    # slicing a mesh by name gives back a 1-D sub-mesh with its own process group
    shard_group = mesh_2d["shard"].get_group()
    log0(f"shard sub-mesh group size: {dist.get_world_size(shard_group)}")


class MyModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)
        self.relu = nn.ReLU()

    def forward(self, input):
        return self.relu(self.fc1(input) + self.fc2(input))


def shard_params(mod_name, mod, mesh):
    col_linear_placement = [Shard(0)]
    # shard fc1 and fc2
    if isinstance(mod, nn.Linear):
        for name, param in mod.named_parameters():
            dist_param = nn.Parameter(
                distribute_tensor(param, mesh, col_linear_placement)
            )
            mod.register_parameter(name, dist_param)


def module_example(mesh, device):
    sharded_module = distribute_module(MyModule(), mesh, partition_fn=shard_params)
    inp = torch.randn(20, 8, device=device)
    out = sharded_module(DTensor.from_local(inp, mesh, [Replicate()]))
    loss = F.mse_loss(out.full_tensor(), torch.zeros_like(inp))
    loss.backward()
    log0(f"distribute_module loss: {loss.item():.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda", help="device type for the mesh (cuda or cpu)")
    args = parser.parse_args()

    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    if args.device != "cpu":
        torch.cuda.set_device(local_rank)
    device = torch.device(args.device, local_rank) if args.device != "cpu" else torch.device("cpu")

    mesh = init_device_mesh(args.device, (world_size,))
    log0(f"mesh: {mesh}")

    placement_basics(mesh)
    two_d_mesh(world_size)
    module_example(mesh, device)

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
