"""GPU elastic deformation / gaussian smoothing for 3-D patches (CuPy + cupyx.scipy.ndimage).

Used by the patch loader after the host->device copy: volumes arrive as float32 (B, C, D, H, W)
CUDA tensors, are viewed as CuPy arrays without a copy (DLPack), deformed with
`cupyx.scipy.ndimage.map_coordinates` (order 1 for images, order 0 for label maps) and handed
back to torch, again zero-copy.

CuPy work is issued on torch's current stream so the deformation is ordered with the copy
kernels of the prefetcher.
"""
import math
from typing import Optional, Sequence, Tuple

import cupy as cp
import torch
import torch.nn.functional as F
from cupyx.scipy import ndimage as cndi


def _torch_to_cupy(t: torch.Tensor) -> "cp.ndarray":
    return cp.from_dlpack(torch.utils.dlpack.to_dlpack(t.contiguous()))


def _cupy_to_torch(a: "cp.ndarray") -> torch.Tensor:
    return torch.utils.dlpack.from_dlpack(a.toDlpack())


class _TorchStream:
    """Run CuPy kernels on torch's current CUDA stream."""

    def __init__(self, device: torch.device):
        self.device = device

    def __enter__(self):
        ptr = torch.cuda.current_stream(self.device).cuda_stream
        self._dev = cp.cuda.Device(self.device.index)
        self._dev.__enter__()
        self._stream = cp.cuda.ExternalStream(ptr)
        self._stream.__enter__()
        return self

    def __exit__(self, *exc):
        self._stream.__exit__(*exc)
        self._dev.__exit__(*exc)
        return False


def gaussian_kernel1d(sigma: float, device, dtype=torch.float32) -> torch.Tensor:
    radius = max(1, int(math.ceil(3.0 * sigma)))
    x = torch.arange(-radius, radius + 1, device=device, dtype=dtype)
    k = torch.exp(-0.5 * (x / sigma) ** 2)
    return k / k.sum()


def gaussian_smooth3d(x: torch.Tensor, sigma: float) -> torch.Tensor:
    """Separable 3-D gaussian blur of a (B, C, D, H, W) tensor."""
    if x.is_cuda:
        with _TorchStream(x.device):
            a = _torch_to_cupy(x)
            out = cndi.gaussian_filter(a, sigma=(0, 0, sigma, sigma, sigma), mode="nearest")
            return _cupy_to_torch(out)
    # CPU / other devices: three 1-D convolutions
    k = gaussian_kernel1d(sigma, x.device, x.dtype)
    c = x.shape[1]
    r = k.numel() // 2
    for dim in (2, 3, 4):
        shape = [1, 1, 1, 1, 1]
        shape[dim] = k.numel()
        w = k.view(shape).repeat(c, 1, 1, 1, 1)
        pad = [0, 0, 0, 0, 0, 0]
        pad[2 * (4 - dim)] = r
        pad[2 * (4 - dim) + 1] = r
        x = F.conv3d(F.pad(x, pad, mode="replicate"), w, groups=c)
    return x


def random_displacement(shape: Tuple[int, int, int], alpha: float, sigma: float,
                        device: torch.device, generator: Optional[torch.Generator] = None) -> torch.Tensor:
    """Smooth random displacement field (3, D, H, W) in voxels."""
    noise = torch.rand((1, 3) + tuple(shape), device=device, generator=generator) * 2 - 1
    field = gaussian_smooth3d(noise, sigma)[0]
    return field * alpha


def elastic_deform(
    image: torch.Tensor,
    label: Optional[torch.Tensor] = None,
    alpha: Sequence[float] = (0.0, 900.0),
    sigma: Sequence[float] = (9.0, 13.0),
    p: float = 0.2,
) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """Per-sample elastic deformation of (B, C, D, H, W) image (and label) on the GPU."""
    assert image.device.type == "cuda", "elastic_deform runs on CUDA tensors"
    b, c, d, h, w = image.shape
    out_img = image.clone()
    out_lbl = label.clone() if label is not None else None
    grid = cp.mgrid[0:d, 0:h, 0:w].astype(cp.float32)
    with _TorchStream(image.device):
        for i in range(b):
            if torch.rand(()) > p:
                continue
            a = float(torch.empty(()).uniform_(*alpha))
            s = float(torch.empty(()).uniform_(*sigma))
            disp = _torch_to_cupy(random_displacement((d, h, w), a, s, image.device))
            coords = grid + disp
            for ch in range(c):
                src = _torch_to_cupy(image[i, ch])
                res = cndi.map_coordinates(src, coords, order=1, mode="nearest")
                out_img[i, ch] = _cupy_to_torch(res)
            if out_lbl is not None:
                for ch in range(out_lbl.shape[1]):
                    src = _torch_to_cupy(out_lbl[i, ch].float())
                    res = cndi.map_coordinates(src, coords, order=0, mode="nearest")
                    out_lbl[i, ch] = _cupy_to_torch(res).to(out_lbl.dtype)
    return out_img, out_lbl


class GPUElastic(torch.nn.Module):
    def __init__(self, alpha=(0.0, 900.0), sigma=(9.0, 13.0), p=0.2):
        super().__init__()
        self.alpha, self.sigma, self.p = alpha, sigma, p

    def forward(self, image, label=None):
        return elastic_deform(image, label, self.alpha, self.sigma, self.p)
