"""Fused GroupNorm (+ optional SiLU) Triton kernels used by stable-fast's JIT passes.

The UNet/VAE of Stable Diffusion spends a surprising amount of time in
GroupNorm -> SiLU pairs; fusing them into a two-pass Triton kernel saves a
full read/write of the activation on the GPU. Both NCHW-contiguous and
channels_last inputs are handled; the channels_last path is what you get when
``CompilationConfig.memory_format = torch.channels_last``.
"""
import torch
import triton
import triton.language as tl

try:
    from triton.language.extra.cuda.libdevice import rsqrt as _rsqrt
except ImportError:  # older triton releases
    from triton.language.math import rsqrt as _rsqrt

from sfast.utils.custom_python_operator import register_custom_python_operator

from .activation import identity, silu  # noqa: F401


def welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return (
        mean_1 + delta * w2_over_w,
        m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w,
        new_weight,
    )


@eval('''triton.heuristics({
    'ROW_SIZE':
    lambda kwargs: triton.next_power_of_2(kwargs['C'] // kwargs['groups']),
    'BLOCK_SIZE':
    lambda kwargs: max(
        1, min(triton.next_power_of_2(kwargs['HxW']),
               4096 // (triton.next_power_of_2(kwargs['C'] // kwargs['groups']))
               )),
})''')
@eval('''triton.heuristics({
    'num_warps':
    lambda kwargs: max(1, min(16, kwargs['ROW_SIZE'] * kwargs['BLOCK_SIZE'] // 128)),
    'C_G': lambda kwargs: kwargs['C'] // kwargs['groups'],
})''')
@triton.jit
def group_norm_4d_channels_last_forward_collect_stats_kernel(
    input_ptr,
    N,
    C,
    HxW,
    groups,
    eps,
    mean_ptr,
    rstd_ptr,
    C_G,
    ROW_SIZE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    group = tl.program_id(0)
    pid_batch = tl.program_id(1)

    offset = pid_batch * C * HxW + group * C_G
    X = input_ptr + offset
    _mean = tl.zeros((BLOCK_SIZE, ROW_SIZE), dtype=tl.float32)
    _m2 = tl.zeros((BLOCK_SIZE, ROW_SIZE), dtype=tl.float32)
    _weight = tl.zeros((BLOCK_SIZE, ROW_SIZE), dtype=tl.float32)
    row = tl.arange(0, ROW_SIZE)
    for off in range(0, HxW, BLOCK_SIZE):
        r = off + tl.arange(0, BLOCK_SIZE)
        m2_ = tl.zeros((BLOCK_SIZE, ROW_SIZE), dtype=tl.float32)
        mask = (r < HxW)[:, None] & (row[None, :] < C_G)
        weight_ = mask.to(tl.float32)
        x = tl.load(X + (r * C)[:, None] + row[None, :],
                    mask=mask).to(tl.float32)
        _mean, _m2, _weight = welford_combine(_mean, _m2, _weight, x, m2_,
                                              weight_)
    _mean = tl.view(_mean, (BLOCK_SIZE * ROW_SIZE, ))
    _m2 = tl.view(_m2, (BLOCK_SIZE * ROW_SIZE, ))
    _weight = tl.view(_weight, (BLOCK_SIZE * ROW_SIZE, ))
    mean, m2, weight = tl.reduce((_mean, _m2, _weight), 0, welford_combine)
    var = m2 / weight
    rstd = _rsqrt(var + eps)
    offset = pid_batch * groups + group
    tl.store(mean_ptr + offset, mean)
    tl.store(rstd_ptr + offset, rstd)


@eval('''triton.heuristics({
    'BLOCK_SIZE': lambda kwargs: min(4096, triton.next_power_of_2(kwargs['HxW'])),
})''')
@eval('''triton.heuristics({
    'num_warps':
    lambda kwargs: max(1, min(16, triton.next_power_of_2(kwargs['HxW'] // 128))),
    'C_G': lambda kwargs: kwargs['C'] // kwargs['groups'],
})''')
@triton.jit
def group_norm_4d_forward_kernel(
    input_ptr,
    gamma_ptr,
    beta_ptr,
    N,
    C,
    HxW,
    groups,
    eps,
    output_ptr,
    mean_ptr,
    rstd_ptr,
    C_G,
    activation: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    group = tl.program_id(0)
    pid_batch = tl.program_id(1)

    offset = pid_batch * C * HxW + group * C_G * HxW
    X = input_ptr + offset
    Y = output_ptr + offset
    _mean = tl.zeros((BLOCK_SIZE, ), dtype=tl.float32)
    _m2 = tl.zeros((BLOCK_SIZE, ), dtype=tl.float32)
    _weight = tl.zeros((BLOCK_SIZE, ), dtype=tl.float32)
    for off in range(0, C_G * HxW, BLOCK_SIZE):
        r = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + r, mask=r < C_G * HxW).to(tl.float32)
        m2_ = tl.zeros((BLOCK_SIZE, ), dtype=tl.float32)
        weight_ = (r < C_G * HxW).to(tl.float32)
        _mean, _m2, _weight = welford_combine(_mean, _m2, _weight, x, m2_,
                                              weight_)
    mean, m2, weight = tl.reduce((_mean, _m2, _weight), 0, welford_combine)
    var = m2 / weight
    rstd = _rsqrt(var + eps)

    for c in range(0, C_G):
        gamma = tl.load(gamma_ptr + group * C_G + c).to(tl.float32)
        beta = tl.load(beta_ptr + group * C_G + c).to(tl.float32)
        a = rstd * gamma
        b = beta - a * mean
        for off in range(0, HxW, BLOCK_SIZE):
            r = off + tl.arange(0, BLOCK_SIZE)
            x = tl.load(X + c * HxW + r, mask=r < HxW).to(tl.float32)
            x = a * x + b
            x = activation(x)
            tl.store(Y + c * HxW + r, x, mask=r < HxW)

    offset = pid_batch * groups + group
    tl.store(mean_ptr + offset, mean)
    tl.store(rstd_ptr + offset, rstd)


@eval('''triton.heuristics({
    'ROW_SIZE':
    lambda kwargs: triton.next_power_of_2(kwargs['C'] // kwargs['groups']),
    'BLOCK_SIZE':
    lambda kwargs: max(
        1, min(triton.next_power_of_2(kwargs['HxW']),
               4096 // (triton.next_power_of_2(kwargs['C'] // kwargs['groups']))
               )),
})''')
@eval('''triton.heuristics({
    'num_warps':
    lambda kwargs: max(1, min(16, kwargs['ROW_SIZE'] * kwargs['BLOCK_SIZE'] // 256)),
    'C_G': lambda kwargs: kwargs['C'] // kwargs['groups'],
})''')
@triton.jit
def group_norm_4d_channels_last_forward_apply_kernel(
    input_ptr,
    gamma_ptr,
    beta_ptr,
    mean_ptr,
    rstd_ptr,
    N,
    C,
    HxW,
    groups,
    output_ptr,
    C_G,
    activation: tl.constexpr,
    ROW_SIZE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    hw = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    pid_batch = tl.program_id(1)
    group = tl.program_id(2)

    offset = pid_batch * C * HxW + group * C_G
    X = input_ptr + offset
    Y = output_ptr + offset
    row = tl.arange(0, ROW_SIZE)
    mask = (hw < HxW)[:, None] & (row[None, :] < C_G)

    mean = tl.load(mean_ptr + pid_batch * groups + group)
    rstd = tl.load(rstd_ptr + pid_batch * groups + group)
    gamma = tl.load(gamma_ptr + group * C_G + row, mask=row < C_G).to(tl.float32)
    beta = tl.load(beta_ptr + group * C_G + row, mask=row < C_G).to(tl.float32)
    a = rstd * gamma
    b = beta - a * mean
    x = tl.load(X + (hw * C)[:, None] + row[None, :], mask=mask).to(tl.float32)
    x = a[None, :] * x + b[None, :]
    x = activation(x)
    tl.store(Y + (hw * C)[:, None] + row[None, :], x, mask=mask)


def create_group_norm_4d_forward(act=identity):

    def group_norm_4d_forward(input, num_groups, weight=None, bias=None, eps=1e-05):
        assert input.is_cuda, "Triton group_norm expects a CUDA tensor"
        assert input.ndim == 4, "only 4D (N, C, H, W) inputs are fused"
        N, C, H, W = input.shape
        HxW = H * W
        if weight is None:
            weight = torch.ones(C, dtype=input.dtype, device=input.device)
        if bias is None:
            bias = torch.zeros(C, dtype=input.dtype, device=input.device)

        if input.is_contiguous(memory_format=torch.channels_last):
            output = torch.empty_like(input, memory_format=torch.channels_last)
        else:
            input = input.contiguous()
            output = torch.empty_like(input)
        mean = torch.empty((N, num_groups), dtype=input.dtype, device=input.device)
        rstd = torch.empty((N, num_groups), dtype=input.dtype, device=input.device)

        with torch.cuda.device(input.device):
            if input.is_contiguous(memory_format=torch.channels_last):
                grid = (num_groups, N)
                group_norm_4d_channels_last_forward_collect_stats_kernel[grid](
                    input, N, C, HxW, num_groups, eps, mean, rstd)

                def grid(meta):
                    return (triton.cdiv(HxW, meta['BLOCK_SIZE']), N, num_groups)

                group_norm_4d_channels_last_forward_apply_kernel[grid](
                    input, weight, bias, mean, rstd, N, C, HxW, num_groups,
                    output, activation=act)
            else:
                grid = (num_groups, N)  # one program per (group, sample)
                group_norm_4d_forward_kernel[grid](
                    input, weight, bias, N, C, HxW, num_groups, eps, output,
                    mean, rstd, activation=act)
        return output, mean, rstd

    return group_norm_4d_forward


group_norm_forward = create_group_norm_4d_forward()
group_norm_silu_forward = create_group_norm_4d_forward(silu)


def _group_norm_impl(input, num_groups, weight=None, bias=None, eps=1e-05):
    return group_norm_forward(input, num_groups, weight, bias, eps)[0]


def _group_norm_silu_impl(input, num_groups, weight=None, bias=None, eps=1e-05):
    return group_norm_silu_forward(input, num_groups, weight, bias, eps)[0]


lib = torch.library.Library("sfast_triton", "DEF")
lib.define("group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> Tensor")
lib.define("group_norm_silu(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> Tensor")
lib.impl("group_norm", _group_norm_impl, "CUDA")
lib.impl("group_norm_silu", _group_norm_silu_impl, "CUDA")

register_custom_python_operator(
    "sfast_triton::group_norm_silu(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> Tensor",
    _group_norm_silu_impl)


if __name__ == "__main__":
    # quick self-check against eager GroupNorm + SiLU
    x = torch.randn(2, 320, 64, 64, device="cuda", dtype=torch.float16)
    gn = torch.nn.GroupNorm(32, 320).to(device="cuda", dtype=torch.float16)
    ref = torch.nn.functional.silu(gn(x))
    out = _group_norm_silu_impl(x, 32, gn.weight, gn.bias, gn.eps)
    print("max abs diff:", (ref - out).abs().max().item())
    x_cl = x.to(memory_format=torch.channels_last)
    out_cl = _group_norm_silu_impl(x_cl, 32, gn.weight, gn.bias, gn.eps)
    print("max abs diff (channels_last):", (ref - out_cl).abs().max().item())
