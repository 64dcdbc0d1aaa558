"""Batched MuJoCo-MJX environment with a PyTorch-facing step() API.

Physics runs in JAX (jit + vmap over ``num_envs`` worlds) on the GPU; the policy
is a PyTorch module on the same GPU. Tensors are exchanged zero-copy through
DLPack, so a full rollout never leaves device memory.
"""

import os

# Headless rendering for evaluation videos and faster XLA GEMMs on GPU.
os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("XLA_FLAGS", "--xla_gpu_triton_gemm_any=True")

import functools
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import torch
from mujoco import mjx


@dataclass
class EnvConfig:
    xml_path: str
    num_envs: int = 4096
    frame_skip: int = 5
    episode_length: int = 1000
    ctrl_cost_weight: float = 0.1
    healthy_z_range: Tuple[float, float] = (0.2, 1.0)
    reset_noise_scale: float = 0.1
    torch_device: str = "cuda:0"
    seed: int = 0


def _to_torch(x: jax.Array) -> torch.Tensor:
    return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))


def _to_jax(t: torch.Tensor) -> jax.Array:
    return jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t.contiguous()))


class MJXTorchVecEnv:
    def __init__(self, cfg: EnvConfig):
        self.cfg = cfg
        self.num_envs = cfg.num_envs
        self.device = torch.device(cfg.torch_device)
        self.jax_device = jax.devices("gpu")[0]

        self.mj_model = mujoco.MjModel.from_xml_path(cfg.xml_path)
        self.mj_model.opt.solver = mujoco.mjtSolver.mjSOL_CG
        self.mj_model.opt.iterations = 6
        self.mj_model.opt.ls_iterations = 6
        self.mj_data = mujoco.MjData(self.mj_model)

        self.mjx_model = mjx.put_model(self.mj_model, device=self.jax_device)
        self.nq, self.nv, self.nu = self.mj_model.nq, self.mj_model.nv, self.mj_model.nu
        self.obs_dim = (self.nq - 2) + self.nv
        self.act_dim = self.nu

        self._rng = jax.random.PRNGKey(cfg.seed)
        self._init_qpos = jnp.asarray(self.mj_model.qpos0)
        self._step_fn = jax.jit(jax.vmap(functools.partial(self._physics_step, self.mjx_model)))
        self._reset_fn = jax.jit(jax.vmap(functools.partial(self._physics_reset, self.mjx_model)))

        self._data = None
        self._t = torch.zeros(self.num_envs, dtype=torch.int32, device=self.device)

    # ---------------------------------------------------------------- JAX side
    def _physics_reset(self, model, rng):
        rng1, rng2 = jax.random.split(rng)
        low, hi = -self.cfg.reset_noise_scale, self.cfg.reset_noise_scale
        qpos = self._init_qpos + jax.random.uniform(rng1, (self.nq,), minval=low, maxval=hi)
        qvel = jax.random.uniform(rng2, (self.nv,), minval=low, maxval=hi)
        data = mjx.make_data(model).replace(qpos=qpos, qvel=qvel)
        return mjx.forward(model, data)

    def _physics_step(self, model, data, action):
        data = data.replace(ctrl=action)

        def body(d, _):
            return mjx.step(model, d), None

        data, _ = jax.lax.scan(body, data, None, length=self.cfg.frame_skip)
        return data

    def _obs(self, data) -> jax.Array:
        return jnp.concatenate([data.qpos[:, 2:], data.qvel], axis=-1)

    def _reward_done(self, prev, data, action):
        dt = self.mj_model.opt.timestep * self.cfg.frame_skip
        x_vel = (data.qpos[:, 0] - prev.qpos[:, 0]) / dt
        ctrl_cost = self.cfg.ctrl_cost_weight * jnp.sum(jnp.square(action), axis=-1)
        z = data.qpos[:, 2]
        lo, hi = self.cfg.healthy_z_range
        healthy = jnp.logical_and(z > lo, z < hi)
        reward = x_vel + 1.0 * healthy - ctrl_cost
        return reward, jnp.logical_not(healthy)

    # -------------------------------------------------------------- torch side
    def reset(self) -> torch.Tensor:
        self._rng, key = jax.random.split(self._rng)
        keys = jax.random.split(key, self.num_envs)
        self._data = self._reset_fn(keys)
        self._t.zero_()
        return _to_torch(self._obs(self._data))

    def step(self, action: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, Dict[str, torch.Tensor]]:
        action = action.clamp(-1.0, 1.0).float()
        act_j = _to_jax(action)
        prev = self._data
        self._data = self._step_fn(self._data, act_j)
        reward_j, done_j = self._reward_done(prev, self._data, act_j)

        obs = _to_torch(self._obs(self._data))
        reward = _to_torch(reward_j)
        done = _to_torch(done_j.astype(jnp.float32))
        self._t += 1
        truncated = (self._t >= self.cfg.episode_length).float()
        done = torch.maximum(done, truncated)

        if bool(done.any()):
            self._partial_reset(done > 0)
            obs = _to_torch(self._obs(self._data))
            self._t[done > 0] = 0

        return obs, reward, done, {"truncation": truncated}

    def _partial_reset(self, mask: torch.Tensor):
        self._rng, key = jax.random.split(self._rng)
        keys = jax.random.split(key, self.num_envs)
        fresh = self._reset_fn(keys)
        m = jnp.asarray(mask.cpu().numpy())

        def where(a, b):
            shape = (self.num_envs,) + (1,) * (a.ndim - 1)
            return jnp.where(m.reshape(shape), a, b)

        self._data = jax.tree_util.tree_map(where, fresh, self._data)

    def render(self, env_id: int = 0, width: int = 480, height: int = 360) -> np.ndarray:
        data = jax.tree_util.tree_map(lambda x: np.asarray(x[env_id]), self._data)
        mjx.get_data_into(self.mj_data, self.mj_model, data)
        renderer = mujoco.Renderer(self.mj_model, height=height, width=width)
        renderer.update_scene(self.mj_data)
        return renderer.render()


if __name__ == "__main__":
    import argparse
    import time

    ap = argparse.ArgumentParser()
    ap.add_argument("xml")
    ap.add_argument("--num-envs", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()

    env = MJXTorchVecEnv(EnvConfig(xml_path=args.xml, num_envs=args.num_envs))
    obs = env.reset()
    print("obs", tuple(obs.shape), obs.device, "jax:", env.jax_device)
    policy = torch.nn.Sequential(torch.nn.Linear(env.obs_dim, 256), torch.nn.Tanh(),
                                 torch.nn.Linear(256, env.act_dim)).cuda()
    t0 = time.time()
    with torch.no_grad():
        for _ in range(args.steps):
            obs, rew, done, info = env.step(policy(obs))
    torch.cuda.synchronize()
    print(f"{args.steps * args.num_envs / (time.time() - t0):.0f} env-steps/s")
