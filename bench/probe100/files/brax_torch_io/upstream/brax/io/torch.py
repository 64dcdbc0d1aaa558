# Copyright 2023 The Brax Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Conversion utilities between JAX arrays and PyTorch tensors.

Both directions go through DLPack so that, when JAX and PyTorch share a GPU,
no device-to-host copy takes place.
"""

import collections
import functools
import warnings
from typing import Any, Dict, Union

import jax
import jax.numpy as jnp
import numpy as np

try:
  # pylint:disable=g-import-not-at-top
  import torch
  from torch.utils import dlpack as torch_dlpack
except ImportError:
  warnings.warn(
      "brax.io.torch requires PyTorch. Please run `pip install torch` to use "
      "functions from this module."
  )
  raise

from jax import dlpack as jax_dlpack

Device = Union[str, torch.device]


@functools.singledispatch
def torch_to_jax(value: Any) -> Any:
  """Converts values to JAX tensors."""
  # Don't do anything by default, and when a handler is registered for this type
  # of value, it gets used to convert it to a Jax DeviceArray.
  # NOTE: The alternative would be to raise an error when an unsupported value is
  # encountered:
  # raise NotImplementedError(f"Cannot convert {v} to a Jax tensor")
  return value


@torch_to_jax.register(torch.Tensor)
def _tensor_to_jax(value: torch.Tensor) -> jax.Array:
  """Converts a PyTorch Tensor into a jax.Array."""
  tensor = torch_dlpack.to_dlpack(value.contiguous())
  tensor = jax_dlpack.from_dlpack(tensor)
  return tensor


@torch_to_jax.register(collections.abc.Mapping)
def _torch_dict_to_jax(
    value: Dict[str, Union[torch.Tensor, Any]]
) -> Dict[str, Union[jax.Array, Any]]:
  """Converts a dict of PyTorch tensors into a dict of jax.Arrays."""
  return type(value)(**{k: torch_to_jax(v) for k, v in value.items()})  # type: ignore


@torch_to_jax.register(list)
@torch_to_jax.register(tuple)
def _torch_seq_to_jax(value):
  return type(value)(torch_to_jax(v) for v in value)


@functools.singledispatch
def jax_to_torch(value: Any, device: Union[Device, None] = None) -> Any:
  """Convert JAX values to PyTorch Tensors.

  By default, the returned tensors are on the same device as the Jax inputs,
  but if `device` is passed, the tensors will be moved to that device.
  """
  # Don't do anything by default, and when a handler is registered for this type
  # of value, it gets used to convert it to a torch tensor.
  # NOTE: The alternative would be to raise an error when an unsupported value is
  # encountered:
  # raise NotImplementedError(f"Cannot convert {v} to a Torch tensor")
  return value


@jax_to_torch.register(jax.Array)
def _jaxarray_to_tensor(
    value: jax.Array, device: Union[Device, None] = None
) -> torch.Tensor:
  """Converts a jax.Array into PyTorch Tensor."""
  dpack = jax_dlpack.to_dlpack(value.astype("float32"))
  tensor = torch_dlpack.from_dlpack(dpack)
  if device:
    return tensor.to(device=device)
  return tensor


@jax_to_torch.register(np.ndarray)
def _numpy_to_tensor(value: np.ndarray, device: Union[Device, None] = None) -> torch.Tensor:
  """Converts a numpy array (e.g. from a CPU-only env) into a PyTorch Tensor."""
  tensor = torch.from_numpy(np.ascontiguousarray(value, dtype=np.float32))
  if device:
    return tensor.to(device=device)
  return tensor


@jax_to_torch.register(collections.abc.Mapping)
def _jax_dict_to_torch(
    value: Dict[str, Union[jax.Array, Any]], device: Union[Device, None] = None
) -> Dict[str, Union[torch.Tensor, Any]]:
  """Converts a dict of jax.Arrays into a dict of PyTorch tensors."""
  return type(value)(
      **{k: jax_to_torch(v, device=device) for k, v in value.items()}
  )  # type: ignore


@jax_to_torch.register(list)
@jax_to_torch.register(tuple)
def _jax_seq_to_torch(value, device: Union[Device, None] = None):
  return type(value)(jax_to_torch(v, device=device) for v in value)


def default_torch_device() -> torch.device:
  """Device used by the Brax torch wrappers when none is specified."""
  if torch.cuda.is_available():
    return torch.device("cuda", torch.cuda.current_device())
  return torch.device("cpu")


def jax_device_for(device: Device) -> Any:
  """Returns the JAX device that shares memory with the given torch device."""
  device = torch.device(device)
  if device.type == "cuda":
    return jax.devices("gpu")[device.index or 0]
  return jax.devices("cpu")[0]
