# This file is part of sbi, a toolkit for simulation-based inference. sbi is licensed
# under the Apache License Version 2.0, see <https://www.apache.org/licenses/>

"""Various PyTorch utility functions."""

import os
import random
import warnings
from typing import Any, Dict, Optional, Union

import numpy as np
import torch
from torch import Tensor, float32
from torch.distributions import Distribution, Independent, Uniform

from sbi.sbi_types import Array, OneOrMore, ScalarFloat


def process_device(device: Union[str, torch.device]) -> str:
    """Set and return the default device to cpu or gpu (cuda, mps).

    Args:
        device: target torch device
    Returns:
        device: processed string, e.g., "cuda" is mapped to "cuda:0".
    """

    if isinstance(device, torch.device):
        device = str(device)

    if device == "cpu":
        return "cpu"
    else:
        # If user just passes 'gpu', search for CUDA or MPS.
        if device == "gpu":
            # check whether either pytorch cuda or mps is available
            if torch.cuda.is_available():
                current_gpu_index = torch.cuda.current_device()
                device = f"cuda:{current_gpu_index}"
            elif torch.backends.mps.is_available():
                device = "mps:0"
            else:
                raise RuntimeError(
                    "Neither CUDA nor MPS is available. Please make sure to "
                    "install a version of PyTorch that supports CUDA or MPS."
                )
        elif device == "cuda":
            # "cuda" alone is mapped to the currently selected card
            device = f"cuda:{torch.cuda.current_device()}"

        # Check whether the device is available.
        check_device(device)

        # Only warn once for the first call.
        if not hasattr(process_device, "_warned"):
            warnings.warn(
                "GPU was selected as a device for training the neural network. "
                "Note that we expect **no** significant speed ups in training for the "
                "default architectures we provide. Using the GPU will be effective "
                "only for large neural networks with operations that are fast on the "
                "GPU, e.g., for a CNN or RNN `embedding_net`.",
                stacklevel=2,
            )
            process_device._warned = True
        return device


def check_device(device: str) -> None:
    """Check whether the device is valid.

    Args:
        device: target torch device
    """
    if device.startswith("mps"):
        try:
            torch.ones(1, device=device)
        except RuntimeError as exc:
            raise RuntimeError(
                f"Could not instantiate torch.ones(1, device={device}). Make sure "
                "you have a recent PyTorch version with MPS support."
            ) from exc
    else:
        try:
            torch.cuda.set_device(device)
        except (RuntimeError, AssertionError) as exc:
            raise RuntimeError(
                f"Could not set CUDA device {device}. Make sure that it is available "
                "and that you have a CUDA-enabled PyTorch installation."
            ) from exc


def check_if_prior_on_device(
    device: Union[str, torch.device], prior: Optional[Any] = None
) -> None:
    """Try to sample from the prior, and check that the returned data is on the correct
    trainin device. If the prior is `None`, simplys pass.

    Args:
        device: target torch training device
        prior: any simulator outputing torch `Tensor`
    """
    if prior is None:
        pass
    else:
        prior_device = prior.sample((1,)).device
        training_device = torch.zeros(1, device=device).device
        assert prior_device == training_device, (
            f"Prior device '{prior_device}' must match training device "
            f"'{training_device}'. When training on GPU make sure to "
            "pass a prior initialized on the GPU as well, e.g., "
            "prior = torch.distributions.Normal"
            "(torch.zeros(2, device='cuda'), scale=1.0)`."
        )


def gpu_available() -> bool:
    """Whether a GPU usable for training is present (used by the test-suite fixtures)."""
    return torch.cuda.is_available() or torch.backends.mps.is_available()


def seed_everything(seed: int, deterministic: bool = False) -> None:
    """Seed python, numpy and torch (all devices)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():  # seed every visible card, not only the current one
        torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.use_deterministic_algorithms(True)


def tile(x: Tensor, n: int) -> Tensor:
    if not isinstance(n, int):
        raise TypeError("Argument `n` must be an integer.")
    x_ = x.reshape(-1)
    x_ = x_.repeat(n)
    x_ = x_.reshape(n, -1)
    x_ = x_.transpose(1, 0)
    x_ = x_.reshape(-1)
    return x_


def sum_except_batch(x: Tensor, num_batch_dims: int = 1) -> Tensor:
    """Sums all elements of `x` except for the first `num_batch_dims` dimensions."""
    if not isinstance(num_batch_dims, int) or num_batch_dims < 0:
        raise TypeError("Number of batch dimensions must be a non-negative integer.")
    reduce_dims = list(range(num_batch_dims, x.ndimension()))
    return torch.sum(x, dim=reduce_dims)


def ensure_theta_batched(theta: Tensor) -> Tensor:
    r"""Return parameter set theta that has a batch dimension, i.e. has shape
    (1, shape_of_single_theta)"""
    if theta.ndim == 1:
        theta = theta.unsqueeze(0)
    return theta


def atleast_2d_many(*arys: Array) -> OneOrMore[Tensor]:
    """Return tensors with at least dimension 2."""
    if len(arys) == 1:
        arr = arys[0]
        if isinstance(arr, np.ndarray):
            arr = torch.from_numpy(arr)
        return atleast_2d(arr)
    else:
        return [atleast_2d_many(arr) for arr in arys]


def atleast_2d(t: Tensor) -> Tensor:
    return t if t.ndim >= 2 else t.reshape(1, -1)


def maybe_add_batch_dim_to_size(s: torch.Size) -> torch.Size:
    """Take a torch.Size and add a batch dimension to it if dimensionality of size is 1."""
    return s if len(s) >= 2 else torch.Size([1]) + s


def atleast_2d_float32_tensor(arr: Union[Tensor, np.ndarray]) -> Tensor:
    return atleast_2d(torch.as_tensor(arr, dtype=float32))


class BoxUniform(Independent):
    def __init__(
        self,
        low: ScalarFloat,
        high: ScalarFloat,
        reinterpreted_batch_ndims: int = 1,
        device: Optional[str] = None,
    ):
        """Multidimensional uniform distribution defined on a box.

        A `Uniform` distribution initialized with e.g. a parameter vector low or high of
        length 3 will result in a /batch/ dimension of length 3. A log_prob evaluation
        will then output three numbers, one for each of the independent Uniforms in
        the batch. Instead, a `BoxUniform` initialized in the same way has three
        /event/ dimensions, and returns a scalar log_prob corresponding to whether
        the evaluated point is in the box defined by low and high or outside.

        Refer to torch.distributions.Uniform and torch.distributions.Independent for
        further documentation.

        Args:
            low: lower range (inclusive).
            high: upper range (exclusive).
            reinterpreted_batch_ndims (int): the number of batch dims to
                                             reinterpret as event dims.
            device: device of the prior, inferred from low arg, defaults to "cpu",
                should match the training device when used in SBI.
        """

        # Type checks.
        assert isinstance(low, Tensor) and isinstance(high, Tensor), (
            f"low and high must be tensors but are {type(low)} and {type(high)}."
        )
        if not low.device == high.device:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least"
                f"two devices, {low.device} and {high.device}."
            )

        # Device handling
        device = low.device.type if device is None else device
        self.device = device

        super().__init__(
            Uniform(
                low=torch.as_tensor(
                    low, dtype=torch.float32, device=torch.device(device)
                ),
                high=torch.as_tensor(
                    high, dtype=torch.float32, device=torch.device(device)
                ),
                validate_args=False,
            ),
            reinterpreted_batch_ndims,
        )

    def to(self, device: Union[str, torch.device]) -> "BoxUniform":
        """Moves the distribution to the specified device **in place**."""
        self.device = device
        self.base_dist.low = self.base_dist.low.to(device)
        self.base_dist.high = self.base_dist.high.to(device)
        return self


def assert_all_finite(quantity: Tensor, description: str = "tensor") -> None:
    """Raise if tensor quantity contains any NaN or Inf element."""
    msg = f"NaN/Inf present in {description}."
    assert torch.isfinite(quantity).all(), msg


def get_default_device_kwargs(device: str) -> Dict[str, Any]:
    """Keyword arguments for DataLoaders on `device` (pinned host memory for GPU training)."""
    if device.startswith("cuda"):
        return {"pin_memory": True, "pin_memory_device": device}
    return {}
