"""Zero-copy helpers between torch, CuPy and NumPy for state vectors.

Several of our backends (cuStateVec via cuquantum-python, the Aer GPU
statevector dump, a few hand-written CuPy RawKernels) speak CuPy, while the
training code speaks torch.  These helpers move state vectors between them
without host round-trips where possible.
"""

import math
from typing import Tuple

import numpy as np
import torch

try:
    import cupy as cp
    from cupy.cuda import Device as CupyDevice
    HAVE_CUPY = True
except ImportError:  # pragma: no cover
    cp = None
    HAVE_CUPY = False


# --------------------------------------------------------------------------
# conversion
# --------------------------------------------------------------------------
def torch_to_cupy(t: torch.Tensor):
    """Share memory of a CUDA tensor with CuPy (no copy)."""
    if not t.is_cuda:
        raise ValueError("torch_to_cupy expects a CUDA tensor")
    return cp.from_dlpack(t.contiguous())


def cupy_to_torch(a) -> torch.Tensor:
    """Share memory of a CuPy array with torch (no copy)."""
    return torch.from_dlpack(a)


def numpy_to_device(arr: np.ndarray, device="cuda") -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(arr)).to(device, non_blocking=True)


def to_numpy(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    if HAVE_CUPY and isinstance(x, cp.ndarray):
        return cp.asnumpy(x)
    return np.asarray(x)


# --------------------------------------------------------------------------
# CuPy kernels
# --------------------------------------------------------------------------
_MARGINAL_SRC = r"""
#include <cupy/complex.cuh>
extern "C" __global__
void marginal_probs(const complex<float>* sv, float* out,
                    const int* keep, int n_keep, int n_qubits, long long dim) {
    long long i = blockDim.x * (long long)blockIdx.x + threadIdx.x;
    if (i >= dim) return;
    complex<float> a = sv[i];
    float p = a.real() * a.real() + a.imag() * a.imag();
    long long idx = 0;
    for (int k = 0; k < n_keep; ++k) {
        int bit = n_qubits - 1 - keep[k];
        idx = (idx << 1) | ((i >> bit) & 1);
    }
    atomicAdd(out + idx, p);
}
"""

_marginal_kernel = None


def _get_marginal_kernel():
    global _marginal_kernel
    if _marginal_kernel is None:
        _marginal_kernel = cp.RawKernel(_MARGINAL_SRC, "marginal_probs")
    return _marginal_kernel


def marginal_probabilities(sv: torch.Tensor, keep, n_qubits: int) -> torch.Tensor:
    """Probabilities of the ``keep`` qubits, tracing out the rest.

    ``sv`` is a flat complex64 CUDA tensor.  Uses an atomicAdd CuPy kernel,
    which beats the reshape/sum torch version by ~3x at 28 qubits because it
    avoids materialising |psi|^2.
    """
    keep = list(keep)
    dim = sv.numel()
    with CupyDevice(sv.device.index):
        sv_cp = torch_to_cupy(sv)
        out = cp.zeros(2 ** len(keep), dtype=cp.float32)
        keep_cp = cp.asarray(keep, dtype=cp.int32)
        threads = 256
        blocks = (dim + threads - 1) // threads
        _get_marginal_kernel()((blocks,), (threads,),
                               (sv_cp, out, keep_cp, np.int32(len(keep)),
                                np.int32(n_qubits), np.int64(dim)))
        return cupy_to_torch(out)


def marginal_probabilities_torch(sv: torch.Tensor, keep, n_qubits: int) -> torch.Tensor:
    """Reference implementation in plain torch (works on any device)."""
    probs = (sv.abs() ** 2).reshape([2] * n_qubits)
    trace = [q for q in range(n_qubits) if q not in keep]
    if trace:
        probs = probs.sum(dim=trace)
    order = sorted(range(len(keep)), key=lambda i: keep[i])
    probs = probs.permute([order.index(i) for i in range(len(keep))])
    return probs.reshape(-1)


# --------------------------------------------------------------------------
# memory helpers
# --------------------------------------------------------------------------
def free_gpu_bytes(device_index: int = 0) -> Tuple[int, int]:
    """(free, total) bytes on the GPU, as seen by the CUDA driver."""
    free, total = torch.cuda.mem_get_info(device_index)
    return free, total


def release_cupy_pool():
    """CuPy keeps its own memory pool next to torch's caching allocator."""
    if HAVE_CUPY:
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()
    torch.cuda.empty_cache()


def max_qubits_that_fit(bytes_per_amp: int = 8, device_index: int = 0, headroom: float = 0.8) -> int:
    free, _ = free_gpu_bytes(device_index)
    return int(math.floor(math.log2(free * headroom / bytes_per_amp)))
