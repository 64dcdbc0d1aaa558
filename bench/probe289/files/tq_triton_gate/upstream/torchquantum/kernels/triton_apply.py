"""Triton kernels for single-qubit gates on split real/imag state vectors.

Complex tensors are not first-class in Triton, so the state is kept as two
float32 planes ``re`` and ``im`` of shape ``[bsz, 2**n_wires]``.  A
single-qubit gate on wire ``w`` pairs amplitude ``i`` with ``i ^ (1 << k)``
where ``k = n_wires - 1 - w``; each program instance handles ``BLOCK`` such
pairs for one batch element.

The autotune table below was tuned on A100-80GB and H100-SXM; ``num_warps``
and ``num_stages`` matter mostly for n_wires >= 20.
"""

import math

import torch
import triton
import triton.language as tl


def _configs():
    return [
        triton.Config({"BLOCK": 256}, num_warps=2, num_stages=1),
        triton.Config({"BLOCK": 512}, num_warps=4, num_stages=1),
        triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK": 2048}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK": 4096}, num_warps=16, num_stages=3),
    ]


@triton.autotune(configs=_configs(), key=["half_dim", "k"])
@triton.jit
def _apply_1q_kernel(
    re_ptr, im_ptr,
    u_ptr,                      # [bsz or 1, 8] float32: u00r u00i u01r u01i u10r u10i u11r u11i
    half_dim, k,
    stride_b, stride_u,
    BLOCK: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid = tl.program_id(1)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < half_dim

    # index of the amplitude with bit k == 0, and its partner with bit k == 1
    low = offs & ((1 << k) - 1)
    high = (offs >> k) << (k + 1)
    i0 = high | low
    i1 = i0 | (1 << k)

    base = pid_b * stride_b
    a_re = tl.load(re_ptr + base + i0, mask=mask, other=0.0)
    a_im = tl.load(im_ptr + base + i0, mask=mask, other=0.0)
    b_re = tl.load(re_ptr + base + i1, mask=mask, other=0.0)
    b_im = tl.load(im_ptr + base + i1, mask=mask, other=0.0)

    ub = pid_b * stride_u
    u00r = tl.load(u_ptr + ub + 0)
    u00i = tl.load(u_ptr + ub + 1)
    u01r = tl.load(u_ptr + ub + 2)
    u01i = tl.load(u_ptr + ub + 3)
    u10r = tl.load(u_ptr + ub + 4)
    u10i = tl.load(u_ptr + ub + 5)
    u11r = tl.load(u_ptr + ub + 6)
    u11i = tl.load(u_ptr + ub + 7)

    n0_re = u00r * a_re - u00i * a_im + u01r * b_re - u01i * b_im
    n0_im = u00r * a_im + u00i * a_re + u01r * b_im + u01i * b_re
    n1_re = u10r * a_re - u10i * a_im + u11r * b_re - u11i * b_im
    n1_im = u10r * a_im + u10i * a_re + u11r * b_im + u11i * b_re

    tl.store(re_ptr + base + i0, n0_re, mask=mask)
    tl.store(im_ptr + base + i0, n0_im, mask=mask)
    tl.store(re_ptr + base + i1, n1_re, mask=mask)
    tl.store(im_ptr + base + i1, n1_im, mask=mask)


@triton.jit
def _probs_kernel(re_ptr, im_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    r = tl.load(re_ptr + offs, mask=mask, other=0.0)
    i = tl.load(im_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, r * r + i * i, mask=mask)


def _pack_unitary(mat: torch.Tensor) -> torch.Tensor:
    """complex [.., 2, 2] -> float32 [.., 8] in the order the kernel expects."""
    if mat.dim() == 2:
        mat = mat.unsqueeze(0)
    flat = torch.view_as_real(mat.to(torch.complex64).contiguous()).reshape(mat.shape[0], 8)
    return flat.contiguous()


class SplitState:
    """State vector stored as two float32 planes, mutated in place."""

    def __init__(self, n_wires: int, bsz: int = 1, device="cuda"):
        self.n_wires = n_wires
        self.bsz = bsz
        self.re = torch.zeros(bsz, 2**n_wires, dtype=torch.float32, device=device)
        self.im = torch.zeros_like(self.re)
        self.re[:, 0] = 1.0

    @classmethod
    def from_complex(cls, state: torch.Tensor):
        bsz, dim = state.shape
        obj = cls.__new__(cls)
        obj.n_wires = int(math.log2(dim))
        obj.bsz = bsz
        obj.re = state.real.float().contiguous()
        obj.im = state.imag.float().contiguous()
        return obj

    def to_complex(self) -> torch.Tensor:
        return torch.complex(self.re, self.im)

    def apply_1q(self, mat: torch.Tensor, wire: int):
        assert self.re.is_cuda, "SplitState kernels need CUDA tensors"
        k = self.n_wires - 1 - wire
        half_dim = 2 ** (self.n_wires - 1)
        u = _pack_unitary(mat).to(self.re.device)
        stride_u = 0 if u.shape[0] == 1 else 8
        grid = lambda meta: (self.bsz, triton.cdiv(half_dim, meta["BLOCK"]))
        _apply_1q_kernel[grid](
            self.re, self.im, u,
            half_dim, k,
            self.re.stride(0), stride_u,
        )
        return self

    def probs(self) -> torch.Tensor:
        n = self.re.numel()
        out = torch.empty_like(self.re)
        BLOCK = 1024
        _probs_kernel[(triton.cdiv(n, BLOCK),)](self.re, self.im, out, n, BLOCK=BLOCK, num_warps=4)
        return out


def _ry(theta: float) -> torch.Tensor:
    c, s = math.cos(theta / 2), math.sin(theta / 2)
    return torch.tensor([[c, -s], [s, c]], dtype=torch.complex64)


def self_test(n_wires=10, bsz=4, device="cuda"):
    """Compare against the einsum reference on random RY layers."""
    from torchquantum.functional.fused_ops import _apply_1q_gate_torch

    torch.manual_seed(0)
    st = SplitState(n_wires, bsz, device=device)
    ref = st.to_complex()
    for w in range(n_wires):
        m = _ry(0.3 * (w + 1)).to(device)
        st.apply_1q(m, w)
        ref = _apply_1q_gate_torch(ref, m, w, n_wires)
    err = (st.to_complex() - ref).abs().max().item()
    print(f"max abs error vs einsum: {err:.3e}")
    assert err < 1e-5
    torch.testing.assert_close(st.probs().sum(-1), torch.ones(bsz, device=device))


if __name__ == "__main__":
    self_test()
