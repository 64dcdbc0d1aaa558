"""JIT-compiled CUDA kernels for omnipose flow following and eikonal distance updates.

The Euler integration of pixel trajectories (`follow_flows`) dominates mask reconstruction time on
large 3-D stacks.  A fused kernel that does bilinear/trilinear sampling, the step and the clamp in one
pass is ~8x faster than the grid_sample loop.  The extension is compiled on first import and cached in
TORCH_EXTENSIONS_DIR.
"""
import os
import logging
from pathlib import Path

import torch
from torch.utils.cpp_extension import load

logger = logging.getLogger(__name__)

_SRC_DIR = Path(__file__).resolve().parent / "csrc"

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.5;8.0;8.6;8.9")

_ext = load(
    name="omnipose_flow_ext",
    sources=[
        str(_SRC_DIR / "flow_ext.cpp"),
        str(_SRC_DIR / "follow_flows_kernel.cu"),
        str(_SRC_DIR / "eikonal_kernel.cu"),
    ],
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3", "--use_fast_math", "-lineinfo"],
    verbose=bool(int(os.environ.get("OMNIPOSE_EXT_VERBOSE", "0"))),
)


def follow_flows(dP: torch.Tensor, coords: torch.Tensor, niter: int, step: float = 1.0,
                 omni: bool = True, suppress: bool = True) -> torch.Tensor:
    """Integrate pixel positions `coords` (N, ndim) through the flow field dP (ndim, *shape).

    Runs entirely on the device of dP; returns the final positions (N, ndim) as float32.
    """
    if dP.device.type != "cuda":
        raise ValueError("omnipose.ext.follow_flows requires CUDA tensors; use core.steps_batch on CPU")
    dP = dP.contiguous().float()
    coords = coords.contiguous().float()
    shape = torch.tensor(dP.shape[1:], dtype=torch.int32, device=dP.device)
    return _ext.follow_flows(dP, coords, shape, int(niter), float(step), bool(omni), bool(suppress))


def eikonal_update(T: torch.Tensor, neighbors: torch.Tensor, weights: torch.Tensor,
                   n_iter: int) -> torch.Tensor:
    """Fast-iterative eikonal distance transform used by omnipose's `masks_to_flows`."""
    with torch.cuda.device(T.device):
        out = _ext.eikonal_update(T.contiguous(), neighbors.contiguous(), weights.contiguous(),
                                  int(n_iter))
    return out


def steps_batch_fused(p, dP, niter, omni=True, suppress=True, calc_trace=False):
    """Drop-in for core.steps_batch when the extension is available (no trace support)."""
    if calc_trace:
        raise NotImplementedError("trace is only available in the python implementation")
    ndim = dP.shape[0]
    coords = p.reshape(ndim, -1).t()
    final = follow_flows(dP, coords, niter, omni=omni, suppress=suppress)
    return final.t().reshape(p.shape), None
