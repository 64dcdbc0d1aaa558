"""PyTorch <-> NVIDIA Warp bridge used by the differentiable-simulation trainer.

Each simulation step is exposed as a ``torch.autograd.Function`` whose forward
runs Warp kernels recorded on a ``wp.Tape`` and whose backward replays the tape.
Arrays are shared zero-copy between the two frameworks through
``wp.from_torch`` / ``wp.to_torch`` so no host round trip happens on the GPU.
"""

import logging
from typing import Optional, Tuple

import numpy as np
import torch
import warp as wp

log = logging.getLogger(__name__)

_WARP_INITIALIZED = False


def init_warp(device: Optional[str] = None, quiet: bool = True):
    """Initialise Warp once and pick the simulation device.

    By default we follow the torch device so that tensors can be aliased.
    """
    global _WARP_INITIALIZED
    if not _WARP_INITIALIZED:
        wp.config.quiet = quiet
        wp.config.mode = "release"
        wp.init()
        _WARP_INITIALIZED = True

    if device is None:
        device = "cuda:0" if torch.cuda.is_available() else "cpu"
    wp.set_device(device)
    log.info("Warp %s initialised on %s", wp.config.version, device)
    return wp.get_device(device)


def torch_device_for(warp_device) -> torch.device:
    """Return the torch device that aliases a Warp device."""
    return wp.device_to_torch(warp_device)


@wp.kernel
def integrate_particles(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    f: wp.array(dtype=wp.vec3),
    inv_mass: wp.array(dtype=float),
    gravity: wp.vec3,
    dt: float,
    x_new: wp.array(dtype=wp.vec3),
    v_new: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    w = inv_mass[tid]
    v1 = v[tid] + (f[tid] * w + gravity * wp.step(-w)) * dt
    x_new[tid] = x[tid] + v1 * dt
    v_new[tid] = v1


@wp.kernel
def ground_contact(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    ke: float,
    kd: float,
    mu: float,
    f: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    p = x[tid]
    c = wp.min(p[1], 0.0)
    vn = v[tid][1]
    vt = wp.vec3(v[tid][0], 0.0, v[tid][2])
    fn = c * ke + wp.min(vn, 0.0) * kd * wp.step(c)
    ft = -vt * mu * wp.abs(fn)
    f[tid] = f[tid] - wp.vec3(0.0, fn, 0.0) + ft


class WarpStep(torch.autograd.Function):
    """One explicit-Euler step with ground contact, differentiable w.r.t. x, v and f."""

    @staticmethod
    def forward(ctx, x, v, f, inv_mass, dt, gravity, ke, kd, mu):
        device = wp.device_from_torch(x.device)
        ctx.tape = wp.Tape()
        ctx.x = wp.from_torch(x.contiguous(), dtype=wp.vec3, requires_grad=True)
        ctx.v = wp.from_torch(v.contiguous(), dtype=wp.vec3, requires_grad=True)
        ctx.f = wp.from_torch(f.contiguous().clone(), dtype=wp.vec3, requires_grad=True)
        ctx.inv_mass = wp.from_torch(inv_mass, dtype=float)
        n = x.shape[0]
        ctx.x_new = wp.zeros(n, dtype=wp.vec3, device=device, requires_grad=True)
        ctx.v_new = wp.zeros(n, dtype=wp.vec3, device=device, requires_grad=True)

        with ctx.tape:
            wp.launch(ground_contact, dim=n, inputs=[ctx.x, ctx.v, ke, kd, mu], outputs=[ctx.f], device=device)
            wp.launch(
                integrate_particles,
                dim=n,
                inputs=[ctx.x, ctx.v, ctx.f, ctx.inv_mass, wp.vec3(*gravity), dt],
                outputs=[ctx.x_new, ctx.v_new],
                device=device,
            )

        return wp.to_torch(ctx.x_new), wp.to_torch(ctx.v_new)

    @staticmethod
    def backward(ctx, grad_x_new, grad_v_new):
        ctx.x_new.grad = wp.from_torch(grad_x_new.contiguous(), dtype=wp.vec3)
        ctx.v_new.grad = wp.from_torch(grad_v_new.contiguous(), dtype=wp.vec3)
        ctx.tape.backward()

        gx = wp.to_torch(ctx.tape.gradients[ctx.x])
        gv = wp.to_torch(ctx.tape.gradients[ctx.v])
        gf = wp.to_torch(ctx.tape.gradients[ctx.f])
        ctx.tape.zero()
        return gx, gv, gf, None, None, None, None, None, None


class ParticleSimulator(torch.nn.Module):
    """Rolls out ``num_steps`` WarpStep calls; parameters are torch tensors."""

    def __init__(self, num_particles: int, dt: float = 1.0 / 240.0, num_steps: int = 120,
                 ke: float = 1.0e4, kd: float = 1.0e2, mu: float = 0.5, device: str = "cuda"):
        super().__init__()
        self.dt = dt
        self.num_steps = num_steps
        self.ke, self.kd, self.mu = ke, kd, mu
        self.gravity = (0.0, -9.81, 0.0)
        self.register_buffer("inv_mass", torch.ones(num_particles, device=device))
        self.force = torch.nn.Parameter(torch.zeros(num_particles, 3, device=device))

    def forward(self, x0: torch.Tensor, v0: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        x, v = x0, v0
        traj = [x]
        for _ in range(self.num_steps):
            x, v = WarpStep.apply(x, v, self.force, self.inv_mass, self.dt, self.gravity, self.ke, self.kd, self.mu)
            traj.append(x)
        return torch.stack(traj, 0), v


def mesh_from_torch(points: torch.Tensor, indices: torch.Tensor) -> wp.Mesh:
    """Build a BVH-accelerated Warp mesh from torch vertex / face tensors."""
    pts = wp.from_torch(points.contiguous(), dtype=wp.vec3)
    idx = wp.from_torch(indices.to(torch.int32).flatten().contiguous(), dtype=wp.int32)
    return wp.Mesh(points=pts, indices=idx)


@wp.kernel
def query_sdf(mesh: wp.uint64, queries: wp.array(dtype=wp.vec3), max_dist: float, out: wp.array(dtype=float)):
    tid = wp.tid()
    q = queries[tid]
    sign = float(0.0)
    face = int(0)
    u = float(0.0)
    v = float(0.0)
    if wp.mesh_query_point(mesh, q, max_dist, sign, face, u, v):
        p = wp.mesh_eval_position(mesh, face, u, v)
        out[tid] = wp.length(p - q) * sign
    else:
        out[tid] = max_dist


def signed_distance(mesh: wp.Mesh, queries: torch.Tensor, max_dist: float = 1.0e3) -> torch.Tensor:
    out = torch.empty(queries.shape[0], dtype=torch.float32, device=queries.device)
    wp.launch(
        query_sdf,
        dim=queries.shape[0],
        inputs=[mesh.id, wp.from_torch(queries.contiguous(), dtype=wp.vec3), max_dist],
        outputs=[wp.from_torch(out)],
        device=wp.device_from_torch(queries.device),
    )
    return out


def _self_test():
    init_warp()
    dev = torch.device("cuda:0")
    n = 256
    x0 = torch.rand(n, 3, device=dev) + torch.tensor([0.0, 1.0, 0.0], device=dev)
    v0 = torch.zeros(n, 3, device=dev)
    sim = ParticleSimulator(n, num_steps=32, device=dev)
    traj, _ = sim(x0, v0)
    loss = traj[-1, :, 1].mean()
    loss.backward()
    torch.cuda.synchronize()
    print("loss", loss.item(), "grad norm", sim.force.grad.norm().item())
    print("traj", np.asarray(traj.detach().cpu().shape))


if __name__ == "__main__":
    _self_test()
