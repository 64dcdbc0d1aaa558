"""BentoML service exposing a TrOCR line recognizer and an EasyOCR page reader.

    bentoml serve service:OCRService
"""
from __future__ import annotations

import logging
import os
import typing as t

import bentoml
import numpy as np
import torch
from PIL.Image import Image

logger = logging.getLogger("bentoml")

TROCR_ID = os.environ.get("TROCR_MODEL", "microsoft/trocr-base-printed")
EASYOCR_LANGS = os.environ.get("EASYOCR_LANGS", "en,de").split(",")


@bentoml.service(
    resources={"gpu": 1, "gpu_type": "nvidia-l4"},
    traffic={"timeout": 60, "concurrency": 32},
    workers=1,
)
class OCRService:

    def __init__(self) -> None:
        import easyocr
        from transformers import TrOCRProcessor, VisionEncoderDecoderModel

        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.dtype = torch.float16 if self.device == "cuda" else torch.float32
        self.processor = TrOCRProcessor.from_pretrained(TROCR_ID)
        self.model = VisionEncoderDecoderModel.from_pretrained(
            TROCR_ID, torch_dtype=self.dtype).to(self.device).eval()
        # EasyOCR picks the GPU itself when gpu=True
        self.reader = easyocr.Reader(EASYOCR_LANGS, gpu=True, verbose=False)
        logger.info("OCRService loaded on %s (%s)", self.device, self.dtype)

    @bentoml.api(batchable=True, batch_dim=0, max_batch_size=32, max_latency_ms=200)
    def recognize_lines(self, images: t.List[Image]) -> t.List[str]:
        pixel_values = self.processor(images=[im.convert("RGB") for im in images],
                                      return_tensors="pt").pixel_values
        pixel_values = pixel_values.to(self.device, dtype=self.dtype)
        with torch.inference_mode():
            ids = self.model.generate(pixel_values, num_beams=4, max_new_tokens=64)
        return self.processor.batch_decode(ids, skip_special_tokens=True)

    @bentoml.api
    def read_page(self, image: Image, paragraph: bool = False) -> t.List[dict]:
        result = self.reader.readtext(np.asarray(image.convert("RGB")), paragraph=paragraph)
        out = []
        for item in result:
            box, text = item[0], item[1]
            conf = float(item[2]) if len(item) > 2 else None
            out.append({"box": [[int(x), int(y)] for x, y in box], "text": text, "conf": conf})
        return out

    @bentoml.api
    def healthz(self) -> dict:
        info = {"device": self.device, "dtype": str(self.dtype)}
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
            info["mem_used_mb"] = torch.cuda.memory_allocated(0) // 2**20
        return info
