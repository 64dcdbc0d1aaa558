"""
Pseudo-spectral solver for the 2-D incompressible Navier-Stokes equation in vorticity form
on the periodic unit torus, used to generate training data for neural operators:

    w_t + u . grad w = nu * lap w + f,     div u = 0,    w(x, 0) = w0(x)

Crank-Nicolson for the diffusion term, explicit (Heun) for the non-linear term, 2/3 dealiasing.
Everything is done in float64 so that the reference trajectories are accurate to ~1e-10.

    python data_generation/navier_stokes_2d.py --n 1000 --res 256 --visc 1e-4 --T 50 --out ns_V1e-4.mat
"""
import argparse
import math
import time

import numpy as np
import scipy.io
import torch

# Reference data must be generated in double precision.
if torch.cuda.is_available():
    torch.set_default_tensor_type("torch.cuda.DoubleTensor")
else:
    torch.set_default_dtype(torch.float64)


class GaussianRF2d:
    """Gaussian random field on the torus with covariance sigma^2 (-lap + tau^2)^(-alpha)."""

    def __init__(self, size, alpha=2.5, tau=7.0, sigma=None, device=None):
        self.size = size
        self.device = device
        if sigma is None:
            sigma = tau ** (0.5 * (2 * alpha - 2.0))
        k = torch.fft.fftfreq(size, d=1.0 / size, device=device)
        k_x, k_y = torch.meshgrid(k, k, indexing="ij")
        self.sqrt_eig = (size ** 2) * math.sqrt(2.0) * sigma * ((4 * math.pi ** 2 * (k_x ** 2 + k_y ** 2) + tau ** 2) ** (-alpha / 2.0))
        self.sqrt_eig[0, 0] = 0.0

    def sample(self, n):
        coeff = torch.randn(n, self.size, self.size, dtype=torch.complex128, device=self.device)
        coeff = self.sqrt_eig * coeff
        return torch.fft.ifft2(coeff).real


def navier_stokes_2d(w0, f, visc, T, delta_t=1e-4, record_steps=1):
    """
    w0: initial vorticity [B, N, N]; f: forcing [N, N]; returns vorticity snapshots [B, N, N, record_steps].
    """
    N = w0.size()[-1]
    k_max = math.floor(N / 2.0)
    steps = math.ceil(T / delta_t)

    w_h = torch.fft.rfft2(w0)
    f_h = torch.fft.rfft2(f)
    if len(f_h.size()) < len(w_h.size()):
        f_h = torch.unsqueeze(f_h, 0)

    record_time = math.floor(steps / record_steps)

    # wavenumbers in y / x directions
    k_y = torch.fft.fftfreq(N, d=1.0 / N, device=w0.device).repeat(N, 1)
    k_x = k_y.transpose(0, 1)
    k_x = k_x[..., : k_max + 1]
    k_y = k_y[..., : k_max + 1]

    # negative laplacian in Fourier space
    lap = 4 * (math.pi ** 2) * (k_x ** 2 + k_y ** 2)
    lap[0, 0] = 1.0

    # dealiasing mask
    dealias = torch.unsqueeze(
        torch.logical_and(torch.abs(k_y) <= (2.0 / 3.0) * k_max, torch.abs(k_x) <= (2.0 / 3.0) * k_max).double(), 0
    )

    sol = torch.zeros(*w0.size(), record_steps, device=w0.device)
    sol_t = torch.zeros(record_steps, device=w0.device)

    c = 0
    t = 0.0
    for j in range(steps):
        # stream function in Fourier space: solve poisson equation
        psi_h = w_h / lap

        # velocity field in x / y direction = psi_y / -psi_x
        q = 2.0 * math.pi * k_y * 1j * psi_h
        q = torch.fft.irfft2(q, s=(N, N))
        v = -2.0 * math.pi * k_x * 1j * psi_h
        v = torch.fft.irfft2(v, s=(N, N))

        # partial derivatives of vorticity
        w_x = torch.fft.irfft2(2.0 * math.pi * k_x * 1j * w_h, s=(N, N))
        w_y = torch.fft.irfft2(2.0 * math.pi * k_y * 1j * w_h, s=(N, N))

        # non-linear term (u.grad(w)): compute in physical space then back to Fourier space
        F_h = torch.fft.rfft2(q * w_x + v * w_y)
        F_h = dealias * F_h

        # Crank-Nicolson update
        w_h = (-delta_t * F_h + delta_t * f_h + (1.0 - 0.5 * delta_t * visc * lap) * w_h) / (1.0 + 0.5 * delta_t * visc * lap)

        t += delta_t
        if (j + 1) % record_time == 0:
            w = torch.fft.irfft2(w_h, s=(N, N))
            sol[..., c] = w
            sol_t[c] = t
            c += 1

    return sol, sol_t


def energy_spectrum(w):
    """Radially averaged enstrophy spectrum of a [N, N] field, for sanity plots."""
    N = w.shape[-1]
    w_hat = torch.fft.fftshift(torch.fft.fft2(w)) / N ** 2
    k = torch.fft.fftshift(torch.fft.fftfreq(N, d=1.0 / N, device=w.device))
    kx, ky = torch.meshgrid(k, k, indexing="ij")
    kr = torch.sqrt(kx ** 2 + ky ** 2).round().long()
    spec = torch.zeros(N // 2, device=w.device)
    spec.index_add_(0, kr.clamp(max=N // 2 - 1).flatten(), (w_hat.abs() ** 2).flatten())
    return spec


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1000, help="number of trajectories")
    p.add_argument("--res", type=int, default=256)
    p.add_argument("--visc", type=float, default=1e-4)
    p.add_argument("--T", type=float, default=50.0)
    p.add_argument("--dt", type=float, default=1e-4)
    p.add_argument("--record-steps", type=int, default=200)
    p.add_argument("--bsize", type=int, default=20)
    p.add_argument("--out", default="ns_data.mat")
    args = p.parse_args()

    device = torch.device("cuda")
    s = args.res
    GRF = GaussianRF2d(s, alpha=2.5, tau=7, device=device)

    # forcing function: 0.1 * (sin(2pi(x+y)) + cos(2pi(x+y)))
    t = torch.linspace(0, 1, s + 1, device=device)[0:-1]
    X, Y = torch.meshgrid(t, t, indexing="ij")
    f = 0.1 * (torch.sin(2 * math.pi * (X + Y)) + torch.cos(2 * math.pi * (X + Y)))

    a = torch.zeros(args.n, s, s)
    u = torch.zeros(args.n, s, s, args.record_steps)

    c = 0
    t0 = time.time()
    for j in range(args.n // args.bsize):
        w0 = GRF.sample(args.bsize)
        sol, sol_t = navier_stokes_2d(w0, f, args.visc, args.T, args.dt, args.record_steps)
        a[c : (c + args.bsize), ...] = w0
        u[c : (c + args.bsize), ...] = sol
        c += args.bsize
        torch.cuda.synchronize()
        print(j, c, f"{time.time() - t0:.1f}s", f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")

    spec = energy_spectrum(u[0, ..., -1]).cpu().numpy()
    scipy.io.savemat(args.out, mdict={"a": a.cpu().numpy(), "u": u.cpu().numpy(), "t": sol_t.cpu().numpy(), "spectrum": spec})
    np.save(args.out.replace(".mat", "_spectrum.npy"), spec)


if __name__ == "__main__":
    main()
