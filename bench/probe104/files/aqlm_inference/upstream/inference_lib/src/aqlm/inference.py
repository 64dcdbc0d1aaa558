""" Core mathematics for Additive Quantization (AQ): inference-time layer and kernel dispatch """
from typing import Callable, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from aqlm.utils import _dequantize_weight, get_int_dtype, unpack_int_data


def _cuda_kernels_supported(device: torch.device) -> bool:
    # the fused 1x16 / 2x8 kernels use ldmatrix + mma.sync and need Turing or newer
    major, minor = torch.cuda.get_device_capability(device)
    return (major, minor) >= (7, 5)


def get_forward_pass_kernel(
    codebooks: torch.Tensor,
    optimize_for_training: bool,
) -> Callable[[torch.Tensor, torch.IntTensor, torch.Tensor, torch.Tensor, Optional[torch.Tensor]], torch.Tensor]:
    num_codebooks, codebook_size, out_group_size, in_group_size = codebooks.shape

    match (optimize_for_training, codebooks.device.type, num_codebooks, codebook_size, out_group_size, in_group_size):
        case (False, "cuda", 1, 65536, 1, 8) if _cuda_kernels_supported(codebooks.device):
            from .inference_kernels.cuda_kernel import CUDA_FOLDER

            assert (
                codebooks.dtype == torch.float16
            ), f"please load the model with `torch_dtype=torch.float16`, as {codebooks.dtype} is not supported on GPU yet"
            return torch.ops.aqlm.code1x16_matmat
        case (False, "cuda", 2, 256, 1, 8) if _cuda_kernels_supported(codebooks.device):
            from .inference_kernels.cuda_kernel import CUDA_FOLDER

            assert (
                codebooks.dtype == torch.float16
            ), f"please load the model with `torch_dtype=torch.float16`, as {codebooks.dtype} is not supported on GPU yet"
            return torch.ops.aqlm.code2x8_matmat
        case (False, "cuda", _, _, 1, _):
            from .inference_kernels.triton_kernel import triton_matmul

            return triton_matmul
        case (False, "cpu", _, 256, 1, _):
            from .inference_kernels.numba_kernel import numba_gemm_lut

            return numba_gemm_lut
        case _:
            from .inference_kernels.dequantization import dequantize_gemm

            return dequantize_gemm


def get_backward_pass_kernel(
    codebooks: torch.Tensor,
    optimize_for_training: bool,
) -> torch.Tensor:
    forward_pass_kernel = get_forward_pass_kernel(
        codebooks=codebooks.transpose(2, 3), optimize_for_training=optimize_for_training
    )

    def _backward_pass_kernel(
        grad_output: torch.Tensor,  #  [..., in_features]
        codes: torch.IntTensor,  #  [num_out_groups, num_in_groups, num_codebooks]
        codebooks: torch.Tensor,  #  [num_codebooks, codebook_size, out_group_size, in_group_size]
        scales: torch.Tensor,  #  [num_out_groups, 1, 1, 1]
        bias: Optional[torch.Tensor],
    ) -> torch.Tensor:
        return forward_pass_kernel(
            grad_output.contiguous(),
            codes.transpose(0, 1).contiguous(),
            codebooks.transpose(2, 3).contiguous(),
            torch.ones_like(scales.transpose(0, 1), dtype=grad_output.dtype, device=grad_output.device),
            None,
        ) * scales.view(1, -1)

    return _backward_pass_kernel


def _get_autograd_matmul_op(forward_pass_kernel, backward_pass_kernel):
    class _QuantizedMatmul(torch.autograd.Function):
        @staticmethod
        def forward(
            ctx: torch.Any,
            input: torch.Tensor,
            codes: torch.IntTensor,
            codebooks: torch.Tensor,
            scales: torch.Tensor,
            bias: Optional[torch.Tensor],
        ) -> torch.Tensor:
            ctx.save_for_backward(
                input,
                codes,
                codebooks,
                scales,
                bias,
            )
            return forward_pass_kernel(
                input,
                codes,
                codebooks,
                scales,
                bias,
            )

        @staticmethod
        def backward(ctx, grad_output: torch.Tensor):
            input, codes, codebooks, scales, bias = ctx.saved_tensors
            return (
                backward_pass_kernel(
                    grad_output,
                    codes,
                    codebooks,
                    scales,
                    bias,
                ),
                None,
                None,
                None,
                None,
            )

    return _QuantizedMatmul.apply


class QuantizedLinear(nn.Module):
    def __init__(
        self,
        in_features: int,
        out_features: int,
        in_group_size: int,
        out_group_size: int,
        num_codebooks: int,
        nbits_per_codebook: int,
        bias=True,
        device=None,
        dtype=None,
    ):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features

        assert self.in_features % in_group_size == 0
        assert self.out_features % out_group_size == 0
        num_out_groups = out_features // out_group_size
        num_in_groups = in_features // in_group_size
        self.out_group_size, self.in_group_size = out_group_size, in_group_size
        self.num_codebooks = num_codebooks
        self.nbits_per_codebook = nbits_per_codebook
        self.codebook_size = 2**nbits_per_codebook

        # CODES & CODEBOOKS
        self.codebooks = nn.Parameter(
            torch.empty((num_codebooks, self.codebook_size, out_group_size, in_group_size), **factory_kwargs) * 2 - 1,
            requires_grad=True,
        )  #  [num_codebooks, codebook_size, out_group_size, in_group_size]
        self.codes = nn.Parameter(
            torch.empty(
                (num_out_groups, num_in_groups, num_codebooks),
                device=device,
                dtype=get_int_dtype(nbits_per_codebook),
            ),
            requires_grad=False,
        )  #  [num_out_groups, num_in_groups, num_codebooks]

        # SCALES
        self.scales = nn.Parameter(
            torch.empty((num_out_groups, 1, 1, 1), **factory_kwargs), requires_grad=True
        )  #  [num_out_groups, 1, 1, 1]

        # BIAS
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features, **factory_kwargs))
        else:
            self.register_parameter("bias", None)

        # MATMUL_OP
        self.optimize_for_training: bool = False
        self.matmul_op = None

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if self.matmul_op is None:
            self.prepare_matmul_op(input)

        if self.optimize_for_training:
            return self.matmul_op(input, self.codes, self.codebooks, self.scales, self.bias)
        else:
            return self.matmul_op(input, self.codes, self.codebooks, self.scales, self.bias)

    def prepare_matmul_op(self, input: torch.Tensor):
        if (
            not input.is_cuda
            and self.codebook_size == 256
            and self.codes.shape[0] == self.out_features // self.out_group_size
        ):
            self.codes.data = torch.permute(self.codes.data, (1, 0, 2)).contiguous()  #  TODO: fix this thing

        forward_pass_kernel = get_forward_pass_kernel(self.codebooks, self.optimize_for_training)
        backward_pass_kernel = get_backward_pass_kernel(self.codebooks, self.optimize_for_training)

        self.matmul_op = _get_autograd_matmul_op(forward_pass_kernel, backward_pass_kernel)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"in_group_size={self.in_group_size}, out_group_size={self.out_group_size}, "
            f"num_codebooks={self.num_codebooks}, nbits_per_codebook={self.nbits_per_codebook}, bias={self.bias is not None}"
        )
