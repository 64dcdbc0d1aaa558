import logging
import time
from typing import Any, Dict, List, Optional

import torch
from omegaconf import DictConfig

from nuplan.planning.script.builders.model_builder import build_torch_module_wrapper
from nuplan.planning.simulation.planner.abstract_planner import PlannerInitialization, PlannerInput
from nuplan.planning.training.modeling.lightning_module_wrapper import LightningModuleWrapper
from nuplan.planning.training.modeling.torch_module_wrapper import TorchModuleWrapper
from nuplan.planning.training.modeling.types import FeaturesType, TargetsType, move_features_type_to_device
from nuplan.planning.training.preprocessing.feature_builders.abstract_feature_builder import AbstractFeatureBuilder

logger = logging.getLogger(__name__)


def load_model_from_checkpoint(model_config: DictConfig, checkpoint_path: str) -> TorchModuleWrapper:
    """
    Builds the torch module described by model_config and loads the trained weights from a lightning checkpoint.
    :param model_config: hydra config of the model (the `model` group used during training).
    :param checkpoint_path: path to the .ckpt written by the training run.
    :return: the bare TorchModuleWrapper (without the lightning wrapper).
    """
    torch_module_wrapper = build_torch_module_wrapper(model_config)
    model = LightningModuleWrapper.load_from_checkpoint(checkpoint_path, model=torch_module_wrapper).model
    return model


class ModelLoader:
    """Wrapper around model builder and feature builders."""

    def __init__(self, model: TorchModuleWrapper) -> None:
        """
        Initializes the ML planner class.
        :param model: Model to use for inference.
        """
        self._model = model
        self._feature_builders = model.get_list_of_required_feature()

        # Run the planner on the GPU if there is one; simulations with many Ray workers share it
        self._device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        self._initialized = False

        self._inference_runtimes: List[float] = []
        self._feature_runtimes: List[float] = []

    def _initialize_model(self) -> None:
        """
        Moves the model to the chosen device and puts it into evaluation mode.
        """
        self._model.eval()
        torch.set_grad_enabled(False)
        self._model = self._model.to(self._device)

    def initialize(self) -> None:
        """
        Initializes the model loader.
        """
        torch.set_grad_enabled(False)
        self._initialize_model()
        self._initialized = True

    @property
    def feature_builders(self) -> List[AbstractFeatureBuilder]:
        """
        :return: the list of feature builders required by the model.
        """
        return self._feature_builders

    @property
    def device(self) -> torch.device:
        """
        :return: the device the model runs on.
        """
        return self._device

    def build_features(self, current_input: PlannerInput, initialization: PlannerInitialization) -> FeaturesType:
        """
        Makes a single inference on a Pytorch/Torchscript model.
        :param current_input: Iteration specific inputs for building the feature.
        :param initialization: Additional data require for building the feature.
        :return: dictionary of FeaturesType types.
        """
        start = time.perf_counter()
        features = {
            builder.get_feature_unique_name(): builder.get_features_from_simulation(current_input, initialization)
            for builder in self._feature_builders
        }
        features = {name: feature.to_feature_tensor() for name, feature in features.items()}
        features = {name: feature.collate([feature]) for name, feature in features.items()}
        self._feature_runtimes.append(time.perf_counter() - start)
        return features

    def infer(self, features: FeaturesType) -> TargetsType:
        """
        Makes a single inference on a Pytorch/Torchscript model.
        :param features: dictionary of feature types.
        :return: predicted trajectory poses as a numpy array.
        """
        if not self._initialized:
            raise RuntimeError('Model loader not initialized!')

        # Move features to device
        features = move_features_type_to_device(features, self._device)

        start = time.perf_counter()
        # Infer model
        predictions = self._model.forward(features)
        if self._device.type == 'cuda':
            # CUDA kernels are asynchronous: wait so that the runtime below is meaningful
            torch.cuda.synchronize(self._device)
        self._inference_runtimes.append(time.perf_counter() - start)

        # Convert to numpy
        return predictions

    def runtime_report(self) -> Dict[str, Any]:
        """
        :return: mean / max feature-building and inference runtimes in ms since initialization.
        """
        def _stats(values: List[float]) -> Optional[Dict[str, float]]:
            if len(values) == 0:
                return None
            return {'mean_ms': 1000.0 * sum(values) / len(values), 'max_ms': 1000.0 * max(values)}

        report = {
            'device': str(self._device),
            'features': _stats(self._feature_runtimes),
            'inference': _stats(self._inference_runtimes),
        }
        if self._device.type == 'cuda':
            report['max_memory_allocated_mb'] = torch.cuda.max_memory_allocated(self._device) / 2 ** 20
        return report
