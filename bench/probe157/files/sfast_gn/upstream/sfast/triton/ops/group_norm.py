import torch
import triton
import triton.language as tl

from sfast.utils.copy_func import copy_func
from . import activation
from .utils import welford_combine


def create_group_norm_4d_forward_kernel(act=activation.identity):
    kernel = group_norm_4d_forward_kernel
    kernel = copy_func(kernel, globals={**globals(), **{"act": act}}, name=f"{kernel.__name__}_{act.__name__}")
    kernel = triton.heuristics({
        "BLOCK_SIZE": lambda kwargs: min(4096, triton.next_power_of_2(kwargs["HxW"])),
    })(triton.heuristics({
        "num_warps": lambda kwargs: max(1, min(16, triton.next_power_of_2(kwargs["HxW"] // 128))),
        "C_G": lambda kwargs: kwargs["C"] // kwargs["groups"],
    })(triton.jit(kernel)))
    return kernel


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
    group = tl.program_id(0)
    pid_batch = tl.program_id(1)

    offset = pid_batch * C * HxW + group * C_G * HxW
    X = input_ptr + offset
    Y = output_ptr + offset
    _mean = tl.zeros((BLOCK_SIZE, ), dtype=tl.float32)
    _m2 = tl.zeros((BLOCK_SIZE, ), dtype=tl.float32)
    _weight = tl.zeros((BLOCK_SIZE, ), dtype=tl.float32)
    row = tl.arange(0, BLOCK_SIZE)
    for c in range(C_G):
        for off in range(0, HxW, BLOCK_SIZE):
            r = off + row
            x = tl.load(X + c * HxW + r, mask=r < HxW).to(tl.float32)
            m2_ = tl.zeros((BLOCK_SIZE, ), dtype=tl.float32)
            weight_ = (r < HxW).to(tl.float32)
            _mean, _m2, _weight = welford_combine(_mean, _m2, _weight, x, m2_, weight_)
    mean, m2, weight = tl.reduce((_mean, _m2, _weight), 0, welford_combine)
    var = m2 / weight
    rstd = 1. / tl.sqrt(var + eps)
    offset = pid_batch * groups + group
    tl.store(mean_ptr + offset, mean)
    tl.store(rstd_ptr + offset, rstd)

    for c in range(C_G):
        cc = group * C_G + c
        if gamma_ptr is None:
            gamma = 1.
        else:
            gamma = tl.load(gamma_ptr + cc).to(tl.float32)
        if beta_ptr is None:
            beta = 0.
        else:
            beta = tl.load(beta_ptr + cc).to(tl.float32)
        for off in range(0, HxW, BLOCK_SIZE):
            r = off + row
            x = tl.load(X + c * HxW + r, mask=r < HxW).to(tl.float32)
            x_hat = (x - mean) * rstd
            y = x_hat * gamma + beta
            y = act(y)
            tl.store(Y + c * HxW + r, y, mask=r < HxW)


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
        x = tl.load(X + (r * C)[:, None] + row[None, :], mask=mask).to(tl.float32)
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


def create_group_norm_forward(act=activation.identity):
    group_norm_4d_forward_kernel = create_group_norm_4d_forward_kernel(act=act)

    def group_norm_forward(input, num_groups, weight=None, bias=None, eps=1e-05, output_mean=True, output_rstd=True):
        assert input.device.type == "cuda"
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
            assert weight.device == input.device
            weight = weight.contiguous()
        if bias is not None:
            assert bias.device == input.device
            bias = bias.contiguous()
        if input.stride(1) == 1:
            # channels_last input: collect stats with the NHWC kernel, normalize with aten
            memory_format = torch.channels_last
        else:
            memory_format = torch.contiguous_format
        input = input.contiguous(memory_format=memory_format)
        output = torch.empty_like(input)
        mean = torch.empty((N, num_groups), dtype=input.dtype, device=input.device)
        rstd = torch.empty((N, num_groups), dtype=input.dtype, device=input.device)

        def grid(meta):
            return (num_groups, N)

        with torch.cuda.device(input.device):
            if memory_format == torch.channels_last:
                group_norm_4d_channels_last_forward_collect_stats_kernel[grid](
                    input, N, C, H * W, num_groups, eps, mean, rstd,
                )
                output = ((input.view(N, num_groups, -1) - mean.unsqueeze(-1)) * rstd.unsqueeze(-1)).view(shape)
                if weight is not None:
                    output = output * weight.view(1, C, 1, 1)
                if bias is not None:
                    output = output + bias.view(1, C, 1, 1)
                output = act(output) if act is not activation.identity else output
            else:
                group_norm_4d_forward_kernel[grid](
                    input, weight, bias, N, C, H * W, num_groups, eps, output, mean, rstd,
                )
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


class TritonGroupNorm(torch.nn.GroupNorm):
    """Drop-in GroupNorm used by sfast's diffusers patcher (inference only)."""

    def forward(self, input):
        if input.device.type != "cuda" or torch.is_grad_enabled():
            return super().forward(input)
        return group_norm_forward(input, self.num_groups, self.weight, self.bias, self.eps, output_mean=False, output_rstd=False)[0]


class TritonGroupNormSiLU(torch.nn.GroupNorm):

    def forward(self, input):
        if not input.is_cuda or torch.is_grad_enabled():
            return torch.nn.functional.silu(super().forward(input))
        return group_norm_silu_forward(input, self.num_groups, self.weight, self.bias, self.eps, output_mean=False, output_rstd=False)[0]
