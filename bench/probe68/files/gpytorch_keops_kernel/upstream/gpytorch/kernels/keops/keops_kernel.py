#!/usr/bin/env python3
"""KeOps-backed kernels.

KeOps (https://www.kernel-operations.io) compiles symbolic kernel formulas into map-reduce
routines, so that kernel matrix-vector products never materialise the full n x n matrix.
For large exact GPs this is what makes O(n) memory possible; for small problems the dense
PyTorch implementation is faster, so every kernel keeps a non-KeOps forward as well.
"""
import math
import warnings
from abc import abstractmethod
from typing import Optional, Tuple, Union

import torch
from linear_operator.operators import KernelLinearOperator
from torch import Tensor

from ... import settings
from ...constraints import Interval, Positive
from ...priors import Prior
from ..kernel import Kernel
from ..matern_kernel import MaternKernel as GMaternKernel
from ..rbf_kernel import postprocess_rbf

try:
    import pykeops  # noqa F401
    from pykeops.torch import LazyTensor as KEOLazyTensor

    _HAS_KEOPS = True
except ImportError:
    KEOLazyTensor = None
    _HAS_KEOPS = False


def _lazify_and_expand_inputs(x1: Tensor, x2: Tensor) -> Tuple["KEOLazyTensor", "KEOLazyTensor"]:
    r"""
    Potentially wrap inputs x1 and x2 as KeOps LazyTensors,
    depending on whether or not we want to use KeOps under the hood or not.
    """
    x1_ = KEOLazyTensor(x1[..., :, None, :])
    x2_ = KEOLazyTensor(x2[..., None, :, :])
    return x1_, x2_


def _keops_backend(x: Tensor) -> str:
    # KeOps picks a backend from the tensor location on every call; pinning it avoids a
    # recompilation of the formula when a batch of CPU tensors slips through.
    return "GPU" if x.is_cuda else "CPU"


class KeOpsKernel(Kernel):
    """Base class for kernels with a KeOps implementation.

    Subclasses implement ``_nonkeops_forward`` (dense PyTorch) and ``_keops_forward``
    (returns a ``KernelLinearOperator`` whose matmuls are KeOps reductions).
    """

    def __init__(self, *args, **kwargs):
        if not _HAS_KEOPS:
            warnings.warn(
                "KeOps is not installed. "
                f"{type(self)} will revert to the the non-keops version of this kernel.",
                RuntimeWarning,
            )
        super().__init__(*args, **kwargs)

    @abstractmethod
    def _nonkeops_forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **kwargs):
        r"""Computes the covariance matrix (or diagonal) without using KeOps."""
        raise NotImplementedError

    @abstractmethod
    def _keops_forward(self, x1: Tensor, x2: Tensor, **kwargs):
        r"""Computes the covariance matrix with KeOps."""
        raise NotImplementedError

    def _use_keops(self, x1: Tensor, x2: Tensor) -> bool:
        if not _HAS_KEOPS:
            return False
        # For small problems the dense kernel is faster than a compiled reduction.
        if x1.size(-2) < settings.max_cholesky_size.value() or x2.size(-2) < settings.max_cholesky_size.value():
            return False
        return True

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **kwargs):
        if diag:
            return self._nonkeops_forward(x1, x2, diag=True, **kwargs)
        if not self._use_keops(x1, x2):
            return self._nonkeops_forward(x1, x2, diag=False, **kwargs)
        return self._keops_forward(x1, x2, **kwargs)

    def __call__(self, *args, **kwargs):
        # Hotfix for zero gradients. See https://github.com/cornellius-gp/gpytorch/issues/1543
        args = [arg.contiguous() if torch.is_tensor(arg) else arg for arg in args]
        kwargs = {k: v.contiguous() if torch.is_tensor(v) else v for k, v in kwargs.items()}
        return super().__call__(*args, **kwargs)


def _covar_func(x1, x2, **kwargs):
    x1_, x2_ = _lazify_and_expand_inputs(x1, x2)
    sq_dist = ((x1_ - x2_) ** 2).sum(-1)
    return (sq_dist / -2).exp()


class RBFKernel(KeOpsKernel):
    r"""
    Implements the RBF kernel using KeOps as a driver for kernel matrix multiplies.

    This class can be used as a drop in replacement for :class:`gpytorch.kernels.RBFKernel` in most cases,
    and supports the same arguments.
    """

    has_lengthscale = True

    def _nonkeops_forward(self, x1, x2, diag=False, **kwargs):
        x1_ = x1.div(self.lengthscale)
        x2_ = x2.div(self.lengthscale)
        return postprocess_rbf(self.covar_dist(x1_, x2_, square_dist=True, diag=diag, **kwargs))

    def _keops_forward(self, x1, x2, **kwargs):
        x1_ = x1.div(self.lengthscale)
        x2_ = x2.div(self.lengthscale)
        # return any tensor - the user will have to specify a backend when evaluating
        return KernelLinearOperator(x1_, x2_, covar_func=_covar_func,
                                    keops_backend=_keops_backend(x1_), **kwargs)


def _matern_covar_func(x1, x2, nu=2.5, **kwargs):
    x1_, x2_ = _lazify_and_expand_inputs(x1, x2)
    distance = ((x1_ - x2_) ** 2).sum(-1).sqrt()
    exp_component = (-math.sqrt(nu * 2) * distance).exp()

    if nu == 0.5:
        constant_component = 1
    elif nu == 1.5:
        constant_component = (math.sqrt(3) * distance) + 1
    elif nu == 2.5:
        constant_component = (math.sqrt(5) * distance) + (1 + 5.0 / 3.0 * (distance ** 2))
    else:
        raise RuntimeError(f"nu={nu} is not supported by the KeOps Matern kernel")
    return constant_component * exp_component


class MaternKernel(KeOpsKernel):
    """Implements the Matern kernel using KeOps as a driver for kernel matrix multiplies."""

    has_lengthscale = True

    def __init__(self, nu: Optional[float] = 2.5, **kwargs):
        if nu not in {0.5, 1.5, 2.5}:
            raise RuntimeError("nu expected to be 0.5, 1.5, or 2.5")
        super().__init__(**kwargs)
        self.nu = nu

    def _nonkeops_forward(self, x1, x2, diag=False, **kwargs):
        mean = x1.reshape(-1, x1.size(-1)).mean(0)[(None,) * (x1.dim() - 1)]
        x1_ = (x1 - mean).div(self.lengthscale)
        x2_ = (x2 - mean).div(self.lengthscale)
        distance = self.covar_dist(x1_, x2_, diag=diag, **kwargs)
        exp_component = torch.exp(-math.sqrt(self.nu * 2) * distance)

        if self.nu == 0.5:
            constant_component = 1
        elif self.nu == 1.5:
            constant_component = (math.sqrt(3) * distance).add(1)
        elif self.nu == 2.5:
            constant_component = (math.sqrt(5) * distance).add(1).add(5.0 / 3.0 * distance ** 2)
        return constant_component * exp_component

    def _keops_forward(self, x1, x2, **kwargs):
        mean = x1.reshape(-1, x1.size(-1)).mean(0)[(None,) * (x1.dim() - 1)]
        x1_ = (x1 - mean).div(self.lengthscale)
        x2_ = (x2 - mean).div(self.lengthscale)
        return KernelLinearOperator(x1_, x2_, covar_func=_matern_covar_func, nu=self.nu,
                                    keops_backend=_keops_backend(x1_), **kwargs)


class PeriodicKernel(KeOpsKernel):
    """Periodic kernel; KeOps version evaluates the sine distance inside the reduction."""

    has_lengthscale = True

    def __init__(
        self,
        period_length_prior: Optional[Prior] = None,
        period_length_constraint: Optional[Interval] = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if period_length_constraint is None:
            period_length_constraint = Positive()
        self.register_parameter(
            name="raw_period_length", parameter=torch.nn.Parameter(torch.zeros(*self.batch_shape, 1, 1))
        )
        if period_length_prior is not None:
            self.register_prior(
                "period_length_prior",
                period_length_prior,
                lambda m: m.period_length,
                lambda m, v: m._set_period_length(v),
            )
        self.register_constraint("raw_period_length", period_length_constraint)

    @property
    def period_length(self):
        return self.raw_period_length_constraint.transform(self.raw_period_length)

    def _set_period_length(self, value: Union[float, Tensor]):
        if not torch.is_tensor(value):
            value = torch.as_tensor(value).to(self.raw_period_length)
        self.initialize(raw_period_length=self.raw_period_length_constraint.inverse_transform(value))

    def _nonkeops_forward(self, x1, x2, diag=False, **kwargs):
        x1_ = x1.div(self.period_length / math.pi)
        x2_ = x2.div(self.period_length / math.pi)
        diff = self.covar_dist(x1_, x2_, diag=diag, last_dim_is_batch=True, **kwargs)
        res = diff.sin().pow(2).mul(-2.0 / self.lengthscale).exp()
        return res.prod(0) if not diag else res.prod(0)

    def _keops_forward(self, x1, x2, **kwargs):
        x1_ = x1.div(self.period_length / math.pi)
        x2_ = x2.div(self.period_length / math.pi)
        lengthscale = self.lengthscale

        def _periodic_covar_func(a, b, **kw):
            a_, b_ = _lazify_and_expand_inputs(a, b)
            diff = (a_ - b_).sin() ** 2
            return (diff.sum(-1) * (-2.0 / lengthscale.item())).exp()

        return KernelLinearOperator(x1_, x2_, covar_func=_periodic_covar_func,
                                    keops_backend=_keops_backend(x1_), **kwargs)


# Re-exported for ``gpytorch.kernels.keops.MaternKernel`` users that only need the dense path.
DenseMaternKernel = GMaternKernel
