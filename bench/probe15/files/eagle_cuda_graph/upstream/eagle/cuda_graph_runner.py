"""Capture the EAGLE draft model's single-token forward in CUDA graphs, one per batch size.

The draft head runs `depth` times per speculation step, so launch overhead dominates for
small batches; replaying a captured graph removes most of it.
"""
from typing import Dict, List, Optional

import torch
import torch.nn as nn

_BATCH_SIZES = [1, 2, 4, 8, 16, 32]
_graph_pool = None


def get_graph_pool():
    global _graph_pool
    if _graph_pool is None:
        _graph_pool = torch.cuda.graph_pool_handle()
    return _graph_pool


class DraftGraphRunner:
    def __init__(self, draft: nn.Module, hidden_size: int, max_len: int, dtype=torch.float16,
                 device: Optional[torch.device] = None):
        self.draft = draft
        self.hidden_size = hidden_size
        self.max_len = max_len
        self.dtype = dtype
        self.device = device or torch.device("cuda", torch.cuda.current_device())
        self.graphs: Dict[int, torch.cuda.CUDAGraph] = {}
        self.static_inputs: Dict[int, Dict[str, torch.Tensor]] = {}
        self.static_outputs: Dict[int, torch.Tensor] = {}

    def _alloc(self, bs: int):
        return {
            "hidden": torch.zeros(bs, 1, self.hidden_size, dtype=self.dtype, device=self.device),
            "input_ids": torch.zeros(bs, 1, dtype=torch.long, device=self.device),
            "position_ids": torch.zeros(bs, 1, dtype=torch.long, device=self.device),
            "cache_pos": torch.zeros(bs, dtype=torch.long, device=self.device),
        }

    @torch.inference_mode()
    def capture(self, batch_sizes: List[int] = _BATCH_SIZES):
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        for bs in sorted(batch_sizes, reverse=True):
            inputs = self._alloc(bs)
            # warmup on a side stream so lazy init (cuBLAS handles, autotuning) is not captured
            with torch.cuda.stream(stream):
                for _ in range(3):
                    self.draft(**inputs)
            torch.cuda.current_stream().wait_stream(stream)

            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=get_graph_pool(), stream=stream):
                out = self.draft(**inputs)
            self.graphs[bs] = graph
            self.static_inputs[bs] = inputs
            self.static_outputs[bs] = out
        torch.cuda.synchronize()
        mem = torch.cuda.memory_reserved() / 2**20
        print(f"captured {len(self.graphs)} draft graphs, reserved {mem:.0f} MiB")

    def _padded_bs(self, bs: int) -> Optional[int]:
        for b in sorted(self.graphs):
            if b >= bs:
                return b
        return None

    @torch.inference_mode()
    def __call__(self, hidden, input_ids, position_ids, cache_pos):
        bs = hidden.shape[0]
        pbs = self._padded_bs(bs)
        if pbs is None:
            return self.draft(hidden=hidden, input_ids=input_ids, position_ids=position_ids, cache_pos=cache_pos)
        st = self.static_inputs[pbs]
        st["hidden"][:bs].copy_(hidden, non_blocking=True)
        st["input_ids"][:bs].copy_(input_ids, non_blocking=True)
        st["position_ids"][:bs].copy_(position_ids, non_blocking=True)
        st["cache_pos"][:bs].copy_(cache_pos, non_blocking=True)
        self.graphs[pbs].replay()
        return self.static_outputs[pbs][:bs]


def topk_tree_expand(logits: torch.Tensor, scores: torch.Tensor, k: int):
    """Expand each draft node into its top-k children; cumulative log-prob scoring as in EAGLE-2."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    top_logp, top_ids = logp.topk(k, dim=-1)
    cum = scores.unsqueeze(-1) + top_logp
    flat = cum.flatten(1)
    best, idx = flat.topk(k, dim=-1)
    parent = idx // k
    child = torch.gather(top_ids.flatten(1), 1, idx)
    return best, parent, child


def benchmark(runner: DraftGraphRunner, bs: int = 4, iters: int = 200):
    x = torch.randn(bs, 1, runner.hidden_size, dtype=runner.dtype, device=runner.device)
    ids = torch.zeros(bs, 1, dtype=torch.long, device=runner.device)
    pos = torch.zeros(bs, 1, dtype=torch.long, device=runner.device)
    cp = torch.zeros(bs, dtype=torch.long, device=runner.device)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        runner(x, ids, pos, cp)
    end.record()
    end.synchronize()
    graph_ms = start.elapsed_time(end) / iters
    start.record()
    for _ in range(iters):
        runner.draft(hidden=x, input_ids=ids, position_ids=pos, cache_pos=cp)
    end.record()
    end.synchronize()
    eager_ms = start.elapsed_time(end) / iters
    print(f"bs={bs}: graph {graph_ms:.3f} ms, eager {eager_ms:.3f} ms")
