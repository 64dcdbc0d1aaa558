"""Cloud-in-cell (CIC) mass assignment and force interpolation for a particle-mesh N-body step.

Particles and meshes are torch tensors; the scatter/gather kernels are written in Numba
(CUDA for device tensors, a parallel CPU kernel otherwise) because atomics on a 3-D mesh
are much faster than torch's index_put_ with accumulate on large particle counts.
"""
import math

import numba
import numpy as np
import torch
from numba import cuda

THREADS_PER_BLOCK = 256


@cuda.jit
def _cic_paint_kernel(pos, mass, mesh, ng, cell):
    i = cuda.grid(1)
    if i >= pos.shape[0]:
        return
    x = pos[i, 0] / cell
    y = pos[i, 1] / cell
    z = pos[i, 2] / cell
    ix = int(math.floor(x))
    iy = int(math.floor(y))
    iz = int(math.floor(z))
    dx = x - ix
    dy = y - iy
    dz = z - iz
    m = mass[i]
    for a in range(2):
        wx = dx if a else 1.0 - dx
        jx = (ix + a) % ng
        for b in range(2):
            wy = dy if b else 1.0 - dy
            jy = (iy + b) % ng
            for c in range(2):
                wz = dz if c else 1.0 - dz
                jz = (iz + c) % ng
                cuda.atomic.add(mesh, (jx, jy, jz), m * wx * wy * wz)


@cuda.jit
def _cic_readout_kernel(pos, field, out, ng, cell):
    i = cuda.grid(1)
    if i >= pos.shape[0]:
        return
    x = pos[i, 0] / cell
    y = pos[i, 1] / cell
    z = pos[i, 2] / cell
    ix = int(math.floor(x))
    iy = int(math.floor(y))
    iz = int(math.floor(z))
    dx = x - ix
    dy = y - iy
    dz = z - iz
    acc = 0.0
    for a in range(2):
        wx = dx if a else 1.0 - dx
        jx = (ix + a) % ng
        for b in range(2):
            wy = dy if b else 1.0 - dy
            jy = (iy + b) % ng
            for c in range(2):
                wz = dz if c else 1.0 - dz
                jz = (iz + c) % ng
                acc += field[jx, jy, jz] * wx * wy * wz
    out[i] = acc


@numba.njit(parallel=False, cache=True)
def _cic_paint_cpu(pos, mass, mesh, ng, cell):
    for i in range(pos.shape[0]):
        x = pos[i, 0] / cell
        y = pos[i, 1] / cell
        z = pos[i, 2] / cell
        ix = int(math.floor(x))
        iy = int(math.floor(y))
        iz = int(math.floor(z))
        dx = x - ix
        dy = y - iy
        dz = z - iz
        for a in range(2):
            wx = dx if a else 1.0 - dx
            jx = (ix + a) % ng
            for b in range(2):
                wy = dy if b else 1.0 - dy
                jy = (iy + b) % ng
                for c in range(2):
                    wz = dz if c else 1.0 - dz
                    jz = (iz + c) % ng
                    mesh[jx, jy, jz] += mass[i] * wx * wy * wz


def _launch_cfg(n):
    return (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK, THREADS_PER_BLOCK


def cic_paint(pos: torch.Tensor, ng: int, boxsize: float, mass: torch.Tensor = None) -> torch.Tensor:
    """Deposit particles at `pos` (N, 3) onto an ng^3 periodic mesh; returns the density contrast."""
    n = pos.shape[0]
    cell = boxsize / ng
    if mass is None:
        mass = torch.ones(n, dtype=pos.dtype, device=pos.device)
    mesh = torch.zeros((ng, ng, ng), dtype=pos.dtype, device=pos.device)

    if pos.is_cuda:
        blocks, threads = _launch_cfg(n)
        _cic_paint_kernel[blocks, threads](cuda.as_cuda_array(pos.detach()),
                                           cuda.as_cuda_array(mass.detach()),
                                           cuda.as_cuda_array(mesh), ng, cell)
    else:
        _cic_paint_cpu(pos.detach().numpy(), mass.detach().numpy(), mesh.numpy(), ng, cell)

    mean = mesh.mean()
    return mesh / mean - 1.0


def cic_readout(pos: torch.Tensor, field: torch.Tensor, boxsize: float) -> torch.Tensor:
    """Interpolate a mesh quantity (e.g. one force component) back to the particles."""
    ng = field.shape[0]
    cell = boxsize / ng
    out = torch.empty(pos.shape[0], dtype=field.dtype, device=field.device)
    if field.is_cuda:
        blocks, threads = _launch_cfg(pos.shape[0])
        _cic_readout_kernel[blocks, threads](cuda.as_cuda_array(pos.detach()),
                                             cuda.as_cuda_array(field.detach()),
                                             cuda.as_cuda_array(out), ng, cell)
        # numba launches on its own default stream; make torch wait for it
        cuda.synchronize()
    else:
        idx = torch.floor(pos / cell).long()
        frac = pos / cell - idx
        out.zero_()
        for a in range(2):
            for b in range(2):
                for c in range(2):
                    w = ((frac[:, 0] if a else 1 - frac[:, 0]) * (frac[:, 1] if b else 1 - frac[:, 1])
                         * (frac[:, 2] if c else 1 - frac[:, 2]))
                    j = (idx + torch.tensor([a, b, c], device=idx.device)) % ng
                    out += w * field[j[:, 0], j[:, 1], j[:, 2]]
    return out


def gravity_forces(pos: torch.Tensor, ng: int, boxsize: float) -> torch.Tensor:
    """Long-range PM accelerations: paint, solve Poisson in Fourier space, difference, read out."""
    delta = cic_paint(pos, ng, boxsize)
    delta_k = torch.fft.rfftn(delta)
    kx = 2 * np.pi * torch.fft.fftfreq(ng, d=boxsize / ng).to(pos.device)
    kz = 2 * np.pi * torch.fft.rfftfreq(ng, d=boxsize / ng).to(pos.device)
    k2 = kx[:, None, None] ** 2 + kx[None, :, None] ** 2 + kz[None, None, :] ** 2
    k2[0, 0, 0] = 1.0
    phi_k = -delta_k / k2
    phi_k[0, 0, 0] = 0.0
    acc = []
    for axis, k in enumerate((kx[:, None, None], kx[None, :, None], kz[None, None, :])):
        g = torch.fft.irfftn(-1j * k * phi_k, s=delta.shape)
        acc.append(cic_readout(pos, g, boxsize))
    return torch.stack(acc, dim=-1)
