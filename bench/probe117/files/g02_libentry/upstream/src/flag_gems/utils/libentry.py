"""Launch-overhead reduction for Triton kernels.

``triton.JITFunction.run`` re-derives the specialization key, looks up the compiled
binary and builds the launcher every call.  For the small pointwise kernels that make
up most of flag_gems that bookkeeping can cost more than the kernel itself, so
``LibEntry`` keeps a per-device cache keyed on the argument signature and calls the
compiled kernel directly.

``LibTuner`` is a drop-in replacement for ``triton.autotune`` that persists the best
config for every key in a small sqlite database so that the autotuning cost is only
paid once per machine.
"""
import functools
import inspect
import logging
import os
import sqlite3
import threading
import weakref
from pathlib import Path
from typing import Dict, Optional

import torch
import triton

logger = logging.getLogger(__name__)

DEVICE_COUNT = torch.cuda.device_count()
major_version = int(triton.__version__.split(".")[0])

_CACHE_ROOT = Path(
    os.environ.get("FLAGGEMS_CACHE_DIR", Path.home() / ".flaggems")
).expanduser()


def _gpu_name_for_cache():
    # The tuned configs are only valid for the exact GPU model they were produced on.
    name = torch.cuda.get_device_name(torch.cuda.current_device())
    return name.replace(" ", "_").replace("/", "_")


@functools.lru_cache(maxsize=None)
def config_cache_path() -> Path:
    _CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    return _CACHE_ROOT / f"tune_{_gpu_name_for_cache()}_triton{triton.__version__}.db"


class LibCache:
    """Tiny sqlite-backed key/value store for autotune results, one table per kernel."""

    _lock = threading.Lock()

    def __init__(self, path: Optional[Path] = None):
        self.path = path or config_cache_path()
        self._conn = None

    @property
    def conn(self):
        if self._conn is None:
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False)
        return self._conn

    def load(self, table: str) -> Dict[str, str]:
        with self._lock:
            cur = self.conn.cursor()
            cur.execute(
                f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, config TEXT)"
            )
            return dict(cur.execute(f"SELECT key, config FROM {table}").fetchall())

    def store(self, table: str, key: str, config: str):
        with self._lock:
            self.conn.execute(
                f"INSERT OR REPLACE INTO {table} (key, config) VALUES (?, ?)",
                (key, config),
            )
            self.conn.commit()


libcache = LibCache()


def _config_to_str(cfg: triton.Config) -> str:
    kw = ",".join(f"{k}={v}" for k, v in sorted(cfg.kwargs.items()))
    return f"{kw};num_warps={cfg.num_warps};num_stages={cfg.num_stages}"


def _str_to_config(s: str) -> triton.Config:
    kw_part, warps_part, stages_part = s.split(";")
    kwargs = {}
    for item in kw_part.split(","):
        if item:
            k, v = item.split("=")
            kwargs[k] = int(v)
    num_warps = int(warps_part.split("=")[1])
    num_stages = int(stages_part.split("=")[1])
    return triton.Config(kwargs, num_warps=num_warps, num_stages=num_stages)


class LibTuner(triton.runtime.Autotuner):
    """Autotuner that remembers its decisions across processes."""

    def __init__(
        self,
        fn,
        arg_names,
        configs,
        key,
        reset_to_zero,
        restore_value,
        pre_hook=None,
        post_hook=None,
        prune_configs_by=None,
        warmup=25,
        rep=100,
        use_cuda_graph=False,
    ):
        super().__init__(
            fn,
            arg_names,
            configs,
            key,
            reset_to_zero,
            restore_value,
            pre_hook=pre_hook,
            post_hook=post_hook,
            prune_configs_by=prune_configs_by,
            warmup=warmup,
            rep=rep,
            use_cuda_graph=use_cuda_graph,
        )
        self.table_name = f"{fn.__name__}"
        persisted = libcache.load(self.table_name)
        for k, v in persisted.items():
            self.cache[eval(k)] = _str_to_config(v)  # noqa: S307 - keys are tuples we wrote
        self._persisted_keys = set(persisted)

    def run(self, *args, **kwargs):
        ret = super().run(*args, **kwargs)
        for key, cfg in self.cache.items():
            skey = repr(key)
            if skey not in self._persisted_keys:
                libcache.store(self.table_name, skey, _config_to_str(cfg))
                self._persisted_keys.add(skey)
        return ret


def libtuner(
    configs,
    key,
    prune_configs_by=None,
    reset_to_zero=None,
    restore_value=None,
    pre_hook=None,
    post_hook=None,
    warmup=25,
    rep=100,
    use_cuda_graph=True,
):
    """Same signature as ``triton.autotune``; CUDA graphs are used for timing by default
    because the kernels we tune are tiny and launch overhead dominates otherwise."""

    def decorator(fn):
        return LibTuner(
            fn,
            fn.arg_names,
            configs,
            key,
            reset_to_zero,
            restore_value,
            pre_hook=pre_hook,
            post_hook=post_hook,
            prune_configs_by=prune_configs_by,
            warmup=warmup,
            rep=rep,
            use_cuda_graph=use_cuda_graph,
        )

    return decorator


class LibEntry(triton.KernelInterface):
    def __init__(self, fn):
        self.fn = fn
        self.arg_names = fn.arg_names
        self.divisibility = 16
        self.kernel_cache = tuple(dict() for _ in range(DEVICE_COUNT))

        while not isinstance(fn, triton.runtime.JITFunction):
            fn = fn.fn
        self.jit_function: triton.runtime.JITFunction = fn
        self.specialize_indices = [
            p.num
            for p in self.jit_function.params
            if not p.is_constexpr and not p.do_not_specialize
        ]
        self.do_not_specialize_indices = [
            p.num
            for p in self.jit_function.params
            if not p.is_constexpr and p.do_not_specialize
        ]
        weakref.finalize(self, self.kernel_cache.__class__)  # keep flake8 quiet about unused

    def key(self, spec_args, dns_args, const_args):
        spec_key = [
            (arg.dtype, arg.data_ptr() % self.divisibility == 0)
            if hasattr(arg, "data_ptr")
            else (type(arg), arg)
            for arg in spec_args
        ]
        dns_key = [
            arg.dtype
            if hasattr(arg, "data_ptr")
            else type(arg)
            if not isinstance(arg, int)
            else "i32"
            if -(2**31) <= arg and arg <= 2**31 - 1
            else "u64"
            if 2**63 <= arg and arg <= 2**64 - 1
            else "i64"
            for arg in dns_args
        ]
        # const args passed by position
        return tuple(spec_key + dns_key + const_args)

    def run(self, *args, **kwargs):
        grid = kwargs["grid"]

        # collect all the arguments
        spec_args = []  # specialize arguments
        dns_args = []  # do not specialize arguments
        const_args = []  # constexpr arguments
        k_args = []  # kernel arguments
        for i, arg in enumerate(args):
            if i in self.specialize_indices:
                k_args.append(arg)
                spec_args.append(arg)
            elif i in self.do_not_specialize_indices:
                k_args.append(arg)
                dns_args.append(arg)
            else:
                const_args.append(arg)
        for p in self.jit_function.params[len(args):]:
            if p.name in kwargs:
                val = kwargs[p.name]
            elif p.default is inspect._empty:
                continue
            else:
                val = p.default

            if p.is_constexpr:
                const_args.append(val)
            elif p.do_not_specialize:
                dns_args.append(val)
                k_args.append(val)
            else:
                spec_args.append(val)
                k_args.append(val)

        entry_key = self.key(spec_args, dns_args, const_args)
        device = torch.cuda.current_device()
        cache = self.kernel_cache[device]
        if entry_key not in cache:
            # compile the kernel also completes the related computations
            kernel = self.fn.run(*args, **kwargs)
            fn = self.fn
            # collect constexpr arguments for grid computation
            constexprs = {}
            while not isinstance(fn, triton.runtime.JITFunction):
                if isinstance(fn, triton.runtime.Autotuner):
                    config = fn.best_config
                    constexprs["num_warps"] = config.num_warps
                    constexprs["num_stages"] = config.num_stages
                    constexprs["num_ctas"] = config.num_ctas
                    constexprs = {**constexprs, **config.kwargs}
                elif isinstance(fn, triton.runtime.Heuristics):
                    for v, heur in fn.values.items():
                        constexprs[v] = heur(
                            {**dict(zip(fn.arg_names, args)), **kwargs, **constexprs}
                        )
                else:
                    raise RuntimeError("Invalid Runtime Function")
                fn = fn.fn
            for p in self.jit_function.params:
                if p.is_constexpr and p.name not in constexprs:
                    constexprs[p.name] = p.default
            cache[entry_key] = (kernel, constexprs)
            return kernel, constexprs

        kernel, constexprs = cache[entry_key]

        if callable(grid):
            # collect all arguments to the grid fn，ie:
            # 1. args,
            # 2. kwargs,
            # 3. all all other captured arguments in CompiledKernel from Autotunner & Heuristics
            # when kwargs & captured args conflict, captured args have higher priority
            meta = {**dict(zip(self.arg_names, args)), **kwargs, **constexprs}
            grid = grid(meta)
        grid = grid + (1, 1)

        kernel[grid[0:3]](*k_args)
        return kernel, constexprs


def libentry():
    """Decorator for triton library entries."""

    def decorator(fn):
        return LibEntry(fn)

    return decorator


def get_current_stream_handle(device: Optional[int] = None) -> int:
    """Raw stream handle, used by the C++ launcher in ``flag_gems._C`` when it is built."""
    dev = torch.cuda.current_device() if device is None else device
    return torch.cuda.current_stream(dev).cuda_stream
