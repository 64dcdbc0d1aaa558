"""
Triton implementation of the multi-step LIF neuron (forward + surrogate-gradient BPTT).

Each program instance owns ``BLOCK_N`` neurons and walks over the ``T`` time steps sequentially,
keeping the membrane potential in registers. This is the ``backend='triton'`` path of
``neuron.LIFNode(step_mode='m')``; it needs no NVRTC/cupy at run time.
"""
from typing import Optional

import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None
    tl = None


def _autotune_configs():
    return [
        triton.Config({'BLOCK_N': 256}, num_warps=2, num_stages=1),
        triton.Config({'BLOCK_N': 512}, num_warps=4, num_stages=1),
        triton.Config({'BLOCK_N': 1024}, num_warps=8, num_stages=1),
        triton.Config({'BLOCK_N': 2048}, num_warps=8, num_stages=2),
    ]


if triton is not None:

    @triton.autotune(configs=_autotune_configs(), key=['N'])
    @triton.jit
    def _lif_fwd_kernel(
        x_ptr, v_init_ptr, s_ptr, h_ptr, v_ptr,
        T, N,
        decay, v_th, v_reset,
        HARD_RESET: tl.constexpr, DECAY_INPUT: tl.constexpr, BLOCK_N: tl.constexpr,
    ):
        pid = tl.program_id(0)
        offs = pid * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = offs < N
        v = tl.load(v_init_ptr + offs, mask=mask, other=0.).to(tl.float32)
        for t in range(0, T):
            x = tl.load(x_ptr + t * N + offs, mask=mask, other=0.).to(tl.float32)
            if DECAY_INPUT:
                h = v + (x - (v - v_reset)) * decay
            else:
                h = v - (v - v_reset) * decay + x
            s = (h >= v_th).to(tl.float32)
            if HARD_RESET:
                v = h * (1. - s) + v_reset * s
            else:
                v = h - v_th * s
            tl.store(s_ptr + t * N + offs, s.to(s_ptr.dtype.element_ty), mask=mask)
            tl.store(h_ptr + t * N + offs, h.to(h_ptr.dtype.element_ty), mask=mask)
            tl.store(v_ptr + t * N + offs, v.to(v_ptr.dtype.element_ty), mask=mask)

    @triton.autotune(configs=_autotune_configs(), key=['N'])
    @triton.jit
    def _lif_bwd_kernel(
        grad_s_ptr, grad_v_ptr, h_ptr, s_ptr, grad_x_ptr, grad_v_init_ptr,
        T, N,
        decay, v_th, v_reset, alpha,
        HARD_RESET: tl.constexpr, DETACH_RESET: tl.constexpr, DECAY_INPUT: tl.constexpr,
        BLOCK_N: tl.constexpr,
    ):
        pid = tl.program_id(0)
        offs = pid * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = offs < N
        grad_h = tl.zeros([BLOCK_N], dtype=tl.float32)
        for i in range(0, T):
            t = T - 1 - i
            h = tl.load(h_ptr + t * N + offs, mask=mask, other=0.).to(tl.float32)
            s = tl.load(s_ptr + t * N + offs, mask=mask, other=0.).to(tl.float32)
            g_s = tl.load(grad_s_ptr + t * N + offs, mask=mask, other=0.).to(tl.float32)
            g_v = tl.load(grad_v_ptr + t * N + offs, mask=mask, other=0.).to(tl.float32)
            # ATan surrogate: d s / d h = alpha / 2 / (1 + (pi / 2 * alpha * (h - v_th)) ** 2)
            z = 1.5707963267948966 * alpha * (h - v_th)
            sg = alpha * 0.5 / (1. + z * z)
            if HARD_RESET:
                if DETACH_RESET:
                    dv_dh = 1. - s
                else:
                    dv_dh = 1. - s + (v_reset - h) * sg
            else:
                if DETACH_RESET:
                    dv_dh = tl.full([BLOCK_N], 1., tl.float32)
                else:
                    dv_dh = 1. - v_th * sg
            grad_h = g_s * sg + (g_v + grad_h * (1. - decay)) * dv_dh
            if DECAY_INPUT:
                g_x = grad_h * decay
            else:
                g_x = grad_h
            tl.store(grad_x_ptr + t * N + offs, g_x.to(grad_x_ptr.dtype.element_ty), mask=mask)
        tl.store(grad_v_init_ptr + offs, (grad_h * (1. - decay)).to(grad_v_init_ptr.dtype.element_ty), mask=mask)


def _grid(N):
    return lambda meta: (triton.cdiv(N, meta['BLOCK_N']),)


class MultiStepLIFTriton(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x_seq: torch.Tensor, v_init: torch.Tensor, tau: float, v_th: float,
                v_reset: Optional[float], detach_reset: bool, decay_input: bool, alpha: float):
        T = x_seq.shape[0]
        N = x_seq[0].numel()
        x_seq = x_seq.contiguous()
        v_init = v_init.contiguous()
        s_seq = torch.empty_like(x_seq)
        h_seq = torch.empty_like(x_seq)
        v_seq = torch.empty_like(x_seq)
        hard_reset = v_reset is not None
        with torch.cuda.device(x_seq.device):
            _lif_fwd_kernel[_grid(N)](
                x_seq, v_init, s_seq, h_seq, v_seq, T, N,
                1. / tau, v_th, v_reset if hard_reset else 0.,
                HARD_RESET=hard_reset, DECAY_INPUT=decay_input,
            )
        ctx.save_for_backward(h_seq, s_seq)
        ctx.cfg = (T, N, tau, v_th, v_reset, hard_reset, detach_reset, decay_input, alpha)
        return s_seq, v_seq

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_s_seq: torch.Tensor, grad_v_seq: torch.Tensor):
        h_seq, s_seq = ctx.saved_tensors
        T, N, tau, v_th, v_reset, hard_reset, detach_reset, decay_input, alpha = ctx.cfg
        grad_x_seq = torch.empty_like(h_seq)
        grad_v_init = torch.empty_like(h_seq[0])
        with torch.cuda.device(h_seq.device):
            _lif_bwd_kernel[_grid(N)](
                grad_s_seq.contiguous(), grad_v_seq.contiguous(), h_seq, s_seq, grad_x_seq, grad_v_init,
                T, N, 1. / tau, v_th, v_reset if hard_reset else 0., alpha,
                HARD_RESET=hard_reset, DETACH_RESET=detach_reset, DECAY_INPUT=decay_input,
            )
        return grad_x_seq, grad_v_init, None, None, None, None, None, None


def multistep_lif_torch(x_seq, v_init, tau, v_th, v_reset, detach_reset, decay_input, surrogate_function):
    """Reference implementation used when Triton is not available (and for testing the kernels)."""
    v = v_init
    s_list, v_list = [], []
    for t in range(x_seq.shape[0]):
        if decay_input:
            h = v + (x_seq[t] - (v - (0. if v_reset is None else v_reset))) / tau
        else:
            h = v - (v - (0. if v_reset is None else v_reset)) / tau + x_seq[t]
        s = surrogate_function(h - v_th)
        s_r = s.detach() if detach_reset else s
        if v_reset is None:
            v = h - v_th * s_r
        else:
            v = h * (1. - s_r) + v_reset * s_r
        s_list.append(s)
        v_list.append(v)
    return torch.stack(s_list), torch.stack(v_list)


def multistep_lif(x_seq: torch.Tensor, v_init: torch.Tensor, tau: float = 2., v_th: float = 1.,
                  v_reset: Optional[float] = 0., detach_reset: bool = False, decay_input: bool = True,
                  alpha: float = 2., surrogate_function=None):
    """Dispatches to the Triton kernels for CUDA tensors and to the PyTorch loop otherwise."""
    if triton is not None and x_seq.is_cuda:
        return MultiStepLIFTriton.apply(x_seq, v_init, tau, v_th, v_reset, detach_reset, decay_input, alpha)
    if surrogate_function is None:
        from ..surrogate import ATan
        surrogate_function = ATan(alpha=alpha)
    return multistep_lif_torch(x_seq, v_init, tau, v_th, v_reset, detach_reset, decay_input, surrogate_function)


def _check_against_reference(T: int = 8, N: int = 4096, device: str = 'cuda'):
    torch.manual_seed(0)
    x = torch.randn(T, N, device=device, requires_grad=True)
    v0 = torch.zeros(N, device=device)
    s_ref, v_ref = multistep_lif(x.detach().cpu(), v0.cpu())
    s_tri, v_tri = multistep_lif(x, v0)
    torch.testing.assert_close(s_tri.cpu(), s_ref)
    torch.testing.assert_close(v_tri.cpu(), v_ref, rtol=1e-4, atol=1e-4)
    s_tri.sum().backward()
    return x.grad.abs().mean().item()


if __name__ == '__main__':
    print(_check_against_reference())
