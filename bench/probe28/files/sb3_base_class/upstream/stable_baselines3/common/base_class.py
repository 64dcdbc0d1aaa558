"""Abstract base classes for RL algorithms (trimmed)."""

import io
import pathlib
import time
import warnings
from abc import ABC, abstractmethod
from typing import Any, Dict, Optional, Type, TypeVar, Union

import numpy as np
import torch as th

from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.save_util import load_from_zip_file, recursive_getattr, save_to_zip_file
from stable_baselines3.common.type_aliases import GymEnv, MaybeCallback, Schedule
from stable_baselines3.common.utils import (
    get_device,
    get_schedule_fn,
    set_random_seed,
    update_learning_rate,
)
from stable_baselines3.common.vec_env import VecEnv

SelfBaseAlgorithm = TypeVar("SelfBaseAlgorithm", bound="BaseAlgorithm")


class BaseAlgorithm(ABC):
    """
    The base of RL algorithms

    :param device: Device on which the code should run.
        By default, it will try to use a Cuda compatible device and fallback to cpu
        if it is not possible.
    """

    policy_aliases: Dict[str, Type[BasePolicy]] = {}
    policy: BasePolicy

    def __init__(
        self,
        policy: Union[str, Type[BasePolicy]],
        env: Union[GymEnv, str, None],
        learning_rate: Union[float, Schedule],
        policy_kwargs: Optional[Dict[str, Any]] = None,
        verbose: int = 0,
        device: Union[th.device, str] = "auto",
        seed: Optional[int] = None,
    ) -> None:
        if isinstance(policy, str):
            self.policy_class = self._get_policy_from_name(policy)
        else:
            self.policy_class = policy

        self.device = get_device(device)
        if verbose >= 1:
            print(f"Using {self.device} device")

        self.verbose = verbose
        self.policy_kwargs = {} if policy_kwargs is None else policy_kwargs
        self.num_timesteps = 0
        self._total_timesteps = 0
        self.seed = seed
        self.learning_rate = learning_rate
        self.start_time = 0.0
        self.env = env
        self._n_updates = 0

        if self.device.type == th.device("cuda").type and isinstance(policy, str) and policy == "MlpPolicy":
            warnings.warn(
                "You are trying to run PPO on the GPU, but it is primarily intended to run on the CPU when not using "
                "a CNN policy (you are using ActorCriticPolicy which should be a MlpPolicy)."
            )

    def _get_policy_from_name(self, policy_name: str) -> Type[BasePolicy]:
        if policy_name in self.policy_aliases:
            return self.policy_aliases[policy_name]
        raise ValueError(f"Policy {policy_name} unknown")

    def _setup_lr_schedule(self) -> None:
        self.lr_schedule = get_schedule_fn(self.learning_rate)

    def _update_learning_rate(self, optimizers) -> None:
        if not isinstance(optimizers, list):
            optimizers = [optimizers]
        for optimizer in optimizers:
            update_learning_rate(optimizer, self.lr_schedule(self._current_progress_remaining))

    def set_random_seed(self, seed: Optional[int] = None) -> None:
        if seed is None:
            return
        set_random_seed(seed, using_cuda=self.device.type == th.device("cuda").type)
        if self.env is not None:
            self.env.seed(seed)

    @abstractmethod
    def learn(self, total_timesteps: int, callback: MaybeCallback = None, log_interval: int = 100):
        """Return a trained model."""

    def predict(self, observation, state=None, episode_start=None, deterministic: bool = False):
        return self.policy.predict(observation, state, episode_start, deterministic)

    @classmethod
    def load(
        cls: Type[SelfBaseAlgorithm],
        path: Union[str, pathlib.Path, io.BufferedIOBase],
        env: Optional[GymEnv] = None,
        device: Union[th.device, str] = "auto",
        custom_objects: Optional[Dict[str, Any]] = None,
        print_system_info: bool = False,
        force_reset: bool = True,
        **kwargs,
    ) -> SelfBaseAlgorithm:
        data, params, pytorch_variables = load_from_zip_file(
            path,
            device=device,
            custom_objects=custom_objects,
            print_system_info=print_system_info,
        )
        assert data is not None, "No data found in the saved file"
        assert params is not None, "No params found in the saved file"

        if "device" in data["policy_kwargs"]:
            del data["policy_kwargs"]["device"]

        model = cls(
            policy=data["policy_class"],
            env=env,
            device=device,
            _init_setup_model=False,
        )
        model.__dict__.update(data)
        model.__dict__.update(kwargs)
        model._setup_model()

        try:
            model.set_parameters(params, exact_match=True, device=device)
        except RuntimeError as e:
            if "pi_features_extractor" in str(e) and "Missing key(s) in state_dict" in str(e):
                model.set_parameters(params, exact_match=False, device=device)
            else:
                raise e

        if pytorch_variables is not None:
            for name in pytorch_variables:
                if pytorch_variables[name] is None:
                    continue
                recursive_setattr(model, f"{name}.data", pytorch_variables[name].data)

        if model.use_sde:
            model.policy.reset_noise()
        return model

    def save(self, path, exclude=None, include=None) -> None:
        data = self.__dict__.copy()
        for param_name in ["env", "policy", "device", "_last_obs"]:
            data.pop(param_name, None)
        params_to_save = {"policy": self.policy.state_dict()}
        save_to_zip_file(path, data=data, params=params_to_save, pytorch_variables=None)


def recursive_setattr(obj, attr, val):
    pre, _, post = attr.rpartition(".")
    return setattr(recursive_getattr(obj, pre) if pre else obj, post, val)
