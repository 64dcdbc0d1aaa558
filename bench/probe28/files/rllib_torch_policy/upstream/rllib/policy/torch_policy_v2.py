import copy
import functools
import logging
import os
import threading
from typing import Dict, List, Optional, Tuple, Type, Union

import gymnasium as gym
import numpy as np
import tree

from ray.rllib.models.catalog import ModelCatalog
from ray.rllib.models.torch.torch_modelv2 import TorchModelV2
from ray.rllib.policy.policy import Policy
from ray.rllib.policy.sample_batch import SampleBatch
from ray.rllib.utils.annotations import override
from ray.rllib.utils.framework import try_import_torch
from ray.rllib.utils.torch_utils import convert_to_torch_tensor

torch, nn = try_import_torch()

logger = logging.getLogger(__name__)


class TorchPolicyV2(Policy):
    """PyTorch specific Policy class to use with RLlib (device placement excerpt)."""

    def __init__(self, observation_space: gym.spaces.Space, action_space: gym.spaces.Space, config: dict, *,
                 max_seq_len: int = 20):
        self.framework = config["framework"] = "torch"
        self._loss_initialized = False
        super().__init__(observation_space, action_space, config)

        model = self.make_model()
        self.model = model
        self._init_model_and_dist_class()

        worker_idx = self.config.get("worker_index", 0)
        if not config["_fake_gpus"] and ray_get_gpu_ids_safe() == [] and worker_idx == 0:
            num_gpus = 0
        elif worker_idx == 0:
            num_gpus = config["num_gpus"]
        else:
            num_gpus = config["num_gpus_per_worker"]
        gpu_ids = list(range(torch.cuda.device_count()))

        # Place on one or more CPU(s) when either:
        # - Fake GPU mode.
        # - num_gpus=0 (either set by user or we are in local_mode=True).
        # - No GPUs available.
        if config["_fake_gpus"] or num_gpus == 0 or not gpu_ids:
            self.device = torch.device("cpu")
            self.devices = [self.device for _ in range(int(num_gpus or 1))]
            self.model_gpu_towers = [model if i == 0 else copy.deepcopy(model) for i in range(int(num_gpus or 1))]
            self.target_models = None
        # Place on one or more actual GPU(s), when:
        # - num_gpus > 0 (set by user) AND
        # - local_mode=False AND
        # - actual GPUs available AND
        # - non-fake GPU mode.
        else:
            logger.info(f"TorchPolicy (worker={worker_idx}) using {num_gpus} GPU(s).")
            ids = ray_get_gpu_ids_safe()
            self.devices = []
            for i, id_ in enumerate(ids):
                if i < num_gpus:
                    self.devices.append(torch.device("cuda:{}".format(i)))
            self.device = self.devices[0]
            self.model_gpu_towers = []
            for i, _ in enumerate(self.devices):
                model_copy = copy.deepcopy(model)
                self.model_gpu_towers.append(model_copy.to(self.devices[i]))
            self.model = self.model_gpu_towers[0]

        self._lock = threading.RLock()
        self._max_seq_len = max_seq_len
        self.batch_divisibility_req = self.get_batch_divisibility_req()

    def make_model(self):
        return ModelCatalog.get_model_v2(self.observation_space, self.action_space, 2, self.config["model"],
                                         framework=self.framework)

    def _init_model_and_dist_class(self):
        pass

    def get_batch_divisibility_req(self) -> int:
        return 1

    @override(Policy)
    def compute_actions_from_input_dict(self, input_dict, explore=None, timestep=None, **kwargs):
        with torch.no_grad():
            input_dict = self._lazy_tensor_dict(input_dict)
            input_dict.set_training(True)
            return self._compute_action_helper(input_dict, None, None, explore, timestep)

    def _lazy_tensor_dict(self, postprocessed_batch: SampleBatch, device=None):
        if not isinstance(postprocessed_batch, SampleBatch):
            postprocessed_batch = SampleBatch(postprocessed_batch)
        postprocessed_batch.set_get_interceptor(functools.partial(convert_to_torch_tensor, device=device or self.device))
        return postprocessed_batch

    def _multi_gpu_parallel_grad_calc(self, sample_batches):
        assert len(self.model_gpu_towers) == len(sample_batches)
        results = {}
        for shard_idx, (model, sample_batch, device) in enumerate(
            zip(self.model_gpu_towers, sample_batches, self.devices)
        ):
            with torch.cuda.device(device):
                loss_out = self.loss(model, self.dist_class, sample_batch)
                for opt in self._optimizers:
                    opt.zero_grad()
                loss_out.backward()
                grads = [p.grad for p in model.parameters() if p.grad is not None]
            results[shard_idx] = (grads, {})
        return results

    def _compute_action_helper(self, input_dict, state_batches, seq_lens, explore, timestep):
        raise NotImplementedError


def ray_get_gpu_ids_safe():
    import ray

    try:
        return ray.get_gpu_ids()
    except Exception:
        return []
