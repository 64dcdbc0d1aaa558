"""Long-context training with PyTorch context parallelism (ring attention over SDPA), torchtitan style.

    torchrun --nproc_per_node 8 scripts/train_context_parallel.py --dp 2 --cp 4 --seq-len 65536

The sequence dimension of inputs/labels/rope buffers is sharded over the "cp" mesh dim;
inside the context_parallel() region SDPA calls are dispatched to the ring implementation.
Parameters are sharded with FSDP2 over the "dp" mesh dim.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.experimental import context_parallel
from torch.distributed.tensor.experimental._attention import set_rotate_method
from torch.nn.attention import SDPBackend, sdpa_kernel

from torchtitan.models.llama import Transformer, TransformerModelArgs

# keep the NCCL caching allocator from holding on to comm buffers between steps
os.environ.setdefault("TORCH_NCCL_AVOID_RECORD_STREAMS", "1")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--dp", type=int, default=2)
    p.add_argument("--cp", type=int, default=4)
    p.add_argument("--seq-len", type=int, default=65536)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--rotate", choices=["allgather", "alltoall"], default="alltoall")
    p.add_argument("--log-every", type=int, default=10)
    return p.parse_args()


def build_model(device):
    model_args = TransformerModelArgs(
        dim=2048, n_layers=16, n_heads=16, n_kv_heads=8, vocab_size=32000, max_seq_len=131072, rope_theta=500000
    )
    with torch.device("meta"):
        model = Transformer(model_args)
    model.to_empty(device=device)
    with torch.no_grad():
        model.init_weights(buffer_device=device)
    return model, model_args


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    world_size = dist.get_world_size()
    assert args.dp * args.cp == world_size, f"dp*cp={args.dp * args.cp} != world size {world_size}"

    mesh = init_device_mesh("cuda", (args.dp, args.cp), mesh_dim_names=("dp", "cp"))
    device = torch.device("cuda", local_rank)
    rank = dist.get_rank()

    model, model_args = build_model(device)
    mp_policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model.layers.values():
        fully_shard(block, mesh=mesh["dp"], mp_policy=mp_policy)
    fully_shard(model, mesh=mesh["dp"], mp_policy=mp_policy)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    set_rotate_method(args.rotate)

    torch.cuda.reset_peak_memory_stats()
    t_last = time.perf_counter()
    for step in range(1, args.steps + 1):
        # identical data on all cp ranks of a dp group: seed by dp coordinate
        gen = torch.Generator(device=device).manual_seed(1000 + mesh["dp"].get_local_rank() * 7919 + step)
        tokens = torch.randint(
            0, model_args.vocab_size, (args.batch_size, args.seq_len + 1), device=device, generator=gen
        )
        inputs, labels = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

        with context_parallel(
            mesh["cp"],
            buffers=[inputs, labels, model.freqs_cis],
            buffer_seq_dims=[1, 1, 0],
            no_restore_buffers={inputs, labels},
        ):
            # only the fused backends have ring-attention implementations
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION]):
                logits = model(inputs)
                loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))
                loss.backward()

        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

        if step % args.log_every == 0:
            torch.cuda.synchronize()
            loss_avg = loss.detach().clone()
            dist.all_reduce(loss_avg, op=dist.ReduceOp.AVG)
            dt = (time.perf_counter() - t_last) / args.log_every
            t_last = time.perf_counter()
            tps = args.batch_size * args.seq_len * args.dp / dt
            if rank == 0:
                print(
                    f"step {step:5d} | loss {loss_avg.item():.4f} | {dt * 1e3:.0f} ms/step | "
                    f"{tps:,.0f} tok/s | peak mem {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB",
                    flush=True,
                )

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
