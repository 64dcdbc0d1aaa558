"""
Minimal HTTP service exposing BGE-M3 embeddings and bge-reranker scores.

    CUDA_VISIBLE_DEVICES=1 EMBED_MODEL=BAAI/bge-m3 uvicorn embedding_server:app --port 8080

One process serves one GPU; run several replicas (one per GPU) behind a load balancer.
"""
import logging
import os
import time
from typing import List, Optional

# pin this replica to a single GPU unless the launcher already did
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

import numpy as np
import pynvml
import torch
from fastapi import FastAPI, HTTPException, Request
from pydantic import BaseModel, Field

from FlagEmbedding import BGEM3FlagModel, FlagReranker

logger = logging.getLogger("embedding_server")
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

MODEL_NAME = os.getenv("EMBED_MODEL", "BAAI/bge-m3")
RERANK_MODEL = os.getenv("RERANK_MODEL", "BAAI/bge-reranker-v2-m3")
DEVICE = os.getenv("EMBED_DEVICE", "cuda:0")
MAX_BATCH = int(os.getenv("MAX_BATCH", "64"))
MAX_LENGTH = int(os.getenv("MAX_LENGTH", "8192"))

# Ampere+: allow TF32 for the fp32 pooling / normalisation ops
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.benchmark = True

app = FastAPI(title="bge-m3 embedding service")
_state = {}


class EmbedRequest(BaseModel):
    input: List[str] = Field(..., min_items=1)
    return_sparse: bool = False
    return_colbert: bool = False
    max_length: Optional[int] = None


class RerankRequest(BaseModel):
    query: str
    documents: List[str] = Field(..., min_items=1)
    normalize: bool = True
    top_n: Optional[int] = None


@app.on_event("startup")
def load_models():
    logger.info(f"Loading {MODEL_NAME} and {RERANK_MODEL} on {DEVICE}")
    pynvml.nvmlInit()
    _state["nvml_handle"] = pynvml.nvmlDeviceGetHandleByIndex(0)
    _state["embedder"] = BGEM3FlagModel(MODEL_NAME, use_fp16=True, device=DEVICE)
    _state["reranker"] = FlagReranker(RERANK_MODEL, use_fp16=True, device=DEVICE)

    # warm up kernels / allocator so the first request is not slow
    with torch.autocast("cuda", dtype=torch.float16):
        _state["embedder"].encode(["warmup"] * 8, batch_size=8, max_length=32)
        _state["reranker"].compute_score([["warmup", "warmup"]] * 8, batch_size=8)
    logger.info(f"Models ready on {torch.cuda.get_device_name(DEVICE)}")


@app.on_event("shutdown")
def release():
    _state.clear()
    torch.cuda.empty_cache()
    pynvml.nvmlShutdown()


@app.middleware("http")
async def add_timing_header(request: Request, call_next):
    start = time.perf_counter()
    response = await call_next(request)
    # make sure queued device work is included in the measured latency
    torch.cuda.synchronize()
    response.headers["X-Process-Time-ms"] = f"{(time.perf_counter() - start) * 1000:.1f}"
    return response


@app.post("/v1/embeddings")
def embeddings(req: EmbedRequest):
    if len(req.input) > 4 * MAX_BATCH:
        raise HTTPException(status_code=413, detail=f"at most {4 * MAX_BATCH} inputs per request")
    max_length = min(req.max_length or MAX_LENGTH, MAX_LENGTH)
    with torch.inference_mode():
        out = _state["embedder"].encode(
            req.input,
            batch_size=MAX_BATCH,
            max_length=max_length,
            return_dense=True,
            return_sparse=req.return_sparse,
            return_colbert_vecs=req.return_colbert,
        )
    data = []
    for i, vec in enumerate(out["dense_vecs"]):
        item = {"index": i, "object": "embedding", "embedding": np.asarray(vec, dtype=np.float32).tolist()}
        if req.return_sparse:
            item["sparse"] = {k: float(v) for k, v in out["lexical_weights"][i].items()}
        if req.return_colbert:
            item["colbert"] = np.asarray(out["colbert_vecs"][i], dtype=np.float32).tolist()
        data.append(item)
    return {"object": "list", "model": MODEL_NAME, "data": data}


@app.post("/v1/rerank")
def rerank(req: RerankRequest):
    pairs = [[req.query, doc] for doc in req.documents]
    with torch.inference_mode():
        scores = _state["reranker"].compute_score(pairs, batch_size=MAX_BATCH, normalize=req.normalize)
    if isinstance(scores, float):
        scores = [scores]
    order = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)
    if req.top_n:
        order = order[: req.top_n]
    return {
        "model": RERANK_MODEL,
        "results": [{"index": i, "relevance_score": float(scores[i]), "document": req.documents[i]} for i in order],
    }


@app.get("/health")
def health():
    free, total = torch.cuda.mem_get_info(DEVICE)
    util = pynvml.nvmlDeviceGetUtilizationRates(_state["nvml_handle"]).gpu
    return {
        "status": "ok",
        "device": DEVICE,
        "gpu_name": torch.cuda.get_device_name(DEVICE),
        "gpu_util_percent": util,
        "mem_free_mib": free // 2**20,
        "mem_total_mib": total // 2**20,
        "torch": torch.__version__,
    }
