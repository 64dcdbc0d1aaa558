"""Celery tasks that run OCR on GPU workers.

One Celery worker process is started per GPU slot (``--concurrency N`` with the
prefork pool). Each child process grabs a device round-robin at start-up and
loads the detector / recognizer once.
"""
import base64
import io
import itertools
import logging
import os
import time

import numpy as np
import torch
from celery import Celery, signals
from celery.utils.log import get_task_logger
from PIL import Image

from ocr_service.models import load_detector, load_recognizer
from ocr_service.postprocess import boxes_to_lines, sort_reading_order

logger = get_task_logger(__name__)

BROKER_URL = os.environ.get("OCR_BROKER_URL", "redis://localhost:6379/0")
RESULT_BACKEND = os.environ.get("OCR_RESULT_BACKEND", "redis://localhost:6379/1")
MODEL_DIR = os.environ.get("OCR_MODEL_DIR", "/models")
USE_FP16 = os.environ.get("OCR_FP16", "1") == "1"

app = Celery("ocr_service", broker=BROKER_URL, backend=RESULT_BACKEND)
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    worker_prefetch_multiplier=1,   # one job at a time per GPU process
    task_acks_late=True,
    worker_max_tasks_per_child=500,  # recycle to release fragmented GPU memory
)

_DEVICE = None
_DETECTOR = None
_RECOGNIZER = None
_device_cycle = None


def _num_devices():
    n = torch.cuda.device_count()
    return max(n, 1)


def pick_device(worker_index):
    """Round-robin a CUDA device for this child process."""
    if not torch.cuda.is_available():
        return torch.device("cpu")
    idx = worker_index % _num_devices()
    return torch.device(f"cuda:{idx}")


@signals.worker_process_init.connect
def init_worker(**kwargs):
    """Runs in every prefork child after fork: choose a GPU and load models."""
    global _DEVICE, _DETECTOR, _RECOGNIZER
    # CUDA must not be initialised in the parent before the fork
    worker_index = int(os.environ.get("OCR_WORKER_INDEX", os.getpid()))
    _DEVICE = pick_device(worker_index)
    if _DEVICE.type == "cuda":
        torch.cuda.set_device(_DEVICE)
        torch.backends.cudnn.benchmark = True
    _DETECTOR = load_detector(os.path.join(MODEL_DIR, "det.pth"), device=_DEVICE)
    _RECOGNIZER = load_recognizer(os.path.join(MODEL_DIR, "rec.pth"), device=_DEVICE)
    if USE_FP16 and _DEVICE.type == "cuda":
        _DETECTOR.half()
        _RECOGNIZER.half()
    logger.info("worker %s ready on %s", os.getpid(), _DEVICE)


@signals.worker_process_shutdown.connect
def shutdown_worker(**kwargs):
    global _DETECTOR, _RECOGNIZER
    _DETECTOR = None
    _RECOGNIZER = None
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _decode_image(b64):
    raw = base64.b64decode(b64)
    return np.array(Image.open(io.BytesIO(raw)).convert("RGB"))


def _to_tensor(img):
    t = torch.from_numpy(img).permute(2, 0, 1).float().div_(255.0).unsqueeze(0)
    t = t.to(_DEVICE, non_blocking=True)
    if USE_FP16 and _DEVICE.type != "cpu":
        t = t.half()
    return t


@app.task(bind=True, name="ocr.page", autoretry_for=(torch.cuda.OutOfMemoryError,),
          retry_backoff=True, max_retries=3)
def ocr_page(self, image_b64, lang="en"):
    t0 = time.perf_counter()
    img = _decode_image(image_b64)
    with torch.inference_mode():
        boxes = _DETECTOR.detect(_to_tensor(img))
        crops = _DETECTOR.crop(img, boxes)
        texts = _RECOGNIZER.recognize(crops, lang=lang)
    lines = sort_reading_order(boxes_to_lines(boxes, texts))
    return {
        "lines": lines,
        "device": str(_DEVICE),
        "elapsed_ms": round((time.perf_counter() - t0) * 1000, 1),
    }


@app.task(name="ocr.health")
def health():
    info = {"device": str(_DEVICE), "pid": os.getpid()}
    if _DEVICE is not None and _DEVICE.type == "cuda":
        free, total = torch.cuda.mem_get_info(_DEVICE)
        info.update(free_mb=free // 2**20, total_mb=total // 2**20,
                    name=torch.cuda.get_device_name(_DEVICE))
    return info


def warm_all_devices():
    """Called from the CLI before starting workers: checks that every card answers."""
    for idx in itertools.islice(itertools.count(), _num_devices()):
        with torch.cuda.device(idx):
            torch.zeros(1, device="cuda").add_(1)
            torch.cuda.synchronize()
