# Copyright Universitat Pompeu Fabra 2020-2023  https://www.compscience.org
# Distributed under the MIT License.
"""
Inference throughput benchmark for TorchMD-Net models (energy + forces).

    python benchmarks/inference.py --model tensornet --molecules 1 8 64 --n-atoms 256

Reports ms/step measured with CUDA events, with and without torch.compile
(mode="reduce-overhead" captures the whole step in a CUDA graph, which is the
configuration we use for MD with OpenMM-Torch).
"""

import argparse
import os
import time

import numpy as np
import torch
from torchmdnet.models.model import create_model

# Benchmark numbers in the paper were taken with TF32 enabled on an A100.
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.benchmark = True


def _base_args(model_name):
    return {
        "model": model_name,
        "embedding_dimension": 128,
        "num_layers": 2,
        "num_rbf": 32,
        "rbf_type": "expnorm",
        "trainable_rbf": False,
        "activation": "silu",
        "neighbor_embedding": True,
        "cutoff_lower": 0.0,
        "cutoff_upper": 5.0,
        "max_z": 100,
        "max_num_neighbors": 64,
        "aggr": "add",
        "equivariance_invariance_group": "O(3)",
        "derivative": True,
        "atom_filter": -1,
        "prior_model": None,
        "output_model": "Scalar",
        "reduce_op": "add",
        "precision": 32,
        "static_shapes": True,
        "check_errors": False,
        "box_vecs": None,
        "attn_activation": "silu",
        "num_heads": 8,
        "distance_influence": "both",
    }


def random_system(n_molecules, n_atoms, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    z = torch.randint(1, 10, (n_molecules * n_atoms,), generator=g)
    pos = torch.randn(n_molecules * n_atoms, 3, generator=g) * (n_atoms ** (1 / 3))
    batch = torch.arange(n_molecules).repeat_interleave(n_atoms)
    return z.to(device), pos.to(device), batch.to(device)


def time_model(model, z, pos, batch, n_warmup=10, n_iter=100):
    """Average wall time of one energy+force evaluation, in ms."""
    for _ in range(n_warmup):
        energy, forces = model(z, pos, batch)
    torch.cuda.synchronize()

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.nvtx.range_push("timed_region")
    start.record()
    for _ in range(n_iter):
        energy, forces = model(z, pos, batch)
    end.record()
    torch.cuda.synchronize(pos.device)
    torch.cuda.nvtx.range_pop()
    return start.elapsed_time(end) / n_iter


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="tensornet",
                        choices=["graph-network", "equivariant-transformer", "tensornet"])
    parser.add_argument("--molecules", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--n-atoms", type=int, default=128)
    parser.add_argument("--compile", action="store_true",
                        help="also benchmark torch.compile(mode='reduce-overhead')")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", default=None, help="optional .csv to append results to")
    args = parser.parse_args()

    device = torch.device(args.device)
    if device.type == "cuda":
        print(f"GPU: {torch.cuda.get_device_name(device)}")
        print(f"CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}")

    rows = []
    for n_mol in args.molecules:
        torch.cuda.reset_peak_memory_stats()
        model = create_model(_base_args(args.model)).to(device).eval()
        z, pos, batch = random_system(n_mol, args.n_atoms, device)

        ms = time_model(model, z, pos, batch)
        mem = torch.cuda.max_memory_allocated() / 2 ** 20
        rows.append((args.model, n_mol, args.n_atoms, "eager", ms, mem))
        print(f"{args.model:>24s} mol={n_mol:4d} atoms={args.n_atoms:5d} eager     {ms:8.3f} ms  {mem:8.1f} MB")

        if args.compile:
            torch._dynamo.reset()
            compiled = torch.compile(model, mode="reduce-overhead", fullgraph=False, dynamic=False)
            ms_c = time_model(compiled, z, pos, batch)
            rows.append((args.model, n_mol, args.n_atoms, "compiled", ms_c, mem))
            print(f"{args.model:>24s} mol={n_mol:4d} atoms={args.n_atoms:5d} compiled  {ms_c:8.3f} ms  (x{ms / ms_c:.2f})")

        del model, z, pos, batch
        torch.cuda.empty_cache()

    if args.out is not None:
        new = not os.path.exists(args.out)
        with open(args.out, "a") as f:
            if new:
                f.write("model,molecules,atoms,mode,ms,peak_mb\n")
            for r in rows:
                f.write(",".join(str(x) for x in r) + "\n")
        print(f"appended {len(rows)} rows to {args.out}")


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"total benchmark time: {time.time() - t0:.1f}s")
