"""Fused state-vector kernels with a pure-PyTorch fallback.

``torchquantum._C`` is built by setup.py from ``csrc/*.cu`` when a CUDA
toolkit is available.  The kernels operate on the flattened complex64 state
(shape ``[bsz, 2**n_wires]``) in place of the generic einsum/bmm path in
``gate_wrapper``:

* ``apply_1q_gate``      -- 2x2 (optionally batched) unitary on one wire
* ``apply_controlled``   -- controlled 2x2 unitary, any number of controls
* ``sample_bitstrings``  -- inverse-CDF sampling of measurement outcomes
* ``expval_pauli``       -- <psi|P|psi> for a Pauli string without building P

Every public function here falls back to an equivalent torch implementation
when the extension is missing or the state is not a CUDA tensor, so callers
never have to check.
"""

import math
import warnings
from typing import List, Sequence

import torch

try:
    from torchquantum import _C  # compiled CUDA kernels
    _HAS_C = True
except ImportError as err:  # pragma: no cover - depends on the build
    _C = None
    _HAS_C = False
    _IMPORT_ERR = err

__all__ = [
    "has_fused_kernels",
    "apply_1q_gate",
    "apply_controlled",
    "sample_bitstrings",
    "expval_pauli",
]


def has_fused_kernels() -> bool:
    return _HAS_C


def _use_kernel(state: torch.Tensor) -> bool:
    return _HAS_C and state.is_cuda and state.dtype == torch.complex64


def _check_state(state: torch.Tensor, n_wires: int):
    if state.dim() != 2 or state.shape[1] != 2**n_wires:
        raise ValueError(
            f"expected a flattened state of shape [bsz, {2**n_wires}], got {tuple(state.shape)}"
        )


# --------------------------------------------------------------------------- #
# single-qubit gate
# --------------------------------------------------------------------------- #
def _apply_1q_gate_torch(state, mat, wire, n_wires):
    bsz = state.shape[0]
    psi = state.view(bsz, 2**wire, 2, 2 ** (n_wires - wire - 1))
    if mat.dim() == 2:
        out = torch.einsum("ij,bajc->baic", mat, psi)
    else:
        out = torch.einsum("bij,bajc->baic", mat, psi)
    return out.reshape(bsz, 2**n_wires)


def apply_1q_gate(state: torch.Tensor, mat: torch.Tensor, wire: int, n_wires: int):
    """Apply a (batched) 2x2 unitary ``mat`` to ``wire`` (0 = most significant)."""
    _check_state(state, n_wires)
    mat = mat.to(dtype=state.dtype, device=state.device)
    if _use_kernel(state):
        out = torch.empty_like(state)
        _C.apply_1q_gate_fwd(state.contiguous(), mat.contiguous(), wire, n_wires, out)
        return out
    return _apply_1q_gate_torch(state, mat, wire, n_wires)


# --------------------------------------------------------------------------- #
# controlled gate
# --------------------------------------------------------------------------- #
def _control_mask(controls: Sequence[int], n_wires: int, device):
    idx = torch.arange(2**n_wires, device=device)
    mask = torch.ones_like(idx, dtype=torch.bool)
    for c in controls:
        bit = n_wires - c - 1
        mask &= ((idx >> bit) & 1).bool()
    return mask


def _apply_controlled_torch(state, mat, controls, target, n_wires):
    full = _apply_1q_gate_torch(state, mat, target, n_wires)
    mask = _control_mask(controls, n_wires, state.device)
    return torch.where(mask.unsqueeze(0), full, state)


def apply_controlled(state, mat, controls: List[int], target: int, n_wires: int):
    """Controlled-U with ``controls`` all in |1>."""
    _check_state(state, n_wires)
    if target in controls:
        raise ValueError("target wire cannot also be a control")
    mat = mat.to(dtype=state.dtype, device=state.device)
    if _use_kernel(state):
        ctrl = torch.tensor(controls, dtype=torch.int32, device="cuda")
        out = torch.empty_like(state)
        _C.apply_controlled_fwd(state.contiguous(), mat.contiguous(), ctrl, target, n_wires, out)
        return out
    return _apply_controlled_torch(state, mat, controls, target, n_wires)


# --------------------------------------------------------------------------- #
# sampling
# --------------------------------------------------------------------------- #
def sample_bitstrings(state: torch.Tensor, n_shots: int, generator=None):
    """Draw ``n_shots`` basis-state indices per batch element.

    Returns a LongTensor of shape [bsz, n_shots].
    """
    probs = state.abs() ** 2
    probs = probs / probs.sum(dim=-1, keepdim=True)
    if _use_kernel(state) and generator is None:
        uniforms = torch.rand(state.shape[0], n_shots, device=state.device)
        out = torch.empty(state.shape[0], n_shots, dtype=torch.int64, device=state.device)
        _C.sample_inverse_cdf(probs.contiguous(), uniforms, out)
        return out
    return torch.multinomial(probs, n_shots, replacement=True, generator=generator)


def counts_from_samples(samples: torch.Tensor, n_wires: int):
    """Histogram of bitstrings as a list of {bitstring: count} dicts."""
    result = []
    for row in samples.cpu():
        vals, cnt = torch.unique(row, return_counts=True)
        result.append({format(int(v), f"0{n_wires}b"): int(c) for v, c in zip(vals, cnt)})
    return result


# --------------------------------------------------------------------------- #
# Pauli expectation values
# --------------------------------------------------------------------------- #
_PAULI_CODE = {"I": 0, "X": 1, "Y": 2, "Z": 3}


def _expval_pauli_torch(state, pauli: str, n_wires: int):
    bsz = state.shape[0]
    psi = state.view([bsz] + [2] * n_wires)
    phi = psi
    for w, p in enumerate(pauli):
        if p == "I":
            continue
        dim = w + 1
        if p == "X":
            phi = phi.flip(dim)
        elif p == "Y":
            phi = phi.flip(dim)
            sign = torch.tensor([-1j, 1j], dtype=state.dtype, device=state.device)
            shape = [1] * (n_wires + 1)
            shape[dim] = 2
            phi = phi * sign.view(shape)
        elif p == "Z":
            sign = torch.tensor([1.0, -1.0], dtype=state.dtype, device=state.device)
            shape = [1] * (n_wires + 1)
            shape[dim] = 2
            phi = phi * sign.view(shape)
    return (psi.conj() * phi).reshape(bsz, -1).sum(-1).real


def expval_pauli(state: torch.Tensor, pauli: str, n_wires: int):
    _check_state(state, n_wires)
    if len(pauli) != n_wires:
        raise ValueError(f"Pauli string {pauli!r} does not match {n_wires} wires")
    if _use_kernel(state):
        codes = torch.tensor([_PAULI_CODE[p] for p in pauli.upper()], dtype=torch.int8).cuda()
        out = torch.empty(state.shape[0], dtype=torch.float32, device=state.device)
        _C.expval_pauli_fwd(state.contiguous(), codes, n_wires, out)
        return out
    return _expval_pauli_torch(state, pauli.upper(), n_wires)


def warn_if_slow(n_wires: int):
    if n_wires >= 16 and not _HAS_C:
        warnings.warn(
            "torchquantum._C not available; falling back to einsum. Build with a CUDA "
            "toolkit for the fused kernels (see setup.py).",
            RuntimeWarning,
        )
