"""NVTX helpers used by the training and benchmark scripts.

Ranges show up as named spans in Nsight Systems. They are no-ops unless profiling was switched on
with `configure_nvtx_profiling(True)` (the launch scripts do this when --nvtx is passed).
"""
import functools
import inspect
import logging
from contextlib import contextmanager
from typing import Callable, List, Optional

import torch

try:
    import nvtx  # NVIDIA's standalone nvtx package: colored ranges and domains

    HAVE_NVTX = True
except ImportError:
    HAVE_NVTX = False

logger = logging.getLogger(__name__)

_nvtx_enabled: bool = False
_nvtx_range_messages: List[str] = []
_DOMAIN = "bench"
_COLORS = ["green", "blue", "yellow", "purple", "rapids", "cyan", "red", "white", "darkgreen", "orange"]


def configure_nvtx_profiling(enabled: bool) -> None:
    """Turn NVTX ranges on or off for the whole process."""
    global _nvtx_enabled
    _nvtx_enabled = enabled
    logger.info("NVTX ranges %s", "enabled" if enabled else "disabled")


def _nvtx_range_get_func_path() -> str:
    """Dotted path of the caller's caller, used as the default range name."""
    caller_func = inspect.stack()[2].function
    module = inspect.getmodule(inspect.stack()[2][0])
    return f"{module.__name__}.{caller_func}" if module else caller_func


def nvtx_range_push(msg: Optional[str] = None, suffix: Optional[str] = None) -> None:
    """Push an NVTX range onto the stack. If msg is None, the caller's path is used."""
    if not _nvtx_enabled:
        return
    if msg is None:
        msg = _nvtx_range_get_func_path()
    if suffix is not None:
        msg = f"{msg}.{suffix}"
    _nvtx_range_messages.append(msg)
    torch.cuda.nvtx.range_push(msg)


def nvtx_range_pop(msg: Optional[str] = None, suffix: Optional[str] = None) -> None:
    """Pop the innermost NVTX range; checks that it matches `msg` when given."""
    if not _nvtx_enabled:
        return
    if msg is None:
        msg = _nvtx_range_get_func_path()
    if suffix is not None:
        msg = f"{msg}.{suffix}"
    last = _nvtx_range_messages.pop()
    assert last == msg, f"NVTX range mismatch: pushed {last!r}, popped {msg!r}"
    torch.cuda.nvtx.range_pop()


def nvtx_mark(msg: str) -> None:
    """Instantaneous marker (e.g. 'optimizer.step done')."""
    if _nvtx_enabled:
        torch.cuda.nvtx.mark(msg)


@contextmanager
def nvtx_range(msg: str):
    """`with nvtx_range("forward"):` -- always balanced, even on exceptions."""
    if not _nvtx_enabled:
        yield
        return
    torch.cuda.nvtx.range_push(msg)  # context-manager form
    try:
        yield
    finally:
        torch.cuda.nvtx.range_pop()  # context-manager form


def nvtx_decorator(message: Optional[str] = None, color: Optional[str] = None) -> Callable:
    """Decorate a function so each call is an NVTX range in the 'bench' domain."""

    def decorator(func):
        name = message or func.__qualname__
        if HAVE_NVTX:
            return nvtx.annotate(message=name, color=color or _COLORS[hash(name) % len(_COLORS)],
                                 domain=_DOMAIN)(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with nvtx_range(name):
                return func(*args, **kwargs)

        return wrapper

    return decorator


class ModuleRangeHooks:
    """Registers forward pre/post hooks so every submodule forward becomes a named range.

    Usage:
        hooks = ModuleRangeHooks(model, depth=2)
        ...
        hooks.remove()
    """

    def __init__(self, model: torch.nn.Module, depth: int = 2):
        self.handles = []
        for name, module in model.named_modules():
            if not name or name.count(".") >= depth:
                continue
            self.handles.append(module.register_forward_pre_hook(self._pre(name)))
            self.handles.append(module.register_forward_hook(self._post(name)))

    @staticmethod
    def _pre(name):
        def hook(module, inputs):
            nvtx_range_push(f"fwd.{name}")
        return hook

    @staticmethod
    def _post(name):
        def hook(module, inputs, output):
            nvtx_range_pop(f"fwd.{name}")
        return hook

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles.clear()
