"""
Vectorised gomoku environment.

    env = VecGomoku(num_envs=4096, size=15)
    obs = env.reset()
    obs, reward, done = env.step(actions)   # actions: LongTensor (num_envs,)

Boards are kept as a (N, 2, S, S) uint8 tensor on `device`. Stepping dispatches to the
compiled CUDA kernels when the boards live on a CUDA device and the extension was built
WITH_CUDA, to the OpenMP kernels for CPU boards, and to a pure-PyTorch implementation
otherwise (e.g. extension not built). The pure-PyTorch path is ~6x slower than the CUDA
kernels but runs on any device torch supports.
"""
import time
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

try:
    from . import _C
    HAS_EXT = True
    HAS_CUDA_KERNELS = bool(_C.with_cuda())
except ImportError:  # extension not built (pip install -e . not run)
    _C = None
    HAS_EXT = False
    HAS_CUDA_KERNELS = False


def _line_kernels(win_len: int, device, dtype):
    """4 conv filters detecting `win_len` in a row: horizontal, vertical, two diagonals."""
    k = torch.zeros(4, 1, win_len, win_len, device=device, dtype=dtype)
    mid = win_len // 2
    k[0, 0, mid, :] = 1
    k[1, 0, :, mid] = 1
    k[2, 0] = torch.eye(win_len, device=device, dtype=dtype)
    k[3, 0] = torch.flip(torch.eye(win_len, device=device, dtype=dtype), dims=[1])
    return k


class VecGomoku:
    def __init__(self, num_envs: int, size: int = 15, win_len: int = 5, device="cuda", seed: Optional[int] = None):
        self.num_envs = num_envs
        self.size = size
        self.win_len = win_len
        self.device = torch.device(device)
        self.generator = torch.Generator(device=self.device)
        if seed is not None:
            self.generator.manual_seed(seed)
        self.boards = torch.zeros(num_envs, 2, size, size, dtype=torch.uint8, device=self.device)
        self.to_play = torch.zeros(num_envs, dtype=torch.long, device=self.device)
        self.num_moves = torch.zeros(num_envs, dtype=torch.long, device=self.device)
        self._kernels = _line_kernels(win_len, self.device, torch.float32)

    # ------------------------------------------------------------------ API
    def reset(self, mask: Optional[torch.Tensor] = None):
        if mask is None:
            self.boards.zero_()
            self.to_play.zero_()
            self.num_moves.zero_()
        else:
            self.boards[mask] = 0
            self.to_play[mask] = 0
            self.num_moves[mask] = 0
        return self.observation()

    def observation(self) -> torch.Tensor:
        """(N, 3, S, S) float planes: own stones, opponent stones, side to move."""
        own = torch.gather(self.boards, 1, self.to_play.view(-1, 1, 1, 1).expand(-1, 1, self.size, self.size))
        opp = torch.gather(self.boards, 1, (1 - self.to_play).view(-1, 1, 1, 1).expand(-1, 1, self.size, self.size))
        side = self.to_play.view(-1, 1, 1, 1).expand(-1, 1, self.size, self.size)
        return torch.cat([own, opp, side.to(torch.uint8)], dim=1).float()

    def legal_mask(self) -> torch.Tensor:
        occupied = self.boards.sum(dim=1) > 0
        return ~occupied.view(self.num_envs, -1)

    def step(self, actions: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        actions = actions.to(self.device, non_blocking=True)
        if self.boards.is_cuda and HAS_CUDA_KERNELS:
            reward, done = _C.step_cuda(self.boards, actions, self.to_play, self.win_len)
        elif HAS_EXT and self.boards.device.type == "cpu":
            reward, done = _C.step_cpu(self.boards, actions, self.to_play, self.win_len)
        else:
            reward, done = self._step_torch(actions)
        self.num_moves += 1
        done = done | (self.num_moves >= self.size * self.size)
        self.to_play = 1 - self.to_play
        return self.observation(), reward, done

    def random_actions(self) -> torch.Tensor:
        legal = self.legal_mask().float()
        return torch.multinomial(legal + 1e-9, 1, generator=self.generator).squeeze(1)

    # ------------------------------------------------------- torch fallback
    def _step_torch(self, actions: torch.Tensor):
        n, s = self.num_envs, self.size
        rows = actions // s
        cols = actions % s
        env_idx = torch.arange(n, device=self.device)
        self.boards[env_idx, self.to_play, rows, cols] = 1

        stones = torch.gather(
            self.boards, 1, self.to_play.view(-1, 1, 1, 1).expand(-1, 1, s, s)
        ).float()
        pad = self.win_len // 2
        counts = F.conv2d(stones, self._kernels, padding=pad)
        won = (counts >= self.win_len).flatten(1).any(dim=1)
        reward = won.float()
        return reward, won


def benchmark(num_envs=4096, steps=200, device="cuda"):
    env = VecGomoku(num_envs, device=device, seed=0)
    env.reset()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        a = env.random_actions()
        _, _, done = env.step(a)
        if done.any():
            env.reset(done)
    torch.cuda.synchronize(env.device)
    dt = time.perf_counter() - t0
    path = "cuda kernels" if (env.boards.is_cuda and HAS_CUDA_KERNELS) else ("cpu kernels" if HAS_EXT and env.boards.device.type == "cpu" else "torch")
    print(f"{num_envs * steps / dt / 1e6:.2f} M steps/s ({path})")


if __name__ == "__main__":
    benchmark()
