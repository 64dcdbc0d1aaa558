"""Weighted back-projection (WBP) for cryo-ET tilt series on the GPU.

The inner loop is a hand-written CUDA kernel compiled at runtime with CuPy (RawKernel), which is
~20x faster than the equivalent torch grid_sample formulation on 4k x 4k x 61 tilt series.  Volumes are
handed back to torch (for the denoising / segmentation networks downstream) through DLPack without a
host round trip.
"""
import math
import logging

import numpy as np
import cupy as cp
import torch
from torch.utils.dlpack import from_dlpack, to_dlpack

logger = logging.getLogger(__name__)

_BACKPROJECT_SRC = r'''
extern "C" __global__
void backproject_slab(const float* __restrict__ proj,   // (n_tilts, ny, nx) filtered projections
                      const float* __restrict__ cos_t,
                      const float* __restrict__ sin_t,
                      float* __restrict__ vol,          // (nz_slab, ny, nx)
                      int n_tilts, int nx, int ny, int nz_slab, int z0, int nz_total)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    int z = blockIdx.z;
    if (x >= nx || z >= nz_slab) return;
    float xc = x - 0.5f * nx;
    float zc = (z + z0) - 0.5f * nz_total;
    float acc = 0.f;
    for (int t = 0; t < n_tilts; ++t) {
        float u = xc * cos_t[t] + zc * sin_t[t] + 0.5f * nx;
        int u0 = __float2int_rd(u);
        float w = u - u0;
        if (u0 >= 0 && u0 + 1 < nx) {
            const float* row = proj + ((size_t)t * ny + y) * nx;
            acc += (1.f - w) * __ldg(row + u0) + w * __ldg(row + u0 + 1);
        }
    }
    vol[((size_t)z * ny + y) * nx + x] = acc / n_tilts;
}
'''

_backproject_kernel = cp.RawKernel(_BACKPROJECT_SRC, "backproject_slab",
                                   options=("--use_fast_math", "-std=c++14"))


def ramp_filter(projections: torch.Tensor, cutoff: float = 1.0) -> torch.Tensor:
    """Apply an r-weighting (ramp) filter along x in Fourier space (torch, any device)."""
    n_tilts, ny, nx = projections.shape
    freqs = torch.fft.rfftfreq(nx, device=projections.device)
    ramp = freqs.abs() * 2.0
    ramp[freqs > 0.5 * cutoff] = 0.0
    f = torch.fft.rfft(projections, dim=-1)
    return torch.fft.irfft(f * ramp, n=nx, dim=-1)


def backproject(projections: torch.Tensor, tilt_angles_deg, thickness: int,
                slab: int = 64, device_id: int = 0) -> torch.Tensor:
    """Reconstruct a (thickness, ny, nx) tomogram from filtered projections.

    projections: float32 CUDA tensor (n_tilts, ny, nx)
    """
    assert projections.is_cuda, "projections must live on the GPU"
    n_tilts, ny, nx = projections.shape
    angles = np.deg2rad(np.asarray(tilt_angles_deg, dtype=np.float32))

    with cp.cuda.Device(device_id):
        proj_cp = cp.from_dlpack(to_dlpack(projections.contiguous()))
        cos_t = cp.asarray(np.cos(angles), dtype=cp.float32)
        sin_t = cp.asarray(np.sin(angles), dtype=cp.float32)
        vol = cp.empty((thickness, ny, nx), dtype=cp.float32)

        block = (128, 1, 1)
        for z0 in range(0, thickness, slab):
            nz = min(slab, thickness - z0)
            out = vol[z0:z0 + nz]
            grid = (math.ceil(nx / block[0]), ny, nz)
            _backproject_kernel(grid, block,
                                (proj_cp, cos_t, sin_t, out, np.int32(n_tilts), np.int32(nx),
                                 np.int32(ny), np.int32(nz), np.int32(z0), np.int32(thickness)))
        cp.cuda.Stream.null.synchronize()
    return from_dlpack(vol.toDlpack())


def reconstruct_tomogram(tilt_series: np.ndarray, tilt_angles_deg, thickness: int = 512,
                         bin_factor: int = 4, device: str = "cuda:0") -> torch.Tensor:
    """Bin, filter and back-project a raw tilt series (n_tilts, ny, nx) into a float32 tomogram."""
    t = torch.from_numpy(tilt_series.astype(np.float32)).to(device)
    if bin_factor > 1:
        t = torch.nn.functional.avg_pool2d(t[:, None], bin_factor)[:, 0]
    t = (t - t.mean(dim=(-1, -2), keepdim=True)) / t.std(dim=(-1, -2), keepdim=True)
    t = ramp_filter(t)
    dev_index = torch.device(device).index or 0
    vol = backproject(t, tilt_angles_deg, thickness // bin_factor, device_id=dev_index)
    logger.info("reconstructed %s tomogram, mem pool %.2f GB", tuple(vol.shape),
                cp.get_default_memory_pool().used_bytes() / 1e9)
    cp.get_default_memory_pool().free_all_blocks()
    return vol


def reconstruct_batch(series_list, angles_list, **kwargs):
    """Reconstruct several tilt series, freeing cached device memory between them."""
    out = []
    for ts, ang in zip(series_list, angles_list):
        out.append(reconstruct_tomogram(ts, ang, **kwargs).cpu())
        torch.cuda.empty_cache()
    return out
