import dataclasses
import io
import pickle
from abc import ABCMeta, abstractmethod
from typing import BinaryIO, Generic, Optional, Type, TypeVar, Union

import gym
import gymnasium
import torch
from typing_extensions import Self

from ._version import __version__
from .constants import IMPL_NOT_INITIALIZED_ERROR, ActionSpace
from .dataset import ReplayBufferBase, Shape
from .logging import LOG, D3RLPyLogger
from .preprocessing import (
    ActionScaler,
    ObservationScaler,
    RewardScaler,
    make_action_scaler_field,
    make_observation_scaler_field,
    make_reward_scaler_field,
)
from .serializable_config import DynamicConfig, generate_config_registration
from .torch_utility import Checkpointer, Modules
from .types import GymEnv

__all__ = [
    "DeviceArg",
    "ImplBase",
    "save_config",
    "dump_learnable",
    "load_learnable",
    "LearnableBase",
    "LearnableConfig",
    "LearnableConfigWithShape",
    "TImpl_co",
    "TConfig_co",
    "register_learnable",
]


DeviceArg = Optional[Union[bool, int, str]]
TImpl_co = TypeVar("TImpl_co", bound="ImplBase", covariant=True)
TConfig_co = TypeVar("TConfig_co", bound="LearnableConfig", covariant=True)


class ImplBase(metaclass=ABCMeta):
    _observation_shape: Shape
    _action_size: int
    _modules: Modules
    _checkpointer: Checkpointer
    _device: str

    def __init__(
        self,
        observation_shape: Shape,
        action_size: int,
        modules: Modules,
        device: str,
    ):
        self._observation_shape = observation_shape
        self._action_size = action_size
        self._modules = modules
        self._checkpointer = modules.create_checkpointer(device)
        self._device = device

    def save_model(self, f: BinaryIO) -> None:
        self._checkpointer.save(f)

    def load_model(self, f: BinaryIO) -> None:
        self._checkpointer.load(f)

    @property
    def observation_shape(self) -> Shape:
        return self._observation_shape

    @property
    def action_size(self) -> int:
        return self._action_size

    @property
    def device(self) -> str:
        return self._device

    @property
    def modules(self) -> Modules:
        return self._modules

    def wrap_models_by_ddp(self) -> None:
        self._modules = self._modules.wrap_models_by_ddp()

    def unwrap_models_by_ddp(self) -> None:
        self._modules = self._modules.unwrap_models_by_ddp()


@dataclasses.dataclass()
class LearnableConfig(DynamicConfig):
    batch_size: int = 256
    gamma: float = 0.99
    observation_scaler: Optional[ObservationScaler] = (
        make_observation_scaler_field()
    )
    action_scaler: Optional[ActionScaler] = make_action_scaler_field()
    reward_scaler: Optional[RewardScaler] = make_reward_scaler_field()
    compile_graph: bool = False

    def create(
        self, device: DeviceArg = False, enable_ddp: bool = False
    ) -> "LearnableBase[ImplBase, LearnableConfig]":
        r"""Returns algorithm object.

        Args:
            device (Union[int, str, bool]): device option. If the value is
                boolean and True, ``cuda:0`` will be used. If the value is
                integer, ``cuda:<device>`` will be used. If the value is string
                in torch device style, the specified device will be used.
            enable_ddp (bool): Flag to wrap models with DataDistributedParallel.

        Returns:
            algorithm object.
        """
        raise NotImplementedError


register_learnable, make_learnable_field = generate_config_registration(
    LearnableConfig
)


@dataclasses.dataclass()
class LearnableConfigWithShape(DynamicConfig):
    observation_shape: Shape
    action_size: int
    config: LearnableConfig = make_learnable_field()

    def create(
        self, device: DeviceArg = False, enable_ddp: bool = False
    ) -> "LearnableBase[ImplBase, LearnableConfig]":
        algo = self.config.create(device, enable_ddp)
        algo.create_impl(self.observation_shape, self.action_size)
        return algo


def save_config(
    alg: "LearnableBase[ImplBase, LearnableConfig]", logger: D3RLPyLogger
) -> None:
    assert alg.impl
    config = LearnableConfigWithShape(
        observation_shape=alg.impl.observation_shape,
        action_size=alg.impl.action_size,
        config=alg.config,
    )
    logger.add_params(config.serialize_to_dict())


def _process_device(value: DeviceArg) -> str:
    """Checks value and returns PyTorch target device.

    Returns:
        str: target device.
    """
    # Backward-compatibility for pre-2.0 "use_gpu" flag
    if isinstance(value, bool):
        return "cuda:0" if value else "cpu:0"
    if isinstance(value, int):
        return f"cuda:{value}"
    if isinstance(value, str):
        return value
    if value is None:
        return "cpu:0"
    raise ValueError("This argument must be bool, int or str.")


def dump_learnable(
    algo: "LearnableBase[ImplBase, LearnableConfig]", fname: str
) -> None:
    assert algo.impl
    with open(fname, "wb") as f:
        torch.save(
            {
                "config": LearnableConfigWithShape(
                    observation_shape=algo.impl.observation_shape,
                    action_size=algo.impl.action_size,
                    config=algo.config,
                ).serialize(),
                "torch": _serialize_impl(algo.impl),
                "version": __version__,
            },
            f,
        )


def _serialize_impl(impl: ImplBase) -> bytes:
    buf = io.BytesIO()
    impl.save_model(buf)
    return buf.getvalue()


def load_learnable(
    fname: str, device: DeviceArg = None
) -> "LearnableBase[ImplBase, LearnableConfig]":
    with open(fname, "rb") as f:
        obj = torch.load(f, map_location="cpu", weights_only=False)
        config = LearnableConfigWithShape.deserialize(obj["config"])
        algo = config.create(device=device)
        assert algo.impl
        algo.impl.load_model(io.BytesIO(obj["torch"]))
    return algo


class LearnableBase(Generic[TImpl_co, TConfig_co], metaclass=ABCMeta):
    _config: TConfig_co
    _device: str
    _enable_ddp: bool
    _impl: Optional[TImpl_co]
    _grad_step: int

    def __init__(
        self,
        config: TConfig_co,
        device: DeviceArg,
        enable_ddp: bool,
        impl: Optional[TImpl_co] = None,
    ):
        if self.get_action_type() == ActionSpace.DISCRETE:
            assert (
                config.action_scaler is None
            ), "action_scaler cannot be used with discrete action-space algorithms."
        self._config = config
        self._device = _process_device(device)
        self._enable_ddp = enable_ddp
        self._impl = impl
        self._grad_step = 0
        if config.compile_graph and "cuda" not in self._device:
            LOG.warning(
                "compile_graph=True is only tested with CUDA devices; "
                "running without graph capture may be slower.",
                device=self._device,
            )

    def save(self, fname: str) -> None:
        """Saves paired data of neural network parameters and serialized config.

        .. code-block:: python

            algo.save('model.d3')

            # reconstruct everything
            algo2 = d3rlpy.load_learnable("model.d3", device="cuda:0")

        Args:
            fname: destination file path.
        """
        dump_learnable(self, fname)

    def save_model(self, fname: Union[str, BinaryIO]) -> None:
        """Saves neural network parameters.

        .. code-block:: python

            algo.save_model('model.pt')

        Args:
            fname: destination file path.
        """
        assert self._impl is not None, IMPL_NOT_INITIALIZED_ERROR
        if isinstance(fname, str):
            with open(fname, "wb") as f:
                self._impl.save_model(f)
        else:
            self._impl.save_model(fname)

    def load_model(self, fname: Union[str, BinaryIO]) -> None:
        """Load neural network parameters.

        .. code-block:: python

            algo.load_model('model.pt')

        Args:
            fname: source file path.
        """
        assert self._impl is not None, IMPL_NOT_INITIALIZED_ERROR
        if isinstance(fname, str):
            with open(fname, "rb") as f:
                self._impl.load_model(f)
        else:
            self._impl.load_model(fname)

    @abstractmethod
    def inner_create_impl(
        self, observation_shape: Shape, action_size: int
    ) -> None:
        pass

    def create_impl(self, observation_shape: Shape, action_size: int) -> None:
        """Instantiate implementation objects with the dataset shapes.

        This method will be used internally when `fit` method is called.

        Args:
            observation_shape: observation shape.
            action_size: dimension of action-space.
        """
        if self._impl:
            LOG.warn("Parameters will be reinitialized.")
        self.inner_create_impl(observation_shape, action_size)
        if self._enable_ddp:
            assert self._impl
            self._impl.wrap_models_by_ddp()

    @abstractmethod
    def get_action_type(self) -> ActionSpace:
        """Returns action type (continuous or discrete).

        Returns:
            action type.
        """
        raise NotImplementedError

    @property
    def config(self) -> TConfig_co:
        return self._config

    @property
    def batch_size(self) -> int:
        return self._config.batch_size

    @property
    def gamma(self) -> float:
        return self._config.gamma

    @property
    def impl(self) -> Optional[TImpl_co]:
        return self._impl

    @property
    def grad_step(self) -> int:
        return self._grad_step

    def set_grad_step(self, grad_step: int) -> None:
        self._grad_step = grad_step
