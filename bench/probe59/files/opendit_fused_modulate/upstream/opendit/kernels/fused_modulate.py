"""
Fused LayerNorm + adaLN modulation for DiT blocks.

    y = LayerNorm(x) * (1 + scale[:, None]) + shift[:, None]

The forward pass writes mean / rstd per row so the backward can recompute the
normalised activations; the weight/bias gradient reduction follows the layer-norm
tutorial in the Triton repository (partial sums guarded by a spin lock).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _ln_modulate_fwd(
    X, Y, W, B, Shift, Scale, Mean, Rstd,
    stride_x, stride_y, stride_mod,
    seq_len, N, eps,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    batch = row // seq_len
    X += row * stride_x
    Y += row * stride_y
    Shift += batch * stride_mod
    Scale += batch * stride_mod

    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xbar = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xbar * xbar, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)

    w = tl.load(W + cols, mask=mask, other=1.0).to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    shift = tl.load(Shift + cols, mask=mask, other=0.0).to(tl.float32)
    scale = tl.load(Scale + cols, mask=mask, other=0.0).to(tl.float32)
    y = (xbar * rstd * w + b) * (1 + scale) + shift
    tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _ln_modulate_bwd_dx(
    DX, DY, DW, DB, X, W, Scale, Mean, Rstd, Lock,
    stride_x, stride_mod, seq_len, N,
    GROUP_SIZE_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    batch = row // seq_len
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    X += row * stride_x
    DY += row * stride_x
    DX += row * stride_x
    Scale += batch * stride_mod

    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols

    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    scale = tl.load(Scale + cols, mask=mask, other=0).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)

    dy = dy * (1 + scale)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = w * dy
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)

    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.atomic_xchg(Lock, 0)


@triton.jit
def _ln_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N,
                 BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


class _FusedLayerNormModulate(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, weight, bias, shift, scale, eps):
        B, L, N = x.shape
        x_arg = x.reshape(-1, N)
        M = x_arg.shape[0]
        y = torch.empty_like(x_arg)
        mean = torch.empty((M,), dtype=torch.float32, device="cuda")
        rstd = torch.empty((M,), dtype=torch.float32, device="cuda")
        # Less than 64KB per feature: enqueue fused kernel
        MAX_FUSED_SIZE = 65536 // x.element_size()
        BLOCK_N = min(MAX_FUSED_SIZE, triton.next_power_of_2(N))
        if N > BLOCK_N:
            raise RuntimeError("This layer norm doesn't support feature dim >= 64KB.")
        # heuristics for number of warps
        num_warps = min(max(BLOCK_N // 256, 1), 8)
        with torch.cuda.device(x.device.index):
            _ln_modulate_fwd[(M,)](
                x_arg, y, weight, bias, shift, scale, mean, rstd,
                x_arg.stride(0), y.stride(0), shift.stride(0),
                L, N, eps,
                BLOCK_N=BLOCK_N, num_warps=num_warps, num_ctas=1,
            )
        ctx.save_for_backward(x, weight, bias, scale, mean, rstd)
        ctx.BLOCK_N = BLOCK_N
        ctx.num_warps = num_warps
        ctx.seq_len = L
        return y.view(B, L, N)

    @staticmethod
    def backward(ctx, dy):
        x, w, b, scale, m, v = ctx.saved_tensors
        N = w.shape[0]
        # heuristics for amount of parallel reduction stream for DW/DB
        GROUP_SIZE_M = 64
        if N <= 8192: GROUP_SIZE_M = 96
        if N <= 4096: GROUP_SIZE_M = 128
        if N <= 1024: GROUP_SIZE_M = 256
        locks = torch.zeros(2 * GROUP_SIZE_M, dtype=torch.int32, device=w.device)
        _dw = torch.zeros((GROUP_SIZE_M, N), dtype=x.dtype, device=w.device)
        _db = torch.zeros((GROUP_SIZE_M, N), dtype=x.dtype, device=w.device)
        dw = torch.empty((N,), dtype=w.dtype, device=w.device)
        db = torch.empty((N,), dtype=w.dtype, device=w.device)
        dx = torch.empty_like(dy)
        x_arg = x.reshape(-1, x.shape[-1])
        M = x_arg.shape[0]
        with torch.cuda.device(dy.device.index):
            _ln_modulate_bwd_dx[(M,)](
                dx, dy, _dw, _db, x, w, scale, m, v, locks,
                x_arg.stride(0), scale.stride(0), ctx.seq_len, N,
                BLOCK_N=ctx.BLOCK_N, GROUP_SIZE_M=GROUP_SIZE_M, num_warps=ctx.num_warps,
            )
            grid = lambda meta: [triton.cdiv(N, meta['BLOCK_SIZE_N'])]
            _ln_bwd_dwdb[grid](
                _dw, _db, dw, db, min(GROUP_SIZE_M, M), N,
                BLOCK_SIZE_M=32, BLOCK_SIZE_N=128, num_ctas=1,
            )
        # shift/scale gradients are reduced in PyTorch (small, per-sample)
        return dx, dw, db, None, None, None


def fused_layernorm_modulate(x, weight, bias, shift, scale, eps=1e-6):
    return _FusedLayerNormModulate.apply(x, weight, bias, shift, scale, eps)


def t2i_modulate(x, shift, scale):
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


class LayerNormModulate(torch.nn.Module):
    """Drop-in for `modulate(norm(x), shift, scale)`; `use_kernel` selects the Triton path."""

    def __init__(self, hidden_size, eps=1e-6, elementwise_affine=False, use_kernel=True):
        super().__init__()
        self.norm = torch.nn.LayerNorm(hidden_size, elementwise_affine=elementwise_affine, eps=eps)
        self.use_kernel = use_kernel
        self.eps = eps
        self.register_buffer("_ones", torch.ones(hidden_size), persistent=False)
        self.register_buffer("_zeros", torch.zeros(hidden_size), persistent=False)

    def forward(self, x, shift, scale):
        if not self.use_kernel:
            return t2i_modulate(self.norm(x), shift, scale)
        weight = self.norm.weight if self.norm.weight is not None else self._ones
        bias = self.norm.bias if self.norm.bias is not None else self._zeros
        return fused_layernorm_modulate(x.contiguous(), weight, bias, shift.contiguous(), scale.contiguous(), self.eps)
