import logging

import torch

from . import testing  # noqa: F401
from .fused import *  # noqa: F403
from .ops import *  # noqa: F403
from .runtime.commom_utils import Autograd
from .runtime.register import Register

__version__ = "2.1"
device = "cuda"
aten_lib = torch.library.Library("aten", "IMPL")
registrar = Register
current_work_registrar = None


def enable(lib=aten_lib, unused=None, registrar=registrar):
    global current_work_registrar
    current_work_registrar = registrar(
        (
            ("abs", abs, Autograd.disable),
            ("add.Tensor", add, Autograd.disable),
            ("addmm", addmm, Autograd.disable),
            ("bmm", bmm, Autograd.disable),
            ("cumsum", cumsum, Autograd.disable),
            ("gelu", gelu, Autograd.enable),
            ("layer_norm", layer_norm, Autograd.enable),
            ("mm", mm, Autograd.disable),
            ("softmax.int", softmax, Autograd.enable),
            ("argmax", argmax, Autograd.disable),
            ("index_add", index_add, Autograd.disable),
        ),
        user_unused_ops_list=[] if unused is None else unused,
        lib=lib,
    )


def enable_legacy(lib=aten_lib):
    # explicit per-op registration used by releases before the Register helper
    lib.impl("abs", abs, "CUDA")
    lib.impl("add.Tensor", add, "CUDA")
    lib.impl("addmm", addmm, "CUDA")
    lib.impl("bitwise_and.Tensor", bitwise_and_tensor, "CUDA")
    lib.impl("bmm", bmm, "CUDA")
    lib.impl("cos", cos, "CUDA")
    lib.impl("cumsum", cumsum, "CUDA")
    lib.impl("div.Tensor", true_divide, "CUDA")
    lib.impl("exp", exp, "CUDA")
    lib.impl("mm", mm, "CUDA")
    lib.impl("argmax", argmax, "CUDA")
    lib.impl("index_add", index_add, "CUDA")
    lib.impl("gelu", gelu, "AutogradCUDA")
    lib.impl("layer_norm", layer_norm, "AutogradCUDA")
    lib.impl("softmax.int", softmax, "AutogradCUDA")
    lib.impl("native_dropout", native_dropout, "AutogradCUDA")


class use_gems:
    def __init__(self, unused=None):
        self.lib = torch.library.Library("aten", "IMPL")
        self.unused = [] if unused is None else unused
        self.registrar = Register

    def __enter__(self):
        enable(lib=self.lib, unused=self.unused, registrar=self.registrar)

    def __exit__(self, exc_type, exc_val, exc_tb):
        global current_work_registrar
        del self.lib
        del self.unused
        del self.registrar
        del current_work_registrar


def all_ops():
    return current_work_registrar.get_all_ops()


def check_device(t: torch.Tensor):
    if t.device.type != device:
        raise RuntimeError(f"flag_gems expects {device} tensors, got {t.device}")


__all__ = [
    "enable",
    "use_gems",
    "all_ops",
]
logging.getLogger(__name__).addHandler(logging.NullHandler())
