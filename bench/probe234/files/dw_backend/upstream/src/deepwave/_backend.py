"""
Loading of the compiled propagator libraries and dispatch to the right kernel.

The C/CUDA kernels are compiled by CMake into two shared libraries that ship
inside the wheel:

    libdeepwave_cpu.so   -- OpenMP C kernels, one symbol per (propagator, accuracy, dtype, direction)
    libdeepwave_cuda.so  -- CUDA kernels with the same symbol names and a "_cuda" suffix

They are called through ctypes with raw data pointers, so the tensors must be
contiguous and on the device that the selected library expects.
"""
import contextlib
import ctypes
import os
import warnings
from ctypes import c_bool, c_double, c_float, c_int64, c_void_p
from pathlib import Path
from typing import Dict, List, Optional

import torch

_LIB_DIR = Path(os.environ.get("DEEPWAVE_LIB_DIR", Path(__file__).parent))

FLOAT_TYPE = {torch.float32: "float", torch.float64: "double"}
ACCURACIES = (2, 4, 6, 8)


def _load(name: str, optional: bool = False) -> Optional[ctypes.CDLL]:
    path = _LIB_DIR / name
    if not path.exists():
        if optional:
            return None
        raise ImportError(f"Deepwave library {path} not found. Was the package built correctly?")
    return ctypes.CDLL(str(path))


_cpu_lib = _load("libdeepwave_cpu.so")
_cuda_lib = _load("libdeepwave_cuda.so", optional=True)

if _cuda_lib is None and torch.cuda.is_available():
    warnings.warn(
        "A CUDA device is available but libdeepwave_cuda.so was not found; "
        "Deepwave will only be able to use the CPU.",
        RuntimeWarning,
    )

use_openmp = True


def _device_key(t: torch.Tensor) -> str:
    """Which library/symbol suffix to use for tensors on this device."""
    if t.is_cuda:
        return "cuda"
    return "cpu"


def _lib_for(key: str) -> ctypes.CDLL:
    if key == "cuda":
        if _cuda_lib is None:
            raise RuntimeError("Deepwave was built without CUDA support")
        return _cuda_lib
    return _cpu_lib


def _symbol(prop: str, accuracy: int, dtype: torch.dtype, direction: str, key: str):
    if accuracy not in ACCURACIES:
        raise ValueError(f"accuracy must be one of {ACCURACIES}, got {accuracy}")
    if dtype not in FLOAT_TYPE:
        raise TypeError(f"Only float32 and float64 tensors are supported, got {dtype}")
    name = f"{prop}_iso_{accuracy}_{FLOAT_TYPE[dtype]}_{direction}_{key}"
    fn = getattr(_lib_for(key), name)
    fn.restype = None
    return fn


def _stream_handle(t: torch.Tensor) -> c_void_p:
    """Kernels are launched on the current PyTorch stream so they order correctly with other ops."""
    if t.device.type == "cuda":
        return c_void_p(torch.cuda.current_stream(t.device).cuda_stream)
    return c_void_p(0)


def _device_guard(t: torch.Tensor):
    """Make the tensor's GPU the current device while launching (shots spread over several GPUs)."""
    return torch.cuda.device(t.device) if t.is_cuda else contextlib.nullcontext()


def _ptr(t: Optional[torch.Tensor]) -> c_void_p:
    if t is None or t.numel() == 0:
        return c_void_p(0)
    if not t.is_contiguous():
        raise ValueError("Deepwave kernels require contiguous tensors")
    return c_void_p(t.data_ptr())


def _n_threads(key: str, n_shots: int) -> int:
    """Auxiliary launch parameter: number of OpenMP threads on CPU, device index on GPU."""
    if key == "cpu":
        return min(n_shots, torch.get_num_threads()) if use_openmp else 1
    return -1


def _check_same_device(tensors: List[Optional[torch.Tensor]]):
    devices = {t.device for t in tensors if t is not None}
    if len(devices) > 1:
        raise RuntimeError(f"All tensors must be on the same device, found {devices}")


class ScalarForwardFunc(torch.autograd.Function):
    """
    Wraps the compiled forward and backward scalar (constant density acoustic) kernels.
    Inputs are expected to be already padded (PML) and contiguous.
    """

    @staticmethod
    def forward(ctx, v, source_amplitudes, wfc, wfp, psiy, psix, zetay, zetax, ay, ax, by, bx,
                sources_i, receivers_i, dy, dx, dt, nt, n_shots, ny, nx, step_ratio, accuracy, pml_width):
        _check_same_device([v, source_amplitudes, wfc, wfp, psiy, psix, zetay, zetax, sources_i, receivers_i])
        key = _device_key(v)
        dtype = v.dtype
        fn = _symbol("scalar", accuracy, dtype, "forward", key)
        aux = _n_threads(key, n_shots) if key == "cpu" else v.get_device()
        c_real = c_float if dtype == torch.float32 else c_double

        n_sources = sources_i.shape[-1] if sources_i.numel() > 0 else 0
        n_receivers = receivers_i.shape[-1] if receivers_i.numel() > 0 else 0
        receiver_amplitudes = torch.zeros(nt, n_shots, n_receivers, dtype=dtype, device=v.device)

        v2dt2 = (v ** 2 * dt ** 2).contiguous()
        requires_grad = v.requires_grad or source_amplitudes.requires_grad
        wfc_store = torch.empty(0, device=v.device, dtype=dtype)
        if v.requires_grad:
            wfc_store = torch.empty(nt // step_ratio, n_shots, ny, nx, device=v.device, dtype=dtype)

        with _device_guard(v):
            fn(
                _ptr(v2dt2), _ptr(source_amplitudes), _ptr(wfc), _ptr(wfp),
                _ptr(psiy), _ptr(psix), _ptr(zetay), _ptr(zetax), _ptr(wfc_store),
                _ptr(receiver_amplitudes), _ptr(ay), _ptr(ax), _ptr(by), _ptr(bx),
                _ptr(sources_i), _ptr(receivers_i),
                c_real(1 / dy), c_real(1 / dx), c_real(1 / dy ** 2), c_real(1 / dx ** 2),
                c_real(dt ** 2), c_int64(nt), c_int64(n_shots), c_int64(ny), c_int64(nx),
                c_int64(n_sources), c_int64(n_receivers), c_int64(step_ratio),
                c_bool(v.requires_grad), c_int64(pml_width), c_int64(aux), _stream_handle(v),
            )

        if requires_grad:
            ctx.save_for_backward(v, v2dt2, ay, ax, by, bx, sources_i, receivers_i, wfc_store)
            ctx.meta = (dy, dx, dt, nt, n_shots, ny, nx, step_ratio, accuracy, pml_width, n_sources, n_receivers)
        return wfc, wfp, psiy, psix, zetay, zetax, receiver_amplitudes

    @staticmethod
    def backward(ctx, wfc_g, wfp_g, psiy_g, psix_g, zetay_g, zetax_g, grad_r):
        v, v2dt2, ay, ax, by, bx, sources_i, receivers_i, wfc_store = ctx.saved_tensors
        dy, dx, dt, nt, n_shots, ny, nx, step_ratio, accuracy, pml_width, n_sources, n_receivers = ctx.meta
        key = _device_key(v)
        fn = _symbol("scalar", accuracy, v.dtype, "backward", key)
        aux = _n_threads(key, n_shots) if key == "cpu" else v.get_device()
        c_real = c_float if v.dtype == torch.float32 else c_double

        grad_r = grad_r.contiguous()
        wfc = torch.zeros(n_shots, ny, nx, device=v.device, dtype=v.dtype)
        wfp = torch.zeros_like(wfc)
        psiy = torch.zeros_like(wfc)
        psix = torch.zeros_like(wfc)
        zetay = torch.zeros_like(wfc)
        zetax = torch.zeros_like(wfc)
        grad_v = torch.zeros_like(v)
        grad_f = torch.zeros(nt, n_shots, n_sources, device=v.device, dtype=v.dtype)
        # per-shot gradient buffers, reduced afterwards (avoids atomics on the CPU)
        grad_v_tmp = torch.zeros(aux if key == "cpu" else 0, ny, nx, device=v.device, dtype=v.dtype)

        with _device_guard(v):  # backward launch
            fn(
                _ptr(v2dt2), _ptr(grad_r), _ptr(wfc), _ptr(wfp), _ptr(psiy), _ptr(psix),
                _ptr(zetay), _ptr(zetax), _ptr(wfc_store), _ptr(grad_f), _ptr(grad_v), _ptr(grad_v_tmp),
                _ptr(ay), _ptr(ax), _ptr(by), _ptr(bx), _ptr(sources_i), _ptr(receivers_i),
                c_real(1 / dy), c_real(1 / dx), c_real(1 / dy ** 2), c_real(1 / dx ** 2),
                c_real(dt ** 2), c_int64(nt), c_int64(n_shots), c_int64(ny), c_int64(nx),
                c_int64(n_sources), c_int64(n_receivers), c_int64(step_ratio),
                c_bool(v.requires_grad), c_int64(pml_width), c_int64(aux), _stream_handle(v),
            )

        grad_v = grad_v * 2 * v * dt ** 2
        return (grad_v, grad_f) + (None,) * 22


def library_info() -> Dict[str, object]:
    """Used by deepwave.show_config() and in bug reports."""
    return {
        "lib_dir": str(_LIB_DIR),
        "cpu": _cpu_lib is not None,
        "cuda": _cuda_lib is not None,
        "cuda_device_available": torch.cuda.is_available(),
        "openmp": use_openmp,
    }
