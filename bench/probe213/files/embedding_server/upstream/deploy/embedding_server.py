"""HTTP face-embedding service.

POST /embed      multipart image(s) -> 512-d normalized embeddings (one per detected face)
POST /verify     two images -> cosine similarity of their largest faces
GET  /health     device / memory / model info

Detection runs in onnxruntime (SCRFD from the buffalo_l pack), recognition in PyTorch
with an arcface_torch iresnet checkpoint.  Meant to run one process per GPU behind nginx:

    CUDA_VISIBLE_DEVICES=1 uvicorn deploy.embedding_server:app --port 8081
"""
import io
import logging
import os
import threading
import time
from typing import List

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from fastapi import FastAPI, File, HTTPException, UploadFile
from insightface.app import FaceAnalysis
from insightface.utils import face_align
from pydantic import BaseModel

from backbones import get_model

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

try:
    import pynvml
    pynvml.nvmlInit()
    _NVML = True
except Exception:  # pragma: no cover - no driver / running on CPU
    _NVML = False

logger = logging.getLogger("embedding_server")
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")


class Settings(BaseModel):
    network: str = os.environ.get("FACE_NETWORK", "r100")
    weights: str = os.environ.get("FACE_WEIGHTS", "/models/glint360k_r100/model.pt")
    det_pack: str = os.environ.get("FACE_DET_PACK", "buffalo_l")
    det_size: int = int(os.environ.get("FACE_DET_SIZE", "640"))
    device_id: int = int(os.environ.get("FACE_DEVICE_ID", "0"))
    fp16: bool = os.environ.get("FACE_FP16", "1") == "1"
    max_batch: int = int(os.environ.get("FACE_MAX_BATCH", "64"))


cfg = Settings()
device = torch.device(f"cuda:{cfg.device_id}")
torch.backends.cudnn.benchmark = True


class Recognizer(object):
    def __init__(self, network, weights):
        net = get_model(network, fp16=False)
        state = torch.load(weights, map_location=device)
        net.load_state_dict(state)
        self.net = net.eval().to(device)
        self.lock = threading.Lock()
        self.warmup()

    def warmup(self):
        dummy = torch.zeros(8, 3, 112, 112, device=device)
        with torch.inference_mode():
            for _ in range(3):
                self.net(dummy)
        torch.cuda.synchronize(device)

    @torch.inference_mode()
    def embed(self, crops: List[np.ndarray]) -> np.ndarray:
        if not crops:
            return np.zeros((0, 512), dtype=np.float32)
        batch = np.stack(crops)[:, :, :, ::-1].transpose(0, 3, 1, 2).copy()
        x = torch.from_numpy(batch).to(device, non_blocking=True).float()
        x = x.div_(255).sub_(0.5).div_(0.5)
        outs = []
        with self.lock, torch.autocast("cuda", dtype=torch.float16, enabled=cfg.fp16):
            for i in range(0, x.shape[0], cfg.max_batch):
                outs.append(self.net(x[i:i + cfg.max_batch]).float())
        feats = F.normalize(torch.cat(outs), dim=1)
        return feats.cpu().numpy()


def build_detector():
    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    det = FaceAnalysis(name=cfg.det_pack, allowed_modules=["detection"], providers=providers)
    det.prepare(ctx_id=cfg.device_id, det_size=(cfg.det_size, cfg.det_size))
    return det


app = FastAPI(title="face-embedding")
detector = build_detector()
recognizer = Recognizer(cfg.network, cfg.weights)
started = time.time()


def _decode(data: bytes) -> np.ndarray:
    img = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        raise HTTPException(status_code=400, detail="cannot decode image")
    return img


def _faces(img: np.ndarray):
    faces = detector.get(img)
    faces = sorted(faces, key=lambda f: (f.bbox[2] - f.bbox[0]) * (f.bbox[3] - f.bbox[1]), reverse=True)
    crops = [face_align.norm_crop(img, landmark=f.kps, image_size=112) for f in faces]
    return faces, crops


def _gpu_memory():
    info = {
        "allocated_mb": torch.cuda.memory_allocated(device) / 2 ** 20,
        "reserved_mb": torch.cuda.memory_reserved(device) / 2 ** 20,
    }
    if _NVML:
        handle = pynvml.nvmlDeviceGetHandleByIndex(cfg.device_id)
        mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
        util = pynvml.nvmlDeviceGetUtilizationRates(handle)
        info.update(total_mb=mem.total / 2 ** 20, used_mb=mem.used / 2 ** 20, util_pct=util.gpu)
    return info


@app.get("/health")
def health():
    return {
        "status": "ok",
        "uptime_s": round(time.time() - started, 1),
        "device": torch.cuda.get_device_name(device),
        "network": cfg.network,
        "fp16": cfg.fp16,
        "memory": _gpu_memory(),
    }


@app.post("/embed")
async def embed(files: List[UploadFile] = File(...)):
    out = []
    for f in files:
        img = _decode(await f.read())
        faces, crops = _faces(img)
        try:
            feats = recognizer.embed(crops)
        except RuntimeError as e:
            if "out of memory" in str(e):
                torch.cuda.empty_cache()
                raise HTTPException(status_code=503, detail="GPU out of memory, retry with fewer faces")
            raise
        out.append({
            "file": f.filename,
            "faces": [
                {"bbox": [round(float(v), 1) for v in face.bbox], "det_score": float(face.det_score),
                 "embedding": feat.round(6).tolist()}
                for face, feat in zip(faces, feats)
            ],
        })
    return {"results": out}


@app.post("/verify")
async def verify(a: UploadFile = File(...), b: UploadFile = File(...)):
    _, crops_a = _faces(_decode(await a.read()))
    _, crops_b = _faces(_decode(await b.read()))
    if not crops_a or not crops_b:
        raise HTTPException(status_code=422, detail="no face found in one of the images")
    fa, fb = recognizer.embed([crops_a[0], crops_b[0]])
    sim = float(np.dot(fa, fb))
    return {"similarity": round(sim, 4), "same_person": sim > 0.28}
