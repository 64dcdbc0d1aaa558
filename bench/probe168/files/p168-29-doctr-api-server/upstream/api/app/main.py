# Copyright (C) 2021-2023, Mindee.

# This program is licensed under the Apache License 2.0.
# See LICENSE or go to <https://opensource.org/licenses/Apache-2.0> for full license details.
"""
docTR OCR service (PyTorch backend).

    uvicorn app.main:app --host 0.0.0.0 --port 8080 --workers 1

One worker per GPU: the predictor is not thread-safe, requests are serialized with a lock
and batched per document.
"""
import os

os.environ.setdefault("USE_TORCH", "1")

import asyncio
import logging
import time
from typing import Dict, List

import numpy as np
import torch
from fastapi import FastAPI, File, HTTPException, UploadFile
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from doctr.io import DocumentFile
from doctr.models import ocr_predictor

logger = logging.getLogger("doctr-api")
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

DET_ARCH = os.getenv("OCR_DET_ARCH", "db_resnet50")
RECO_ARCH = os.getenv("OCR_RECO_ARCH", "crnn_vgg16_bn")
DEVICE = os.getenv("OCR_DEVICE", "cuda:0")
USE_FP16 = os.getenv("OCR_FP16", "1") == "1"
DET_BS = int(os.getenv("OCR_DET_BS", "4"))
RECO_BS = int(os.getenv("OCR_RECO_BS", "256"))
MAX_PAGES = int(os.getenv("OCR_MAX_PAGES", "50"))


class WordOut(BaseModel):
    value: str
    confidence: float
    geometry: List[List[float]] = Field(..., description="relative ((xmin, ymin), (xmax, ymax))")


class PageOut(BaseModel):
    page_idx: int
    dimensions: List[int]
    words: List[WordOut]


class OCROut(BaseModel):
    name: str
    pages: List[PageOut]
    elapsed_ms: float


def _load_predictor():
    predictor = ocr_predictor(
        det_arch=DET_ARCH,
        reco_arch=RECO_ARCH,
        pretrained=True,
        assume_straight_pages=True,
        det_bs=DET_BS,
        reco_bs=RECO_BS,
    )
    if torch.cuda.is_available() and DEVICE.startswith("cuda"):
        predictor = predictor.to(torch.device(DEVICE))
        if USE_FP16:
            # half precision roughly doubles reco throughput on T4/A10
            predictor = predictor.half()
    else:
        logger.warning("running OCR on CPU (OCR_DEVICE=%s)", DEVICE)
    return predictor.eval()


app = FastAPI(title="docTR API", version="0.7.0", description="OCR for documents (PDF / images)")
predictor = None
_lock = asyncio.Lock()


@app.on_event("startup")
def startup():
    global predictor
    torch.backends.cudnn.benchmark = True
    predictor = _load_predictor()
    # warm-up so the first request does not pay for cuDNN autotuning
    dummy = [np.zeros((1024, 768, 3), dtype=np.uint8)]
    with torch.inference_mode():
        predictor(dummy)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        logger.info("warm-up done on %s (%s)", DEVICE, torch.cuda.get_device_name(0))


@app.get("/health")
def health() -> Dict:
    return {
        "status": "ok",
        "device": DEVICE,
        "det_arch": DET_ARCH,
        "reco_arch": RECO_ARCH,
        "gpu_mem_mb": round(torch.cuda.memory_allocated() / 2 ** 20, 1),
    }


def _export(doc, name: str, elapsed_ms: float) -> OCROut:
    pages = []
    for page in doc.pages:
        words = []
        for block in page.blocks:
            for line in block.lines:
                for word in line.words:
                    words.append(
                        WordOut(
                            value=word.value,
                            confidence=float(word.confidence),
                            geometry=[list(map(float, pt)) for pt in word.geometry],
                        )
                    )
        pages.append(PageOut(page_idx=page.page_idx, dimensions=list(page.dimensions), words=words))
    return OCROut(name=name, pages=pages, elapsed_ms=elapsed_ms)


def _read_document(upload: UploadFile, content: bytes):
    if upload.content_type == "application/pdf" or upload.filename.lower().endswith(".pdf"):
        return DocumentFile.from_pdf(content)
    if upload.content_type in ("image/jpeg", "image/png", "image/tiff") or upload.filename.lower().endswith(
        (".jpg", ".jpeg", ".png", ".tif", ".tiff")
    ):
        return DocumentFile.from_images(content)
    raise HTTPException(status_code=415, detail=f"unsupported file type {upload.content_type}")


@app.post("/ocr", response_model=List[OCROut])
async def perform_ocr(files: List[UploadFile] = File(...)):
    results = []
    for upload in files:
        content = await upload.read()
        pages = _read_document(upload, content)
        if len(pages) > MAX_PAGES:
            raise HTTPException(status_code=413, detail=f"{upload.filename}: more than {MAX_PAGES} pages")
        async with _lock:
            t0 = time.perf_counter()
            try:
                with torch.inference_mode():
                    doc = predictor(pages)
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                raise HTTPException(status_code=503, detail="GPU out of memory, retry with fewer pages")
            torch.cuda.synchronize(DEVICE)
            elapsed = (time.perf_counter() - t0) * 1000
        results.append(_export(doc, upload.filename, elapsed))
    return results


@app.exception_handler(RuntimeError)
async def runtime_error_handler(request, exc: RuntimeError):
    logger.exception("inference failed")
    return JSONResponse(status_code=500, content={"detail": str(exc)})
