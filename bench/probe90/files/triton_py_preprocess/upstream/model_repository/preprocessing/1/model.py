# Copyright 2023, NVIDIA CORPORATION & AFFILIATES. All rights reserved.
#
# Triton Python-backend model: image pre-processing for the ensemble
#   preprocessing (python) -> resnet50_trt (tensorrt_plan) -> postprocessing (python)
#
# Inputs arrive as raw encoded bytes (TYPE_STRING); the output is an NCHW fp16 tensor that
# is handed to the TensorRT model without leaving the GPU (zero-copy via DLPack).

import io
import json

import numpy as np
import torch
import torch.nn.functional as F
import triton_python_backend_utils as pb_utils
from PIL import Image
from torch.utils.dlpack import from_dlpack, to_dlpack
from torchvision.io import decode_jpeg


class TritonPythonModel:
    """Your Python model must use the same class name. Every Python model
    that is created must have "TritonPythonModel" as the class name.
    """

    @staticmethod
    def auto_complete_config(auto_complete_model_config):
        """Lets Triton fill in inputs/outputs when config.pbtxt omits them."""
        inputs = [{"name": "INPUT_0", "data_type": "TYPE_STRING", "dims": [1]}]
        outputs = [{"name": "OUTPUT_0", "data_type": "TYPE_FP16", "dims": [3, 224, 224]}]
        config = auto_complete_model_config.as_dict()
        have_in = {i["name"] for i in config["input"]}
        have_out = {o["name"] for o in config["output"]}
        for i in inputs:
            if i["name"] not in have_in:
                auto_complete_model_config.add_input(i)
        for o in outputs:
            if o["name"] not in have_out:
                auto_complete_model_config.add_output(o)
        auto_complete_model_config.set_max_batch_size(64)
        auto_complete_model_config.set_dynamic_batching()
        return auto_complete_model_config

    def initialize(self, args):
        """`initialize` is called only once when the model is being loaded.

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
        self.model_config = model_config = json.loads(args["model_config"])

        output0_config = pb_utils.get_output_config_by_name(model_config, "OUTPUT_0")
        self.output0_dtype = pb_utils.triton_string_to_numpy(output0_config["data_type"])

        params = model_config.get("parameters", {})
        self.size = int(params.get("image_size", {}).get("string_value", "224"))
        self.resize = int(params.get("resize_size", {}).get("string_value", "256"))

        if args["model_instance_kind"] == "GPU":
            self.device = torch.device("cuda:{}".format(args["model_instance_device_id"]))
            torch.cuda.set_device(self.device)
        else:
            self.device = torch.device("cpu")

        mean = torch.tensor([0.485, 0.456, 0.406], device=self.device).view(1, 3, 1, 1)
        std = torch.tensor([0.229, 0.224, 0.225], device=self.device).view(1, 3, 1, 1)
        self.scale = (1.0 / (255.0 * std)).half()
        self.shift = (-mean / std).half()

        # a private stream so that pre-processing of the next request overlaps the
        # TensorRT execution of the previous one inside the ensemble scheduler
        self.stream = torch.cuda.Stream(device=self.device)

    def _decode(self, raw: bytes) -> torch.Tensor:
        if raw[:2] == b"\xff\xd8" and self.device.type == "cuda":
            data = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
            return decode_jpeg(data, device=self.device)
        img = Image.open(io.BytesIO(raw)).convert("RGB")
        arr = torch.from_numpy(np.asarray(img).copy()).permute(2, 0, 1)
        return arr.to(self.device, non_blocking=True)

    def _resize_center_crop(self, img: torch.Tensor) -> torch.Tensor:
        _, h, w = img.shape
        s = self.resize / min(h, w)
        nh, nw = max(self.size, round(h * s)), max(self.size, round(w * s))
        img = F.interpolate(img[None].float(), size=(nh, nw), mode="bilinear", align_corners=False)
        top, left = (nh - self.size) // 2, (nw - self.size) // 2
        return img[:, :, top: top + self.size, left: left + self.size]

    def execute(self, requests):
        """`execute` must be implemented in every Python model. `execute`
        function receives a list of pb_utils.InferenceRequest as the only
        argument. This function is called when an inference is requested
        for this model. Depending on the batching configuration (e.g. Dynamic
        Batching) used, `requests` may contain multiple requests.
        """
        responses = []
        with torch.cuda.stream(self.stream):
            for request in requests:
                in_0 = pb_utils.get_input_tensor_by_name(request, "INPUT_0")
                blobs = in_0.as_numpy()
                batch = []
                for blob in blobs.reshape(-1):
                    img = self._decode(bytes(blob))
                    batch.append(self._resize_center_crop(img))
                x = torch.cat(batch, dim=0).half()
                x = x * self.scale + self.shift
                x = x.contiguous()

                out_tensor_0 = pb_utils.Tensor.from_dlpack("OUTPUT_0", to_dlpack(x))
                responses.append(pb_utils.InferenceResponse(output_tensors=[out_tensor_0]))
        self.stream.synchronize()
        return responses

    def finalize(self):
        """`finalize` is called only once when the model is being unloaded.
        Implementing `finalize` function is OPTIONAL. This function allows
        the model to perform any necessary clean ups before exit.
        """
        self.stream = None
        torch.cuda.empty_cache()
        print("Cleaning up...")


def _debug_roundtrip(tensor: pb_utils.Tensor) -> torch.Tensor:
    """helper used by the unit tests: pb tensor -> torch without a copy"""
    t = from_dlpack(tensor.to_dlpack())
    return t.to(torch.float32)
