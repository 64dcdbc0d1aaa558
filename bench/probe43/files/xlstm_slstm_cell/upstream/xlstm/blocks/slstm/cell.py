# Copyright (c) NXAI GmbH and its affiliates 2024
# Korbinian Poeppel
import logging
import os
from dataclasses import dataclass, field
from math import sqrt
from typing import Literal, Optional, Sequence, Union

import torch
from torch import nn
from torch.autograd.function import once_differentiable

from ...components.init import bias_linspace_init_
from ...components.util import conditional_decorator, round_to_multiple, ParameterProxy
from .src.cuda_init import load as slstm_cuda_load
from .src.vanilla import (
    slstm_forward_pointwise as slstm_forward_pointwise_vanilla,
    slstm_pointwise_function_registry,
)

LOGGER = logging.getLogger(__name__)

DTYPE_DICT = {
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "float32": torch.float32,
}
DTYPES = Literal["bfloat16", "float16", "float32"]

curdir = os.path.dirname(__file__)

rnn_function_registry = {
    # standard variants, all connect
    "slstm": {
        "states": 4,
    },
    "lstm": {
        "states": 2,
    },
}

_python_dtype_to_cuda_dtype = {
    "float32": "float",
    "float": "float",
    "float16": "__half",
    "bfloat16": "__nv_bfloat16",
}


@dataclass
class sLSTMCellConfig:
    hidden_size: int = -1
    num_heads: int = 4  # this must divide the hidden size, is not yet supported by all versions in this directory
    num_states: int = 4  # this is for the sLSTM, a standard LSTM  has 2
    backend: Literal["vanilla", "cuda"] = "cuda"
    # the type of function a cell computes
    function: str = "slstm"
    bias_init: Literal["powerlaw_blockdependent", "small_init", "standard"] = "powerlaw_blockdependent"
    recurrent_weight_init: Literal["zeros", "standard"] = "zeros"

    _block_idx: int = 0  # index in the block sequence for a residual stacked model, needed for forget gate init
    _num_blocks: int = 1  # how many blocks there are in the residually stacked model, needed for forget gate init

    num_gates: int = 4
    # this option cuts of the gradient for recurrent connection, i.e. no exploding gradient if False
    gradient_recurrent_cut: bool = False
    # this option clips the gradient values for recurrent connections at dy
    gradient_recurrent_clipval: Optional[float] = None
    # this option clips the y value
    forward_clipval: Optional[float] = None

    # this can be ignored internally, but may be used to optimize kernels
    batch_size: int = 8

    input_shape: Literal["BSGNH", "SBGNH"] = "BSGNH"
    internal_input_shape: Literal["SBNGH", "SBGNH", "SBNHG"] = "SBNGH"
    output_shape: Literal["BNSH", "SBH", "BSH", "SBNH"] = "BNSH"

    constants: dict = field(default_factory=dict)

    dtype: DTYPES = "bfloat16"
    dtype_b: Optional[DTYPES] = "float32"  # biases
    dtype_r: Optional[DTYPES] = None  # recurrent matrix
    dtype_w: Optional[DTYPES] = None  # inputs / w matrix
    dtype_g: Optional[DTYPES] = None  # gates
    dtype_s: Optional[DTYPES] = None  # states
    dtype_a: Optional[DTYPES] = None  # internal accumulation

    # mixed precision for the CUDA kernel (autocast wrapper around the custom Function)
    enable_automatic_mixed_precision: bool = True
    initial_val: Union[float, Sequence[float]] = 0.0

    @property
    def head_dim(self):
        return self.hidden_size // self.num_heads

    @property
    def input_dim(self):
        return 4 * self.hidden_size

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPE_DICT[self.dtype]

    @property
    def defines(self):
        return (
            [
                f"-DSLSTM_HIDDEN_SIZE={self.hidden_size}",
                f"-DSLSTM_BATCH_SIZE={self.batch_size}",
                f"-DSLSTM_NUM_HEADS={self.num_heads}",
                f"-DSLSTM_NUM_STATES={self.num_states}",
                f"-DSLSTM_DTYPE_B={_python_dtype_to_cuda_dtype[self.dtype_b or self.dtype]}",
                f"-DSLSTM_DTYPE_R={_python_dtype_to_cuda_dtype[self.dtype_r or self.dtype]}",
                f"-DSLSTM_DTYPE_W={_python_dtype_to_cuda_dtype[self.dtype_w or self.dtype]}",
                f"-DSLSTM_DTYPE_G={_python_dtype_to_cuda_dtype[self.dtype_g or self.dtype]}",
                f"-DSLSTM_DTYPE_S={_python_dtype_to_cuda_dtype[self.dtype_s or self.dtype]}",
                f"-DSLSTM_DTYPE_A={_python_dtype_to_cuda_dtype[self.dtype_a or 'float32']}",
                f"-DSLSTM_NUM_GATES={4}",
                f"-DSLSTM_SIMPLE_AGG={'true'}",
            ]
            + (
                [f"-DSLSTM_GRADIENT_RECURRENT_CLIPVAL_VALID=true", f"-DSLSTM_GRADIENT_RECURRENT_CLIPVAL={self.gradient_recurrent_clipval}"]
                if self.gradient_recurrent_clipval is not None
                else [f"-DSLSTM_GRADIENT_RECURRENT_CLIPVAL_VALID=false", f"-DSLSTM_GRADIENT_RECURRENT_CLIPVAL=0.0"]
            )
            + (
                [f"-DSLSTM_FORWARD_CLIPVAL_VALID=true", f"-DSLSTM_FORWARD_CLIPVAL={self.gradient_recurrent_clipval}"]
                if self.gradient_recurrent_clipval is not None
                else [f"-DSLSTM_FORWARD_CLIPVAL_VALID=false", f"-DSLSTM_FORWARD_CLIPVAL=0.0"]
            )
        )


class sLSTMCellCUDA:
    mod = {}

    @classmethod
    def instance(cls, config: sLSTMCellConfig):
        if repr(config) not in cls.mod:
            cls.mod[repr(config)] = slstm_cuda_load(
                name=config.function,
                sources=[
                    f"{curdir}/src/cuda/slstm.cc",
                    f"{curdir}/src/cuda/slstm_forward.cu",
                    f"{curdir}/src/cuda/slstm_backward.cu",
                    f"{curdir}/src/cuda/slstm_backward_cut.cu",
                    f"{curdir}/src/cuda/slstm_pointwise.cu",
                    f"{curdir}/src/util/blas.cu",
                    f"{curdir}/src/util/cuda_error.cu",
                ],
                extra_cflags=[f"-D{const}={constval}" for const, constval in config.constants.items()] + config.defines,
            )
        return cls.mod[repr(config)]


def sLSTMCellFuncGenerator(training, config: sLSTMCellConfig):
    slstm_cuda = sLSTMCellCUDA.instance(config=config)
    slstm_mod = slstm_cuda.sLSTMFunc(training, config.batch_size, config.hidden_size, config.num_heads)

    class sLSTMFunction(torch.autograd.Function):
        @staticmethod
        @conditional_decorator(config.enable_automatic_mixed_precision, torch.cuda.amp.custom_fwd)
        def forward(ctx, training, *inputs):
            states, cache_g_r, cache_g_i = slstm_mod.forward(training, *inputs)
            ctx.save_for_backward(*states[1:], cache_g_r, cache_g_i, inputs[2], inputs[4])
            ctx.training = training
            return states

        @staticmethod
        @once_differentiable
        @conditional_decorator(config.enable_automatic_mixed_precision, torch.cuda.amp.custom_bwd)
        def backward(ctx, grad_s):
            (*states, cache_g_r, cache_g_i, R, b) = ctx.saved_tensors
            grad_input, grad_s0, grad_R, grad_b = slstm_mod.backward(grad_s, states, cache_g_r, cache_g_i, R, b)
            return (None, grad_input, grad_s0, grad_R, grad_b)

    return sLSTMFunction


class sLSTMCellBase(nn.Module):
    config_class = sLSTMCellConfig

    def __init__(self, config: sLSTMCellConfig):
        super().__init__()
        self.config = config
        LOGGER.debug(f"Init module with config: {config}")
        head_dim = config.hidden_size // config.num_heads
        self._recurrent_kernel_ = nn.Parameter(
            torch.empty(config.num_heads, head_dim, config.num_gates, head_dim, dtype=self.config.torch_dtype)
        )
        self.recurrent_kernel = ParameterProxy(self, "recurrent_kernel", self._recurrent_kernel_int2ext, self._recurrent_kernel_ext2int)
        self._bias_ = nn.Parameter(torch.empty(config.num_heads, config.num_gates, head_dim, dtype=self.config.torch_dtype))
        self.bias = ParameterProxy(self, "bias", self._bias_int2ext, self._bias_ext2int)
        self.reset_parameters()
        if self.config.hidden_size % self.config.num_heads != 0:
            raise ValueError(f"Hidden Size {self.config.hidden_size} must be divisible by head num {self.config.num_heads}")

    def _recurrent_kernel_int2ext(self, recurrent_kernel_int):
        return recurrent_kernel_int.reshape(self.config.num_heads, self.config.head_dim, self.config.num_gates, self.config.head_dim)

    def _recurrent_kernel_ext2int(self, recurrent_kernel_ext):
        return recurrent_kernel_ext.reshape(self.config.num_heads, self.config.head_dim, self.config.num_gates * self.config.head_dim)

    def _bias_int2ext(self, bias_int):
        return bias_int.reshape(self.config.num_heads, self.config.num_gates, self.config.head_dim)

    def _bias_ext2int(self, bias_ext):
        return bias_ext.reshape(self.config.num_heads * self.config.num_gates * self.config.head_dim)

    def reset_parameters(self):
        for h in range(self.config.num_heads):
            for i, gate in enumerate(["i", "f", "z", "o"]):
                if self.config.recurrent_weight_init == "zeros":
                    self.recurrent_kernel[h, :, i, :] = nn.init.zeros_(self.recurrent_kernel[h, :, i, :])
                else:
                    self.recurrent_kernel[h, :, i, :] = nn.init.uniform_(
                        self.recurrent_kernel[h, :, i, :], -1.0 / sqrt(self.config.hidden_size), 1.0 / sqrt(self.config.hidden_size)
                    )
        for h in range(self.config.num_heads):
            for i, gate in enumerate(["i", "f", "z", "o"]):
                if self.config.bias_init == "powerlaw_blockdependent" and gate == "f":
                    ratio_0_to_1 = self.config._block_idx / (self.config._num_blocks - 1) if self.config._num_blocks > 1 else 0.0
                    init_values = -(-5.0 + 12.0 * (torch.arange(self.config.head_dim) / (self.config.head_dim - 1)) ** (0.3 + 1.3 * ratio_0_to_1))
                    with torch.no_grad():
                        self.bias[h, i, :] = init_values
                else:
                    self.bias[h, i] = nn.init.zeros_(self.bias[h, i])


class sLSTMCell_vanilla(sLSTMCellBase):
    def __init__(self, config: sLSTMCellConfig, skip_backend_init: bool = False):
        super().__init__(config)
        self.pointwise = slstm_pointwise_function_registry[self.config.function]

    def _impl_step(self, training, input, state, recurrent_kernel, bias):
        return slstm_forward_pointwise_vanilla(input, state, recurrent_kernel, bias, self.pointwise, self.config.constants)


class sLSTMCell_cuda(sLSTMCellBase):
    def __init__(self, config: sLSTMCellConfig, skip_backend_init: bool = False):
        super().__init__(config)
        if not skip_backend_init:
            self.func = sLSTMCellFuncGenerator(self.training, config)

    def _impl(self, training, input, state, recurrent_kernel, bias):
        return self.func.apply(training, input.contiguous(), state.contiguous(), recurrent_kernel.contiguous(), bias.contiguous())


class sLSTMCell(nn.Module):
    config_class = sLSTMCellConfig

    def __new__(cls, config: sLSTMCellConfig, skip_backend_init: bool = False):
        if config.backend == "cuda":
            return sLSTMCell_cuda(config, skip_backend_init=skip_backend_init)
        elif config.backend == "vanilla":
            return sLSTMCell_vanilla(config)
        else:
            raise RuntimeError(f'sLSTMCell unknown backend {config.backend}, choose from ["cuda", "vanilla"]')
