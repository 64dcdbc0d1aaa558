# pylint: disable=W0223
# Details : https://github.com/PyCQA/pylint/issues/3098
"""
Custom handler that runs the pre-processing pipeline with NVIDIA DALI.
The serialized DALI pipeline (model.dali) is shipped inside the .mar archive together with
dali_config.json, and DALI's PyTorch iterator hands back tensors that already live on the GPU.
"""
import json
import logging
import os

import numpy as np
import torch
from nvidia.dali.pipeline import Pipeline
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

from ts.torch_handler.image_classifier import ImageClassifier

logger = logging.getLogger(__name__)


class DALIHandler(ImageClassifier):
    """
    Image classifier whose preprocess step is a DALI pipeline (decode + resize + crop + normalize
    on the GPU using the "mixed" nvjpeg decoder).
    """

    def __init__(self):
        super(DALIHandler, self).__init__()
        self.dali_file = None
        self.dali_configs = {}
        self.pipe = None
        self.device_id = 0

    def initialize(self, context):
        super().initialize(context)
        properties = context.system_properties
        model_dir = properties.get("model_dir")

        gpu_id = properties.get("gpu_id")
        self.device_id = int(gpu_id) if gpu_id is not None else 0
        self.device = torch.device("cuda:%d" % self.device_id)

        self.dali_file = [
            file for file in os.listdir(model_dir) if file.endswith(".dali")
        ]
        if not len(self.dali_file):
            raise RuntimeError("Missing dali pipeline file.")
        self.PREFETCH_QUEUE_DEPTH = 2
        dali_config_file = os.path.join(model_dir, "dali_config.json")
        if not os.path.isfile(dali_config_file):
            raise RuntimeError("Missing dali_config.json file.")
        with open(dali_config_file) as setup_config_file:
            self.dali_configs = json.load(setup_config_file)
        for key, default in (("batch_size", 32), ("num_threads", 4), ("seed", 12),
                             ("max_batch_size", 32)):
            self.dali_configs.setdefault(key, default)

        filename = os.path.join(model_dir, self.dali_file[0])
        self.pipe = Pipeline.deserialize(
            filename=filename,
            batch_size=self.dali_configs["batch_size"],
            num_threads=self.dali_configs["num_threads"],
            prefetch_queue_depth=self.PREFETCH_QUEUE_DEPTH,
            device_id=self.device_id,
            seed=self.dali_configs["seed"],
        )
        # pylint: disable=protected-access
        self.pipe._max_batch_size = self.dali_configs["max_batch_size"]
        self.pipe._num_threads = self.dali_configs["num_threads"]
        self.pipe._prefetch_queue_depth = self.PREFETCH_QUEUE_DEPTH
        self.model.to(self.device)
        self.model.eval()

    def preprocess(self, data):
        """The preprocess function of MNIST program converts the input data to a float tensor

        Args:
            data (List): Input data from the request is in the form of a Tensor

        Returns:
            list : The preprocess function returns the input image as a list of float tensors.
        """
        batch_tensor = []
        result = []

        input_byte_arrays = [i["body"] if "body" in i else i["data"] for i in data]
        for byte_array in input_byte_arrays:
            np_image = np.frombuffer(byte_array, dtype=np.uint8)
            batch_tensor.append(np_image)  # we can use numpy

        for _ in range(self.PREFETCH_QUEUE_DEPTH):
            self.pipe.feed_input("my_source", batch_tensor)

        datam = DALIGenericIterator(
            [self.pipe],
            ["data"],
            last_batch_policy=LastBatchPolicy.PARTIAL,
            last_batch_padded=True,
        )
        for _, data in enumerate(datam):
            result.append(data[0]["data"])
            break

        return result[0].to(self.device)

    def postprocess(self, data):
        """top-5 classes with their probabilities, mapped through index_to_name.json"""
        probs = torch.softmax(data, dim=1)
        top_p, top_i = probs.topk(min(5, probs.shape[1]), dim=1)
        results = []
        for p_row, i_row in zip(top_p.tolist(), top_i.tolist()):
            labels = [self.mapping.get(str(i), str(i)) if self.mapping else str(i) for i in i_row]
            results.append(dict(zip(labels, p_row)))
        return results

    def inference(self, data, *args, **kwargs):
        with torch.inference_mode():
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                out = self.model(data)
        return out.float()


# --------------------------------------------------------------------------------------------
# serialize.py : builds model.dali ahead of time (run once on a GPU box before torch-model-archiver)
# --------------------------------------------------------------------------------------------
def build_pipeline(batch_size=32, num_threads=8, device_id=0, seed=12):
    from nvidia.dali import fn, pipeline_def, types

    @pipeline_def(batch_size=batch_size, num_threads=num_threads, device_id=device_id, seed=seed)
    def pipe():
        jpegs = fn.external_source(dtype=types.UINT8, name="my_source")
        decoded = fn.decoders.image(jpegs, device="mixed")
        resized = fn.resize(
            decoded,
            size=[256],
            subpixel_scale=False,
            interp_type=types.DALIInterpType.INTERP_LINEAR,
            antialias=True,
            mode="not_smaller",
        )
        normalized = fn.crop_mirror_normalize(
            resized,
            crop_pos_x=0.5,
            crop_pos_y=0.5,
            crop=(224, 224),
            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
            std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
        )
        return normalized

    return pipe()


def serialize(save_path="./model.dali", config_path="./dali_config.json"):
    with open(config_path) as fp:
        cfg = json.load(fp)
    p = build_pipeline(
        batch_size=cfg["batch_size"],
        num_threads=cfg["num_threads"],
        device_id=0,
        seed=cfg["seed"],
    )
    p.serialize(filename=save_path)
    logger.info("Saved DALI pipeline to %s", save_path)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    serialize()
