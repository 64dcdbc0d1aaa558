"""Triton kernels for Allegro's strided sparse tensor-product contraction.

out[z, u, p] = sum_{(p, i, j) in paths} w[p, i, j] * x1[z, u, i] * x2[z, u, j]

The coefficient tensor is extremely sparse, so it is stored as COO triplets and the kernel
loops over them; each program handles a block of edges (z) and a block of channels (u).
"""

import math
from typing import List, Tuple

import torch
import triton
import triton.language as tl

from ._contract import Contracter, _build_sparse_coefficients


def _use_tf32() -> bool:
    # tl.dot-free kernel, but the epilogue GEMM below uses TF32 on Ampere and newer
    return torch.cuda.get_device_capability()[0] >= 8 and torch.backends.cuda.matmul.allow_tf32


def _num_programs_hint(device: torch.device) -> int:
    props = torch.cuda.get_device_properties(device)
    return 4 * props.multi_processor_count


_FWD_CONFIGS = [
    triton.Config({"BLOCK_Z": 16, "BLOCK_U": 32}, num_warps=4, num_stages=2),
    triton.Config({"BLOCK_Z": 32, "BLOCK_U": 32}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_Z": 64, "BLOCK_U": 16}, num_warps=8, num_stages=2),
]

_BWD_CONFIGS = [
    triton.Config({"BLOCK_Z": 16, "BLOCK_U": 32}, num_warps=4, num_stages=1),
    triton.Config({"BLOCK_Z": 32, "BLOCK_U": 64}, num_warps=8, num_stages=1),
]


@triton.autotune(configs=_FWD_CONFIGS, key=["n_u", "n_i", "n_j", "n_p", "n_paths"])
@triton.jit
def _contract_fwd_kernel(
    x1_ptr, x2_ptr, out_ptr,
    path_p_ptr, path_i_ptr, path_j_ptr, path_w_ptr,
    n_z, n_u, n_i, n_j, n_p, n_paths,
    BLOCK_Z: tl.constexpr, BLOCK_U: tl.constexpr,
):
    pid_z = tl.program_id(0)
    pid_u = tl.program_id(1)
    offs_z = pid_z * BLOCK_Z + tl.arange(0, BLOCK_Z)
    offs_u = pid_u * BLOCK_U + tl.arange(0, BLOCK_U)
    mask = (offs_z[:, None] < n_z) & (offs_u[None, :] < n_u)
    zu = offs_z[:, None] * n_u + offs_u[None, :]

    for k in range(0, n_paths):
        p = tl.load(path_p_ptr + k)
        i = tl.load(path_i_ptr + k)
        j = tl.load(path_j_ptr + k)
        w = tl.load(path_w_ptr + k)
        a = tl.load(x1_ptr + zu * n_i + i, mask=mask, other=0.0, eviction_policy="evict_last")
        b = tl.load(x2_ptr + zu * n_j + j, mask=mask, other=0.0)
        acc = tl.load(out_ptr + zu * n_p + p, mask=mask, other=0.0)
        tl.store(out_ptr + zu * n_p + p, acc + w * a * b, mask=mask)


@triton.autotune(configs=_BWD_CONFIGS, key=["n_u", "n_i", "n_j", "n_p", "n_paths"], reset_to_zero=["gx1_ptr", "gx2_ptr"])
@triton.jit
def _contract_bwd_kernel(
    gout_ptr, x1_ptr, x2_ptr, gx1_ptr, gx2_ptr,
    path_p_ptr, path_i_ptr, path_j_ptr, path_w_ptr,
    n_z, n_u, n_i, n_j, n_p, n_paths,
    BLOCK_Z: tl.constexpr, BLOCK_U: tl.constexpr,
):
    pid_z = tl.program_id(0)
    pid_u = tl.program_id(1)
    offs_z = pid_z * BLOCK_Z + tl.arange(0, BLOCK_Z)
    offs_u = pid_u * BLOCK_U + tl.arange(0, BLOCK_U)
    mask = (offs_z[:, None] < n_z) & (offs_u[None, :] < n_u)
    zu = offs_z[:, None] * n_u + offs_u[None, :]

    for k in range(0, n_paths):
        p = tl.load(path_p_ptr + k)
        i = tl.load(path_i_ptr + k)
        j = tl.load(path_j_ptr + k)
        w = tl.load(path_w_ptr + k)
        g = tl.load(gout_ptr + zu * n_p + p, mask=mask, other=0.0)
        a = tl.load(x1_ptr + zu * n_i + i, mask=mask, other=0.0)
        b = tl.load(x2_ptr + zu * n_j + j, mask=mask, other=0.0)
        # several paths share (z, u, i): accumulate atomically
        tl.atomic_add(gx1_ptr + zu * n_i + i, w * g * b, mask=mask, sem="relaxed")
        tl.atomic_add(gx2_ptr + zu * n_j + j, w * g * a, mask=mask, sem="relaxed")


def _grid(n_z: int, n_u: int):
    return lambda meta: (triton.cdiv(n_z, meta["BLOCK_Z"]), triton.cdiv(n_u, meta["BLOCK_U"]))


@torch.library.custom_op("allegro::_strided_contract_fwd", mutates_args=(), device_types="cuda")
def _strided_contract_fwd(
    x1: torch.Tensor,
    x2: torch.Tensor,
    path_p: torch.Tensor,
    path_i: torch.Tensor,
    path_j: torch.Tensor,
    path_w: torch.Tensor,
    n_p: int,
) -> torch.Tensor:
    n_z, n_u, n_i = x1.shape
    n_j = x2.shape[-1]
    out = torch.zeros((n_z, n_u, n_p), dtype=x1.dtype, device=x1.device)
    with torch.cuda.device(x1.device):
        _contract_fwd_kernel[_grid(n_z, n_u)](
            x1, x2, out,
            path_p, path_i, path_j, path_w,
            n_z, n_u, n_i, n_j, n_p, path_p.numel(),
        )
    return out


@_strided_contract_fwd.register_fake
def _(x1, x2, path_p, path_i, path_j, path_w, n_p):
    return x1.new_empty((x1.shape[0], x1.shape[1], n_p))


@torch.library.custom_op("allegro::_strided_contract_bwd", mutates_args=(), device_types=("cuda",))
def _strided_contract_bwd(
    grad_out: torch.Tensor,
    x1: torch.Tensor,
    x2: torch.Tensor,
    path_p: torch.Tensor,
    path_i: torch.Tensor,
    path_j: torch.Tensor,
    path_w: torch.Tensor,
) -> Tuple[torch.Tensor, torch.Tensor]:
    n_z, n_u, n_i = x1.shape
    n_j = x2.shape[-1]
    n_p = grad_out.shape[-1]
    gx1 = torch.zeros_like(x1)
    gx2 = torch.zeros_like(x2)
    stream = torch.cuda.current_stream(x1.device)
    with torch.cuda.stream(stream):
        _contract_bwd_kernel[_grid(n_z, n_u)](
            grad_out.contiguous(), x1, x2, gx1, gx2,
            path_p, path_i, path_j, path_w,
            n_z, n_u, n_i, n_j, n_p, path_p.numel(),
        )
    return gx1, gx2


@_strided_contract_bwd.register_fake
def _(grad_out, x1, x2, path_p, path_i, path_j, path_w):
    return torch.empty_like(x1), torch.empty_like(x2)


def _setup_context(ctx, inputs, output):
    x1, x2, path_p, path_i, path_j, path_w, _ = inputs
    ctx.save_for_backward(x1, x2, path_p, path_i, path_j, path_w)


def _backward(ctx, grad_out):
    x1, x2, path_p, path_i, path_j, path_w = ctx.saved_tensors
    gx1, gx2 = _strided_contract_bwd(grad_out, x1, x2, path_p, path_i, path_j, path_w)
    return gx1, gx2, None, None, None, None, None


_strided_contract_fwd.register_autograd(_backward, setup_context=_setup_context)


class TritonContracter(Contracter):
    """Drop-in replacement for the strided Contracter that runs the sparse contraction in Triton.

    Double backward (needed for force training) falls back to the reference implementation:
    the Triton path is used for inference and for first derivatives only.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        p, i, j, w = _build_sparse_coefficients(self.w3j_coo, self.path_weights)
        self.register_buffer("_path_p", p.to(torch.int32))
        self.register_buffer("_path_i", i.to(torch.int32))
        self.register_buffer("_path_j", j.to(torch.int32))
        self.register_buffer("_path_w", w)
        self._n_p = int(self.irreps_out_dim)
        self._tf32 = None

    def _triton_ok(self, x1: torch.Tensor) -> bool:
        if not x1.is_cuda or torch.jit.is_scripting():
            return False
        if self._tf32 is None:
            self._tf32 = _use_tf32()
        return True

    def forward(self, x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
        if not self._triton_ok(x1):
            return super().forward(x1, x2)
        x1 = x1.contiguous()
        x2 = x2.contiguous()
        out = _strided_contract_fwd(
            x1, x2, self._path_p, self._path_i, self._path_j, self._path_w.to(x1.dtype), self._n_p
        )
        return out


def block_count(n_edges: int, block: int = 32) -> int:
    return math.ceil(n_edges / block)


def autotune_cache_report() -> List[str]:
    lines = []
    for name, kernel in (("fwd", _contract_fwd_kernel), ("bwd", _contract_bwd_kernel)):
        for key, cfg in getattr(kernel, "cache", {}).items():
            lines.append(f"{name} {key}: {cfg}")
    return lines


def max_grid_programs(device: torch.device) -> int:
    return _num_programs_hint(device)
