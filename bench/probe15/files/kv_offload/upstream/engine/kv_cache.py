"""Block-based KV cache with CPU offloading (swap-out / swap-in) for a small serving engine.

GPU blocks hold the hot KV; when the scheduler preempts a sequence its blocks are copied
to pinned host memory on a dedicated copy stream so decode on the compute stream continues.
"""
from collections import deque
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

import torch


@dataclass
class CacheConfig:
    num_layers: int
    num_kv_heads: int
    head_dim: int
    block_size: int = 16
    gpu_memory_utilization: float = 0.9
    swap_space_gb: float = 8.0
    dtype: torch.dtype = torch.float16


@dataclass
class SeqBlocks:
    gpu_blocks: List[int] = field(default_factory=list)
    cpu_blocks: List[int] = field(default_factory=list)


class KVCacheManager:
    def __init__(self, cfg: CacheConfig, model_bytes: int, device: str = "cuda"):
        self.cfg = cfg
        self.device = torch.device(device)
        elem = torch.tensor([], dtype=cfg.dtype).element_size()
        self.block_bytes = 2 * cfg.num_layers * cfg.block_size * cfg.num_kv_heads * cfg.head_dim * elem

        free, total = torch.cuda.mem_get_info(self.device)
        budget = total * cfg.gpu_memory_utilization - (total - free) - model_bytes
        self.num_gpu_blocks = max(int(budget // self.block_bytes), 0)
        self.num_cpu_blocks = int(cfg.swap_space_gb * 2**30 // self.block_bytes)
        if self.num_gpu_blocks == 0:
            raise RuntimeError("no GPU memory left for the KV cache; lower gpu_memory_utilization")

        shape = (cfg.num_layers, 2, self.num_gpu_blocks, cfg.block_size, cfg.num_kv_heads, cfg.head_dim)
        self.gpu_cache = torch.empty(shape, dtype=cfg.dtype, device=self.device)
        cpu_shape = (cfg.num_layers, 2, self.num_cpu_blocks, cfg.block_size, cfg.num_kv_heads, cfg.head_dim)
        self.cpu_cache = torch.empty(cpu_shape, dtype=cfg.dtype, device="cpu", pin_memory=True)

        self.free_gpu = deque(range(self.num_gpu_blocks))
        self.free_cpu = deque(range(self.num_cpu_blocks))
        self.seqs: Dict[int, SeqBlocks] = {}

        self.copy_stream = torch.cuda.Stream(device=self.device, priority=-1)
        self.pending: List[Tuple[int, torch.cuda.Event]] = []

    # ------------------------------------------------------------------ allocation
    def can_allocate(self, n_blocks: int) -> bool:
        return len(self.free_gpu) >= n_blocks

    def allocate(self, seq_id: int, n_tokens: int) -> List[int]:
        n_blocks = -(-n_tokens // self.cfg.block_size)
        blocks = [self.free_gpu.popleft() for _ in range(n_blocks)]
        self.seqs.setdefault(seq_id, SeqBlocks()).gpu_blocks.extend(blocks)
        return blocks

    def free(self, seq_id: int):
        sb = self.seqs.pop(seq_id, None)
        if sb is None:
            return
        self.free_gpu.extend(sb.gpu_blocks)
        self.free_cpu.extend(sb.cpu_blocks)

    def block_table(self, seq_ids: List[int], max_blocks: int) -> torch.Tensor:
        table = torch.full((len(seq_ids), max_blocks), -1, dtype=torch.int32)
        for i, s in enumerate(seq_ids):
            b = self.seqs[s].gpu_blocks
            table[i, :len(b)] = torch.tensor(b, dtype=torch.int32)
        return table.to(self.device, non_blocking=True)

    # ------------------------------------------------------------------ swapping
    def swap_out(self, seq_id: int):
        sb = self.seqs[seq_id]
        dst = [self.free_cpu.popleft() for _ in sb.gpu_blocks]
        src_idx = torch.tensor(sb.gpu_blocks, device=self.device)
        self.copy_stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(self.copy_stream):
            staged = self.gpu_cache.index_select(2, src_idx)
            for j, d in enumerate(dst):
                self.cpu_cache[:, :, d].copy_(staged[:, :, j], non_blocking=True)
            staged.record_stream(self.copy_stream)
            ev = torch.cuda.Event()
            ev.record(self.copy_stream)
        self.pending.append((seq_id, ev))
        self.free_gpu.extend(sb.gpu_blocks)
        sb.gpu_blocks, sb.cpu_blocks = [], dst

    def swap_in(self, seq_id: int):
        sb = self.seqs[seq_id]
        dst = [self.free_gpu.popleft() for _ in sb.cpu_blocks]
        with torch.cuda.stream(self.copy_stream):  # H2D on the copy stream
            for s, d in zip(sb.cpu_blocks, dst):
                self.gpu_cache[:, :, d].copy_(self.cpu_cache[:, :, s], non_blocking=True)
        torch.cuda.current_stream(self.device).wait_stream(self.copy_stream)
        self.free_cpu.extend(sb.cpu_blocks)
        sb.gpu_blocks, sb.cpu_blocks = dst, []

    def poll(self) -> List[int]:
        done = [s for s, ev in self.pending if ev.query()]
        self.pending = [(s, ev) for s, ev in self.pending if not ev.query()]
        return done

    def usage(self) -> Dict[str, float]:
        return {
            "gpu_blocks_used": 1 - len(self.free_gpu) / max(self.num_gpu_blocks, 1),
            "cpu_blocks_used": 1 - len(self.free_cpu) / max(self.num_cpu_blocks, 1),
            "allocated_gib": torch.cuda.memory_allocated(self.device) / 2**30,
        }
