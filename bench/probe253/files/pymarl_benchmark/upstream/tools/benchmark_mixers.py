"""Micro-benchmark for the value-decomposition mixers (VDN / QMIX / Qatten).

Times one forward+backward+RMSprop step of the mixing network alone, on SMAC-sized
batches, and reports the peak GPU memory. We used it to pick ``mixing_embed_dim`` /
``hypernet_embed`` for the large maps (27m_vs_30m, 3s5z_vs_3s6z).

    CUDA_VISIBLE_DEVICES=0 python tools/benchmark_mixers.py --mixer qmix --map 27m_vs_30m --bs 128 --T 120
    python tools/benchmark_mixers.py --mixer all --amp --tf32

Run from the repo root so that ``src/`` is importable.
"""
import argparse
import os
import sys
import time
from types import SimpleNamespace as SN

import numpy as np
import torch as th

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

from modules.mixers.qmix import QMixer  # noqa: E402
from modules.mixers.vdn import VDNMixer  # noqa: E402
from modules.mixers.qatten import QattenMixer  # noqa: E402

# (n_agents, state_dim, agent_own_state_size) for a few SMAC maps
SMAC_SHAPES = {
    "3m": (3, 48, 4),
    "8m": (8, 168, 4),
    "2s3z": (5, 120, 7),
    "3s5z": (8, 216, 7),
    "MMM2": (10, 322, 7),
    "corridor": (6, 282, 5),
    "27m_vs_30m": (27, 1170, 4),
    "3s5z_vs_3s6z": (8, 230, 7),
}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mixer", type=str, default="qmix", choices=["vdn", "qmix", "qatten", "all"])
    parser.add_argument("--map", type=str, default="3s5z", choices=sorted(SMAC_SHAPES))
    parser.add_argument("--bs", type=int, default=32, help="episodes per batch")
    parser.add_argument("--T", type=int, default=120, help="episode length (max_seq_length - 1)")
    parser.add_argument("--mixing_embed_dim", type=int, default=32)
    parser.add_argument("--hypernet_embed", type=int, default=64)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--device", type=str, default="cuda")
    parser.add_argument("--amp", action="store_true", help="autocast the mixer forward to fp16")
    parser.add_argument("--tf32", action="store_true", help="allow TF32 matmuls on Ampere")
    parser.add_argument("--compile", action="store_true", help="torch.compile the mixer (torch>=2.0)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def build_mixer(name, n_agents, state_dim, own_size, args):
    margs = SN(
        n_agents=n_agents,
        state_shape=state_dim,
        mixing_embed_dim=args.mixing_embed_dim,
        hypernet_layers=2,
        hypernet_embed=args.hypernet_embed,
        agent_own_state_size=own_size,
        n_query_embedding_layer1=64,
        n_query_embedding_layer2=32,
        n_key_embedding_layer1=32,
        n_head_embedding_layer1=64,
        n_head_embedding_layer2=4,
        n_attention_head=4,
        n_constrant_value=32,
        type="weighted",
        mask_dead=False,
        attend_reg_coef=1e-3,
    )
    if name == "vdn":
        return VDNMixer()
    if name == "qmix":
        return QMixer(margs)
    if name == "qatten":
        return QattenMixer(margs)
    raise ValueError(name)


def bench(name, mixer, n_agents, state_dim, args, device):
    bs, T = args.bs, args.T
    agent_qs = th.randn(bs, T, n_agents, device=device, requires_grad=True)
    states = th.randn(bs, T, state_dim, device=device)
    targets = th.randn(bs, T, 1, device=device)

    params = [p for p in mixer.parameters()]
    opt = th.optim.RMSprop(params, lr=5e-4, alpha=0.99, eps=1e-5) if params else None
    scaler = th.cuda.amp.GradScaler(enabled=args.amp)

    def step():
        with th.cuda.amp.autocast(enabled=args.amp):
            out = mixer(agent_qs, states)
            q_tot = out[0] if isinstance(out, tuple) else out
            loss = ((q_tot.float() - targets) ** 2).mean()
        if opt is not None:
            opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        if opt is not None:
            scaler.step(opt)
        scaler.update()
        return loss

    for _ in range(args.warmup):
        step()
    th.cuda.synchronize(device)

    th.cuda.reset_peak_memory_stats()
    start = th.cuda.Event(enable_timing=True)
    end = th.cuda.Event(enable_timing=True)
    wall = time.perf_counter()
    start.record()
    for _ in range(args.iters):
        loss = step()
    end.record()
    th.cuda.synchronize()
    wall = (time.perf_counter() - wall) * 1e3 / args.iters

    ms = start.elapsed_time(end) / args.iters
    peak_mb = th.cuda.max_memory_allocated() / 2 ** 20
    n_params = sum(p.numel() for p in params)
    print(
        f"{name:>7s} | params {n_params:>9,d} | {ms:8.3f} ms/it (device) | "
        f"{wall:8.3f} ms/it (wall) | peak {peak_mb:8.1f} MiB | loss {loss.item():.4f}"
    )
    return ms, peak_mb


def main():
    args = parse_args()
    np.random.seed(args.seed)
    th.manual_seed(args.seed)

    device = th.device(args.device)
    th.backends.cudnn.benchmark = True
    if args.tf32:
        th.backends.cuda.matmul.allow_tf32 = True

    print(f"device: {th.cuda.get_device_name(device)} | torch {th.__version__} | cuda {th.version.cuda}")
    n_agents, state_dim, own_size = SMAC_SHAPES[args.map]
    print(f"map {args.map}: n_agents={n_agents} state_dim={state_dim} | bs={args.bs} T={args.T} amp={args.amp}")

    names = ["vdn", "qmix", "qatten"] if args.mixer == "all" else [args.mixer]
    results = {}
    for name in names:
        mixer = build_mixer(name, n_agents, state_dim, own_size, args).to(device)
        if args.compile:
            mixer = th.compile(mixer, mode="max-autotune")
        results[name] = bench(name, mixer, n_agents, state_dim, args, device)
        del mixer
        th.cuda.empty_cache()

    if len(results) > 1:
        fastest = min(results, key=lambda k: results[k][0])
        print(f"fastest: {fastest}")


if __name__ == "__main__":
    main()
