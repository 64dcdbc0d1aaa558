"""Benchmark energy + force inference of a TorchMD-Net model the way an MD engine calls it.

Captures one forward/backward into a CUDA graph and replays it for every step, which removes
kernel-launch overhead for small molecules.  Compare against eager mode with --no-graph.

    python benchmarks/md_inference_graph.py --checkpoint epoch=99.ckpt --molecule alanine_dipeptide.pdb
"""
import argparse
import time

import numpy as np
import torch
from ase.io import read

from torchmdnet.models.model import load_model


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--molecule", required=True, help="any file ASE can read")
    p.add_argument("--replicas", type=int, default=1, help="independent copies of the system in one batch")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--no-graph", action="store_true", help="run eagerly instead of replaying a CUDA graph")
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    return p.parse_args()


def build_inputs(atoms, replicas, device, dtype):
    z = torch.tensor(atoms.get_atomic_numbers(), dtype=torch.long)
    pos = torch.tensor(atoms.get_positions(), dtype=dtype)
    n = z.shape[0]
    z = z.repeat(replicas).to(device)
    pos = pos.repeat(replicas, 1).to(device)
    batch = torch.arange(replicas).repeat_interleave(n).to(device)
    return z, pos, batch


class ForceFn(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, z, pos, batch):
        energy, forces = self.model(z, pos, batch)
        return energy, forces


def run_eager(fn, z, pos, batch, steps):
    for _ in range(steps):
        energy, forces = fn(z, pos, batch)
        pos = pos + 1e-4 * forces.detach()
    return energy, forces


def capture_graph(fn, z, pos, batch, warmup):
    static_pos = pos.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmup):
            energy, forces = fn(z, static_pos, batch)
    torch.cuda.current_stream().wait_stream(s)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_energy, static_forces = fn(z, static_pos, batch)
    return graph, static_pos, static_energy, static_forces


def main():
    args = parse_args()
    dtype = getattr(torch, args.dtype)
    device = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False

    atoms = read(args.molecule)
    model = load_model(
        args.checkpoint,
        derivative=True,
        static_shapes=not args.no_graph,
        check_errors=args.no_graph,
        max_num_neighbors=64,
    ).to(device=device, dtype=dtype)
    model.eval()
    fn = ForceFn(model)

    z, pos, batch = build_inputs(atoms, args.replicas, device, dtype)
    pos.requires_grad_(False)

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    if args.no_graph:
        run_eager(fn, z, pos, batch, args.warmup)
        torch.cuda.synchronize()  # drain warm-up
        start.record()
        energy, forces = run_eager(fn, z, pos, batch, args.steps)
        end.record()
    else:
        graph, static_pos, energy, forces = capture_graph(fn, z, pos, batch, args.warmup)
        torch.cuda.synchronize()  # capture finished
        start.record()
        for _ in range(args.steps):
            graph.replay()
            static_pos.add_(1e-4 * forces)
        end.record()
    torch.cuda.synchronize()

    ms = start.elapsed_time(end)
    n_atoms = z.shape[0]
    print(f"device      : {torch.cuda.get_device_name(device)}")
    print(f"atoms/batch : {n_atoms} ({args.replicas} replicas)")
    print(f"mode        : {'eager' if args.no_graph else 'cuda graph'}")
    print(f"time/step   : {ms / args.steps:.3f} ms")
    print(f"ns/day @2fs : {86400e3 / (ms / args.steps) * 2e-6:.1f}")
    print(f"peak memory : {torch.cuda.max_memory_allocated(device) / 2**20:.1f} MiB")
    print(f"energy[0]   : {energy[0].item():.6f}")
    print(f"|F| mean    : {np.linalg.norm(forces.detach().cpu().numpy(), axis=1).mean():.6f}")


if __name__ == "__main__":
    main()
