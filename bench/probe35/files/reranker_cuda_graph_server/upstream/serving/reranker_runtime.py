"""
Low-latency cross-encoder runtime for the rerank endpoint.

Requests are padded into a few (batch, seq_len) buckets. For each bucket the forward pass is
captured once into a CUDA graph and replayed afterwards, which removes most of the Python /
kernel-launch overhead for small batches. Host->device copies go through pinned staging buffers
on a side stream so they overlap with the previous replay.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

logger = logging.getLogger(__name__)

BATCH_BUCKETS = (1, 4, 8, 16, 32, 64)
SEQ_BUCKETS = (128, 256, 512)


@dataclass
class _Graph:
    graph: torch.cuda.CUDAGraph
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    logits: torch.Tensor


def _bucket(n: int, buckets: Sequence[int]) -> int:
    for b in buckets:
        if n <= b:
            return b
    return buckets[-1]


class GraphedReranker:
    def __init__(self, model_name: str, device: str = "cuda:0", dtype: torch.dtype = torch.float16,
                 use_graphs: bool = True):
        self.device = torch.device(device)
        self.dtype = dtype
        self.tokenizer = AutoTokenizer.from_pretrained(model_name)
        self.model = (
            AutoModelForSequenceClassification.from_pretrained(model_name, torch_dtype=dtype, attn_implementation="sdpa")
            .to(self.device)
            .eval()
        )
        self.use_graphs = use_graphs
        self.copy_stream = torch.cuda.Stream(device=self.device)
        self.graph_pool = torch.cuda.graph_pool_handle()
        self._graphs: Dict[Tuple[int, int], _Graph] = {}
        self._pinned: Dict[Tuple[int, int], Tuple[torch.Tensor, torch.Tensor]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ capture
    @torch.inference_mode()
    def warmup(self) -> None:
        torch.backends.cuda.matmul.allow_tf32 = True
        for bs in BATCH_BUCKETS:
            for sl in SEQ_BUCKETS:
                self._get_graph(bs, sl)
        torch.cuda.synchronize(self.device)
        free, total = torch.cuda.mem_get_info(self.device)
        logger.info("captured %d graphs, %.1f/%.1f GB free", len(self._graphs), free / 2**30, total / 2**30)

    def _get_graph(self, bs: int, sl: int) -> _Graph:
        key = (bs, sl)
        if key in self._graphs:
            return self._graphs[key]

        input_ids = torch.zeros(bs, sl, dtype=torch.long, device=self.device)
        attention_mask = torch.ones(bs, sl, dtype=torch.long, device=self.device)

        # warm up on a side stream before capture, as recommended for CUDA graphs
        s = torch.cuda.Stream(device=self.device)
        s.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(s):
            for _ in range(3):
                self.model(input_ids=input_ids, attention_mask=attention_mask)
        torch.cuda.current_stream(self.device).wait_stream(s)

        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.graph_pool):
            logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits

        entry = _Graph(graph, input_ids, attention_mask, logits)
        self._graphs[key] = entry
        self._pinned[key] = (
            torch.empty(bs, sl, dtype=torch.long).pin_memory(),
            torch.empty(bs, sl, dtype=torch.long).pin_memory(),
        )
        return entry

    # ------------------------------------------------------------------ inference
    @torch.inference_mode()
    def score(self, query: str, passages: List[str], max_length: int = 512) -> List[float]:
        enc = self.tokenizer([query] * len(passages), passages, padding="longest", truncation=True,
                             max_length=max_length, return_tensors="pt")
        n, length = enc["input_ids"].shape
        if not self.use_graphs or n > BATCH_BUCKETS[-1]:
            with torch.autocast("cuda", dtype=self.dtype):
                out = self.model(**{k: v.to(self.device) for k, v in enc.items()}).logits
            return out.view(-1).float().cpu().tolist()

        bs, sl = _bucket(n, BATCH_BUCKETS), _bucket(length, SEQ_BUCKETS)
        with self._lock:
            g = self._get_graph(bs, sl)
            ids_h, mask_h = self._pinned[(bs, sl)]
            ids_h.zero_()
            mask_h.zero_()
            ids_h[:n, :length] = enc["input_ids"][:, :sl]
            mask_h[:n, :length] = enc["attention_mask"][:, :sl]

            with torch.cuda.stream(self.copy_stream):
                g.input_ids.copy_(ids_h, non_blocking=True)
                g.attention_mask.copy_(mask_h, non_blocking=True)
            torch.cuda.current_stream(self.device).wait_stream(self.copy_stream)

            g.graph.replay()
            scores = g.logits[:n].view(-1).float().cpu().tolist()
        return scores

    def stats(self) -> dict:
        return {
            "graphs": len(self._graphs),
            "allocated_gb": torch.cuda.memory_allocated(self.device) / 2**30,
            "reserved_gb": torch.cuda.memory_reserved(self.device) / 2**30,
        }
