"""
Minimal text-embedding server (text-embeddings-inference style) on top of a HF encoder.

    uvicorn server.embed_server:app --host 0.0.0.0 --port 8080
    MODEL_ID=BAAI/bge-large-en-v1.5 MAX_BATCH_TOKENS=16384 uvicorn ...

Requests are padded into token-budgeted batches; the encoder runs in fp16 under inference_mode with
the flash SDPA kernel forced, and is optionally captured with torch.compile(mode="reduce-overhead").
"""
import asyncio
import logging
import os
import time
from contextlib import asynccontextmanager
from typing import List

import torch
import torch.nn.functional as F
from fastapi import FastAPI
from pydantic import BaseModel
from transformers import AutoModel, AutoTokenizer

logger = logging.getLogger("embed_server")

MODEL_ID = os.environ.get("MODEL_ID", "BAAI/bge-base-en-v1.5")
MAX_BATCH_TOKENS = int(os.environ.get("MAX_BATCH_TOKENS", "16384"))
MAX_LEN = int(os.environ.get("MAX_LEN", "512"))
COMPILE = os.environ.get("COMPILE", "0") == "1"
DEVICE = os.environ.get("DEVICE", "cuda:0")


class EmbedRequest(BaseModel):
    inputs: List[str]
    normalize: bool = True


class EmbedResponse(BaseModel):
    embeddings: List[List[float]]
    latency_ms: float


class Embedder:
    def __init__(self, model_id: str, device: str):
        self.device = torch.device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(model_id)
        model = AutoModel.from_pretrained(model_id, torch_dtype=torch.float16, attn_implementation="sdpa")
        self.model = model.to(self.device).eval()
        if COMPILE:
            self.model = torch.compile(self.model, mode="reduce-overhead", dynamic=False)
        torch.backends.cuda.matmul.allow_tf32 = True
        self.lock = asyncio.Lock()
        logger.info("loaded %s on %s (%s)", model_id, self.device, torch.cuda.get_device_name(self.device))

    def _batches(self, texts: List[str]):
        # bucket by length so padding stays small, then cut by token budget
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batch, tokens = [], 0
        for i in order:
            n = min(len(self.tokenizer.tokenize(texts[i])) + 2, MAX_LEN)
            if batch and (len(batch) + 1) * max(tokens, n) > MAX_BATCH_TOKENS:
                yield batch
                batch, tokens = [], 0
            batch.append(i)
            tokens = max(tokens, n)
        if batch:
            yield batch

    @torch.inference_mode()
    def embed(self, texts: List[str], normalize: bool = True) -> List[List[float]]:
        out = [None] * len(texts)
        for idx in self._batches(texts):
            enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                 max_length=MAX_LEN, return_tensors="pt")
            enc = {k: v.to(self.device, non_blocking=True) for k, v in enc.items()}
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
                hidden = self.model(**enc).last_hidden_state
            emb = hidden[:, 0]  # CLS pooling
            if normalize:
                emb = F.normalize(emb.float(), p=2, dim=-1)
            emb = emb.cpu().tolist()
            for j, i in enumerate(idx):
                out[i] = emb[j]
        return out

    @torch.inference_mode()
    def warmup(self):
        dummy = ["warmup " * (MAX_LEN // 4)] * 8
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(3):
            self.embed(dummy)
        end.record()
        torch.cuda.synchronize()
        logger.info("warmup: %.1f ms/iter, %.0f MiB reserved", start.elapsed_time(end) / 3,
                    torch.cuda.memory_reserved(self.device) / 2**20)


embedder: Embedder = None


@asynccontextmanager
async def lifespan(app: FastAPI):
    global embedder
    if not torch.cuda.is_available():
        raise RuntimeError("embed_server needs a GPU")
    embedder = Embedder(MODEL_ID, DEVICE)
    embedder.warmup()
    yield
    del embedder
    torch.cuda.empty_cache()


app = FastAPI(lifespan=lifespan)


@app.post("/embed", response_model=EmbedResponse)
async def embed(req: EmbedRequest):
    t0 = time.perf_counter()
    async with embedder.lock:
        embs = await asyncio.get_running_loop().run_in_executor(None, embedder.embed, req.inputs, req.normalize)
    return EmbedResponse(embeddings=embs, latency_ms=(time.perf_counter() - t0) * 1e3)


@app.get("/health")
async def health():
    free, total = torch.cuda.mem_get_info(embedder.device)
    return {"model": MODEL_ID, "device": str(embedder.device), "free_mib": free // 2**20, "total_mib": total // 2**20}


if __name__ == "__main__":
    import uvicorn

    logging.basicConfig(level=logging.INFO)
    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8080")))
