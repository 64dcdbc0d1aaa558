"""Paged KV-cache swap manager: moves KV blocks between GPU memory and a pinned CPU pool.

Swaps are issued on a dedicated copy stream (the cudaMemcpyAsync analogue) and tracked with events so
the scheduler can keep running decode steps while preempted sequences are paged out.
"""
import logging
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

import torch

from vllm_lite import _custom_ops as ops  # swap_blocks / copy_blocks CUDA kernels

logger = logging.getLogger(__name__)


@dataclass
class SwapTicket:
    seq_id: int
    direction: str  # "out" (gpu -> cpu) or "in" (cpu -> gpu)
    mapping: List[Tuple[int, int]]
    event: "torch.cuda.Event" = field(default=None)


class CacheEngine:
    def __init__(self, num_layers: int, num_heads: int, head_size: int, block_size: int,
                 num_gpu_blocks: int, num_cpu_blocks: int, dtype=torch.float16):
        self.num_layers = num_layers
        self.block_shape = (block_size, num_heads, head_size)
        self.dtype = dtype
        self.gpu_cache = self._allocate(num_gpu_blocks, "cuda")
        self.cpu_cache = self._allocate(num_cpu_blocks, "cpu")
        self.swap_stream = torch.cuda.Stream()
        self.free_gpu = list(range(num_gpu_blocks))
        self.free_cpu = list(range(num_cpu_blocks))
        self.pending: Dict[int, SwapTicket] = {}

    def _allocate(self, num_blocks: int, device: str):
        pin = device == "cpu"
        shape = (2, num_blocks, *self.block_shape)
        return [torch.empty(shape, dtype=self.dtype, device=device, pin_memory=pin) for _ in range(self.num_layers)]

    @staticmethod
    def get_cache_block_size(block_size, num_heads, head_size, num_layers, dtype) -> int:
        elem = torch.tensor([], dtype=dtype).element_size()
        return 2 * block_size * num_heads * head_size * num_layers * elem

    def _mapping_tensor(self, mapping):
        return torch.tensor(mapping, dtype=torch.int64, device="cpu").view(-1, 2)

    def swap_out(self, seq_id: int, gpu_blocks: List[int]) -> SwapTicket:
        cpu_blocks = [self.free_cpu.pop() for _ in gpu_blocks]
        mapping = list(zip(gpu_blocks, cpu_blocks))
        t = self._mapping_tensor(mapping)
        self.swap_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.swap_stream):
            for layer in range(self.num_layers):
                ops.swap_blocks(self.gpu_cache[layer][0], self.cpu_cache[layer][0], t)
                ops.swap_blocks(self.gpu_cache[layer][1], self.cpu_cache[layer][1], t)
            ev = torch.cuda.Event()
            ev.record(self.swap_stream)
        ticket = SwapTicket(seq_id, "out", mapping, ev)
        self.pending[seq_id] = ticket
        return ticket

    def swap_in(self, seq_id: int, cpu_blocks: List[int]) -> SwapTicket:
        gpu_blocks = [self.free_gpu.pop() for _ in cpu_blocks]
        mapping = list(zip(cpu_blocks, gpu_blocks))
        t = self._mapping_tensor(mapping)
        with torch.cuda.stream(self.swap_stream):  # H2D
            for layer in range(self.num_layers):
                for kv in (0, 1):
                    src, dst = self.cpu_cache[layer][kv], self.gpu_cache[layer][kv]
                    for s, d in mapping:
                        dst[d].copy_(src[s], non_blocking=True)
            ev = torch.cuda.Event()  # swap-in done
            ev.record(self.swap_stream)
        ticket = SwapTicket(seq_id, "in", mapping, ev)
        self.pending[seq_id] = ticket
        return ticket

    def copy(self, src_to_dsts: Dict[int, List[int]]):
        """Copy-on-write for forked sequences (beam search)."""
        pairs = [(s, d) for s, ds in src_to_dsts.items() for d in ds]
        if not pairs:
            return
        t = torch.tensor(pairs, dtype=torch.int64, device="cuda").view(-1, 2)
        key_caches = [c[0] for c in self.gpu_cache]
        value_caches = [c[1] for c in self.gpu_cache]
        ops.copy_blocks(key_caches, value_caches, t)

    def poll(self) -> List[SwapTicket]:
        done = [tk for tk in self.pending.values() if tk.event.query()]
        for tk in done:
            del self.pending[tk.seq_id]
            if tk.direction == "out":
                self.free_gpu.extend(g for g, _ in tk.mapping)
            else:
                self.free_cpu.extend(c for c, _ in tk.mapping)
        return done

    def wait(self, seq_id: int):
        tk = self.pending.get(seq_id)
        if tk is not None:
            torch.cuda.current_stream().wait_event(tk.event)


def profile_num_blocks(model_bytes: int, block_size: int, num_heads: int, head_size: int, num_layers: int,
                       gpu_memory_utilization: float = 0.9, swap_space_gib: float = 4.0, dtype=torch.float16):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    free, total = torch.cuda.mem_get_info()
    peak = torch.cuda.max_memory_allocated() + model_bytes
    block_bytes = CacheEngine.get_cache_block_size(block_size, num_heads, head_size, num_layers, dtype)
    num_gpu_blocks = max(int((total * gpu_memory_utilization - peak) // block_bytes), 0)
    num_cpu_blocks = int(swap_space_gib * 2**30 // block_bytes)
    logger.info("# GPU blocks: %d, # CPU blocks: %d (free %.1f GiB of %.1f GiB)",
                num_gpu_blocks, num_cpu_blocks, free / 2**30, total / 2**30)
    return num_gpu_blocks, num_cpu_blocks
