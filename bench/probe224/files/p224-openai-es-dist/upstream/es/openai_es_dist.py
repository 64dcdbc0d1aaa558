"""
Multi-GPU OpenAI-ES (Salimans et al., 2017) with a shared noise table.

Every rank holds the same noise table (generated from a common seed on its
own GPU), evaluates ``popsize / world_size`` antithetic pairs with a vmapped
policy, and only the scalar returns plus noise indices are exchanged. The
centre parameters are then updated identically on every rank.

Launch with torchrun, one process per GPU:

    torchrun --nproc_per_node=8 es/openai_es_dist.py --env brax:ant --popsize 8192
"""

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from es.envs import make_vector_env
from es.vmap_policies import PopulationPolicy, make_mlp

# --------------------------------------------------------------------------
# distributed helpers
# --------------------------------------------------------------------------


def setup_distributed(backend: str):
    if "RANK" not in os.environ:
        # single process fallback (debugging)
        os.environ.setdefault("RANK", "0")
        os.environ.setdefault("WORLD_SIZE", "1")
        os.environ.setdefault("LOCAL_RANK", "0")
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29511")
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend=backend, init_method="env://", rank=rank, world_size=world_size)
    device = torch.device("cuda", local_rank)
    return rank, world_size, local_rank, device


def comm_device(device: torch.device) -> torch.device:
    """NCCL needs GPU tensors; gloo (used for CPU debugging) needs host tensors."""
    return device if dist.get_backend() == "nccl" else torch.device("cpu")


def all_gather_cat(t: torch.Tensor, device: torch.device) -> torch.Tensor:
    cdev = comm_device(device)
    t = t.to(cdev)
    out = torch.empty((dist.get_world_size() * t.shape[0],) + tuple(t.shape[1:]), dtype=t.dtype, device=cdev)
    dist.all_gather_into_tensor(out, t.contiguous())
    return out.to(device)


# --------------------------------------------------------------------------
# noise table and fitness shaping
# --------------------------------------------------------------------------


class SharedNoiseTable:
    """A big block of N(0, 1) noise; perturbations are slices of it."""

    def __init__(self, size: int, seed: int, device: torch.device):
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)
        self.noise = torch.randn(size, generator=gen, device=device, dtype=torch.float32)
        self.size = size

    def get(self, idx: torch.Tensor, dim: int) -> torch.Tensor:
        # idx: (n,) start offsets -> (n, dim) slices via unfold-free gather
        ar = torch.arange(dim, device=self.noise.device)
        return self.noise[idx[:, None] + ar[None, :]]

    def sample_index(self, n: int, dim: int, gen: torch.Generator) -> torch.Tensor:
        return torch.randint(0, self.size - dim, (n,), generator=gen, device=self.noise.device)


def centered_ranks(x: torch.Tensor) -> torch.Tensor:
    ranks = torch.empty_like(x)
    ranks[x.argsort()] = torch.arange(x.numel(), dtype=x.dtype, device=x.device)
    return ranks / (x.numel() - 1) - 0.5


class RunningObsStats:
    """Observation normaliser whose moments are summed over all ranks each iteration."""

    def __init__(self, dim: int, device: torch.device, clip: float = 5.0):
        self.sum = torch.zeros(dim, device=device, dtype=torch.float64)
        self.sumsq = torch.full((dim,), 1e-2, device=device, dtype=torch.float64)
        self.count = torch.tensor(1e-2, device=device, dtype=torch.float64)
        self.clip = clip
        self._buf_sum = torch.zeros_like(self.sum)
        self._buf_sumsq = torch.zeros_like(self.sumsq)
        self._buf_count = torch.zeros_like(self.count)

    @property
    def mean(self):
        return (self.sum / self.count).float()

    @property
    def std(self):
        var = self.sumsq / self.count - (self.sum / self.count) ** 2
        return torch.sqrt(torch.clamp(var, min=1e-8)).float()

    def accumulate(self, obs: torch.Tensor):
        obs = obs.reshape(-1, obs.shape[-1]).double()
        self._buf_sum += obs.sum(0)
        self._buf_sumsq += (obs * obs).sum(0)
        self._buf_count += obs.shape[0]

    def sync(self, device: torch.device):
        packed = torch.cat([self._buf_sum, self._buf_sumsq, self._buf_count[None]])
        cdev = comm_device(device)
        packed = packed.to(cdev)
        dist.all_reduce(packed)
        packed = packed.to(device)
        d = self.sum.numel()
        self.sum += packed[:d]
        self.sumsq += packed[d : 2 * d]
        self.count += packed[-1]
        self._buf_sum.zero_()
        self._buf_sumsq.zero_()
        self._buf_count.zero_()

    def normalize(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.clamp((obs - self.mean) / self.std, -self.clip, self.clip)

    def state_dict(self):
        return {"sum": self.sum.cpu(), "sumsq": self.sumsq.cpu(), "count": self.count.cpu()}

    def load_state_dict(self, sd, device):
        self.sum = sd["sum"].to(device)
        self.sumsq = sd["sumsq"].to(device)
        self.count = sd["count"].to(device)


@torch.no_grad()
def evaluate_center(env, pop_policy, theta: torch.Tensor, episodes: int = 16) -> dict:
    """Deterministic re-evaluation of the centre (no noise), averaged over episodes."""
    params = theta.unsqueeze(0).expand(episodes, -1).contiguous()
    returns = env.rollout(pop_policy, params, deterministic=True).float()
    return {
        "center_mean": float(returns.mean()),
        "center_std": float(returns.std()),
        "center_min": float(returns.min()),
        "center_max": float(returns.max()),
    }


# --------------------------------------------------------------------------
# main loop
# --------------------------------------------------------------------------


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--env", default="brax:ant")
    p.add_argument("--popsize", type=int, default=8192, help="total number of perturbations (all ranks)")
    p.add_argument("--sigma", type=float, default=0.02)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--l2", type=float, default=0.005)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--episode-length", type=int, default=1000)
    p.add_argument("--iterations", type=int, default=500)
    p.add_argument("--noise-size", type=int, default=250_000_000)
    p.add_argument("--seed", type=int, default=123)
    p.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    p.add_argument("--bf16", action="store_true", help="run policy forward passes in bfloat16")
    p.add_argument("--resume", default=None)
    p.add_argument("--out", default="runs/openai_es")
    return p.parse_args()


def main():
    args = parse_args()
    rank, world_size, local_rank, device = setup_distributed(args.backend)
    is_main = rank == 0

    torch.manual_seed(args.seed + rank)
    torch.cuda.manual_seed_all(args.seed + rank)
    np.random.seed(args.seed + rank)

    if args.bf16 and not torch.cuda.is_bf16_supported():
        if is_main:
            print("bf16 requested but not supported by this GPU; using fp32")
        args.bf16 = False

    env = make_vector_env(args.env, num_envs=2 * args.popsize // world_size, device=device,
                          episode_length=args.episode_length)
    template = make_mlp(env.observation_size, env.action_size, args.hidden)
    pop_policy = PopulationPolicy(template, device=device)
    dim = pop_policy.num_params

    theta = pop_policy.flat_init(seed=args.seed).to(device)
    theta.requires_grad_(False)
    grad_holder = torch.zeros_like(theta, requires_grad=True)
    optimizer = torch.optim.Adam([grad_holder], lr=args.lr, fused=True)
    start_iter = 0

    if args.resume is not None:
        ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        theta.copy_(ckpt["theta"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_iter = ckpt["iteration"] + 1

    noise = SharedNoiseTable(args.noise_size, seed=args.seed, device=device)
    sample_gen = torch.Generator(device=device)
    sample_gen.manual_seed(args.seed * 1000 + rank)
    local_pairs = args.popsize // (2 * world_size)

    out_dir = Path(args.out)
    if is_main:
        out_dir.mkdir(parents=True, exist_ok=True)
        print(f"OpenAI-ES: {world_size} ranks, {dim} parameters, popsize {args.popsize}")

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    history = []

    for it in range(start_iter, args.iterations):
        start_evt.record()
        idx = noise.sample_index(local_pairs, dim, sample_gen)
        eps = noise.get(idx, dim)
        params = torch.cat([theta + args.sigma * eps, theta - args.sigma * eps], dim=0)

        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.bf16):
            returns = env.rollout(pop_policy, params)  # (2 * local_pairs,)
        returns = returns.float()

        pos, neg = returns[:local_pairs], returns[local_pairs:]
        all_pos = all_gather_cat(pos, device)
        all_neg = all_gather_cat(neg, device)
        all_idx = all_gather_cat(idx, device)

        shaped = centered_ranks(torch.cat([all_pos, all_neg]))
        weights = shaped[: all_pos.numel()] - shaped[all_pos.numel():]
        # reconstruct the gradient from the shared table (chunked to bound memory)
        g = torch.zeros_like(theta)
        for s in range(0, all_idx.numel(), 4096):
            g += weights[s : s + 4096] @ noise.get(all_idx[s : s + 4096], dim)
        g /= all_idx.numel() * args.sigma

        grad_holder.grad = -(g - args.l2 * theta)
        optimizer.step()
        theta += grad_holder.detach()
        grad_holder.data.zero_()

        end_evt.record()
        torch.cuda.synchronize()
        step_ms = start_evt.elapsed_time(end_evt)

        if is_main:
            rec = {
                "iteration": it,
                "mean_return": float(torch.cat([all_pos, all_neg]).mean()),
                "max_return": float(torch.cat([all_pos, all_neg]).max()),
                "theta_norm": float(theta.norm()),
                "step_ms": step_ms,
                "mem_gb": torch.cuda.max_memory_allocated(device) / 1e9,
            }
            if (it + 1) % 25 == 0:
                rec.update(evaluate_center(env, pop_policy, theta))
            history.append(rec)
            print(json.dumps(rec))
            if (it + 1) % 50 == 0:
                torch.save({"theta": theta.cpu(), "optimizer": optimizer.state_dict(), "iteration": it},
                           out_dir / f"ckpt_{it + 1:05d}.pt")

    if is_main:
        with open(out_dir / "history.json", "w") as f:
            json.dump(history, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
