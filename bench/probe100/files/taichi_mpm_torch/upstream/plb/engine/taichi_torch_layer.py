"""Differentiable MLS-MPM simulator exposed to PyTorch.

The simulator state lives in Taichi fields; actions and initial particle
positions come from PyTorch (the policy / optimizer side). Gradients flow back
through ``ti.ad`` and are copied into torch tensors on the policy device.
"""

import argparse
import os
import time

import numpy as np
import taichi as ti
import torch
import torch.nn as nn

ARCH = os.environ.get("PLB_TI_ARCH", "cuda")


def init_taichi(arch: str = ARCH, seed: int = 0):
    arch_map = {"cuda": ti.cuda, "cpu": ti.cpu, "vulkan": ti.vulkan, "gpu": ti.gpu}
    ti.init(arch=arch_map[arch], default_fp=ti.f32, random_seed=seed, fast_math=True, device_memory_GB=4)


@ti.data_oriented
class MPMSimulator:
    def __init__(self, n_particles=8192, n_grid=64, steps=64, dt=2e-4, E=5e3, nu=0.2):
        self.dim = 3
        self.n_particles = n_particles
        self.n_grid = n_grid
        self.dx = 1.0 / n_grid
        self.inv_dx = float(n_grid)
        self.dt = dt
        self.steps = steps
        self.p_vol = (self.dx * 0.5) ** 3
        self.p_mass = self.p_vol * 1.0
        self.mu = E / (2 * (1 + nu))
        self.lam = E * nu / ((1 + nu) * (1 - 2 * nu))
        self.gravity = ti.Vector([0.0, -9.8, 0.0])

        self.x = ti.Vector.field(3, dtype=ti.f32, shape=(steps + 1, n_particles), needs_grad=True)
        self.v = ti.Vector.field(3, dtype=ti.f32, shape=(steps + 1, n_particles), needs_grad=True)
        self.C = ti.Matrix.field(3, 3, dtype=ti.f32, shape=(steps + 1, n_particles), needs_grad=True)
        self.F = ti.Matrix.field(3, 3, dtype=ti.f32, shape=(steps + 1, n_particles), needs_grad=True)
        self.grid_v_in = ti.Vector.field(3, dtype=ti.f32, shape=(steps, n_grid, n_grid, n_grid), needs_grad=True)
        self.grid_m = ti.field(dtype=ti.f32, shape=(steps, n_grid, n_grid, n_grid), needs_grad=True)
        self.grid_v_out = ti.Vector.field(3, dtype=ti.f32, shape=(steps, n_grid, n_grid, n_grid), needs_grad=True)
        self.action = ti.Vector.field(3, dtype=ti.f32, shape=(steps,), needs_grad=True)
        self.loss = ti.field(dtype=ti.f32, shape=(), needs_grad=True)
        self.target = ti.Vector.field(3, dtype=ti.f32, shape=())

    @ti.kernel
    def clear_grid(self):
        for s, i, j, k in self.grid_m:
            self.grid_v_in[s, i, j, k] = [0, 0, 0]
            self.grid_m[s, i, j, k] = 0
            self.grid_v_in.grad[s, i, j, k] = [0, 0, 0]
            self.grid_m.grad[s, i, j, k] = 0
            self.grid_v_out.grad[s, i, j, k] = [0, 0, 0]

    @ti.kernel
    def init_F(self):
        for p in range(self.n_particles):
            self.F[0, p] = ti.Matrix.identity(ti.f32, 3)
            self.C[0, p] = ti.Matrix.zero(ti.f32, 3, 3)

    @ti.kernel
    def p2g(self, f: ti.i32):
        for p in range(self.n_particles):
            base = ti.cast(self.x[f, p] * self.inv_dx - 0.5, ti.i32)
            fx = self.x[f, p] * self.inv_dx - ti.cast(base, ti.f32)
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_F = (ti.Matrix.identity(ti.f32, 3) + self.dt * self.C[f, p]) @ self.F[f, p]
            J = new_F.determinant()
            self.F[f + 1, p] = new_F
            r, s = ti.polar_decompose(new_F)
            cauchy = 2 * self.mu * (new_F - r) @ new_F.transpose() + ti.Matrix.identity(ti.f32, 3) * self.lam * J * (J - 1)
            stress = -(self.dt * self.p_vol * 4 * self.inv_dx * self.inv_dx) * cauchy
            affine = stress + self.p_mass * self.C[f, p]
            for i, j, k in ti.static(ti.ndrange(3, 3, 3)):
                offset = ti.Vector([i, j, k])
                dpos = (ti.cast(offset, ti.f32) - fx) * self.dx
                weight = w[i][0] * w[j][1] * w[k][2]
                self.grid_v_in[f, base + offset] += weight * (self.p_mass * self.v[f, p] + affine @ dpos)
                self.grid_m[f, base + offset] += weight * self.p_mass

    @ti.kernel
    def grid_op(self, f: ti.i32):
        for i, j, k in ti.ndrange(self.n_grid, self.n_grid, self.n_grid):
            inv_m = 1 / (self.grid_m[f, i, j, k] + 1e-10)
            v_out = inv_m * self.grid_v_in[f, i, j, k]
            v_out += self.dt * (self.gravity + self.action[f])
            if i < 3 and v_out[0] < 0:
                v_out[0] = 0
            if i > self.n_grid - 3 and v_out[0] > 0:
                v_out[0] = 0
            if j < 3 and v_out[1] < 0:
                v_out[1] = 0
            if j > self.n_grid - 3 and v_out[1] > 0:
                v_out[1] = 0
            if k < 3 and v_out[2] < 0:
                v_out[2] = 0
            if k > self.n_grid - 3 and v_out[2] > 0:
                v_out[2] = 0
            self.grid_v_out[f, i, j, k] = v_out

    @ti.kernel
    def g2p(self, f: ti.i32):
        for p in range(self.n_particles):
            base = ti.cast(self.x[f, p] * self.inv_dx - 0.5, ti.i32)
            fx = self.x[f, p] * self.inv_dx - ti.cast(base, ti.f32)
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_v = ti.Vector.zero(ti.f32, 3)
            new_C = ti.Matrix.zero(ti.f32, 3, 3)
            for i, j, k in ti.static(ti.ndrange(3, 3, 3)):
                dpos = ti.cast(ti.Vector([i, j, k]), ti.f32) - fx
                g_v = self.grid_v_out[f, base[0] + i, base[1] + j, base[2] + k]
                weight = w[i][0] * w[j][1] * w[k][2]
                new_v += weight * g_v
                new_C += 4 * weight * g_v.outer_product(dpos) * self.inv_dx
            self.v[f + 1, p] = new_v
            self.x[f + 1, p] = self.x[f, p] + self.dt * self.v[f + 1, p]
            self.C[f + 1, p] = new_C

    @ti.kernel
    def compute_loss(self):
        for p in range(self.n_particles):
            d = self.x[self.steps, p] - self.target[None]
            self.loss[None] += d.dot(d) / self.n_particles

    def substep(self, f):
        self.p2g(f)
        self.grid_op(f)
        self.g2p(f)

    def run(self):
        self.clear_grid()
        self.init_F()
        for f in range(self.steps):
            self.substep(f)
        self.loss[None] = 0
        self.compute_loss()

    def run_grad(self):
        self.clear_grid()
        self.compute_loss.grad()
        for f in reversed(range(self.steps)):
            self.g2p.grad(f)
            self.grid_op.grad(f)
            self.p2g.grad(f)


class MPMLossFunction(torch.autograd.Function):
    """Forward: simulate with the given actions; backward: adjoint through ti.ad."""

    @staticmethod
    def forward(ctx, actions: torch.Tensor, x0: torch.Tensor, sim: MPMSimulator):
        ctx.sim = sim
        ctx.device = actions.device
        sim.action.from_torch(actions.detach().contiguous())
        sim.x.from_torch(x0.detach().unsqueeze(0).expand(sim.steps + 1, -1, -1).contiguous())
        sim.v.fill(0.0)
        sim.run()
        return torch.tensor(sim.loss[None], device=ctx.device)

    @staticmethod
    def backward(ctx, grad_out):
        sim = ctx.sim
        sim.loss.grad[None] = 1.0
        sim.action.grad.fill(0.0)
        sim.run_grad()
        grad_actions = sim.action.grad.to_torch(device="cuda:0") * grad_out
        return grad_actions, None, None


class ActionPolicy(nn.Module):
    def __init__(self, steps, hidden=64):
        super().__init__()
        self.t_embed = nn.Embedding(steps, hidden)
        self.head = nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 3))

    def forward(self, t_idx):
        return self.head(self.t_embed(t_idx)) * 5.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--particles", type=int, default=8192)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args()

    init_taichi()
    device = torch.device("cuda:0")

    sim = MPMSimulator(n_particles=args.particles, steps=args.steps)
    sim.target[None] = [0.7, 0.2, 0.5]
    x0 = torch.rand(args.particles, 3) * 0.2 + torch.tensor([0.3, 0.3, 0.3])
    x0 = x0.to(device, non_blocking=True)

    policy = ActionPolicy(args.steps).to(device)
    opt = torch.optim.Adam(policy.parameters(), lr=args.lr)
    t_idx = torch.arange(args.steps, device=device)

    for it in range(args.iters):
        t0 = time.time()
        actions = policy(t_idx)
        loss = MPMLossFunction.apply(actions, x0, sim)
        opt.zero_grad()
        loss.backward()
        opt.step()
        ti.sync()
        torch.cuda.synchronize(device)
        if it % 10 == 0:
            print(f"iter {it:4d} loss {loss.item():.5f} ({(time.time() - t0) * 1e3:.1f} ms/iter)")


if __name__ == "__main__":
    main()
