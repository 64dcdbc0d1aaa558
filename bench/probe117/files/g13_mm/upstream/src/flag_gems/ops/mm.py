"""Dense matmul: ``mm`` with an autotuned tiled kernel plus a split-K path for tall-K
problems (K >> M, N) where a single tile per output block leaves most SMs idle.
"""
import logging

import torch
import triton
import triton.language as tl

from .. import runtime
from ..utils import libentry, libtuner
from ..utils import triton_lang_extension as tle

logger = logging.getLogger(__name__)

_SPLIT_K_LOCKS = {}


def _get_locks(device, n):
    key = (device, n)
    buf = _SPLIT_K_LOCKS.get(key)
    if buf is None:
        buf = torch.zeros(n, dtype=torch.int32, device=device)
        _SPLIT_K_LOCKS[key] = buf
    return buf


def get_higher_dtype(a, b):
    if a is b:
        return a

    assert a in (torch.float16, torch.bfloat16, torch.float32)
    assert b in (torch.float16, torch.bfloat16, torch.float32)
    for d in (torch.float32, torch.bfloat16, torch.float16):
        if a is d or b is d:
            return d
    return torch.float32


def mm_configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, SPLIT_K, num_stages, num_warps)
    raw = [
        (128, 256, 64, 1, 3, 8),
        (256, 128, 64, 1, 3, 8),
        (256, 64, 32, 1, 4, 4),
        (64, 256, 32, 1, 4, 4),
        (128, 128, 32, 1, 4, 4),
        (128, 64, 32, 1, 4, 4),
        (64, 128, 32, 1, 4, 4),
        (128, 32, 32, 1, 4, 4),
        (64, 32, 32, 1, 5, 2),
        (32, 64, 32, 1, 5, 2),
    ]
    return [
        triton.Config(
            {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "SPLIT_K": s},
            num_stages=st,
            num_warps=w,
        )
        for (m, n, k, s, st, w) in raw
    ]


def early_config_prune(configs, named_args, **kwargs):
    # Drop configs whose shared memory footprint exceeds what the SM offers.
    device = torch.cuda.current_device()
    max_shared_memory = triton.runtime.driver.active.utils.get_device_properties(device)[
        "max_shared_mem"
    ]
    dtsize = named_args["A"].element_size()
    pruned = []
    for config in configs:
        kw = config.kwargs
        BLOCK_M, BLOCK_N, BLOCK_K = kw["BLOCK_M"], kw["BLOCK_N"], kw["BLOCK_K"]
        required_shared_memory = (BLOCK_M + BLOCK_N) * BLOCK_K * config.num_stages * dtsize
        if required_shared_memory <= max_shared_memory:
            pruned.append(config)
    return pruned


@libentry()
@libtuner(
    configs=mm_configs(),
    key=["M", "N", "K"],
    prune_configs_by={"early_config_prune": early_config_prune},
)
@triton.heuristics(runtime.get_heuristic_config("mm"))
@triton.jit
def mm_kernel(
    A,
    B,
    C,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    dot_out_dtype: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    SPLIT_K: tl.constexpr,
    EVEN_K: tl.constexpr,
):
    # matrix multiplication
    pid = tle.program_id(0)
    pid_z = tle.program_id(1)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    # re-order program ID for better L2 performance
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // (group_size)
    # do matrix multiplication
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = pid_z * BLOCK_K + tl.arange(0, BLOCK_K)
    # pointers
    A = A + (ram[:, None] * stride_am + rk[None, :] * stride_ak)
    B = B + (rk[:, None] * stride_bk + rbn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=dot_out_dtype)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        if EVEN_K:
            a = tl.load(A)
            b = tl.load(B)
        else:
            k_remaining = K - k * (BLOCK_K * SPLIT_K)
            _0 = tl.zeros((1, 1), dtype=C.dtype.element_ty)
            a = tl.load(A, mask=rk[None, :] < k_remaining, other=_0)
            b = tl.load(B, mask=rk[:, None] < k_remaining, other=_0)
        if a.dtype != b.dtype:
            a = a.to(C.dtype.element_ty)
            b = b.to(C.dtype.element_ty)
        acc += tl.dot(a, b, out_dtype=dot_out_dtype, allow_tf32=False)
        A += BLOCK_K * SPLIT_K * stride_ak
        B += BLOCK_K * SPLIT_K * stride_bk
    acc = acc.to(C.dtype.element_ty)
    # rematerialize rm and rn to save registers
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    C = C + (rm[:, None] * stride_cm + rn[None, :] * stride_cn)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    # handles write-back with reduction-splitting
    if SPLIT_K == 1:
        tl.store(C, acc, mask=mask)
    else:
        tl.atomic_add(C, acc, mask=mask)


@triton.jit
def mm_splitk_serial_kernel(
    A,
    B,
    C,
    Locks,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
):
    """Deterministic split-K: the SPLIT_K partial tiles of one output block are
    accumulated in order, serialized through a per-tile spin lock."""
    pid = tl.program_id(0)
    pid_z = tl.program_id(1)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = pid_z * BLOCK_K + tl.arange(0, BLOCK_K)
    A = A + ((rm % M)[:, None] * stride_am + rk[None, :] * stride_ak)
    B = B + (rk[:, None] * stride_bk + (rn % N)[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        k_remaining = K - k * (BLOCK_K * SPLIT_K)
        a = tl.load(A, mask=rk[None, :] < k_remaining, other=0.0)
        b = tl.load(B, mask=rk[:, None] < k_remaining, other=0.0)
        acc += tl.dot(a, b)
        A += BLOCK_K * SPLIT_K * stride_ak
        B += BLOCK_K * SPLIT_K * stride_bk

    C = C + (rm[:, None] * stride_cm + rn[None, :] * stride_cn)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    lock = Locks + pid
    # wait for our turn: the lock holds the index of the split that may write next
    while tl.atomic_cas(lock, pid_z, -1) != pid_z:
        pass
    if pid_z == 0:
        tl.store(C, acc.to(C.dtype.element_ty), mask=mask)
    else:
        prev = tl.load(C, mask=mask, other=0.0).to(tl.float32)
        tl.store(C, (prev + acc).to(C.dtype.element_ty), mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock, pid_z + 1)


_ordered_datatypes = [torch.float16, torch.bfloat16, torch.float32]


def mm(a, b):
    logger.debug("GEMS MM")
    device = a.device
    # handle non-contiguous inputs if necessary
    if a.stride(0) > 1 and a.stride(1) > 1:
        a = a.contiguous()
    if b.stride(0) > 1 and b.stride(1) > 1:
        b = b.contiguous()
    # checks constraints
    assert a.shape[1] == b.shape[0], "incompatible dimensions"
    M, K = a.shape
    _, N = b.shape
    # allocates output
    c_dtype = get_higher_dtype(a.dtype, b.dtype)
    c = torch.empty((M, N), device=device, dtype=c_dtype)
    dot_out_dtype = tl.float32
    # launch kernel
    grid = lambda META: (
        triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),
        META["SPLIT_K"],
    )
    with torch.cuda.device(a.device):
        mm_kernel[grid](
            a,
            b,
            c,
            M,
            N,
            K,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            c.stride(0),
            c.stride(1),
            dot_out_dtype=dot_out_dtype,
            GROUP_M=8,
        )
    return c


def mm_deterministic_splitk(a, b, split_k=4):
    """Used by ``flag_gems.testing`` when ``torch.are_deterministic_algorithms_enabled()``
    and K is large enough that the non-split kernel underutilizes the GPU."""
    M, K = a.shape
    _, N = b.shape
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 64
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    num_tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    locks = _get_locks(a.device, num_tiles)
    locks.zero_()
    with torch.cuda.device(c.device):
        mm_splitk_serial_kernel[(num_tiles, split_k)](
            a, b, c, locks, M, N, K,
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, SPLIT_K=split_k,
            num_warps=4, num_stages=3,
        )
    return c
