"""Ray-based rollout workers for population evaluation.

Each ``RolloutWorker`` actor owns a vectorised Gymnasium environment and a
copy of the policy network. The policy forward pass for all environments of a
worker is batched on the worker's GPU (fractional GPUs are fine: the networks
are small), the simulation itself runs on CPU.

Typical use (see ``train_es.py``)::

    pool = WorkerPool(env_id="HalfCheetah-v4", policy_fn=make_policy,
                      num_workers=32, gpus_per_worker=0.25)
    fitness = pool.evaluate(flat_params)   # (popsize,) tensor
"""

from __future__ import annotations

import logging
import math
import os
import socket
from dataclasses import dataclass
from typing import Callable, List, Optional

import gymnasium as gym
import numpy as np
import ray
import torch
from torch import nn
from torch.nn.utils import vector_to_parameters

log = logging.getLogger(__name__)


@dataclass
class WorkerConfig:
    env_id: str
    envs_per_worker: int = 8
    episode_length: int = 1000
    num_episodes: int = 1
    gpus_per_worker: float = 0.0
    cpus_per_worker: float = 1.0
    obs_norm: bool = True
    seed: int = 0


def init_ray(address: Optional[str] = None, num_gpus: Optional[int] = None):
    """Connects to (or starts) a Ray cluster."""
    if ray.is_initialized():
        return
    if address is None and "RAY_ADDRESS" in os.environ:
        address = os.environ["RAY_ADDRESS"]
    if address is not None:
        ray.init(address=address, log_to_driver=False)
    else:
        if num_gpus is None:
            num_gpus = torch.cuda.device_count()
        ray.init(num_gpus=num_gpus, log_to_driver=False)
    res = ray.cluster_resources()
    log.info("Ray cluster: %d CPUs, %d GPUs", int(res.get("CPU", 0)), int(res.get("GPU", 0)))


class RunningNorm:
    """Running mean/std of observations (Welford), kept on the host."""

    def __init__(self, shape):
        self.count = 1e-4
        self.mean = np.zeros(shape, dtype=np.float64)
        self.m2 = np.ones(shape, dtype=np.float64)

    def update(self, batch):
        batch = np.asarray(batch, dtype=np.float64)
        b_count = batch.shape[0]
        b_mean = batch.mean(axis=0)
        b_var = batch.var(axis=0)
        delta = b_mean - self.mean
        tot = self.count + b_count
        self.mean = self.mean + delta * b_count / tot
        self.m2 = self.m2 + b_var * b_count + delta**2 * self.count * b_count / tot
        self.count = tot

    @property
    def std(self):
        return np.sqrt(self.m2 / self.count) + 1e-8

    def normalize(self, obs):
        return np.clip((obs - self.mean) / self.std, -5.0, 5.0)


@ray.remote
class RolloutWorker:
    def __init__(self, cfg: WorkerConfig, policy_fn: Callable[[int, int], nn.Module], worker_id: int):
        self.cfg = cfg
        self.worker_id = worker_id
        self.envs = gym.vector.SyncVectorEnv([lambda: gym.make(cfg.env_id) for _ in range(cfg.envs_per_worker)])
        obs_dim = self.envs.single_observation_space.shape[0]
        act_dim = self.envs.single_action_space.shape[0]

        gpu_ids = ray.get_gpu_ids()
        if gpu_ids:
            # Ray already restricted CUDA_VISIBLE_DEVICES to our GPU(s), so index 0 is ours.
            self.device = torch.device("cuda:0")
            torch.cuda.set_device(self.device)
        else:
            self.device = torch.device("cpu")
        log.debug(
            "worker %d on %s: CUDA_VISIBLE_DEVICES=%s device=%s",
            worker_id,
            socket.gethostname(),
            os.environ.get("CUDA_VISIBLE_DEVICES"),
            self.device,
        )

        self.policy = policy_fn(obs_dim, act_dim).to(self.device).eval()
        self.num_params = sum(p.numel() for p in self.policy.parameters())
        self.obs_norm = RunningNorm(obs_dim) if cfg.obs_norm else None
        self.rng = np.random.default_rng(cfg.seed + 1000 * worker_id)

    def set_obs_stats(self, mean, m2, count):
        if self.obs_norm is not None:
            self.obs_norm.mean, self.obs_norm.m2, self.obs_norm.count = mean, m2, count

    def get_obs_stats(self):
        if self.obs_norm is None:
            return None
        return self.obs_norm.mean, self.obs_norm.m2, self.obs_norm.count

    @torch.inference_mode()
    def _episode_returns(self, flat_params: torch.Tensor) -> float:
        vector_to_parameters(flat_params.to(self.device, non_blocking=True), self.policy.parameters())
        obs, _ = self.envs.reset(seed=int(self.rng.integers(2**31)))
        total = np.zeros(self.cfg.envs_per_worker)
        done = np.zeros(self.cfg.envs_per_worker, dtype=bool)
        collected = []
        for _ in range(self.cfg.episode_length):
            if self.obs_norm is not None:
                collected.append(obs)
                obs = self.obs_norm.normalize(obs)
            obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
            act = self.policy(obs_t).cpu().numpy()
            obs, rew, term, trunc, _ = self.envs.step(act)
            total += rew * (~done)
            done |= term | trunc
            if done.all():
                break
        if self.obs_norm is not None and collected:
            self.obs_norm.update(np.concatenate(collected, axis=0))
        return float(total.mean())

    def evaluate(self, params_batch: torch.Tensor) -> List[float]:
        return [self._episode_returns(p) for p in params_batch]

    def memory_report(self):
        if self.device.type == "cuda":
            return {
                "worker": self.worker_id,
                "allocated_mb": torch.cuda.memory_allocated(self.device) / 2**20,
                "reserved_mb": torch.cuda.memory_reserved(self.device) / 2**20,
            }
        return {"worker": self.worker_id}

    def close(self):
        self.envs.close()
        if self.device.type == "cuda":  # give cached blocks back before the actor exits
            torch.cuda.empty_cache()


class WorkerPool:
    def __init__(self, env_id: str, policy_fn, num_workers: int, gpus_per_worker: float = 0.0, **kwargs):
        init_ray()
        available_gpus = ray.available_resources().get("GPU", 0)
        if gpus_per_worker * num_workers > available_gpus + 1e-6:
            log.warning(
                "Requested %.2f GPUs for %d workers but only %.1f are available; falling back to CPU workers",
                gpus_per_worker * num_workers,
                num_workers,
                available_gpus,
            )
            gpus_per_worker = 0.0
        self.cfg = WorkerConfig(env_id=env_id, gpus_per_worker=gpus_per_worker, **kwargs)
        self.workers = [
            RolloutWorker.options(num_gpus=gpus_per_worker, num_cpus=self.cfg.cpus_per_worker).remote(
                self.cfg, policy_fn, i
            )
            for i in range(num_workers)
        ]
        self.num_workers = num_workers

    def evaluate(self, population: torch.Tensor) -> torch.Tensor:
        """Evaluates a (popsize, num_params) tensor; returns (popsize,) fitness on the host."""
        population = population.detach().cpu()
        chunks = torch.tensor_split(population, self.num_workers)
        futures = [w.evaluate.remote(c) for w, c in zip(self.workers, chunks) if len(c) > 0]
        results = ray.get(futures)
        return torch.tensor([r for chunk in results for r in chunk], dtype=torch.float32)

    def sync_obs_stats(self):
        stats = [s for s in ray.get([w.get_obs_stats.remote() for w in self.workers]) if s is not None]
        if not stats:
            return
        count = sum(s[2] for s in stats)
        mean = sum(s[0] * s[2] for s in stats) / count
        m2 = sum(s[1] for s in stats)
        ray.get([w.set_obs_stats.remote(mean, m2, count) for w in self.workers])

    def memory_report(self):
        return ray.get([w.memory_report.remote() for w in self.workers])

    def shutdown(self):
        ray.get([w.close.remote() for w in self.workers])
        for w in self.workers:
            ray.kill(w)


def run_openai_es(pool: WorkerPool, num_params: int, generations: int, popsize: int = 256, sigma: float = 0.02,
                  lr: float = 0.01, l2: float = 0.005, seed: int = 0, log_every: int = 10):
    """Simple OpenAI-ES driver on top of the worker pool (centre kept on the host)."""
    g = torch.Generator().manual_seed(seed)
    theta = torch.zeros(num_params)
    m = torch.zeros(num_params)
    v = torch.zeros(num_params)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    history = []
    for gen in range(1, generations + 1):
        noise = torch.randn(popsize // 2, num_params, generator=g)
        population = torch.cat([theta + sigma * noise, theta - sigma * noise])
        fitness = pool.evaluate(population)
        ranks = torch.empty_like(fitness)
        ranks[fitness.argsort()] = torch.arange(len(fitness), dtype=fitness.dtype)
        ranks = ranks / (len(ranks) - 1) - 0.5
        weights = ranks[: popsize // 2] - ranks[popsize // 2 :]
        grad = -(weights @ noise) / (popsize * sigma) + l2 * theta
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad * grad
        mhat = m / (1 - beta1**gen)
        vhat = v / (1 - beta2**gen)
        theta = theta - lr * mhat / (torch.sqrt(vhat) + eps)
        pool.sync_obs_stats()
        history.append(float(fitness.mean()))
        if gen % log_every == 0:
            log.info("gen %d  mean %.2f  max %.2f", gen, float(fitness.mean()), float(fitness.max()))
    return theta, history
