"""Lenia (Chan 2019) as a differentiable PyTorch module.

The world is a [B, 1, SX, SY] tensor of cell states in [0, 1]. One step:

    U  = K * A                      (convolution with a ring-shaped kernel, done in Fourier space)
    A' = clip(A + 1/T * G(U), 0, 1) (growth mapping G, exponential or polynomial)

Everything is batched so that the IMGEP explorer can roll out many parameter
sets at once on a single GPU.
"""
import math
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from lenia.utils.kernels import kernel_core_torch, growth_torch

# The cuFFT plan cache is per-device; with many different world sizes in one
# exploration the default (4096) entries eat a lot of GPU memory.
torch.backends.cuda.cufft_plan_cache.max_size = 32


def roll_n(X, axis, n):
    f_idx = tuple(slice(None, None, None) if i != axis else slice(0, n, None) for i in range(X.dim()))
    b_idx = tuple(slice(None, None, None) if i != axis else slice(n, None, None) for i in range(X.dim()))
    front = X[f_idx]
    back = X[b_idx]
    return torch.cat([back, front], axis)


def soft_max(x, m, k):
    return torch.log(torch.exp(k * x) + torch.exp(k * m)) / k


def soft_clip(x, min_v, max_v, k):
    a = torch.exp(k * x)
    b = torch.exp(torch.tensor(k * min_v, dtype=x.dtype, device=x.device))
    c = torch.exp(torch.tensor(-k * max_v, dtype=x.dtype, device=x.device))
    return torch.log(1.0 / (a + b) + c) / -k


class LeniaStepFFT(nn.Module):
    """One Lenia update, convolution computed with real FFTs."""

    def __init__(self, SX, SY, R, T, b, m, s, kn=0, gn=1, is_soft_clip=False, dtype=None, device="cpu"):
        super().__init__()
        self.SX = SX
        self.SY = SY
        self.R = R + 2
        self.T = T
        self.kn = kn
        self.gn = gn
        self.is_soft_clip = is_soft_clip
        self.device = device
        # Lenia patterns are notoriously sensitive to the precision of the
        # potential field (solitons die or explode in float32 for small T),
        # so the reference implementation keeps the whole world in float64.
        self.dtype = torch.float64 if dtype is None else dtype

        self.register_buffer("b", torch.as_tensor(b, dtype=self.dtype, device=device).view(-1))
        self.register_buffer("m", torch.as_tensor(m, dtype=self.dtype, device=device).view(-1, 1, 1, 1))
        self.register_buffer("s", torch.as_tensor(s, dtype=self.dtype, device=device).view(-1, 1, 1, 1))
        self.compute_kernel()

    def compute_kernel(self):
        # distance to the centre, normalised by the kernel radius
        x = torch.arange(self.SX, dtype=self.dtype, device=self.device)
        y = torch.arange(self.SY, dtype=self.dtype, device=self.device)
        xx = x.view(-1, 1).repeat(1, self.SY)
        yy = y.repeat(self.SX, 1)
        X = (xx - int(self.SX / 2)) / float(self.R)
        Y = (yy - int(self.SY / 2)) / float(self.R)
        D = torch.sqrt(X ** 2 + Y ** 2)

        # kernel: concentric rings with peaks b
        k = len(self.b)
        kr = k * D
        bs = self.b[torch.clamp(kr.long(), max=k - 1)]
        kernel = (D < 1).to(self.dtype) * kernel_core_torch(kr % 1, self.kn) * bs
        kernel_sum = torch.sum(kernel)
        kernel_norm = (kernel / kernel_sum).unsqueeze(0).unsqueeze(0)

        # centre the kernel at (0, 0) so the FFT product is a circular convolution
        kernel_norm = torch.fft.fftshift(kernel_norm, dim=(2, 3))
        self.kernel_FFT = torch.fft.rfftn(kernel_norm, dim=(2, 3))
        self.kernel_updated = False

    def forward(self, input):
        if self.kernel_updated:
            self.compute_kernel()

        world_FFT = torch.fft.rfftn(input, dim=(2, 3))
        potential_FFT = world_FFT * self.kernel_FFT
        potential = torch.fft.irfftn(potential_FFT, s=input.shape[2:], dim=(2, 3))

        field = growth_torch(potential, self.m, self.s, self.gn)

        if not self.is_soft_clip:
            output_img = torch.clamp(input + (1.0 / self.T) * field, min=0.0, max=1.0)
        else:
            output_img = soft_clip(input + (1.0 / self.T) * field, 0, 1, self.T)
        return output_img


class LeniaStepConv2d(nn.Module):
    """Same update with a direct (circularly padded) convolution. Faster than the
    FFT path for small radii, and the only option for the differentiable-kernel
    experiments where ``R`` changes every iteration."""

    def __init__(self, R, T, b, m, s, kn=0, gn=1, is_soft_clip=False, device="cpu"):
        super().__init__()
        self.R = R + 2
        self.T = T
        self.kn = kn
        self.gn = gn
        self.is_soft_clip = is_soft_clip
        self.device = device
        self.register_buffer("b", torch.as_tensor(b, dtype=torch.float32, device=device).view(-1))
        self.register_buffer("m", torch.as_tensor(m, dtype=torch.float32, device=device))
        self.register_buffer("s", torch.as_tensor(s, dtype=torch.float32, device=device))
        self.compute_kernel()

    def compute_kernel(self):
        SY = 2 * self.R + 1
        SX = 2 * self.R + 1
        x = torch.arange(SX, device=self.device, dtype=torch.float32)
        y = torch.arange(SY, device=self.device, dtype=torch.float32)
        xx = x.view(-1, 1).repeat(1, SY)
        yy = y.repeat(SX, 1)
        X = (xx - int(SX / 2)) / float(self.R)
        Y = (yy - int(SY / 2)) / float(self.R)
        D = torch.sqrt(X ** 2 + Y ** 2)
        k = len(self.b)
        kr = k * D
        bs = self.b[torch.clamp(kr.long(), max=k - 1)]
        kernel = (D < 1).float() * kernel_core_torch(kr % 1, self.kn) * bs
        self.kernel = (kernel / kernel.sum()).unsqueeze(0).unsqueeze(0)

    def forward(self, input):
        x = F.pad(input, (self.R, self.R, self.R, self.R), mode="circular")
        potential = F.conv2d(x, weight=self.kernel)
        field = growth_torch(potential, self.m, self.s, self.gn)
        if not self.is_soft_clip:
            return torch.clamp(input + (1.0 / self.T) * field, min=0.0, max=1.0)
        return soft_clip(input + (1.0 / self.T) * field, 0, 1, self.T)


class Lenia(nn.Module):
    """Lenia system: holds the run parameters and rolls out observations."""

    @staticmethod
    def default_config():
        return OrderedDict(
            version="pytorch_fft",
            SX=256,
            SY=256,
            final_step=200,
            use_soft_clip=False,
            keep_every=1,
        )

    def __init__(self, config=None, device="cuda"):
        super().__init__()
        self.config = self.default_config()
        if config is not None:
            self.config.update(config)
        self.device = device
        self.run_parameters = None
        self.step_fn = None

    def reset(self, init_state, run_parameters):
        self.run_parameters = run_parameters
        p = run_parameters
        if self.config["version"] == "pytorch_fft":
            self.step_fn = LeniaStepFFT(
                self.config["SX"], self.config["SY"], p["R"], p["T"], p["b"], p["m"], p["s"],
                kn=p.get("kn", 0), gn=p.get("gn", 1), is_soft_clip=self.config["use_soft_clip"],
                device=self.device,
            )
            dtype = self.step_fn.dtype
        elif self.config["version"] == "pytorch_conv2d":
            self.step_fn = LeniaStepConv2d(
                p["R"], p["T"], p["b"], p["m"], p["s"], kn=p.get("kn", 0), gn=p.get("gn", 1),
                is_soft_clip=self.config["use_soft_clip"], device=self.device,
            )
            dtype = torch.float32
        else:
            raise ValueError("unknown Lenia version %s" % self.config["version"])

        state = torch.as_tensor(init_state, dtype=dtype)
        if state.dim() == 2:
            state = state.unsqueeze(0).unsqueeze(0)
        self.state = state.to(self.device)
        self.step_idx = 0

    def step(self):
        self.state = self.step_fn(self.state)
        self.step_idx += 1
        return self.state

    @torch.no_grad()
    def run(self, n_steps=None):
        n_steps = n_steps or self.config["final_step"]
        keep = self.config["keep_every"]
        n_keep = (n_steps + keep - 1) // keep
        observations = torch.empty(
            (n_keep,) + tuple(self.state.shape), dtype=self.state.dtype, device=self.state.device
        )
        j = 0
        for t in range(n_steps):
            if t % keep == 0:
                observations[j] = self.state
                j += 1
            self.step()
        return observations

    def animals_alive(self, threshold=1e-3):
        mass = self.state.sum(dim=(-1, -2))
        return (mass > threshold).squeeze(-1)


def lenia_parameters_from_code(code):
    """Parse an RLE-style animal code from the Lenia library (R, T, b, m, s)."""
    params = {}
    for part in code.split(";"):
        if "=" not in part:
            continue
        k, v = part.split("=", 1)
        k = k.strip()
        if k == "b":
            params["b"] = [float(eval(x)) for x in v.split(",")]
        elif k in ("R", "T", "kn", "gn"):
            params[k] = int(v)
        else:
            params[k] = float(v)
    return params


class ExtendedLeniaStep(nn.Module):
    """Multi-channel, multi-kernel Lenia ("Expanded Universe", Chan 2020).

    ``kernels`` is a list of dicts with keys c0 (source channel), c1 (target
    channel), r (relative radius), b, m, s, h (weight). All kernels are
    applied in one batched FFT; the growth of each target channel is the
    weighted sum of the growths of the kernels pointing at it.
    """

    def __init__(self, SX, SY, R, T, kernels, n_channels=3, device="cpu"):
        super().__init__()
        self.SX, self.SY = SX, SY
        self.R = R
        self.T = T
        self.n_channels = n_channels
        self.device = device
        self.c0 = [k["c0"] for k in kernels]
        self.c1 = [k["c1"] for k in kernels]
        self.register_buffer("m", torch.tensor([k["m"] for k in kernels], device=device).view(1, -1, 1, 1))
        self.register_buffer("s", torch.tensor([k["s"] for k in kernels], device=device).view(1, -1, 1, 1))
        self.register_buffer("h", torch.tensor([k["h"] for k in kernels], device=device).view(1, -1, 1, 1))
        # routing matrix: growth of kernel k is added to channel c1[k]
        route = torch.zeros(len(kernels), n_channels, device=device)
        for i, c in enumerate(self.c1):
            route[i, c] = 1.0
        self.register_buffer("route", route)
        self.kernels_FFT = self._kernels_fft(kernels)

    def _kernels_fft(self, kernels):
        mid_x, mid_y = self.SX // 2, self.SY // 2
        x = torch.arange(self.SX, device=self.device, dtype=torch.float32) - mid_x
        y = torch.arange(self.SY, device=self.device, dtype=torch.float32) - mid_y
        X, Y = torch.meshgrid(x, y, indexing="ij")
        fks = []
        for k in kernels:
            D = torch.sqrt(X ** 2 + Y ** 2) / (self.R * k["r"])
            b = torch.tensor(k["b"], device=self.device, dtype=torch.float32)
            nb = len(k["b"])
            kr = nb * D
            bs = b[torch.clamp(kr.long(), max=nb - 1)]
            K = (D < 1).float() * kernel_core_torch(kr % 1, 0) * bs
            K = K / K.sum()
            K = torch.roll(K, shifts=(-mid_x, -mid_y), dims=(0, 1))
            fks.append(torch.fft.rfft2(K))
        return torch.stack(fks)[None]  # [1, K, SX, SY//2+1]

    def forward(self, A):
        # A: [B, C, SX, SY]
        fA = torch.fft.rfft2(A)
        fA_k = fA[:, self.c0]  # source channel of each kernel
        U = torch.fft.irfft2(fA_k * self.kernels_FFT, s=(self.SX, self.SY))
        G = (torch.exp(-((U - self.m) ** 2) / (2 * self.s ** 2)) * 2 - 1) * self.h
        H = torch.einsum("bkxy,kc->bcxy", G, self.route)
        return torch.clamp(A + H / self.T, 0.0, 1.0)


def random_extended_kernels(n_kernels, n_channels, rng=None):
    rng = np.random.default_rng() if rng is None else rng
    kernels = []
    for _ in range(n_kernels):
        n_rings = int(rng.integers(1, 4))
        kernels.append({
            "c0": int(rng.integers(0, n_channels)),
            "c1": int(rng.integers(0, n_channels)),
            "r": float(rng.uniform(0.3, 1.0)),
            "b": [float(v) for v in rng.uniform(0.0, 1.0, n_rings)],
            "m": float(rng.uniform(0.1, 0.5)),
            "s": float(rng.uniform(0.01, 0.18)),
            "h": float(rng.uniform(0.1, 1.0)),
        })
    return kernels
