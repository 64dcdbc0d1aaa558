"""FlagGems: a Triton-based operator library that plugs into PyTorch's ATen dispatcher.

Usage::

    import flag_gems
    flag_gems.enable()            # globally override supported aten ops on CUDA

    with flag_gems.use_gems():    # or only inside a scope
        y = torch.nn.functional.gelu(x)

All kernels are written in Triton and JIT-compiled on first use, so the first call of
every (op, dtype, shape-class) combination is slow. See ``flag_gems.utils.libentry`` for
the in-process launch cache that keeps the steady-state overhead low.
"""
import logging
import os
import warnings

import torch
from packaging import version

from . import testing  # noqa: F401
from .fused import *  # noqa: F403
from .ops import *  # noqa: F403
from .utils.register import Register

__version__ = "2.1.0"

device = "cuda"
vendor_name = "nvidia"

aten_lib = torch.library.Library("aten", "IMPL")

_registrar = None
_logger = logging.getLogger("flag_gems")

# Ops whose backward is implemented by an explicit autograd.Function in flag_gems
# are registered on the Autograd key; everything else goes to the backend key and
# lets the default autograd formula run on top of our forward.
AUTOGRAD = True
NO_AUTOGRAD = False


def _check_environment():
    torch_ver = version.parse(torch.__version__.split("+")[0])
    if torch_ver < version.parse("2.1.0"):
        raise RuntimeError(
            f"flag_gems requires torch>=2.1.0, found {torch.__version__}"
        )
    try:
        import triton
    except ImportError as e:  # pragma: no cover
        raise RuntimeError("flag_gems requires triton to be installed") from e
    if version.parse(triton.__version__) < version.parse("2.2.0"):
        warnings.warn(
            "triton<2.2 is not tested with flag_gems; some ops may fail to compile",
            stacklevel=2,
        )
    if not torch.cuda.is_available():
        warnings.warn(
            "flag_gems: no CUDA device detected, kernels will not be registered",
            stacklevel=2,
        )
        return False
    return True


def dispatch_key(autograd: bool) -> str:
    return "AutogradCUDA" if autograd else "CUDA"


_FULL_CONFIG = (
    ("abs", abs, NO_AUTOGRAD),
    ("add.Tensor", add, NO_AUTOGRAD),
    ("addmm", addmm, NO_AUTOGRAD),
    ("amax", amax, NO_AUTOGRAD),
    ("argmax", argmax, NO_AUTOGRAD),
    ("bitwise_and.Tensor", bitwise_and_tensor, NO_AUTOGRAD),
    ("bitwise_not", bitwise_not, NO_AUTOGRAD),
    ("bmm", bmm, NO_AUTOGRAD),
    ("clamp", clamp, NO_AUTOGRAD),
    ("cos", cos, NO_AUTOGRAD),
    ("cumsum", cumsum, NO_AUTOGRAD),
    ("div.Tensor", true_divide, NO_AUTOGRAD),
    ("div.Tensor_mode", div_mode, NO_AUTOGRAD),
    ("eq.Tensor", eq, NO_AUTOGRAD),
    ("erf", erf, NO_AUTOGRAD),
    ("exp", exp, NO_AUTOGRAD),
    ("gather", gather, NO_AUTOGRAD),
    ("gelu", gelu, AUTOGRAD),
    ("group_norm", group_norm, AUTOGRAD),
    ("index_select", index_select, NO_AUTOGRAD),
    ("layer_norm", layer_norm, AUTOGRAD),
    ("log_softmax.int", log_softmax, AUTOGRAD),
    ("masked_select", masked_select, NO_AUTOGRAD),
    ("max", max, NO_AUTOGRAD),
    ("mean", mean, NO_AUTOGRAD),
    ("mm", mm, NO_AUTOGRAD),
    ("mul.Tensor", mul, NO_AUTOGRAD),
    ("native_dropout", native_dropout, AUTOGRAD),
    ("nonzero", nonzero, NO_AUTOGRAD),
    ("pow.Scalar", pow_scalar, NO_AUTOGRAD),
    ("pow.Tensor_Scalar", pow_tensor_scalar, NO_AUTOGRAD),
    ("reciprocal", reciprocal, NO_AUTOGRAD),
    ("relu", relu, AUTOGRAD),
    ("rsqrt", rsqrt, NO_AUTOGRAD),
    ("rms_norm", rms_norm, NO_AUTOGRAD),
    ("scatter.src", scatter, NO_AUTOGRAD),
    ("sigmoid", sigmoid, AUTOGRAD),
    ("silu", silu, AUTOGRAD),
    ("sin", sin, NO_AUTOGRAD),
    ("softmax.int", softmax, AUTOGRAD),
    ("sub.Tensor", sub, NO_AUTOGRAD),
    ("sum", sum, NO_AUTOGRAD),
    ("sum.dim_IntList", sum_dim, NO_AUTOGRAD),
    ("tanh", tanh, AUTOGRAD),
    ("var_mean.correction", var_mean, NO_AUTOGRAD),
    ("where.self", where_self, NO_AUTOGRAD),
)


def _unused_from_env():
    raw = os.environ.get("GEMS_UNUSED_OPS", "")
    return {name.strip() for name in raw.split(",") if name.strip()}


def enable(lib=aten_lib, unused=None, record=False, path=None):
    """Register every op in ``_FULL_CONFIG`` on the CUDA dispatch keys."""
    global _registrar
    if not _check_environment():
        return
    skip = set(unused or ()) | _unused_from_env()
    for name, fn, autograd in _FULL_CONFIG:
        if name in skip or name.split(".")[0] in skip:
            _logger.debug("skip %s", name)
            continue
        lib.impl(name, fn, dispatch_key(autograd))
    _registrar = Register(lib, skip, record=record, path=path)
    _logger.info("flag_gems enabled on %s (%d ops)", device, len(_FULL_CONFIG) - len(skip))


class use_gems:
    """Context manager that enables flag_gems only inside its ``with`` block."""

    def __init__(self, unused=None, record=False, path=None):
        self.lib = torch.library.Library("aten", "IMPL")
        self.unused = [] if unused is None else unused
        self.record = record
        self.path = path

    def __enter__(self):
        enable(lib=self.lib, unused=self.unused, record=self.record, path=self.path)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        global _registrar
        # Dropping the Library object removes every impl that was registered through it.
        del self.lib
        _registrar = None
        if self.record and self.path is not None:
            _logger.info("flag_gems op log written to %s", self.path)


def all_ops():
    return [name for name, _, _ in _FULL_CONFIG]


def current_work_registrar():
    return _registrar


def device_info():
    """Short human readable description of the current accelerator, used in logs."""
    idx = torch.cuda.current_device()
    name = torch.cuda.get_device_name(idx)
    major, minor = torch.cuda.get_device_capability(idx)
    return f"{vendor_name}:{idx} {name} (sm_{major}{minor})"


__all__ = [
    "enable",
    "use_gems",
    "all_ops",
    "device",
    "vendor_name",
    "device_info",
]
