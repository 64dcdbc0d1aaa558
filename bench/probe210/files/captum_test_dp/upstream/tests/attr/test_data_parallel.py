#!/usr/bin/env python3

# pyre-unsafe
import copy
import os
import tempfile
import unittest
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Tuple, Type

import torch
import torch.distributed as dist
from captum.attr._core.deep_lift import DeepLift, DeepLiftShap
from captum.attr._core.feature_ablation import FeatureAblation
from captum.attr._core.input_x_gradient import InputXGradient
from captum.attr._core.integrated_gradients import IntegratedGradients
from captum.attr._core.layer.grad_cam import LayerGradCam
from captum.attr._core.layer.layer_conductance import LayerConductance
from captum.attr._core.layer.layer_integrated_gradients import LayerIntegratedGradients
from captum.attr._core.neuron.neuron_conductance import NeuronConductance
from captum.attr._core.noise_tunnel import NoiseTunnel
from captum.attr._core.saliency import Saliency
from captum.attr._utils.attribution import Attribution
from tests.helpers import BaseTest
from tests.helpers.basic import assertTensorAlmostEqual
from tests.helpers.basic_models import (
    BasicModel_ConvNet,
    BasicModel_MultiLayer,
    BasicModel_MultiLayer_MultiInput,
)


class DataParallelCompareMode(Enum):
    """
    Defines modes for DataParallel tests:
    `cpu_cuda` - Compares results when running attribution method on CPU vs GPU / CUDA
    `data_parallel_default` - Compares results when running attribution method
        on GPU with DataParallel
    `data_parallel_alt_dev_ids` - Compares results when running attribution
        method on GPU with DataParallel, but with an alternate device ID ordering
        (not default)
    `dist_data_parallel` - Compares results when running attribution method
        on GPU with DistributedDataParallel (one process, one device)
    """

    cpu_cuda = 1
    data_parallel_default = 2
    data_parallel_alt_dev_ids = 3
    dist_data_parallel = 4


def _cuda_test_available(min_devices: int = 1) -> bool:
    return torch.cuda.is_available() and torch.cuda.device_count() >= min_devices


def _alt_device_ids() -> List[int]:
    # reversed order, but keep device 0 first since DataParallel gathers on it
    return [0] + list(range(torch.cuda.device_count() - 1, 0, -1))


def _move_to_gpu(args: Tuple[Any, ...]) -> Tuple[Any, ...]:
    return tuple(
        arg.cuda() if isinstance(arg, torch.Tensor) else arg for arg in args
    )


CONFIGS: List[Dict[str, Any]] = [
    {
        "name": "ig_multi_layer",
        "algorithm": IntegratedGradients,
        "model": BasicModel_MultiLayer(),
        "attribute_args": {"inputs": torch.randn(8, 3), "target": 1},
    },
    {
        "name": "saliency_conv",
        "algorithm": Saliency,
        "model": BasicModel_ConvNet(),
        "attribute_args": {"inputs": 100 * torch.randn(4, 1, 10, 10), "target": 3},
    },
    {
        "name": "ixg_multi_input",
        "algorithm": InputXGradient,
        "model": BasicModel_MultiLayer_MultiInput(),
        "attribute_args": {
            "inputs": (10 * torch.randn(12, 3), 5 * torch.randn(12, 3)),
            "additional_forward_args": (2 * torch.randn(12, 3), 5),
            "target": 0,
        },
    },
    {
        "name": "deeplift_conv",
        "algorithm": DeepLift,
        "model": BasicModel_ConvNet(),
        "attribute_args": {"inputs": 100 * torch.randn(4, 1, 10, 10), "target": 3},
    },
    {
        "name": "deepliftshap_multi_layer",
        "algorithm": DeepLiftShap,
        "model": BasicModel_MultiLayer(),
        "attribute_args": {
            "inputs": torch.randn(8, 3),
            "baselines": torch.randn(4, 3),
            "target": 2,
        },
    },
    {
        "name": "ablation_multi_layer",
        "algorithm": FeatureAblation,
        "model": BasicModel_MultiLayer(),
        "attribute_args": {"inputs": torch.randn(8, 3), "target": 0},
    },
    {
        "name": "nt_ig_multi_layer",
        "algorithm": NoiseTunnel,
        "noise_tunnel_of": IntegratedGradients,
        "model": BasicModel_MultiLayer(),
        "attribute_args": {
            "inputs": torch.randn(8, 3),
            "nt_type": "smoothgrad",
            "nt_samples": 4,
            "stdevs": 0.0,
            "target": 1,
        },
    },
    {
        "name": "layer_gradcam_conv",
        "algorithm": LayerGradCam,
        "model": BasicModel_ConvNet(),
        "layer": "conv2",
        "attribute_args": {"inputs": 100 * torch.randn(4, 1, 10, 10), "target": 3},
    },
    {
        "name": "layer_conductance_multi_layer",
        "algorithm": LayerConductance,
        "model": BasicModel_MultiLayer(),
        "layer": "linear1",
        "attribute_args": {"inputs": torch.randn(8, 3), "target": 1},
    },
    {
        "name": "layer_ig_multi_layer",
        "algorithm": LayerIntegratedGradients,
        "model": BasicModel_MultiLayer(),
        "layer": "linear0",
        "attribute_args": {"inputs": torch.randn(8, 3), "target": 1},
    },
    {
        "name": "neuron_conductance_multi_layer",
        "algorithm": NeuronConductance,
        "model": BasicModel_MultiLayer(),
        "layer": "linear1",
        "attribute_args": {
            "inputs": torch.randn(8, 3),
            "neuron_selector": 3,
            "target": 1,
        },
    },
]


def _build(
    config: Dict[str, Any], model: torch.nn.Module
) -> Attribution:
    algorithm: Type[Attribution] = config["algorithm"]
    if "noise_tunnel_of" in config:
        return algorithm(config["noise_tunnel_of"](model))
    if "layer" in config:
        layer = getattr(model.module if hasattr(model, "module") else model, config["layer"])
        return algorithm(model, layer)
    return algorithm(model)


@unittest.skipIf(not torch.cuda.is_available(), "Skipping GPU tests, CUDA not available")
class DataParallelTest(BaseTest):
    dist_file: Optional[str] = None

    @classmethod
    def setUpClass(cls) -> None:
        if torch.distributed.is_available() and _cuda_test_available():
            cls.dist_file = tempfile.NamedTemporaryFile(delete=False).name
            dist.init_process_group(
                backend="nccl",
                init_method=f"file://{cls.dist_file}",
                world_size=1,
                rank=0,
            )

    @classmethod
    def tearDownClass(cls) -> None:
        if dist.is_initialized():
            dist.destroy_process_group()
        if cls.dist_file is not None and os.path.exists(cls.dist_file):
            os.remove(cls.dist_file)

    def _attribute(
        self, config: Dict[str, Any], model: torch.nn.Module, to_gpu: bool
    ) -> Tuple[torch.Tensor, ...]:
        attr_method = _build(config, model)
        attribute_args = dict(config["attribute_args"])
        if to_gpu:
            for key in ("inputs", "baselines", "additional_forward_args"):
                if key not in attribute_args:
                    continue
                value = attribute_args[key]
                if isinstance(value, tuple):
                    attribute_args[key] = _move_to_gpu(value)
                elif isinstance(value, torch.Tensor):
                    attribute_args[key] = value.cuda()
        out = attr_method.attribute(**attribute_args)
        if not isinstance(out, tuple):
            out = (out,)
        return tuple(o.cpu() for o in out)

    def _compare(self, config: Dict[str, Any], mode: DataParallelCompareMode) -> None:
        model = copy.deepcopy(config["model"])
        expected = self._attribute(config, model, to_gpu=False)

        if mode is DataParallelCompareMode.cpu_cuda:
            model_gpu = copy.deepcopy(model).cuda()
        elif mode is DataParallelCompareMode.data_parallel_default:
            model_gpu = torch.nn.DataParallel(copy.deepcopy(model).cuda())
        elif mode is DataParallelCompareMode.data_parallel_alt_dev_ids:
            model_gpu = torch.nn.DataParallel(
                copy.deepcopy(model).cuda(), device_ids=_alt_device_ids()
            )
        elif mode is DataParallelCompareMode.dist_data_parallel:
            model_gpu = torch.nn.parallel.DistributedDataParallel(
                copy.deepcopy(model).cuda(), device_ids=[0]
            )
        else:
            raise AssertionError("DataParallel compare mode type is not valid.")

        actual = self._attribute(config, model_gpu, to_gpu=True)
        self.assertEqual(len(expected), len(actual))
        for e, a in zip(expected, actual):
            assertTensorAlmostEqual(self, a, e, delta=0.01, mode="max")

    def test_cpu_cuda(self) -> None:
        for config in CONFIGS:
            with self.subTest(config["name"]):
                self._compare(config, DataParallelCompareMode.cpu_cuda)

    @unittest.skipIf(not _cuda_test_available(2), "needs at least two GPUs")
    def test_data_parallel_default(self) -> None:
        for config in CONFIGS:
            with self.subTest(config["name"]):
                self._compare(config, DataParallelCompareMode.data_parallel_default)

    @unittest.skipIf(not _cuda_test_available(2), "needs at least two GPUs")
    def test_data_parallel_alt_dev_ids(self) -> None:
        for config in CONFIGS:
            with self.subTest(config["name"]):
                self._compare(config, DataParallelCompareMode.data_parallel_alt_dev_ids)

    def test_dist_data_parallel(self) -> None:
        if not dist.is_initialized():
            self.skipTest("torch.distributed is not initialized")
        for config in CONFIGS:
            if config["algorithm"] in (DeepLift, DeepLiftShap):
                # DDP wraps forward in a way DeepLift's hooks do not support
                continue
            with self.subTest(config["name"]):
                self._compare(config, DataParallelCompareMode.dist_data_parallel)


if __name__ == "__main__":
    unittest.main()
