"""SpeciesNet-style species classifier (PyTorch port).

Runs an EfficientNetV2-M backbone (timm) on MegaDetector animal crops (or full
images when no detection is available) and returns the top-k labels in the
SpeciesNet taxonomy string format:

    "<uuid>;<class>;<order>;<family>;<genus>;<species>;<common name>"

The ensemble (detector + classifier + geofence + taxonomic rollup) lives in
ensemble.py; this module only deals with the classifier itself.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
from typing import Iterable, Optional

import numpy as np
import PIL.Image
import timm
import torch
import torch.nn.functional as F
from torchvision.transforms import v2 as T

logger = logging.getLogger(__name__)

IMG_SIZE = 480
BLANK = "f1856211-cfb7-4a5b-9158-c0f72fd09ee6;;;;;;blank"
ANIMAL = "1f689929-883d-4dae-958c-3d57ab5b6c16;;;;;;animal"


def _pick_device(device: Optional[str] = None) -> torch.device:
    """Choose the inference device. `device` overrides autodetection."""
    if device:
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda:0")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def _auto_batch_size(device: torch.device, img_size: int = IMG_SIZE) -> int:
    """Pick a batch size from free device memory (rough numbers for EffNetV2-M @480, fp16)."""
    if device.type != "cuda":
        return 8
    free, total = torch.cuda.mem_get_info(device)
    per_image = 0.11 * (img_size / 480) ** 2 * 2 ** 30  # ~110 MB / image incl. activations
    bs = int(0.8 * free // per_image)
    bs = max(1, min(256, 2 ** int(math.log2(max(bs, 1)))))
    logger.info("auto batch size %d (%.1f/%.1f GiB free)", bs, free / 2 ** 30, total / 2 ** 30)
    return bs


@dataclasses.dataclass
class ClassifierInput:
    filepath: str
    img: Optional[torch.Tensor]  # CHW float in [0,1], already cropped/resized
    bbox: Optional[tuple[float, float, float, float]] = None


class SpeciesNetClassifier:
    """Wraps the timm backbone and the label list."""

    def __init__(self, model_dir: str, device: Optional[str] = None,
                 use_half: Optional[bool] = None, channels_last: bool = True):
        self.model_dir = model_dir
        self.device = _pick_device(device)
        with open(os.path.join(model_dir, "labels.txt")) as f:
            self.labels = [line.strip() for line in f if line.strip()]

        self.model = timm.create_model("tf_efficientnetv2_m", pretrained=False,
                                       num_classes=len(self.labels))
        state = torch.load(os.path.join(model_dir, "classifier.pt"), map_location="cpu")
        self.model.load_state_dict(state.get("model", state))
        self.model.eval().to(self.device)

        if use_half is None:
            use_half = self.device.type == "cuda"
        self.use_half = use_half
        if self.use_half:
            self.model.half()
        if channels_last and self.device.type == "cuda":
            self.model = self.model.to(memory_format=torch.channels_last)
            self.channels_last = True
        else:
            self.channels_last = False

        # Inference-only; let cuDNN pick the fastest conv algorithms for our fixed input size
        torch.backends.cudnn.benchmark = True

        self.normalize = T.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5])
        self.batch_size = _auto_batch_size(self.device)

    # ------------------------------------------------------------------ preprocessing

    @staticmethod
    def preprocess(filepath: str, bbox=None) -> ClassifierInput:
        """Load, crop to the (normalized xywh) bbox with a bit of context, resize."""
        try:
            img = PIL.Image.open(filepath).convert("RGB")
        except (OSError, PIL.UnidentifiedImageError):
            logger.warning("unreadable image %s", filepath)
            return ClassifierInput(filepath, None, bbox)
        if bbox is not None:
            W, H = img.size
            x, y, w, h = bbox
            pad = 0.1
            left = max(0, int((x - pad * w) * W))
            top = max(0, int((y - pad * h) * H))
            right = min(W, int((x + w + pad * w) * W))
            bottom = min(H, int((y + h + pad * h) * H))
            if right - left > 2 and bottom - top > 2:
                img = img.crop((left, top, right, bottom))
        img = img.resize((IMG_SIZE, IMG_SIZE), PIL.Image.BILINEAR)
        t = torch.from_numpy(np.asarray(img, dtype=np.uint8).copy()).permute(2, 0, 1)
        return ClassifierInput(filepath, t.float().div_(255), bbox)

    # ------------------------------------------------------------------ inference

    @torch.inference_mode()
    def predict_batch(self, inputs: list[ClassifierInput], topk: int = 5) -> list[dict]:
        ok = [i for i, inp in enumerate(inputs) if inp.img is not None]
        results: list[dict] = [
            {"filepath": inp.filepath, "failures": ["CLASSIFIER"]} for inp in inputs
        ]
        if not ok:
            return results

        x = torch.stack([inputs[i].img for i in ok])
        x = self.normalize(x)
        x = x.to(self.device, non_blocking=True)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        if self.use_half:
            x = x.half()

        logits = self.model(x)
        probs = F.softmax(logits.float(), dim=-1)
        top_p, top_i = probs.topk(topk, dim=-1)
        top_p, top_i = top_p.cpu().numpy(), top_i.cpu().numpy()

        for row, i in enumerate(ok):
            results[i] = {
                "filepath": inputs[i].filepath,
                "classifications": {
                    "classes": [self.labels[j] for j in top_i[row]],
                    "scores": [float(s) for s in top_p[row]],
                },
            }
        return results

    def predict(self, items: Iterable[tuple[str, Optional[tuple]]], topk: int = 5) -> list[dict]:
        """items: (filepath, bbox-or-None) pairs."""
        items = list(items)
        out: list[dict] = []
        for start in range(0, len(items), self.batch_size):
            chunk = [self.preprocess(fp, bb) for fp, bb in items[start:start + self.batch_size]]
            out.extend(self.predict_batch(chunk, topk=topk))
        if self.device.type == "cuda":
            logger.debug("peak memory %.2f GiB", torch.cuda.max_memory_allocated() / 2 ** 30)
        return out


def rollup_to_rank(classes: list[str], scores: list[float], threshold: float = 0.65) -> tuple[str, float]:
    """Walk up the taxonomy until the summed score of a common ancestor passes `threshold`."""
    if not classes:
        return BLANK, 0.0
    if scores[0] >= threshold:
        return classes[0], scores[0]
    ranks = ["species", "genus", "family", "order", "class"]
    fields = [c.split(";") for c in classes]
    for depth in range(5, 1, -1):  # species -> genus -> family -> order -> class
        buckets: dict[tuple, float] = {}
        for f, s in zip(fields, scores):
            key = tuple(f[1:depth + 1])
            if all(key):
                buckets[key] = buckets.get(key, 0.0) + s
        if buckets:
            key, total = max(buckets.items(), key=lambda kv: kv[1])
            if total >= threshold:
                logger.debug("rolled up to %s (%s)", ranks[5 - depth], key)
                label = ";".join(["", *key] + [""] * (6 - len(key)))
                return label, total
    return ANIMAL, scores[0]
