"""
Image classification handler that decodes JPEG payloads directly on the GPU with nvjpeg
(torchvision.io.decode_jpeg(device="cuda")) and runs a channels-last fp16 ResNet/EfficientNet
in batches. Based on the ImageClassifier / VisionHandler pair shipped with TorchServe.
"""
import base64
import io
import json
import logging
import os
from typing import List

import torch
import torch.nn.functional as F
import torchvision
from PIL import Image
from torchvision import transforms
from torchvision.io import ImageReadMode, decode_jpeg

from ts.torch_handler.base_handler import BaseHandler
from ts.utils.util import map_class_to_label

logger = logging.getLogger(__name__)

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

torch.backends.cudnn.benchmark = True


class GPUDecodeImageClassifier(BaseHandler):
    """
    Decodes on device, normalises on device, classifies, returns top-k.
    Falls back to PIL decoding for PNG/WebP payloads.
    """

    topk = 5
    image_size = 224

    def __init__(self):
        super().__init__()
        self.use_fp16 = True
        self.channels_last = True
        self.mean = None
        self.std = None
        self.pil_transform = transforms.Compose(
            [
                transforms.Resize(256),
                transforms.CenterCrop(self.image_size),
                transforms.ToTensor(),
            ]
        )

    def initialize(self, context):
        super().initialize(context)
        cfg = getattr(self, "model_yaml_config", {}) or {}
        handler_cfg = cfg.get("handler", {})
        self.topk = int(handler_cfg.get("topk", self.topk))
        self.use_fp16 = bool(handler_cfg.get("fp16", True)) and self.device.type == "cuda"
        self.channels_last = bool(handler_cfg.get("channels_last", True))

        if self.use_fp16:
            self.model = self.model.half()
        if self.channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)

        self.mean = torch.tensor(IMAGENET_MEAN, device=self.device).view(1, 3, 1, 1)
        self.std = torch.tensor(IMAGENET_STD, device=self.device).view(1, 3, 1, 1)

        # warm up nvjpeg + cudnn autotuner with a dummy batch
        max_batch = int(handler_cfg.get("warmup_batch", 8))
        dummy = torch.zeros(
            max_batch, 3, self.image_size, self.image_size, device=self.device
        )
        if self.use_fp16:
            dummy = dummy.half()
        with torch.inference_mode():
            self.model(dummy)
        torch.cuda.synchronize()
        logger.info("Warm-up done on %s", torch.cuda.get_device_name(self.device))

    # ------------------------------------------------------------------ decode
    @staticmethod
    def _payload_bytes(row):
        image = row.get("data") or row.get("body")
        if isinstance(image, str):
            image = base64.b64decode(image)
        if isinstance(image, (bytearray, bytes)):
            return bytes(image)
        if isinstance(image, list):
            return None
        raise ValueError("unsupported payload type %s" % type(image))

    def _decode_one(self, raw: bytes) -> torch.Tensor:
        if raw[:2] == b"\xff\xd8":
            data = torch.frombuffer(raw, dtype=torch.uint8)
            img = decode_jpeg(data, mode=ImageReadMode.RGB, device="cuda")
            img = img.float().div_(255.0)
        else:
            img = self.pil_transform(Image.open(io.BytesIO(raw)).convert("RGB"))
            img = img.to(self.device, non_blocking=True)
        return img

    def _resize_crop(self, img: torch.Tensor) -> torch.Tensor:
        _, h, w = img.shape
        scale = 256.0 / min(h, w)
        nh, nw = int(round(h * scale)), int(round(w * scale))
        img = F.interpolate(
            img.unsqueeze(0), size=(nh, nw), mode="bilinear", align_corners=False,
            antialias=True,
        )[0]
        top = (nh - self.image_size) // 2
        left = (nw - self.image_size) // 2
        return img[:, top: top + self.image_size, left: left + self.image_size]

    def preprocess(self, data):
        images: List[torch.Tensor] = []
        for row in data:
            raw = self._payload_bytes(row)
            if raw is None:
                tensor = torch.tensor(row.get("data") or row.get("body"))
                images.append(tensor.to(self.device))
                continue
            img = self._decode_one(raw)
            images.append(self._resize_crop(img))
        batch = torch.stack(images)
        batch = (batch - self.mean) / self.std
        if self.use_fp16:
            batch = batch.half()
        return batch

    # --------------------------------------------------------------- inference
    @torch.cuda.amp.autocast()
    def _forward(self, batch):
        return self.model(batch)

    def inference(self, data, *args, **kwargs):
        with torch.inference_mode():
            logits = self._forward(data)
        return logits.float()

    def postprocess(self, data):
        ps = F.softmax(data, dim=1)
        probs, classes = torch.topk(ps, self.topk, dim=1)
        probs = probs.tolist()
        classes = classes.tolist()
        return map_class_to_label(probs, self.mapping, classes)

    def get_insights(self, tensor_data, _, target=0):
        """Integrated-gradients attribution for the `explain` endpoint (fp32 on purpose)."""
        from captum.attr import IntegratedGradients

        model_fp32 = self.model.float()
        ig = IntegratedGradients(model_fp32)
        baseline = torch.zeros_like(tensor_data, dtype=torch.float32)
        attributions = ig.attribute(
            tensor_data.float(), baselines=baseline, target=int(target), n_steps=32,
            internal_batch_size=8,
        )
        if self.use_fp16:
            self.model = self.model.half()
        return attributions.abs().sum(dim=1).cpu().tolist()

    def describe_handle(self):
        props = torch.cuda.get_device_properties(self.device)
        return json.dumps(
            {
                "device": props.name,
                "sm_count": props.multi_processor_count,
                "fp16": self.use_fp16,
                "channels_last": self.channels_last,
                "torchvision": torchvision.__version__,
                "worker_pid": os.getpid(),
            }
        )
