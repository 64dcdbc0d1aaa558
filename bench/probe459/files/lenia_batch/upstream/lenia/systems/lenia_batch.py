"""Non-differentiable batch Lenia simulator used for large random searches.

Runs N independent worlds with N different parameter sets in lock-step, in
Fourier space, on whatever array module ``lenia.backend`` selected.
"""
import time

import numpy as np

from lenia import backend
from lenia.backend import xp
from lenia.utils.kernels import kernel_fft_np, growth_np


class BatchLenia:
    def __init__(self, size, params_list, dtype=np.float32):
        self.size = size
        self.n = len(params_list)
        self.dtype = dtype
        self.params_list = params_list

        kernels = np.stack([kernel_fft_np(size, p["R"], p["b"], p.get("kn", 0)) for p in params_list])
        self.kernels_fft = backend.asarray(kernels.astype(np.complex64))
        self.m = backend.asarray(np.array([p["m"] for p in params_list], dtype=dtype)[:, None, None])
        self.s = backend.asarray(np.array([p["s"] for p in params_list], dtype=dtype)[:, None, None])
        self.T = backend.asarray(np.array([p["T"] for p in params_list], dtype=dtype)[:, None, None])
        self.gn = [p.get("gn", 1) for p in params_list]
        self.world = xp.zeros((self.n, size, size), dtype=dtype)

    def seed(self, patterns):
        """patterns: list of 2-D numpy arrays (one per world), pasted in the centre."""
        world = np.zeros((self.n, self.size, self.size), dtype=self.dtype)
        for i, pat in enumerate(patterns):
            h, w = pat.shape
            y0 = (self.size - h) // 2
            x0 = (self.size - w) // 2
            world[i, y0 : y0 + h, x0 : x0 + w] = pat
        self.world = backend.asarray(world)

    def growth(self, u):
        out = xp.empty_like(u)
        for i, gn in enumerate(self.gn):
            if gn == 1:
                out[i] = xp.exp(-((u[i] - self.m[i]) ** 2) / (2 * self.s[i] ** 2)) * 2 - 1
            elif gn == 0:
                out[i] = xp.maximum(0, 1 - (u[i] - self.m[i]) ** 2 / (9 * self.s[i] ** 2)) ** 4 * 2 - 1
            else:
                out[i] = (xp.abs(u[i] - self.m[i]) <= self.s[i]) * 2.0 - 1
        return out

    def step(self):
        world_fft = xp.fft.fft2(self.world)
        potential = xp.real(xp.fft.ifft2(world_fft * self.kernels_fft)).astype(self.dtype)
        self.world = xp.clip(self.world + self.growth(potential) / self.T, 0.0, 1.0)
        return self.world

    def run(self, n_steps, record_every=0):
        frames = []
        for t in range(n_steps):
            self.step()
            if record_every and t % record_every == 0:
                frames.append(backend.asnumpy(self.world))
        return frames

    def mass(self):
        return backend.asnumpy(self.world.sum(axis=(1, 2)))

    def survivors(self, min_mass=1.0, max_fill=0.5):
        mass = self.mass()
        fill = mass / float(self.size * self.size)
        return np.where((mass > min_mass) & (fill < max_fill))[0]


def benchmark(size=512, n=64, steps=200):
    params = [{"R": 13, "T": 10, "b": [1.0], "m": 0.15, "s": 0.015}] * n
    sim = BatchLenia(size, params)
    rng = np.random.default_rng(0)
    sim.seed([rng.random((64, 64)).astype(np.float32) for _ in range(n)])
    backend.synchronize()
    t0 = time.time()
    sim.run(steps)
    backend.synchronize()
    dt = time.time() - t0
    print("%s: %d worlds of %dx%d, %d steps in %.2fs (%.1f world-steps/s)"
          % (backend.describe(), n, size, size, steps, dt, n * steps / dt))
    print("memory used: %.1f MB" % backend.memory_used_mb())
    backend.free_memory()


if __name__ == "__main__":
    benchmark()


def random_search(n_worlds=256, size=256, steps=300, seed=0, out="results/random_search.npz"):
    """Plain random search baseline: sample parameters uniformly, keep the ones
    whose pattern neither dies nor fills the world."""
    import os

    rng = np.random.default_rng(seed)
    params = []
    for _ in range(n_worlds):
        n_rings = int(rng.integers(1, 4))
        params.append({
            "R": int(rng.integers(5, 20)),
            "T": float(rng.uniform(2, 20)),
            "b": list(rng.uniform(0, 1, n_rings)),
            "m": float(rng.uniform(0.05, 0.5)),
            "s": float(rng.uniform(0.005, 0.1)),
        })
    sim = BatchLenia(size, params)
    sim.seed([(rng.random((48, 48)) * (rng.random((48, 48)) < 0.6)).astype(np.float32) for _ in range(n_worlds)])
    sim.run(steps)
    keep = sim.survivors()
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    np.savez_compressed(out, params=np.array([params[i] for i in keep], dtype=object),
                        worlds=backend.asnumpy(sim.world[keep]) if len(keep) else np.zeros((0, size, size)))
    print("random search: %d / %d survivors" % (len(keep), n_worlds))
    backend.free_memory()
    return keep
