"""Ray Serve deployment: docTR detector + recognizer behind an HTTP ingress.

    serve run serve.ocr_app:app
"""
import io
import logging
import os
from typing import Dict, List

import numpy as np
import torch
from fastapi import FastAPI, File, UploadFile
from PIL import Image
from ray import serve

from doctr.io import DocumentFile
from doctr.models import ocr_predictor

logger = logging.getLogger("ray.serve")
api = FastAPI(title="ocr")

NUM_REPLICAS = int(os.environ.get("OCR_REPLICAS", "2"))
MAX_BATCH = int(os.environ.get("OCR_MAX_BATCH", "16"))


@serve.deployment(
    num_replicas=NUM_REPLICAS,
    ray_actor_options={"num_gpus": 1, "num_cpus": 4},
    max_ongoing_requests=64,
)
@serve.ingress(api)
class OCRDeployment:
    def __init__(self, det_arch: str = "db_resnet50", reco_arch: str = "crnn_vgg16_bn"):
        # Ray sets CUDA_VISIBLE_DEVICES for the actor, so the card is always index 0 here
        gpu_ids = ray_gpu_ids()
        self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        logger.info("replica on GPUs %s -> %s", gpu_ids, self.device)
        self.predictor = ocr_predictor(
            det_arch=det_arch, reco_arch=reco_arch, pretrained=True,
            assume_straight_pages=True, det_bs=4, reco_bs=256,
        )
        self.predictor = self.predictor.to(self.device)
        if self.device.type == "cuda":
            self.predictor.det_predictor.model.half()
            self.predictor.reco_predictor.model.half()
        self._warmup()

    def _warmup(self):
        dummy = np.zeros((1024, 768, 3), dtype=np.uint8)
        with torch.inference_mode():
            self.predictor([dummy])
        if self.device.type != "cpu":
            torch.cuda.synchronize()

    @serve.batch(max_batch_size=MAX_BATCH, batch_wait_timeout_s=0.05)
    async def _run_batch(self, pages: List[np.ndarray]) -> List[Dict]:
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16,
                                                    enabled=self.device.type == "cuda"):
            result = self.predictor(pages)
        return [page.export() for page in result.pages]

    @api.post("/ocr")
    async def ocr(self, file: UploadFile = File(...)) -> Dict:
        data = await file.read()
        if file.filename.lower().endswith(".pdf"):
            pages = DocumentFile.from_pdf(data)
        else:
            pages = [np.array(Image.open(io.BytesIO(data)).convert("RGB"))]
        exports = [await self._run_batch(p) for p in pages]
        return {"pages": exports}

    @api.get("/stats")
    def stats(self) -> Dict:
        if self.device.type != "cuda":
            return {"device": "cpu"}
        return {
            "device": str(self.device),
            "allocated_mb": torch.cuda.memory_allocated() // 2**20,
            "reserved_mb": torch.cuda.memory_reserved() // 2**20,
        }


def ray_gpu_ids():
    import ray
    try:
        return ray.get_gpu_ids()
    except Exception:  # outside of a Ray worker
        return os.environ.get("CUDA_VISIBLE_DEVICES", "")


app = OCRDeployment.bind()
