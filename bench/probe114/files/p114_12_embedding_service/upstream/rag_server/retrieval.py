"""Embedding + rerank + vector search micro-service for the local RAG stack.

* bi-encoder:  BAAI/bge-large-en-v1.5 (sentence-transformers)
* reranker:    BAAI/bge-reranker-base (CrossEncoder)
* index:       FAISS flat inner-product index, mirrored on the GPU for search

Run with ``uvicorn rag_server.retrieval:app --port 8010``.
"""
from __future__ import annotations

import json
import logging
import os
import pathlib
import threading
import time
from typing import List, Optional

import faiss
import numpy as np
import torch
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel
from sentence_transformers import CrossEncoder, SentenceTransformer

logger = logging.getLogger("rag_server.retrieval")

EMBED_MODEL = os.environ.get("EMBED_MODEL", "BAAI/bge-large-en-v1.5")
RERANK_MODEL = os.environ.get("RERANK_MODEL", "BAAI/bge-reranker-base")
INDEX_PATH = pathlib.Path(os.environ.get("INDEX_PATH", "data/index.faiss"))
META_PATH = INDEX_PATH.with_suffix(".jsonl")
DEVICE = os.environ.get("EMBED_DEVICE", "cuda")
FAISS_GPU_ID = int(os.environ.get("FAISS_GPU_ID", "0"))
QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "

# TF32 matmuls are fine for embeddings and ~2x faster on Ampere
torch.backends.cuda.matmul.allow_tf32 = True


class Retriever:
    def __init__(self):
        self.lock = threading.Lock()
        self.embedder = SentenceTransformer(EMBED_MODEL, device=DEVICE)
        self.reranker = CrossEncoder(RERANK_MODEL, max_length=512, device=DEVICE)
        if DEVICE.startswith("cuda"):
            # half precision halves the VRAM and is numerically fine for cosine similarity
            self.embedder.half()
            self.reranker.model.half()
        self.dim = self.embedder.get_sentence_embedding_dimension()
        self.gpu_res = faiss.StandardGpuResources()
        self.gpu_res.setTempMemory(256 * 1024 * 1024)
        self.cpu_index = faiss.IndexFlatIP(self.dim)
        self.index = None
        self.meta: List[dict] = []
        self._load()

    # ------------------------------------------------------------------ persistence
    def _load(self):
        if INDEX_PATH.exists():
            self.cpu_index = faiss.read_index(str(INDEX_PATH))
            with open(META_PATH, encoding="utf-8") as f:
                self.meta = [json.loads(line) for line in f]
            logger.info("loaded %d vectors from %s", self.cpu_index.ntotal, INDEX_PATH)
        self._to_gpu()

    def _to_gpu(self):
        co = faiss.GpuClonerOptions()
        co.useFloat16 = True
        self.index = faiss.index_cpu_to_gpu(self.gpu_res, FAISS_GPU_ID, self.cpu_index, co)

    def save(self):
        INDEX_PATH.parent.mkdir(parents=True, exist_ok=True)
        faiss.write_index(faiss.index_gpu_to_cpu(self.index), str(INDEX_PATH))
        with open(META_PATH, "w", encoding="utf-8") as f:
            for m in self.meta:
                f.write(json.dumps(m, ensure_ascii=False) + "\n")

    # ------------------------------------------------------------------ encode
    @torch.inference_mode()
    def encode(self, texts: List[str], is_query: bool = False, batch_size: int = 64) -> np.ndarray:
        if is_query:
            texts = [QUERY_INSTRUCTION + t for t in texts]
        emb = self.embedder.encode(
            texts,
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=len(texts) > 1000,
        )
        return emb.astype(np.float32)

    def add(self, docs: List[dict]) -> int:
        vecs = self.encode([d["text"] for d in docs])
        with self.lock:
            self.index.add(vecs)
            self.meta.extend(docs)
        return len(docs)

    def search(self, query: str, k: int = 20, rerank_top: int = 5) -> List[dict]:
        t0 = time.perf_counter()
        q = self.encode([query], is_query=True)
        with self.lock:
            scores, ids = self.index.search(q, k)
        hits = [dict(self.meta[i], score=float(s)) for s, i in zip(scores[0], ids[0]) if i >= 0]
        if not hits:
            return []
        pairs = [(query, h["text"]) for h in hits]
        with torch.autocast("cuda", dtype=torch.float16):
            rr = self.reranker.predict(pairs, batch_size=32, convert_to_numpy=True)
        for h, s in zip(hits, rr):
            h["rerank_score"] = float(s)
        hits.sort(key=lambda h: h["rerank_score"], reverse=True)
        torch.cuda.synchronize()
        logger.debug("search took %.1f ms", (time.perf_counter() - t0) * 1e3)
        return hits[:rerank_top]


# ---------------------------------------------------------------------- API
class AddRequest(BaseModel):
    docs: List[dict]


class SearchRequest(BaseModel):
    query: str
    k: int = 20
    top_n: int = 5


class SearchHit(BaseModel):
    text: str
    source: Optional[str] = None
    score: float
    rerank_score: float


app = FastAPI(title="local-rag retrieval")
_retriever: Optional[Retriever] = None


@app.on_event("startup")
def _startup():
    global _retriever
    _retriever = Retriever()


@app.post("/add")
def add(req: AddRequest):
    if any("text" not in d for d in req.docs):
        raise HTTPException(400, "every doc needs a 'text' field")
    n = _retriever.add(req.docs)
    _retriever.save()
    return {"added": n, "total": _retriever.index.ntotal}


@app.post("/search", response_model=List[SearchHit])
def search(req: SearchRequest):
    return _retriever.search(req.query, k=req.k, rerank_top=req.top_n)


@app.post("/delete")
def delete(source: str):
    """Drop every chunk of one source document and rebuild the index from the kept vectors."""
    keep = [m for m in _retriever.meta if m.get("source") != source]
    removed = len(_retriever.meta) - len(keep)
    if removed == 0:
        raise HTTPException(404, f"no chunks with source={source!r}")
    with _retriever.lock:
        _retriever.meta = []
        _retriever.cpu_index = faiss.IndexFlatIP(_retriever.dim)
        _retriever._to_gpu()
    # re-embed the survivors; cheap compared to re-chunking the originals
    for start in range(0, len(keep), 512):
        _retriever.add(keep[start:start + 512])
    _retriever.save()
    return {"removed": removed, "total": _retriever.index.ntotal}


@app.get("/sources")
def sources():
    counts = {}
    for m in _retriever.meta:
        src = m.get("source") or "?"
        counts[src] = counts.get(src, 0) + 1
    return {"sources": [{"source": k, "chunks": v} for k, v in sorted(counts.items())]}


@app.get("/health")
def health():
    return {
        "vectors": _retriever.index.ntotal if _retriever else 0,
        "device": DEVICE,
        "faiss_gpus": faiss.get_num_gpus(),
        "vram_used_mb": torch.cuda.memory_allocated() // 2**20,
    }
