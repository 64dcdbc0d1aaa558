# Copyright (c) 2022, NVIDIA CORPORATION.
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
import json
import logging
import pathlib
from typing import List

import cloudpickle
import torch
import triton_python_backend_utils as pb_utils
from torch.utils.dlpack import from_dlpack, to_dlpack

from merlin.core.dispatch import HAS_GPU
from merlin.dag import ColumnSchema, Schema
from merlin.systems.triton.conversions import match_representations
from merlin.systems.triton.utils import triton_error_handling, triton_multi_request

LOG = logging.getLogger("merlin-systems")

sparse_value_marker = "__values"
sparse_nnzs_marker = "__nnzs"


class TritonPythonModel:
    """Model for Triton Python Backend.

    Every Python model must have "TritonPythonModel" as the class name
    """

    def initialize(self, args):
        """Called only once when the model is being loaded. Allowing
        the model to initialize any state associated with this model.

        Parameters
        ----------
        args : dict
          Both keys and values are strings. The dictionary keys and values are:
          * model_config: A JSON string containing the model configuration
          * model_instance_kind: A string containing model instance kind
          * model_instance_device_id: A string containing model instance device ID
          * model_repository: Model repository path
          * model_version: Model version
          * model_name: Model name
        """
        self.model_config = json.loads(args["model_config"])
        self.device = "cuda" if args["model_instance_kind"] == "GPU" else "cpu"
        self.device_id = int(args["model_instance_device_id"])
        if self.device == "cuda":
            torch.cuda.set_device(self.device_id)

        repository_path = pathlib.Path(args["model_repository"])
        model_version = str(args["model_version"])

        # Handle bug in Tritonserver 22.06
        # model_repository argument became path to model.py
        if str(repository_path).endswith(".py"):
            repository_path = repository_path.parent.parent

        version_path = repository_path / model_version
        model_path = version_path / "model.pt"
        schema_path = version_path / "model_info.json"

        with open(schema_path, "r", encoding="utf-8") as f:
            info = json.load(f)
        self.input_schema = Schema(
            [ColumnSchema(name, dtype=spec["dtype"]) for name, spec in info["inputs"].items()]
        )
        self.output_names = list(info["outputs"].keys())
        self.sparse_max = info.get("sparse_max", {})

        try:
            self.model = torch.jit.load(str(model_path), map_location=self.device)
        except RuntimeError:
            # eager model pickled with cloudpickle by PredictPyTorch.export
            with open(model_path, "rb") as f:
                self.model = cloudpickle.load(f)
            self.model = self.model.to(self.device)
        self.model.eval()
        LOG.info("Loaded PyTorch model %s on %s", model_path, self.device)

    def _to_torch(self, request, name):
        tensor = pb_utils.get_input_tensor_by_name(request, name)
        if tensor.is_cpu():
            return torch.from_numpy(tensor.as_numpy()).to(self.device)
        return from_dlpack(tensor.to_dlpack())

    def _build_inputs(self, request):
        inputs = {}
        for col in self.input_schema.column_names:
            values_name = col + sparse_value_marker
            nnzs_name = col + sparse_nnzs_marker
            if pb_utils.get_input_tensor_by_name(request, values_name) is not None:
                values = self._to_torch(request, values_name)
                nnzs = self._to_torch(request, nnzs_name).reshape(-1)
                inputs[col] = (values, nnzs.reshape(-1, 1))
            else:
                inputs[col] = self._to_torch(request, col)
        return inputs

    @triton_multi_request
    @triton_error_handling
    def execute(self, request):
        """Predicts the input batches by running through a PyTorch predict function."""
        inputs = self._build_inputs(request)

        with torch.no_grad():
            outputs = self.model(inputs)
        if isinstance(outputs, torch.Tensor):
            outputs = {self.output_names[0]: outputs}

        output_tensors = []
        for name in self.output_names:
            out = outputs[name].float().contiguous()
            output_tensors.append(pb_utils.Tensor.from_dlpack(name, to_dlpack(out)))

        return pb_utils.InferenceResponse(output_tensors)

    def finalize(self):
        """Release the model and cached device memory when Triton unloads the model."""
        self.model = None
        if self.device != "cpu":
            torch.cuda.empty_cache()
