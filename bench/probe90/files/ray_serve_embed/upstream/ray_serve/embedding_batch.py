"""
Dynamic-batching embedding service on Ray Serve.

Requests are coalesced with @serve.batch and encoded in one forward pass; fractional GPUs let
two replicas share a card.  A small cross-encoder reranker runs in a second deployment.

    serve run embedding_batch:app
"""
import asyncio
import logging
import time
from typing import List

import numpy as np
import torch
import torch.nn.functional as F
from ray import serve
from starlette.requests import Request
from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

logger = logging.getLogger("ray.serve")

EMBED_MODEL = "BAAI/bge-large-en-v1.5"
RERANK_MODEL = "BAAI/bge-reranker-base"


def _pick_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def _mean_pool(last_hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.unsqueeze(-1).to(last_hidden.dtype)
    return (last_hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-6)


@serve.deployment(
    ray_actor_options={"num_gpus": 0.5, "num_cpus": 2},
    autoscaling_config={"min_replicas": 1, "max_replicas": 8, "target_ongoing_requests": 32},
    max_ongoing_requests=128,
)
class Embedder:
    def __init__(self, model_name: str = EMBED_MODEL, max_length: int = 512, use_cls: bool = True):
        self.device = _pick_device()
        self.tokenizer = AutoTokenizer.from_pretrained(model_name)
        self.model = AutoModel.from_pretrained(
            model_name, torch_dtype=torch.float16, attn_implementation="sdpa"
        ).to(self.device)
        self.model.eval()
        self.max_length = max_length
        self.use_cls = use_cls
        torch.backends.cuda.matmul.allow_tf32 = True
        self._warmup()

    def _warmup(self):
        for n in (1, 8, 32):
            self._encode(["warmup sentence"] * n)
        if self.device == "cuda":
            torch.cuda.synchronize()
            logger.info(
                "embedder warm: %.0f MiB peak", torch.cuda.max_memory_allocated() / 2**20
            )

    @torch.inference_mode()
    def _encode(self, texts: List[str]) -> np.ndarray:
        batch = self.tokenizer(
            texts,
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        ).to(self.device)
        out = self.model(**batch).last_hidden_state
        emb = out[:, 0] if self.use_cls else _mean_pool(out, batch["attention_mask"])
        emb = F.normalize(emb.float(), p=2, dim=-1)
        return emb.cpu().numpy()

    @serve.batch(max_batch_size=64, batch_wait_timeout_s=0.01)
    async def embed_batch(self, texts: List[str]) -> List[List[float]]:
        t0 = time.perf_counter()
        vecs = self._encode(texts)
        if self.device == "cuda":
            torch.cuda.synchronize()
        logger.debug("batch of %d in %.1f ms", len(texts), (time.perf_counter() - t0) * 1e3)
        return vecs.tolist()

    async def __call__(self, request: Request):
        body = await request.json()
        inputs = body.get("input")
        if inputs is None:
            return {"error": {"message": "'input' is required", "type": "invalid_request_error"}}
        if isinstance(inputs, str):
            inputs = [inputs]
        vectors = await asyncio.gather(*[self.embed_batch(t) for t in inputs])
        n_tokens = sum(len(self.tokenizer.tokenize(t)) for t in inputs)
        return {
            "object": "list",
            "model": body.get("model", EMBED_MODEL),
            "data": [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ],
            "usage": {"prompt_tokens": n_tokens, "total_tokens": n_tokens},
        }


@serve.deployment(ray_actor_options={"num_gpus": 0.25})
class Reranker:
    def __init__(self, model_name: str = RERANK_MODEL):
        self.tokenizer = AutoTokenizer.from_pretrained(model_name)
        self.model = AutoModelForSequenceClassification.from_pretrained(model_name)
        self.model = self.model.half().cuda().eval()

    @torch.inference_mode()
    def score(self, query: str, passages: List[str]) -> List[float]:
        pairs = [[query, p] for p in passages]
        enc = self.tokenizer(pairs, padding=True, truncation=True, max_length=512, return_tensors="pt")
        enc = {k: v.cuda(non_blocking=True) for k, v in enc.items()}
        logits = self.model(**enc).logits.view(-1).float()
        return torch.sigmoid(logits).cpu().tolist()

    async def __call__(self, request: Request):
        body = await request.json()
        return {"scores": self.score(body["query"], body["passages"])}


@serve.deployment
class Router:
    def __init__(self, embedder, reranker):
        self.embedder = embedder
        self.reranker = reranker

    async def __call__(self, request: Request):
        path = request.url.path
        if path.endswith("/rerank"):
            return await self.reranker.remote(request)
        return await self.embedder.remote(request)


app = Router.bind(Embedder.bind(), Reranker.bind())
