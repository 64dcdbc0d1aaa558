import torch
import triton
import triton.language as tl
from itertools import product

from sfast.utils.copy_func import copy_func
from . import activation


def next_power_of_2(n):
    n -= 1
    n |= n >> 1
    n |= n >> 2
    n |= n >> 4
    n |= n >> 8
    n |= n >> 16
    n += 1
    return n


def get_num_sms():
    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


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
        x = tl.load(X + (r * C)[:, None] + row[None, :], mask=mask, eviction_policy='evict_last').to(tl.float32)
        _mean, _m2, _weight = welford_combine(_mean, _m2, _weight, x, m2_, weight_)
    _mean = tl.view(_mean, (BLOCK_SIZE * ROW_SIZE, ))
    _m2 = tl.view(_m2, (BLOCK_SIZE * ROW_SIZE, ))
    _weight = tl.view(_weight, (BLOCK_SIZE * ROW_SIZE, ))
    mean, m2, weight = tl.reduce((_mean, _m2, _weight), 0, welford_combine)
    var = m2 / weight
    rstd = 1. / tl.sqrt(var + eps)
    offset = pid_batch * groups + group
    tl.store(mean_ptr + offset, mean)
    tl.store(rstd_ptr + offset, rstd)


@triton.jit
def welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return (
        mean_1 + delta * w2_over_w,
        m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w,
        new_weight,
    )


def create_group_norm_4d_forward_kernel(act=activation.identity):

    @eval('''triton.heuristics({
        'BLOCK_SIZE':
        lambda kwargs: min(4096, triton.next_power_of_2(kwargs['HxW'])),
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
        BLOCK_SIZE: tl.constexpr,
    ):
        pid_batch = tl.program_id(0)
        pid_group = tl.program_id(1)

        offset = pid_batch * C * HxW + pid_group * C_G * HxW
        X = input_ptr + offset
        Y = output_ptr + offset
        mean = tl.load(mean_ptr + pid_batch * groups + pid_group)
        rstd = tl.load(rstd_ptr + pid_batch * groups + pid_group)
        for c in range(C_G):
            ch = pid_group * C_G + c
            gamma = tl.load(gamma_ptr + ch).to(tl.float32) if gamma_ptr is not None else 1.
            beta = tl.load(beta_ptr + ch).to(tl.float32) if beta_ptr is not None else 0.
            for off in range(0, HxW, BLOCK_SIZE):
                r = off + tl.arange(0, BLOCK_SIZE)
                x = tl.load(X + c * HxW + r, mask=r < HxW, other=0., cache_modifier='.cg').to(tl.float32)
                y = (x - mean) * rstd * gamma + beta
                y = act(y)
                tl.store(Y + c * HxW + r, y, mask=r < HxW)

    return group_norm_4d_forward_kernel


group_norm_4d_forward_kernel = create_group_norm_4d_forward_kernel()
group_norm_4d_silu_forward_kernel = create_group_norm_4d_forward_kernel(act=activation.silu)


def create_group_norm_forward(act=activation.identity):
    kernel = group_norm_4d_forward_kernel if act is activation.identity else group_norm_4d_silu_forward_kernel

    def group_norm_forward(input, num_groups, weight=None, bias=None, eps=1e-05, output_mean=True, output_rstd=True):
        assert input.device.type == 'cuda'
        assert 2 <= input.ndim <= 4
        dim_padding = 0
        while input.ndim < 4:
            input = input.unsqueeze(-1)
            dim_padding += 1
        shape = input.shape
        N, C, H, W = shape
        assert C % num_groups == 0
        assert weight is None or weight.shape == (C, )
        assert bias is None or bias.shape == (C, )
        if weight is not None:
            assert weight.device.type == 'cuda'
            weight = weight.contiguous()
        if bias is not None:
            assert bias.device.type == 'cuda'
            bias = bias.contiguous()
        output = torch.empty_like(input)
        mean = torch.empty((N, num_groups), dtype=torch.float32, device=input.device)
        rstd = torch.empty((N, num_groups), dtype=torch.float32, device=input.device)

        def grid(meta):
            return (num_groups, N)

        with torch.cuda.device(input.device):
            group_norm_4d_channels_last_forward_collect_stats_kernel[grid](
                input, N, C, H * W, num_groups, eps, mean, rstd)

        def grid(meta):
            return (N, num_groups)

        with torch.cuda.device(input.device.index):
            kernel[grid](input, weight, bias, N, C, H * W, num_groups, eps, output, mean, rstd)
        while dim_padding > 0:
            output = output.squeeze(-1)
            dim_padding -= 1
        if not output_mean:
            mean = None
        if not output_rstd:
            rstd = None
        return output, mean, rstd

    return group_norm_forward


group_norm_forward = create_group_norm_forward()
group_norm_silu_forward = create_group_norm_forward(act=activation.silu)


def test_group_norm():
    x = torch.randn(2, 320, 64, 64, device="cuda", dtype=torch.float16)
    w = torch.randn(320, device="cuda", dtype=torch.float16)
    b = torch.randn(320, device="cuda", dtype=torch.float16)
    ref = torch.nn.functional.silu(torch.nn.functional.group_norm(x.float(), 32, w.float(), b.float())).half()
    out, _, _ = group_norm_silu_forward(x, 32, w, b)
    torch.testing.assert_close(out, ref, atol=1e-2, rtol=1e-2)
