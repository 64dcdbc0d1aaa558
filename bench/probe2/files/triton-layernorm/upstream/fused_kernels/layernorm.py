"""Fused LayerNorm (forward + backward) in Triton, used by the model's transformer blocks.

Forward: one program per row. Backward: dx per row; partial dW/dB are accumulated into
GROUP_SIZE_M buffers protected by a spin lock, then reduced column-wise by a second kernel.
"""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def _ln_fwd_kernel(
    x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr,
    row_stride, n_cols, eps,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    x_row = x_ptr + row * row_stride
    y_row = y_ptr + row * row_stride

    # mean
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        acc += tl.load(x_row + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
    mu = tl.sum(acc, axis=0) / n_cols

    # variance
    acc2 = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        v = tl.load(x_row + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
        v = tl.where(offs < n_cols, v - mu, 0.0)
        acc2 += v * v
    var = tl.sum(acc2, axis=0) / n_cols
    inv_std = tl.math.rsqrt(var + eps)
    tl.store(mean_ptr + row, mu)
    tl.store(rstd_ptr + row, inv_std)

    # normalise + affine
    for start in range(0, n_cols, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        m = offs < n_cols
        w = tl.load(w_ptr + offs, mask=m)
        b = tl.load(b_ptr + offs, mask=m)
        v = tl.load(x_row + offs, mask=m, other=0.0).to(tl.float32)
        tl.store(y_row + offs, (v - mu) * inv_std * w + b, mask=m)


@triton.jit
def _ln_bwd_dx_kernel(
    dx_ptr, dy_ptr, partial_dw_ptr, partial_db_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, lock_ptr,
    row_stride, n_cols,
    GROUP_SIZE_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    m = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=m, other=0).to(tl.float32)
    dy = tl.load(dy_ptr + row * row_stride + cols, mask=m, other=0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=m).to(tl.float32)
    mu = tl.load(mean_ptr + row)
    inv_std = tl.load(rstd_ptr + row)

    xhat = tl.where(m, (x - mu) * inv_std, 0.0)
    wdy = tl.where(m, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / n_cols
    c2 = tl.sum(wdy, axis=0) / n_cols
    dx = (wdy - (xhat * c1 + c2)) * inv_std
    tl.store(dx_ptr + row * row_stride + cols, dx, mask=m)

    # accumulate this row's contribution to dW/dB into one of GROUP_SIZE_M buffers
    group = row % GROUP_SIZE_M
    lock = lock_ptr + group
    first_visit = lock + GROUP_SIZE_M
    dw_acc = partial_dw_ptr + group * n_cols + cols
    db_acc = partial_db_ptr + group * n_cols + cols
    pdw = (dy * xhat).to(w.dtype)
    pdb = dy.to(w.dtype)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    seen = tl.load(first_visit)
    if seen == 0:
        tl.atomic_xchg(first_visit, 1)
    else:
        pdw += tl.load(dw_acc, mask=m)
        pdb += tl.load(db_acc, mask=m)
    tl.store(dw_acc, pdw, mask=m)
    tl.store(db_acc, pdb, mask=m)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def _ln_bwd_dwdb_kernel(partial_dw_ptr, partial_db_ptr, dw_ptr, db_ptr, n_groups, n_cols,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for i in range(0, n_groups, BLOCK_M):
        rows = i + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < n_groups) & (cols[None, :] < n_cols)
        offs = rows[:, None] * n_cols + cols[None, :]
        dw += tl.load(partial_dw_ptr + offs, mask=mask, other=0.0)
        db += tl.load(partial_db_ptr + offs, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0), mask=cols < n_cols)
    tl.store(db_ptr + cols, tl.sum(db, axis=0), mask=cols < n_cols)


def _group_size_for(n_cols):
    # more lock groups for narrow rows: less contention on the spin lock
    if n_cols <= 1024:
        return 256
    if n_cols <= 4096:
        return 128
    if n_cols <= 8192:
        return 96
    return 64


class FusedLayerNorm(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, normalized_shape, weight, bias, eps):
        y = torch.empty_like(x)
        x2d = x.reshape(-1, x.shape[-1])
        n_rows, n_cols = x2d.shape
        mean = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
        rstd = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
        # a single row must fit in 64KB of shared memory
        max_block = 65536 // x.element_size()
        BLOCK_N = min(max_block, triton.next_power_of_2(n_cols))
        if n_cols > BLOCK_N:
            raise RuntimeError("feature dim too large for the fused LayerNorm kernel")
        num_warps = min(max(BLOCK_N // 256, 1), 8)
        _ln_fwd_kernel[(n_rows,)](
            x2d, y, weight, bias, mean, rstd, x2d.stride(0), n_cols, eps,
            BLOCK_N=BLOCK_N, num_warps=num_warps, num_ctas=1)
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        ctx.BLOCK_N = BLOCK_N
        ctx.num_warps = num_warps
        ctx.eps = eps
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w, b, mean, rstd = ctx.saved_tensors
        n_cols = w.shape[0]
        GROUP_SIZE_M = _group_size_for(n_cols)
        locks = torch.zeros(2 * GROUP_SIZE_M, dtype=torch.int32, device=w.device)
        partial_dw = torch.zeros((GROUP_SIZE_M, n_cols), dtype=x.dtype, device=w.device)
        partial_db = torch.zeros((GROUP_SIZE_M, n_cols), dtype=x.dtype, device=w.device)
        dw = torch.empty((n_cols,), dtype=w.dtype, device=w.device)
        db = torch.empty((n_cols,), dtype=w.dtype, device=w.device)
        dx = torch.empty_like(dy)
        x2d = x.reshape(-1, x.shape[-1])
        n_rows = x2d.shape[0]
        _ln_bwd_dx_kernel[(n_rows,)](
            dx, dy, partial_dw, partial_db, x2d, w, mean, rstd, locks,
            x2d.stride(0), n_cols,
            GROUP_SIZE_M=GROUP_SIZE_M, BLOCK_N=ctx.BLOCK_N, num_warps=ctx.num_warps)
        grid = lambda meta: (triton.cdiv(n_cols, meta["BLOCK_N"]),)
        _ln_bwd_dwdb_kernel[grid](
            partial_dw, partial_db, dw, db, min(GROUP_SIZE_M, n_rows), n_cols,
            BLOCK_M=32, BLOCK_N=128, num_ctas=1)
        return dx, None, dw, db, None


fused_layer_norm = FusedLayerNorm.apply


def _self_test(M=1151, N=8192, dtype=torch.float16, eps=1e-5):
    w = torch.rand((N,), dtype=dtype, device=DEVICE, requires_grad=True)
    b = torch.rand((N,), dtype=dtype, device=DEVICE, requires_grad=True)
    x = -2.3 + 0.5 * torch.randn((M, N), dtype=dtype, device=DEVICE)
    dy = 0.1 * torch.randn_like(x)
    x.requires_grad_(True)
    y_tri = fused_layer_norm(x, (N,), w, b, eps)
    y_ref = torch.nn.functional.layer_norm(x, (N,), w, b, eps).to(dtype)
    y_tri.backward(dy, retain_graph=True)
    dx_tri, dw_tri, db_tri = [t.grad.clone() for t in (x, w, b)]
    x.grad, w.grad, b.grad = None, None, None
    y_ref.backward(dy, retain_graph=True)
    torch.testing.assert_close(y_tri, y_ref, atol=1e-2, rtol=0)
    torch.testing.assert_close(dx_tri, x.grad, atol=1e-2, rtol=0)
    torch.testing.assert_close(dw_tri, w.grad, atol=1e-2, rtol=0)
    torch.testing.assert_close(db_tri, b.grad, atol=1e-2, rtol=0)
    ms = triton.testing.do_bench(lambda: fused_layer_norm(x, (N,), w, b, eps))
    print(f"fused layer norm fwd: {ms:.3f} ms on {torch.cuda.get_device_name()}")


if __name__ == "__main__":
    _self_test()
