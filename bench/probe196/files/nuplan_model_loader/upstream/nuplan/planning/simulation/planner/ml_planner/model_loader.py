from typing import List, cast

import torch

from nuplan.planning.simulation.planner.abstract_planner import PlannerInitialization, PlannerInput
from nuplan.planning.training.modeling.torch_module_wrapper import TorchModuleWrapper
from nuplan.planning.training.modeling.types import FeaturesType, TargetsType, move_features_type_to_device
from nuplan.planning.training.preprocessing.feature_builders.abstract_feature_builder import AbstractFeatureBuilder
from nuplan.planning.training.preprocessing.features.abstract_model_feature import AbstractModelFeature


class ModelLoader:
    """Wrapper around a model to interface with planner features and simulation inputs."""

    def __init__(self, model: TorchModuleWrapper) -> None:
        """
        Initializes the ML planner class.
        :param model: Model to use for inference.
        """
        self._model = model
        self._feature_builders = model.get_list_of_required_feature()

        # Run the planner's network on the first GPU when one is visible; simulation workers
        # launched through Ray get exactly one GPU each (see worker_ray.py, num_gpus=1).
        self.device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')
        self._initialized = False

    def _initialize_model(self) -> None:
        """
        Sets up the model.
        """
        self._model.eval()
        self._model = self._model.to(self.device)

    def initialize(self) -> None:
        """
        Initializes ml planner class.
        """
        torch.set_grad_enabled(False)
        self._initialize_model()
        self._initialized = True

    def build_features(self, current_input: PlannerInput, initialization: PlannerInitialization) -> FeaturesType:
        """
        Makes a single inference on a Pytorch/Torchscript model.

        :param current_input: Iteration specific inputs for building the feature.
        :param initialization: Additional data require for building the feature.
        :return: dictionary of FeaturesType types.
        """
        assert self._initialized, "Model loader has not been initialized!"

        features = {
            builder.get_feature_unique_name(): builder.get_features_from_simulation(current_input, initialization)
            for builder in self._feature_builders
        }

        features = {name: cast(AbstractModelFeature, feature).to_feature_tensor() for name, feature in features.items()}
        features = move_features_type_to_device(features, self.device)
        features = {name: cast(AbstractModelFeature, feature).collate([feature]) for name, feature in features.items()}

        return features

    def infer(self, features: FeaturesType) -> TargetsType:
        """
        Makes a single inference on a Pytorch/Torchscript model.
        :param features: dictionary of feature types
        :return: predicted trajectory poses as a numpy array
        """
        # Propagate model
        predictions = self._model.forward(features)

        return predictions

    def load_jit_model(self, path: str) -> None:
        """Optionally swap in a TorchScript export of the same network (used for latency benchmarks)."""
        self._model = torch.jit.load(path, map_location='cuda' if torch.cuda.is_available() else 'cpu')
        self._model.eval()

    @property
    def feature_builders(self) -> List[AbstractFeatureBuilder]:
        """Returns the list of feature builders used by the model."""
        return cast(List[AbstractFeatureBuilder], self._feature_builders)
