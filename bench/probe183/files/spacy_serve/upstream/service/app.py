"""REST service exposing the trained BC5CDR pipeline.

    uvicorn service.app:app --host 0.0.0.0 --port 8080 --workers 1

One worker per GPU: the transformer weights are loaded once per process and
thinc's CuPy memory pool is not fork-safe, so do not use --workers > 1 on a
single device. Set SPACY_GPU_ID to pick the card (default: first visible).
"""
import logging
import os
import threading
import time
from typing import Dict, List, Optional

import spacy
import torch
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field
from thinc.api import get_current_ops

LOGGER = logging.getLogger("bc5cdr.service")

MODEL_PATH = os.environ.get("SPACY_MODEL", "training/model-best")
GPU_ID = int(os.environ.get("SPACY_GPU_ID", "0"))
BATCH_SIZE = int(os.environ.get("SPACY_BATCH_SIZE", "32"))
MAX_TEXT_CHARS = int(os.environ.get("SPACY_MAX_CHARS", "100000"))
EMPTY_CACHE_EVERY = int(os.environ.get("SPACY_EMPTY_CACHE_EVERY", "500"))

app = FastAPI(title="BC5CDR NER", version="0.2.0")
_nlp_lock = threading.Lock()
_state: Dict[str, object] = {"requests": 0, "docs": 0}


class Entity(BaseModel):
    text: str
    label: str
    start_char: int
    end_char: int


class ParseRequest(BaseModel):
    texts: List[str] = Field(..., min_items=1, max_items=256)
    batch_size: Optional[int] = None


class ParseResponse(BaseModel):
    entities: List[List[Entity]]
    elapsed_ms: float


def _load_pipeline():
    # prefer_gpu() silently falls back to CPU when CuPy/CUDA is missing;
    # we log which one we got so ops can tell from the logs.
    using_gpu = spacy.prefer_gpu(GPU_ID)
    nlp = spacy.load(MODEL_PATH)
    LOGGER.info(
        "loaded %s (pipes=%s) using_gpu=%s ops=%s",
        MODEL_PATH, nlp.pipe_names, using_gpu, type(get_current_ops()).__name__,
    )
    if using_gpu:
        LOGGER.info("CUDA device: %s", torch.cuda.get_device_name(GPU_ID))
    return nlp, using_gpu


NLP, USING_GPU = _load_pipeline()


def _maybe_free_memory() -> None:
    if not USING_GPU:
        return
    if _state["requests"] % EMPTY_CACHE_EVERY == 0:
        ops = get_current_ops()
        # CuPy's pool and PyTorch's caching allocator each hold on to blocks
        if hasattr(ops, "xp") and ops.xp.__name__ == "cupy":
            ops.xp.get_default_memory_pool().free_all_blocks()
        torch.cuda.empty_cache()


@app.get("/health")
def health() -> Dict[str, object]:
    info: Dict[str, object] = {
        "model": MODEL_PATH,
        "pipes": NLP.pipe_names,
        "gpu": USING_GPU,
        "requests": _state["requests"],
        "docs": _state["docs"],
    }
    if USING_GPU:
        free, total = torch.cuda.mem_get_info(GPU_ID)
        info["gpu_mem_free_mb"] = free // 2 ** 20
        info["gpu_mem_total_mb"] = total // 2 ** 20
    return info


@app.post("/parse", response_model=ParseResponse)
def parse(req: ParseRequest) -> ParseResponse:
    for text in req.texts:
        if len(text) > MAX_TEXT_CHARS:
            raise HTTPException(status_code=413, detail=f"text longer than {MAX_TEXT_CHARS} chars")
    batch_size = req.batch_size or BATCH_SIZE
    start = time.perf_counter()
    with _nlp_lock:
        docs = list(NLP.pipe(req.texts, batch_size=batch_size))
        _state["requests"] = int(_state["requests"]) + 1
        _state["docs"] = int(_state["docs"]) + len(docs)
        _maybe_free_memory()
    elapsed = (time.perf_counter() - start) * 1000.0
    out = [
        [
            Entity(text=ent.text, label=ent.label_, start_char=ent.start_char, end_char=ent.end_char)
            for ent in doc.ents
        ]
        for doc in docs
    ]
    return ParseResponse(entities=out, elapsed_ms=elapsed)


@app.on_event("shutdown")
def shutdown() -> None:
    LOGGER.info("shutting down after %s requests", _state["requests"])
