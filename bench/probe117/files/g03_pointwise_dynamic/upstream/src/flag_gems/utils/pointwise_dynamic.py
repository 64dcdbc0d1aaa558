"""``pointwise_dynamic``: generate N-d pointwise Triton kernels from a scalar function.

Example::

    @pointwise_dynamic(promotion_methods=[(0, "DEFAULT")])
    @triton.jit
    def abs_func(x):
        return tl.abs(x)

    y = abs_func(x)      # works for any rank / stride / broadcast combination

For every distinct (rank, dtype-signature) the generator writes a Python module with a
Triton kernel plus a wrapper that allocates outputs, computes the task partition and
launches the kernel. The module is cached on disk under ``~/.flaggems/code_cache`` and
imported with importlib, so subsequent processes skip codegen entirely.
"""
import importlib.util
import os
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, List, Mapping, Optional, Sequence, Tuple

import torch
import triton
from triton.runtime.jit import JITFunction

from flag_gems.utils.code_cache import code_cache_dir
from flag_gems.utils.code_utils import IndentedBuffer, NameSpace
from flag_gems.utils.shape_utils import (
    all_c_contiguous,
    all_the_same_shape,
    all_the_same_stride,
    broadcast_shapes,
    broadcasted_stride,
    check_tensor_attributes,
    volume,
)
from flag_gems.utils.type_utils import ELEMENTWISE_TYPE_PROMOTION_KIND, type_promotion


# ------------------- codegen config ---------------------------------------------------
def _default_max_grid_size() -> Tuple[int, int, int]:
    # CUDA grid limits: x up to 2**31 - 1, y and z up to 65535
    return (2**31 - 1, 65535, 65535)


def _num_sms() -> int:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return props.multi_processor_count


@dataclass
class CodeGenConfig:
    max_tile_size: int
    max_grid_size: Tuple[int, int, int]
    max_num_warps_per_cta: int
    prefer_block_pointer: bool
    prefer_1d_tile: bool
    # gen_configs: -> configs
    # prune_config: (as jit function, ) cofigs -> configs

    def __post_init__(self):
        if self.prefer_1d_tile:
            self.prefer_block_pointer = False


def get_codegen_config() -> CodeGenConfig:
    # Hopper and newer can use the TMA-backed block pointers efficiently.
    major, _ = torch.cuda.get_device_capability()
    return CodeGenConfig(
        max_tile_size=512,
        max_grid_size=_default_max_grid_size(),
        max_num_warps_per_cta=32,
        prefer_block_pointer=major >= 9,
        prefer_1d_tile=int(os.environ.get("GEMS_POINTWISE_1D_TILE", "0")) == 1,
    )


# ------------------- op description -----------------------------------------------------
class FunctionSchema:
    def __init__(
        self,
        *,
        is_tensor: Optional[List[bool]] = None,
        num_inputs: Optional[int] = None,
        dtypes: Optional[List[Optional[type]]] = None,
        num_outputs: Optional[int] = None,
        promotion_methods=None,
    ):
        if is_tensor is not None:
            self._is_tensor = list(is_tensor)
        elif num_inputs is not None:
            self._is_tensor = [True] * num_inputs
        else:
            raise ValueError("either is_tensor or num_inputs must be given")
        self._dtypes = dtypes or [None] * len(self._is_tensor)
        self._num_outputs = num_outputs or len(promotion_methods)
        self._promotion_methods = self._canonicalize(promotion_methods)

    @staticmethod
    def _canonicalize(methods):
        out = []
        for m in methods:
            *arg_idx, kind = m
            out.append((tuple(arg_idx), ELEMENTWISE_TYPE_PROMOTION_KIND[kind]))
        return out

    def num_inputs(self):
        return len(self._is_tensor)

    def num_input_tensors(self):
        return sum(self._is_tensor)

    def num_non_tensor_args(self):
        return self.num_inputs() - self.num_input_tensors()

    def num_outputs(self):
        return self._num_outputs

    def is_tensor(self, i):
        return self._is_tensor[i]

    def input_type(self, i):
        return self._dtypes[i]

    def output_dtypes(self, args):
        outs = []
        for arg_idx, kind in self._promotion_methods:
            _, res = type_promotion(*[args[i] for i in arg_idx], type_promotion=kind)
            outs.append(res)
        return outs

    def signature(self, outputs_in_arg: bool = False):
        parts = []
        for i, is_t in enumerate(self._is_tensor):
            parts.append("Tensor" if is_t else "Scalar")
        if outputs_in_arg:
            parts += ["Tensor(out)"] * self._num_outputs
        return "(" + ", ".join(parts) + ")"


# ------------------- code generation ------------------------------------------------------
class KernelGenerator:
    def __init__(self, schema: FunctionSchema, scalar_fn: JITFunction, ndim: int, name: str,
                 config: CodeGenConfig):
        self.schema = schema
        self.fn = scalar_fn
        self.ndim = ndim
        self.name = name
        self.config = config
        self.fn_name = scalar_fn.__name__
        self.fn_module = scalar_fn.__module__

    def gen_import_function(self, code: IndentedBuffer):
        code.writeline(f'"""Quoted source of {self.fn_name}:')
        for line in self.fn.src.splitlines():
            code.writeline(f"# {line}")
        code.writeline('"""')
        code.writeline(f"from {self.fn_module} import {self.fn_name} as _scalar_fn")
        code.writeline("_scalar_fn = _scalar_fn.fn if hasattr(_scalar_fn, 'fn') else _scalar_fn")
        code.newline()

    def gen_decorators(self, code: IndentedBuffer):
        code.writeline("@libentry()")
        num_non_tensor = self.schema.num_non_tensor_args()
        if num_non_tensor > 0:
            code.writeline("@triton.jit(do_not_specialize=[")
            with code.indent():
                for i in range(self.schema.num_inputs()):
                    if not self.schema.is_tensor(i):
                        code.writeline(f"'val{i}',")
            code.writeline("])")
        else:
            code.writeline("@triton.jit")

    def gen_signature(self, code: IndentedBuffer):
        params = []
        for i in range(self.schema.num_inputs()):
            params.append(f"in{i}_ptr" if self.schema.is_tensor(i) else f"val{i}")
        for i in range(self.schema.num_outputs()):
            params.append(f"out{i}_ptr")
        for i in range(self.schema.num_inputs()):
            if self.schema.is_tensor(i):
                params += [f"in{i}_stride{d}" for d in range(self.ndim)]
        for i in range(self.schema.num_outputs()):
            params += [f"out{i}_stride{d}" for d in range(self.ndim)]
        params += [f"s{d}" for d in range(self.ndim)]
        params += ["num_tasks", "tiles_per_cta", "tile_size: tl.constexpr",
                   "one_tile_per_cta: tl.constexpr"]
        code.writeline(f"def {self.name}(")
        with code.indent():
            for p in params:
                code.writeline(f"{p},")
        code.writeline("):")

    def gen_body_one_tile_per_cta(self, code: IndentedBuffer):
        code.writeline("pid = tl.program_id(0)")
        code.writeline("tid = pid * tile_size + tl.arange(0, tile_size)")
        code.writeline("mask = tid < num_tasks")
        self._gen_multi_index(code)
        self._gen_loads_compute_stores(code)

    def gen_body_gsl(self, code: IndentedBuffer):
        # grid-stride loop: a fixed number of CTAs (a few per SM) sweep the whole tensor
        code.writeline("pid = tl.program_id(0)")
        code.writeline("num_ctas = tl.num_programs(0)")
        code.writeline("for j in range(0, tiles_per_cta):")
        with code.indent():
            code.writeline("tile_id = pid + j * num_ctas")
            code.writeline("tid = tile_id * tile_size + tl.arange(0, tile_size)")
            code.writeline("mask = tid < num_tasks")
            self._gen_multi_index(code)
            self._gen_loads_compute_stores(code)

    def _gen_multi_index(self, code: IndentedBuffer):
        if self.ndim == 0:
            return
        code.writeline("rem = tid")
        for d in reversed(range(self.ndim)):
            code.writeline(f"i{d} = rem % s{d}")
            if d > 0:
                code.writeline(f"rem = rem // s{d}")

    def _offset_expr(self, prefix: str) -> str:
        if self.ndim == 0:
            return "0"
        return " + ".join(f"i{d} * {prefix}_stride{d}" for d in range(self.ndim))

    def _gen_loads_compute_stores(self, code: IndentedBuffer):
        args = []
        for i in range(self.schema.num_inputs()):
            if self.schema.is_tensor(i):
                code.writeline(
                    f"in{i} = tl.load(in{i}_ptr + {self._offset_expr(f'in{i}')}, mask=mask)"
                )
                args.append(f"in{i}")
            else:
                args.append(f"val{i}")
        outs = ", ".join(f"out{i}" for i in range(self.schema.num_outputs()))
        code.writeline(f"{outs} = _scalar_fn({', '.join(args)})")
        for i in range(self.schema.num_outputs()):
            code.writeline(
                f"tl.store(out{i}_ptr + {self._offset_expr(f'out{i}')}, "
                f"out{i}.to(out{i}_ptr.type.element_ty), mask=mask)"
            )

    def codegen(self, code: IndentedBuffer):
        self.gen_decorators(code)
        self.gen_signature(code)
        with code.indent():
            code.writeline("if one_tile_per_cta:")
            with code.indent():
                self.gen_body_one_tile_per_cta(code)
            code.writeline("else:")
            with code.indent():
                self.gen_body_gsl(code)
        code.newline()


class WrapperGenerator:
    def __init__(self, schema: FunctionSchema, kernel_name: str, ndim: int, name: str,
                 config: CodeGenConfig):
        self.schema = schema
        self.kernel_name = kernel_name
        self.ndim = ndim
        self.name = name
        self.config = config

    def gen_task_partition(self, code: IndentedBuffer):
        code.writeline("# task partition")
        code.writeline("num_tasks = volume(shape)")
        code.writeline(f"tile_size = min({self.config.max_tile_size}, "
                       "triton.next_power_of_2(num_tasks))")
        code.writeline("num_warps = heuristics_for_num_warps(tile_size)")
        code.writeline("num_tiles = triton.cdiv(num_tasks, tile_size)")
        code.writeline(f"num_ctas = min({self.config.max_grid_size[0]}, num_tiles)")
        code.writeline("tiles_per_cta = triton.cdiv(num_tiles, num_ctas)")
        code.writeline("one_tile_per_cta = tiles_per_cta == 1")
        code.writeline("grid = (num_ctas, 1, 1)")

    def gen_kernel_launch(self, code: IndentedBuffer):
        code.writeline("# kernel launch")
        args = []
        for i in range(self.schema.num_inputs()):
            args.append(f"in{i}" if self.schema.is_tensor(i) else f"val{i}")
        args += [f"out{i}" for i in range(self.schema.num_outputs())]
        for i in range(self.schema.num_inputs()):
            if self.schema.is_tensor(i):
                args += [f"in{i}_strides[{d}]" for d in range(self.ndim)]
        for i in range(self.schema.num_outputs()):
            args += [f"out{i}_strides[{d}]" for d in range(self.ndim)]
        args += [f"shape[{d}]" for d in range(self.ndim)]
        code.writeline("with torch.cuda._DeviceGuard(in0.device.index):")
        with code.indent():
            code.writeline(f"{self.kernel_name}[grid](")
            with code.indent():
                for a in args:
                    code.writeline(f"{a},")
                code.writeline("num_tasks, tiles_per_cta=tiles_per_cta,")
                code.writeline("tile_size=tile_size, one_tile_per_cta=one_tile_per_cta,")
                code.writeline("num_warps=num_warps,")
            code.writeline(")")

    def codegen(self, code: IndentedBuffer):
        params = []
        for i in range(self.schema.num_inputs()):
            params.append(f"in{i}" if self.schema.is_tensor(i) else f"val{i}")
        params += [f"out{i}" for i in range(self.schema.num_outputs())]
        code.writeline(f"def {self.name}({', '.join(params)}):")
        with code.indent():
            code.writeline("shape = out0.shape")
            for i in range(self.schema.num_inputs()):
                if self.schema.is_tensor(i):
                    code.writeline(f"in{i}_strides = broadcasted_stride(in{i}.shape, "
                                   f"in{i}.stride(), shape)")
            for i in range(self.schema.num_outputs()):
                code.writeline(f"out{i}_strides = out{i}.stride()")
            self.gen_task_partition(code)
            self.gen_kernel_launch(code)
            outs = ", ".join(f"out{i}" for i in range(self.schema.num_outputs()))
            code.writeline(f"return {outs}")
        code.newline()


def gen_module_header(code: IndentedBuffer):
    code.writeline("import math")
    code.writeline("import torch")
    code.writeline("import triton")
    code.writeline("from triton import language as tl")
    code.newline()
    code.writeline("from flag_gems.utils.libentry import libentry")
    code.writeline("from flag_gems.utils.shape_utils import volume, broadcasted_stride")
    code.writeline("from flag_gems.utils.pointwise_dynamic import heuristics_for_num_warps")
    code.newline()


def heuristics_for_num_warps(tile_size: int) -> int:
    if tile_size < 2048:
        return 4
    elif tile_size < 4096:
        return 8
    else:
        return 16


class PointwiseDynamicFunction:
    """Callable that lazily generates, caches and dispatches per-rank kernels."""

    def __init__(self, op_desc: FunctionSchema, scalar_fn: JITFunction,
                 config: Optional[CodeGenConfig] = None):
        self.fx = op_desc
        self._scalar_fn = scalar_fn
        self._scalar_fn_cache_key = scalar_fn.cache_key
        self.pid = os.getpid()
        self.config = config or get_codegen_config()
        self.overloads: Mapping[str, Callable] = {}

    def __call__(self, *args, **kwargs):
        out_tensors = [kwargs.pop(f"out{i}") for i in range(self.fx.num_outputs())
                       if f"out{i}" in kwargs]
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        check_tensor_attributes(tensors, ("cuda", "cpu"))
        shape = broadcast_shapes([t.shape for t in tensors])
        if not out_tensors:
            device = tensors[0].device
            dtypes = self.fx.output_dtypes(args)
            out_tensors = [torch.empty(shape, dtype=dt, device=device) for dt in dtypes]
        ndim = len(shape)
        if all_the_same_shape(tensors + out_tensors) and (
            all_c_contiguous(tensors + out_tensors)
            or all_the_same_stride(tensors + out_tensors)
        ):
            ndim = 1 if volume(shape) > 0 else 0
            args = [a.reshape(-1) if isinstance(a, torch.Tensor) else a for a in args]
            out_tensors = [o.view(-1) for o in out_tensors]
            outs_view = out_tensors
        else:
            outs_view = out_tensors
        overload = self.instantiate(ndim)
        overload(*args, *outs_view)
        return out_tensors[0] if len(out_tensors) == 1 else tuple(out_tensors)

    def instantiate(self, ndim: int):
        key = f"{ndim}_{self.fx.signature()}"
        if key in self.overloads:
            return self.overloads[key]

        code = IndentedBuffer()
        gen_module_header(code)
        kernel_name = f"_{self._scalar_fn.__name__}_kernel_rank_{ndim}"
        wrapper_name = f"_{self._scalar_fn.__name__}_wrapper_rank_{ndim}"
        KernelGenerator(self.fx, self._scalar_fn, ndim, kernel_name, self.config).gen_import_function(code)
        KernelGenerator(self.fx, self._scalar_fn, ndim, kernel_name, self.config).codegen(code)
        WrapperGenerator(self.fx, kernel_name, ndim, wrapper_name, self.config).codegen(code)

        text = code.getvalue()
        digest = hashlib.sha1(
            (text + self._scalar_fn_cache_key).encode("utf-8")
        ).hexdigest()[:16]
        file_name = f"pointwise_{self._scalar_fn.__name__}_rank_{ndim}_{digest}_pid_{self.pid}.py"
        path = Path(code_cache_dir()) / file_name
        if not path.exists():
            path.write_text(text)

        spec = importlib.util.spec_from_file_location(f"_gen_module_{digest}", str(path))
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        overload = getattr(m, wrapper_name)
        self.overloads[key] = overload
        return overload


def pointwise_dynamic(
    f: Optional[JITFunction] = None,
    *,
    num_inputs: Optional[int] = None,
    is_tensor: Optional[List[bool]] = None,
    dtypes: Optional[List[Optional[type]]] = None,
    num_outputs: Optional[int] = None,
    promotion_methods: Optional[Sequence[Tuple]] = None,
    config: Optional[CodeGenConfig] = None,
):
    def decorator(fn):
        nonlocal num_inputs
        if (num_inputs is None) and (is_tensor is None) and (dtypes is None):
            num_inputs = len(fn.arg_names)
        op_desc = FunctionSchema(
            num_inputs=num_inputs,
            is_tensor=is_tensor,
            dtypes=dtypes,
            num_outputs=num_outputs,
            promotion_methods=promotion_methods,
        )
        return PointwiseDynamicFunction(op_desc, fn, config)

    if f is not None:
        return decorator(f)
    return decorator


def grid_for_persistent(num_tiles: int, ctas_per_sm: int = 4) -> int:
    """Persistent-style launch: never launch more CTAs than the GPU can keep resident."""
    return min(num_tiles, _num_sms() * ctas_per_sm)


__all__: Iterable[str] = ["pointwise_dynamic", "CodeGenConfig", "FunctionSchema"]
