from typing import Optional, Tuple

import torch
import transformer_engine as te  # noqa
import transformer_engine_torch as tex

from nanotron.fp8.constants import DTYPE_TO_FP8_MAX, FP8_GPU_NAMES
from nanotron.fp8.dtypes import DTypes
from nanotron.fp8.meta import FP8Meta
from nanotron.fp8.tensor import FP8Tensor

# cuBLASLt needs a 32 MiB workspace on Hopper for FP8 GEMMs with split accumulators.
_CUBLAS_WORKSPACE_SIZE_BYTES = 33_554_432
_WORKSPACES = {}


def _get_workspace(device: torch.device) -> torch.Tensor:
    key = (device.type, device.index)
    if key not in _WORKSPACES:
        _WORKSPACES[key] = torch.empty(_CUBLAS_WORKSPACE_SIZE_BYTES, dtype=torch.int8, device=device)
    return _WORKSPACES[key]


def is_fp8_available() -> bool:
    """FP8 GEMMs need sm_89 (Ada) or sm_90 (Hopper)."""
    if not torch.cuda.is_available():
        return False
    device_name = torch.cuda.get_device_name(torch.cuda.current_device()).lower()
    major, minor = torch.cuda.get_device_capability()
    return (major, minor) >= (8, 9) or any(name in device_name for name in FP8_GPU_NAMES)


def _to_te_dtype(dtype: DTypes):
    if dtype == DTypes.FP8E4M3:
        return tex.DType.kFloat8E4M3
    elif dtype == DTypes.FP8E5M2:
        return tex.DType.kFloat8E5M2
    elif dtype == DTypes.KFLOAT16:
        return tex.DType.kFloat16
    elif dtype == DTypes.KFLOAT32:
        return tex.DType.kFloat32
    raise ValueError(f"Unsupported dtype: {dtype}")


@torch.no_grad()
def fp8_matmul_kernel(
    mat_a: FP8Tensor,
    transpose_a: bool,
    mat_b: FP8Tensor,
    transpose_b: bool,
    use_split_accumulator: bool,
    accum_qtype: torch.dtype,
    bias: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    assert (
        mat_a.device != "cpu" and mat_b.device != "cpu"
    ), "The tensors must be on a CUDA device in order to use the FP8 kernel!!"
    assert mat_a.is_cuda and mat_b.is_cuda

    device = mat_a.device

    _empty_tensor = torch.Tensor()
    output = torch.empty(mat_a.shape[0], mat_b.shape[1], device=device, dtype=accum_qtype)
    workspace = _get_workspace(device)
    accumulate = False

    out_dtype = getattr(tex.DType, "kFloat32") if accum_qtype == torch.float32 else getattr(tex.DType, "kFloat16")

    # NOTE: currently TE don't support adding bias in FP8
    # along with matmul, it only takes an empty bias
    bias = torch.tensor([], dtype=torch.float32) if bias is None else bias
    TE_CONFIG_TRANSPOSE_BIAS = False

    mat_a_fp8_meta: FP8Meta = mat_a.fp8_meta
    mat_b_fp8_meta: FP8Meta = mat_b.fp8_meta

    # NOTE: these are the fixed configs that TE only takes
    # so we have to TE the A and B matrix to match these configs
    TE_CONFIG_TRANSPOSE_A = True
    TE_CONFIG_TRANSPOSE_B = False
    SCALE = AMAX = _empty_tensor

    mat_a = tex.fp8_transpose(mat_a, mat_a_fp8_meta.te_dtype) if transpose_a is False else mat_a
    mat_b = tex.fp8_transpose(mat_b, mat_b_fp8_meta.te_dtype) if transpose_b is True else mat_b

    tex.te_gemm(
        mat_a,
        mat_a_fp8_meta.inverse_scale,
        mat_a_fp8_meta.te_dtype,
        TE_CONFIG_TRANSPOSE_A,
        mat_b,
        mat_b_fp8_meta.inverse_scale,
        mat_b_fp8_meta.te_dtype,
        TE_CONFIG_TRANSPOSE_B,
        output,
        SCALE,
        out_dtype,
        AMAX,
        bias,
        out_dtype,
        TE_CONFIG_TRANSPOSE_BIAS,
        workspace,
        workspace.shape[0],
        accumulate,
        use_split_accumulator,
        0,
    )

    return output


@torch.no_grad()
def cast_to_fp8(tensor: torch.Tensor, meta: FP8Meta) -> Tuple[torch.Tensor, torch.Tensor]:
    """Quantize ``tensor`` into raw FP8 bytes using the delayed scale stored in ``meta``."""
    assert tensor.is_cuda, "FP8 casting kernel only runs on CUDA tensors"
    amax = tensor.abs().max().to(torch.float32)
    meta.add_amax(amax)
    fp8_bytes = tex.cast_to_fp8(tensor, meta.scale, amax.view(1), meta.inverse_scale, meta.te_dtype)
    return fp8_bytes, amax


@torch.no_grad()
def cast_from_fp8(fp8_bytes: torch.Tensor, meta: FP8Meta, out_dtype: torch.dtype) -> torch.Tensor:
    te_out_dtype = tex.DType.kFloat32 if out_dtype == torch.float32 else tex.DType.kBFloat16
    return tex.cast_from_fp8(fp8_bytes, meta.inverse_scale, meta.te_dtype, te_out_dtype)


def compute_scale(amax: torch.Tensor, dtype: DTypes, margin: int = 0) -> torch.Tensor:
    """Delayed-scaling rule from the FP8 paper: scale = fp8_max / amax / 2**margin."""
    fp8_max = torch.tensor(DTYPE_TO_FP8_MAX[dtype], dtype=torch.float32, device=amax.device)
    scale = (fp8_max / amax) / (2**margin)
    scale = torch.where(amax > 0.0, scale, torch.ones_like(scale))
    scale = torch.where(torch.isfinite(amax), scale, torch.ones_like(scale))
    return scale
