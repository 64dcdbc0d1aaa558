#!/usr/bin/env python3

import warnings
from abc import abstractmethod
from typing import Any

import torch
from linear_operator.operators import KernelLinearOperator
from torch import Tensor

from ... import settings
from ..kernel import Kernel

try:
    import pykeops  # noqa F401
    from pykeops.torch import LazyTensor

    def _lazify_and_expand_inputs(
        x1: Tensor, x2: Tensor
    ) -> "tuple[LazyTensor, LazyTensor]":
        r"""
        Potentially wrap inputs x1 and x2 as KeOps LazyTensors,
        depending on whether or not we want to use KeOps under the hood or not.
        """
        x1_ = x1[..., :, None, :]
        x2_ = x2[..., None, :, :]
        if _use_keops(x1, x2):
            res = LazyTensor(x1_), LazyTensor(x2_)
            return res
        return x1_, x2_

    def _use_keops(x1: Tensor, x2: Tensor) -> bool:
        r"""
        Determine whether or not to use KeOps under the hood.
        This largely depends on the size of the kernel matrix.

        There are situations where we do not want the KeOps linear operator to use KeOps under the hood.
        See https://github.com/cornellius-gp/gpytorch/pull/1319
        """
        return (
            settings.use_keops.on()
            and x1.size(-2) >= settings.max_cholesky_size.value()
            and x2.size(-2) >= settings.max_cholesky_size.value()
        )

    class KeOpsKernel(Kernel):
        def __call__(self, *args: Any, **kwargs: Any):
            # Hotfix for zero gradients. See https://github.com/cornellius-gp/gpytorch/issues/1543
            args = [arg.contiguous() if torch.is_tensor(arg) else arg for arg in args]
            kwargs = {k: v.contiguous() if torch.is_tensor(v) else v for k, v in kwargs.items()}
            return super().__call__(*args, **kwargs)

        @abstractmethod
        def _nonkeops_forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **kwargs: Any):
            r"""
            Computes the covariance matrix (or diagonal) without using KeOps.
            This function must implement both the diag=True and diag=False options.
            """
            ...

        @abstractmethod
        def _keops_forward(self, x1: Tensor, x2: Tensor, **kwargs: Any):
            r"""
            Computes the covariance matrix with KeOps.
            This function only implements the diag=False option, and no diag keyword should be passed in.
            """
            ...

        def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **kwargs: Any):
            if diag:
                return self._nonkeops_forward(x1, x2, diag=True, **kwargs)
            elif x1.size(-2) < settings.max_cholesky_size.value() or x2.size(-2) < settings.max_cholesky_size.value():
                return self._nonkeops_forward(x1, x2, diag=False, **kwargs)
            else:
                return self._keops_forward(x1, x2, **kwargs)

except ImportError:

    def _lazify_and_expand_inputs(x1: Tensor, x2: Tensor) -> "tuple[Tensor, Tensor]":
        x1_ = x1[..., :, None, :]
        x2_ = x2[..., None, :, :]
        return x1_, x2_

    def _use_keops(x1: Tensor, x2: Tensor) -> bool:
        return False

    class KeOpsKernel(Kernel):
        def __init__(self, *args: Any, **kwargs: Any):
            warnings.warn(
                "KeOps is not installed. "
                f"{type(self)} will revert to the the non-keops version of this kernel.",
                RuntimeWarning,
            )
            super().__init__(*args, **kwargs)

        def _keops_forward(self, x1: Tensor, x2: Tensor, **kwargs: Any):
            return self._nonkeops_forward(x1, x2, diag=False, **kwargs)

        def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **kwargs: Any):
            return self._nonkeops_forward(x1, x2, diag=diag, **kwargs)


def _wrap_keops_output(covar_func, x1: Tensor, x2: Tensor, **params) -> KernelLinearOperator:
    r"""
    KeOps kernels return a KernelLinearOperator so that matmuls against the kernel
    are reduced on the fly (the n x n matrix is never materialised on the GPU).
    """
    return KernelLinearOperator(x1, x2, covar_func=covar_func, **params)
