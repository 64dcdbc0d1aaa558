"""Row-parallel CSR SpMM (``out = A @ X``) in Triton for message passing.

One program instance handles one destination row (node) and a ``BLOCK_F``
slice of the feature dimension; neighbours are streamed in chunks of
``BLOCK_E`` edges.  This replaces ``torch_sparse.matmul`` / ``spmm_sum`` for
the sum/mean aggregations used by GCN/GraphSAGE/GIN layers.
"""
from typing import Optional

import torch
import triton
import triton.language as tl


def _autotune_configs():
    configs = []
    for block_f in (32, 64, 128):
        for block_e in (16, 32, 64):
            for num_warps in (2, 4, 8):
                configs.append(
                    triton.Config({"BLOCK_F": block_f, "BLOCK_E": block_e},
                                  num_warps=num_warps, num_stages=3))
    return configs


@triton.autotune(configs=_autotune_configs(), key=["F", "AVG_DEG"])
@triton.jit
def _csr_spmm_fwd_kernel(
    rowptr_ptr, col_ptr, val_ptr, x_ptr, out_ptr,
    F, AVG_DEG,
    stride_xn, stride_xf, stride_on, stride_of,
    HAS_VAL: tl.constexpr, MEAN: tl.constexpr,
    BLOCK_F: tl.constexpr, BLOCK_E: tl.constexpr,
):
    row = tl.program_id(0)
    pid_f = tl.program_id(1)
    offs_f = pid_f * BLOCK_F + tl.arange(0, BLOCK_F)
    mask_f = offs_f < F

    start = tl.load(rowptr_ptr + row)
    end = tl.load(rowptr_ptr + row + 1)

    acc = tl.zeros((BLOCK_F,), dtype=tl.float32)
    for e0 in range(start, end, BLOCK_E):
        offs_e = e0 + tl.arange(0, BLOCK_E)
        mask_e = offs_e < end
        cols = tl.load(col_ptr + offs_e, mask=mask_e, other=0,
                       cache_modifier=".ca")
        x = tl.load(x_ptr + cols[:, None] * stride_xn
                    + offs_f[None, :] * stride_xf,
                    mask=mask_e[:, None] & mask_f[None, :], other=0.0,
                    eviction_policy="evict_last")
        if HAS_VAL:
            w = tl.load(val_ptr + offs_e, mask=mask_e, other=0.0)
            x = x * w[:, None]
        acc += tl.sum(x.to(tl.float32), axis=0)

    if MEAN:
        deg = (end - start).to(tl.float32)
        acc = acc / tl.maximum(deg, 1.0)

    tl.store(out_ptr + row * stride_on + offs_f * stride_of,
             acc.to(out_ptr.dtype.element_ty), mask=mask_f)


@triton.jit
def _scatter_grad_kernel(
    rowptr_ptr, col_ptr, val_ptr, gout_ptr, gx_ptr,
    F, stride_gn, stride_gf, stride_xn, stride_xf,
    HAS_VAL: tl.constexpr, MEAN: tl.constexpr, BLOCK_F: tl.constexpr,
):
    # Backward of A @ X w.r.t. X is A^T @ dOut; instead of materialising
    # the transpose we scatter each row's gradient into its neighbours.
    row = tl.program_id(0)
    pid_f = tl.program_id(1)
    offs_f = pid_f * BLOCK_F + tl.arange(0, BLOCK_F)
    mask_f = offs_f < F
    start = tl.load(rowptr_ptr + row)
    end = tl.load(rowptr_ptr + row + 1)
    g = tl.load(gout_ptr + row * stride_gn + offs_f * stride_gf,
                mask=mask_f, other=0.0).to(tl.float32)
    if MEAN:
        g = g / tl.maximum((end - start).to(tl.float32), 1.0)
    for e in range(start, end):
        c = tl.load(col_ptr + e)
        if HAS_VAL:
            g_e = g * tl.load(val_ptr + e)
        else:
            g_e = g
        tl.atomic_add(gx_ptr + c * stride_xn + offs_f * stride_xf, g_e,
                      mask=mask_f)


def _check_inputs(rowptr: torch.Tensor, col: torch.Tensor,
                  x: torch.Tensor) -> None:
    assert x.is_cuda and rowptr.is_cuda and col.is_cuda, \
        "csr_spmm expects CUDA tensors"
    assert rowptr.dtype in (torch.int32, torch.int64)
    assert x.dim() == 2


def _use_bf16_atomics(device: torch.device) -> bool:
    # bf16 atomics need sm_80+; fall back to an fp32 gradient buffer otherwise
    major, _ = torch.cuda.get_device_capability(device)
    return major >= 8


class CSRSpMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, rowptr, col, value, x, reduce="sum"):
        _check_inputs(rowptr, col, x)
        N = rowptr.numel() - 1
        F = x.size(1)
        out = torch.empty((N, F), device=x.device, dtype=x.dtype)
        avg_deg = max(int(col.numel() // max(N, 1)), 1)
        grid = lambda META: (N, triton.cdiv(F, META["BLOCK_F"]))
        with torch.cuda.device(x.device):
            _csr_spmm_fwd_kernel[grid](
                rowptr, col, value if value is not None else x, x, out,
                F, avg_deg,
                x.stride(0), x.stride(1), out.stride(0), out.stride(1),
                HAS_VAL=value is not None, MEAN=(reduce == "mean"),
            )
        ctx.save_for_backward(rowptr, col, value)
        ctx.reduce = reduce
        ctx.x_shape = x.shape
        ctx.x_dtype = x.dtype
        return out

    @staticmethod
    def backward(ctx, grad_out):
        rowptr, col, value = ctx.saved_tensors
        N = rowptr.numel() - 1
        F = grad_out.size(1)
        grad_out = grad_out.contiguous()
        if ctx.x_dtype == torch.bfloat16 and not _use_bf16_atomics(grad_out.device):
            gx = torch.zeros(ctx.x_shape, device=grad_out.device, dtype=torch.float32)
        else:
            gx = torch.zeros(ctx.x_shape, device=grad_out.device, dtype=ctx.x_dtype)
        BLOCK_F = 64 if F >= 64 else triton.next_power_of_2(F)
        grid = (N, triton.cdiv(F, BLOCK_F))
        _scatter_grad_kernel[grid](
            rowptr, col, value if value is not None else grad_out, grad_out, gx,
            F, grad_out.stride(0), grad_out.stride(1), gx.stride(0), gx.stride(1),
            HAS_VAL=value is not None, MEAN=(ctx.reduce == "mean"),
            BLOCK_F=BLOCK_F, num_warps=4,
        )
        return None, None, None, gx.to(ctx.x_dtype), None


def csr_spmm(rowptr: torch.Tensor, col: torch.Tensor, x: torch.Tensor,
             value: Optional[torch.Tensor] = None,
             reduce: str = "sum") -> torch.Tensor:
    """``out[i] = reduce_{j in N(i)} value_ij * x[j]``"""
    if reduce not in ("sum", "mean"):
        raise ValueError(f"unsupported reduce '{reduce}'")
    if not x.is_cuda:
        # Reference path (CPU): gather + index_add.
        row = torch.repeat_interleave(
            torch.arange(rowptr.numel() - 1, device=x.device),
            rowptr[1:] - rowptr[:-1])
        msg = x[col] if value is None else x[col] * value.view(-1, 1)
        out = torch.zeros(rowptr.numel() - 1, x.size(1), dtype=x.dtype,
                          device=x.device).index_add_(0, row, msg)
        if reduce == "mean":
            deg = (rowptr[1:] - rowptr[:-1]).clamp(min=1).to(x.dtype)
            out = out / deg.view(-1, 1)
        return out
    return CSRSpMM.apply(rowptr, col, value, x, reduce)


def num_sms(device: Optional[torch.device] = None) -> int:
    device = device or torch.device("cuda")
    return torch.cuda.get_device_properties(device).multi_processor_count
