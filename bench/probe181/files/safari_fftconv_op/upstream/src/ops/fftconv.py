"""Autograd wrapper around the fused FFT convolution CUDA kernel (csrc/fftconv).

The kernel fuses rfft(u) * rfft(k) -> irfft, the skip term ``u * D``, optional GELU and the
dropout mask into a single launch. It supports fft sizes 16 .. 16384 (seqlen up to 8192 with
the 2x zero padding) and half / bfloat16 / float32 inputs. Longer sequences fall back to the
reference implementation in ``src/models/sequence/hyena.py``.

Build the extension with::

    cd csrc/fftconv && python setup.py install
"""
import math

import torch
import torch.nn.functional as F
from einops import rearrange

from fftconv import fftconv_fwd, fftconv_bwd


def _next_power_of_two(x):
    return 1 << (x - 1).bit_length()


def fftconv_ref(u, k, D, dropout_mask, gelu=True, k_rev=None):
    """Reference implementation, used for testing the kernel and for long sequences."""
    seqlen = u.shape[-1]
    fft_size = 2 * seqlen
    k_f = torch.fft.rfft(k, n=fft_size) / fft_size
    if k_rev is not None:
        k_rev_f = torch.fft.rfft(k_rev, n=fft_size) / fft_size
        k_f = k_f + k_rev_f.conj()
    u_f = torch.fft.rfft(u.to(dtype=k.dtype), n=fft_size)

    if len(u.shape) > 3:
        k_f = k_f.unsqueeze(1)

    y = torch.fft.irfft(u_f * k_f, n=fft_size, norm="forward")[..., :seqlen]

    out = y + u * D.unsqueeze(-1)
    if gelu:
        out = F.gelu(out)
    if dropout_mask is not None:
        return (out * rearrange(dropout_mask, "b H -> b H 1")).to(dtype=u.dtype)
    else:
        return out.to(dtype=u.dtype)


class FFTConvFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, k, D, dropout_mask=None, gelu=True, force_fp16_output=False,
                output_hbl_layout=False, v=None, head_dim=1, q=None, fftfp16=False, k_rev=None):
        seqlen = u.shape[-1]
        fft_size = max(2 * _next_power_of_two(seqlen), 16)
        k_f = torch.fft.rfft(k, n=fft_size)
        if k_rev is not None:
            k_f = k_f + torch.fft.rfft(k_rev, n=fft_size).conj()
        if u.stride(-1) != 1:
            u = u.contiguous()
        k_f = k_f.contiguous()
        D = D.contiguous()
        if v is not None and v.stride(-1) != 1:
            v = v.contiguous()
        if q is not None and q.stride(-1) != 1:
            q = q.contiguous()
        if dropout_mask is not None:
            dropout_mask = dropout_mask.contiguous()
        ctx.save_for_backward(u, k_f, D, dropout_mask, v, q)
        ctx.output_hbl_layout = output_hbl_layout
        ctx.head_dim = head_dim
        ctx.gelu = gelu
        ctx.fftfp16 = fftfp16
        ctx.has_k_rev = k_rev is not None
        out = fftconv_fwd(u, k_f, D, v, head_dim, q, dropout_mask, gelu, False, False,
                          fft_size, force_fp16_output, output_hbl_layout, fftfp16)
        return out

    @staticmethod
    def backward(ctx, dout):
        if ctx.output_hbl_layout:
            dout = rearrange(rearrange(dout, "b h l -> h b l").contiguous(), "h b l -> b h l")
        else:
            dout = dout.contiguous()
        u, k_f, D, dropout_mask, v, q = ctx.saved_tensors
        seqlen = u.shape[-1]
        fft_size = max(2 * _next_power_of_two(seqlen), 16)
        du, dk_f, dD, dv, dq = fftconv_bwd(dout, u, k_f, D, v, ctx.head_dim, q, dropout_mask,
                                           ctx.gelu, False, False, fft_size,
                                           ctx.output_hbl_layout, ctx.fftfp16)
        dk = torch.fft.irfft(dk_f, n=fft_size, norm="forward")[..., :seqlen]
        dk_rev = (None if not ctx.has_k_rev
                  else torch.fft.irfft(dk_f.conj(), n=fft_size, norm="forward")[..., :seqlen])
        if v is not None:
            dv = dv.to(dtype=v.dtype)  # We do atomicAdd in fp32 so might need to convert to fp16
        return (du, dk, dD, None, None, None, None, dv if v is not None else None,
                None, dq if q is not None else None, None, dk_rev)


def fftconv_func(u, k, D, dropout_mask=None, gelu=True, force_fp16_output=False,
                 output_hbl_layout=False, v=None, head_dim=1, q=None, fftfp16=False, k_rev=None):
    """Fused FFT conv. Falls back to the reference path for sequences the kernel can't handle."""
    if u.shape[-1] > 8192:
        return fftconv_ref(u, k, D, dropout_mask, gelu=gelu, k_rev=k_rev)
    return FFTConvFunc.apply(u, k, D, dropout_mask, gelu, force_fp16_output,
                             output_hbl_layout, v, head_dim, q, fftfp16, k_rev)


def _check_fftconv(batch_size=4, H=768, seqlen=2048, dtype=torch.float16, device="cuda"):
    """Quick numerical check of the kernel against the reference (run as __main__)."""
    torch.manual_seed(0)
    u = torch.randn(batch_size, H, seqlen, device=device, dtype=dtype, requires_grad=True)
    k = torch.randn(H, seqlen, device=device, requires_grad=True)
    D = torch.randn(H, device=device, requires_grad=True)
    dropout_mask = F.dropout(torch.ones(batch_size, H, device=device), 0.1)
    out = fftconv_func(u, k, D, dropout_mask, gelu=True)
    out_ref = fftconv_ref(u.float(), k, D, dropout_mask, gelu=True).to(dtype)
    print(f"max abs diff fwd: {(out - out_ref).abs().max().item():.4e}")
    g = torch.randn_like(out)
    du, dk, dD = torch.autograd.grad(out, (u, k, D), g)
    du_ref, dk_ref, dD_ref = torch.autograd.grad(out_ref, (u, k, D), g)
    print(f"max abs diff du: {(du - du_ref).abs().max().item():.4e}")
    print(f"max abs diff dk: {(dk - dk_ref).abs().max().item():.4e}")
    print(f"max abs diff dD: {(dD - dD_ref).abs().max().item():.4e}")


def _bench(seqlens=(1024, 2048, 4096, 8192), repeats=30):
    import time

    for L in seqlens:
        u = torch.randn(8, 1024, L, device="cuda", dtype=torch.float16)
        k = torch.randn(1024, L, device="cuda")
        D = torch.randn(1024, device="cuda")
        for fn_name, fn in (("fused", fftconv_func), ("ref", fftconv_ref)):
            for _ in range(3):
                fn(u, k, D, None, gelu=False)
            torch.cuda.synchronize()  # finish warmup
            t0 = time.time()
            for _ in range(repeats):
                fn(u, k, D, None, gelu=False)
            torch.cuda.synchronize()
            ms = (time.time() - t0) / repeats * 1000
            print(f"L={L:6d} {fn_name:>5s}: {ms:.3f} ms")


if __name__ == "__main__":
    _check_fftconv()
    if torch.cuda.get_device_capability()[0] >= 8:
        _check_fftconv(dtype=torch.bfloat16)
    _bench()
