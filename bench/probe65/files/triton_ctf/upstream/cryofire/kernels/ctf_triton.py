"""Fused CTF evaluation + application in Fourier space (Triton).

For each particle image the CTF is evaluated on the fly from its 7 parameters and multiplied into the
projected Fourier slice, so the (B, D, D) CTF tensor is never materialised.  This is the hot loop of
amortised pose search (B x n_poses slices per step).
"""
import math

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


def _sm_count(device=None):
    return torch.cuda.get_device_properties(device or torch.cuda.current_device()).multi_processor_count


def _autotune_configs():
    configs = []
    for block in (256, 512, 1024):
        for warps in (4, 8):
            for stages in (2, 3):
                configs.append(triton.Config({"BLOCK": block}, num_warps=warps, num_stages=stages))
    return configs


@triton.autotune(configs=_autotune_configs(), key=["n_pix"])
@triton.jit
def _apply_ctf_kernel(
    slice_re_ptr, slice_im_ptr,       # (B, n_pix) projected Fourier slices (real / imag)
    freqs_ptr,                          # (n_pix, 2) spatial frequencies (1/A)
    params_ptr,                         # (B, 7) dfu, dfv, dfang, volt, cs, w, phase_shift
    out_re_ptr, out_im_ptr,
    n_pix,
    BLOCK: tl.constexpr,
):
    b = tl.program_id(0)
    pid = tl.program_id(1)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_pix

    p = params_ptr + b * 7
    dfu = tl.load(p + 0)
    dfv = tl.load(p + 1)
    dfang = tl.load(p + 2) * 0.017453292519943295
    volt = tl.load(p + 3) * 1000.0
    cs = tl.load(p + 4) * 1.0e7
    w = tl.load(p + 5)
    phase = tl.load(p + 6) * 0.017453292519943295

    lam = 12.2639 / tl.sqrt(volt + 0.97845e-6 * volt * volt)
    fx = tl.load(freqs_ptr + offs * 2, mask=mask, other=0.0, cache_modifier=".cg")
    fy = tl.load(freqs_ptr + offs * 2 + 1, mask=mask, other=0.0, cache_modifier=".cg")
    ang = libdevice.atan2(fy, fx)
    s2 = fx * fx + fy * fy
    df = 0.5 * (dfu + dfv + (dfu - dfv) * tl.cos(2.0 * (ang - dfang)))
    gamma = 6.283185307179586 * (-0.5 * df * lam * s2 + 0.25 * cs * lam * lam * lam * s2 * s2) - phase
    ctf = tl.sqrt(1.0 - w * w) * tl.sin(gamma) - w * tl.cos(gamma)

    re = tl.load(slice_re_ptr + b * n_pix + offs, mask=mask, other=0.0)
    im = tl.load(slice_im_ptr + b * n_pix + offs, mask=mask, other=0.0)
    tl.store(out_re_ptr + b * n_pix + offs, re * ctf, mask=mask)
    tl.store(out_im_ptr + b * n_pix + offs, im * ctf, mask=mask)


def apply_ctf(slices: torch.Tensor, freqs: torch.Tensor, params: torch.Tensor) -> torch.Tensor:
    """slices: complex64 (B, D, D); freqs: (D*D, 2); params: (B, 7). Returns complex64 (B, D, D)."""
    assert slices.is_cuda and slices.dtype == torch.complex64
    B, D, _ = slices.shape
    n_pix = D * D
    re = slices.real.contiguous().view(B, n_pix)
    im = slices.imag.contiguous().view(B, n_pix)
    out_re = torch.empty_like(re)
    out_im = torch.empty_like(im)
    grid = lambda meta: (B, triton.cdiv(n_pix, meta["BLOCK"]))
    _apply_ctf_kernel[grid](re, im, freqs.contiguous(), params.contiguous(), out_re, out_im, n_pix)
    return torch.complex(out_re, out_im).view(B, D, D)


def apply_ctf_reference(slices, freqs, params):
    """Pure torch reference (used in tests and on CPU)."""
    from cryofire.ctf import compute_ctf
    B, D, _ = slices.shape
    c = compute_ctf(freqs[None], *[params[:, i].view(B, 1) for i in range(7)]).view(B, D, D)
    return slices * c


def use_triton(t: torch.Tensor) -> bool:
    # sm_80+ : the autotuned configs assume >= 100 KB shared memory per SM
    if not t.is_cuda:
        return False
    major, minor = torch.cuda.get_device_capability(t.device)
    return major >= 8


def apply_ctf_auto(slices, freqs, params):
    if use_triton(slices):
        return apply_ctf(slices, freqs, params)
    return apply_ctf_reference(slices, freqs, params)


if __name__ == "__main__":
    torch.manual_seed(0)
    D, B = 128, 64
    dev = "cuda"
    s = torch.randn(B, D, D, dtype=torch.complex64, device=dev)
    f = torch.randn(D * D, 2, device=dev) * 0.1
    prm = torch.tensor([[15000.0, 14500.0, 30.0, 300.0, 2.7, 0.1, 0.0]], device=dev).repeat(B, 1)
    ref = apply_ctf_reference(s, f, prm)
    out = apply_ctf(s, f, prm)
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)
    ms = triton.testing.do_bench(lambda: apply_ctf(s, f, prm))
    print(f"apply_ctf: {ms:.3f} ms on {torch.cuda.get_device_name()} ({_sm_count()} SMs)")
