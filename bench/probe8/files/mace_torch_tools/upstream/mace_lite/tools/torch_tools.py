"""Torch helpers for equivariant interatomic potentials (e3nn-based MACE-style models).

Device / dtype initialisation, seeding, optional cuEquivariance kernels for the symmetric
contraction and channel-wise tensor products, and torch.compile preparation (e3nn modules
are fx-traced first so that dynamo sees plain tensor code).
"""
import logging
from contextlib import contextmanager
from typing import Callable, Dict, Optional

import numpy as np
import torch
import torch._dynamo
import torch._inductor.config as inductor_config
import e3nn
from e3nn import o3
from e3nn.util import jit

try:
    import cuequivariance as cue
    import cuequivariance_torch as cuet

    CUET_AVAILABLE = True
except ImportError:
    CUET_AVAILABLE = False

TensorDict = Dict[str, torch.Tensor]


def to_one_hot(indices: torch.Tensor, num_classes: int) -> torch.Tensor:
    shape = indices.shape[:-1] + (num_classes,)
    oh = torch.zeros(shape, device=indices.device).view(shape)
    oh.scatter_(dim=-1, index=indices, value=1)
    return oh.view(*shape)


def count_parameters(module: torch.nn.Module) -> int:
    return int(sum(np.prod(p.shape) for p in module.parameters()))


def tensor_dict_to_device(td: TensorDict, device: torch.device) -> TensorDict:
    return {k: v.to(device) if v is not None else None for k, v in td.items()}


def set_seeds(seed: int) -> None:
    np.random.seed(seed)
    torch.manual_seed(seed)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    return t.cpu().detach().numpy()


def init_device(device_str: str) -> torch.device:
    if "cuda" in device_str:
        assert torch.cuda.is_available(), "No CUDA device available!"
        if ":" in device_str:
            torch.cuda.set_device(int(device_str.split(":")[-1]))
        logging.info(f"CUDA version: {torch.version.cuda}, CUDA device: {torch.cuda.current_device()}")
        torch.cuda.init()
        return torch.device(device_str)
    if device_str == "mps":
        assert torch.backends.mps.is_available(), "No MPS backend is available!"
        logging.info("Using MPS GPU acceleration")
        return torch.device("mps")
    if device_str == "xpu":
        torch.xpu.is_available()
        return torch.device("xpu")
    logging.info("Using CPU")
    return torch.device("cpu")


dtype_dict = {"float32": torch.float32, "float64": torch.float64}


def set_default_dtype(dtype: str) -> None:
    torch.set_default_dtype(dtype_dict[dtype])


def get_complex_default_dtype():
    default_dtype = torch.get_default_dtype()
    if default_dtype == torch.float64:
        return torch.complex128
    if default_dtype == torch.float32:
        return torch.complex64
    raise NotImplementedError


@contextmanager
def default_dtype(dtype: torch.dtype):
    init = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    yield
    torch.set_default_dtype(init)


# ------------------------------------------------------------------ cuEquivariance
def cueq_enabled(requested: bool, device: torch.device) -> bool:
    """cuEquivariance kernels only exist for CUDA devices."""
    if not requested:
        return False
    if not CUET_AVAILABLE:
        logging.warning("cuequivariance requested but not installed; using e3nn kernels")
        return False
    return device.type == "cuda"


def symmetric_contraction_backend(irreps_in: o3.Irreps, irreps_out: o3.Irreps, correlation: int,
                                  num_elements: int, use_cueq: bool):
    if use_cueq:
        return cuet.SymmetricContraction(
            cue.Irreps(cue.O3, str(irreps_in)), cue.Irreps(cue.O3, str(irreps_out)),
            contraction_degree=correlation, num_elements=num_elements,
            layout_in=cue.ir_mul, layout_out=cue.mul_ir, original_mace=True, dtype=torch.get_default_dtype(),
            math_dtype=torch.get_default_dtype(),
        )
    from mace_lite.modules.symmetric_contraction import SymmetricContraction

    return SymmetricContraction(irreps_in, irreps_out, correlation, num_elements=num_elements)


# ------------------------------------------------------------------ torch.compile
def prepare(func: Callable, allow_autograd: bool = True) -> Callable:
    """Configure dynamo for e3nn models before compiling."""
    # e3nn modules carry TorchScript code paths; keep them as plain fx for dynamo
    e3nn.set_optimization_defaults(jit_script_fx=False)
    if allow_autograd:
        torch._dynamo.config.capture_scalar_outputs = True
        torch._dynamo.config.suppress_errors = False
    torch._dynamo.config.cache_size_limit = 128
    inductor_config.max_autotune_gemm_backends = "ATEN,TRITON,CUTLASS"
    inductor_config.triton.cudagraph_skip_dynamic_graphs = True
    return func


def compile_model(model: torch.nn.Module, mode: str = "max-autotune-no-cudagraphs",
                  fullgraph: bool = True) -> torch.nn.Module:
    model = prepare(model)
    return torch.compile(model, mode=mode, fullgraph=fullgraph, dynamic=False)


def report_device(device: torch.device) -> str:
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        return f"{props.name} ({props.total_memory / 2**30:.0f} GiB, sm_{props.major}{props.minor})"
    return str(device)


def peak_memory_gib(device: torch.device) -> float:
    if device.type != "cuda":
        return 0.0
    return torch.cuda.max_memory_allocated(device) / 2 ** 30


def configure_training_defaults(args) -> torch.device:
    """Called once at the start of run_train."""
    set_default_dtype(args.default_dtype)
    set_seeds(args.seed)
    device = init_device(args.device)
    if args.default_dtype == "float64":
        logging.info("Using float64: slower, but needed for MD-quality force fields")
    torch.backends.cuda.matmul.allow_tf32 = False
    args.enable_cueq = cueq_enabled(args.enable_cueq, device)
    logging.info(f"device: {report_device(device)}; cueq: {args.enable_cueq}")
    return device


def add_runtime_args(parser):
    parser.add_argument("--device", default="cuda", choices=["cpu", "cuda", "mps", "xpu"])
    parser.add_argument("--default_dtype", default="float64", choices=["float32", "float64"])
    parser.add_argument("--seed", type=int, default=123)
    parser.add_argument("--enable_cueq", action="store_true")
    parser.add_argument("--compile_mode", default=None, choices=[None, "default", "max-autotune-no-cudagraphs"])
    return parser
