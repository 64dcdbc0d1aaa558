"""Batched Atari / MuJoCo environments for world-model training.

Wraps EnvPool (C++ thread pool, fastest) and falls back to gymnasium's AsyncVectorEnv when
EnvPool is not installed (e.g. on macOS). Observations are returned as torch tensors already on
the training device so the replay buffer and the world model never touch numpy.
"""
from typing import Optional, Tuple

import numpy as np
import torch

try:
    import envpool

    HAS_ENVPOOL = True
except ImportError:  # envpool only ships manylinux x86_64 wheels
    envpool = None
    HAS_ENVPOOL = False

import gymnasium as gym


class RunningMeanStd:
    """Tracks mean / variance of a stream of batches (Welford / parallel algorithm)."""

    def __init__(self, shape: Tuple[int, ...] = (), epsilon: float = 1e-4, device: torch.device = torch.device("cpu")):
        self.mean = torch.zeros(shape, dtype=torch.float32, device=device)
        self.var = torch.ones(shape, dtype=torch.float32, device=device)
        self.count = epsilon

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        batch_var, batch_mean = torch.var_mean(x, dim=0, unbiased=False)
        batch_count = x.shape[0]
        delta = batch_mean - self.mean
        tot_count = self.count + batch_count
        new_mean = self.mean + delta * batch_count / tot_count
        m_a = self.var * self.count
        m_b = batch_var * batch_count
        m2 = m_a + m_b + delta.pow(2) * self.count * batch_count / tot_count
        self.mean, self.var, self.count = new_mean, m2 / tot_count, tot_count


def make_gym_env(env_id: str, seed: int, idx: int, frame_skip: int = 4):
    def thunk():
        env = gym.make(env_id, frameskip=1, repeat_action_probability=0.0, full_action_space=False)
        env = gym.wrappers.AtariPreprocessing(env, frame_skip=frame_skip, screen_size=64, grayscale_obs=False, noop_max=30)
        env = gym.wrappers.RecordEpisodeStatistics(env)
        env.action_space.seed(seed + idx)
        return env

    return thunk


class TorchVecEnv:
    """Vectorised env whose observations live on ``device`` (uint8, NCHW)."""

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        seed: int,
        device: torch.device,
        frame_skip: int = 4,
        img_size: int = 64,
        reward_clip: bool = False,
        use_envpool: Optional[bool] = None,
    ):
        self.num_envs = num_envs
        self.device = torch.device(device)
        use_envpool = HAS_ENVPOOL if use_envpool is None else use_envpool
        if use_envpool:
            task_id = env_id.replace("NoFrameskip-v4", "-v5")
            self._env = envpool.make(
                task_id,
                env_type="gymnasium",
                num_envs=num_envs,
                batch_size=num_envs,
                seed=seed,
                frame_skip=frame_skip,
                img_height=img_size,
                img_width=img_size,
                stack_num=1,
                gray_scale=False,
                episodic_life=False,
                reward_clip=reward_clip,
                repeat_action_probability=0.0,
            )
            self.single_action_space = self._env.action_space
            obs_shape = self._env.observation_space.shape  # (C, H, W)
        else:
            self._env = gym.vector.AsyncVectorEnv([make_gym_env(env_id, seed, i, frame_skip) for i in range(num_envs)])
            self.single_action_space = self._env.single_action_space
            h, w, c = self._env.single_observation_space.shape
            obs_shape = (c, h, w)
        self._is_envpool = use_envpool
        self.obs_shape = obs_shape
        self.num_actions = int(self.single_action_space.n)

        # page-locked staging buffer so the host->device copy can run asynchronously
        self._obs_host = torch.empty((num_envs, *obs_shape), dtype=torch.uint8).pin_memory()
        # dedicated copy stream: overlaps the H2D transfer of step t with compute of step t-1
        self._copy_stream = torch.cuda.Stream(device=self.device) if torch.cuda.is_available() else None

        self.episode_returns = np.zeros(num_envs, dtype=np.float32)
        self.episode_lengths = np.zeros(num_envs, dtype=np.int32)
        self.reward_rms = RunningMeanStd(device=self.device)

    def _to_device(self, obs: np.ndarray) -> torch.Tensor:
        if not self._is_envpool:
            obs = np.transpose(obs, (0, 3, 1, 2))
        self._obs_host.copy_(torch.from_numpy(obs))
        if self._copy_stream is not None:
            with torch.cuda.stream(self._copy_stream):
                obs_dev = self._obs_host.to(self.device, non_blocking=True)
            torch.cuda.current_stream(self.device).wait_stream(self._copy_stream)
        else:
            obs_dev = self._obs_host.to(self.device, non_blocking=True)
        return obs_dev

    def reset(self) -> torch.Tensor:
        obs, _ = self._env.reset()
        self.episode_returns[:] = 0
        self.episode_lengths[:] = 0
        return self._to_device(obs)

    def step(self, actions: torch.Tensor):
        actions_np = actions.detach().cpu().numpy()
        obs, reward, terminated, truncated, info = self._env.step(actions_np)
        done = np.logical_or(terminated, truncated)
        self.episode_returns += reward
        self.episode_lengths += 1
        finished = []
        for i in np.nonzero(done)[0]:
            finished.append({"return": float(self.episode_returns[i]), "length": int(self.episode_lengths[i])})
            self.episode_returns[i] = 0
            self.episode_lengths[i] = 0
        reward_t = torch.as_tensor(reward, dtype=torch.float32, device=self.device)
        self.reward_rms.update(reward_t[:, None])
        return (
            self._to_device(obs),
            reward_t,
            torch.as_tensor(terminated, device=self.device),
            torch.as_tensor(truncated, device=self.device),
            finished,
        )

    def close(self) -> None:
        self._env.close()
