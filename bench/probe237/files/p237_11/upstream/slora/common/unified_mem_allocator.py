"""Unified paging memory pool for KV cache *and* LoRA adapter weights.

S-LoRA stores adapter weights in the same page pool as the KV cache: one page
holds ``head_num * head_dim`` elements, which is exactly one row of a LoRA A or
B matrix for a hidden size of ``head_num * head_dim``.  This removes the
fragmentation caused by adapters of different ranks competing with requests of
different lengths.

All buffers live on the current CUDA device.
"""
import gc
from enum import Enum
from typing import List, Optional, Tuple

import torch


class MemoryAllocationError(RuntimeError):
    pass


class PageType(Enum):
    FREE = 0
    KV = 1
    ADAPTER = 2


class UnifiedMemoryAllocator:
    def __init__(
        self,
        head_num: int,
        head_dim: int,
        layer_num: int,
        vocab_size: int,
        dtype: torch.dtype,
        tot_size: Optional[int] = None,
        memory_utilization: float = 0.9,
    ):
        self.head_num = head_num
        self.head_dim = head_dim
        self.layer_num = layer_num
        self.vocab_size = vocab_size
        self.dtype = dtype
        self.cell_size = head_num * head_dim

        if tot_size is None:
            tot_size = self.profile_size(memory_utilization)
        self.tot_size = tot_size
        self.init_buffers()
        print(f"[UnifiedMemoryAllocator] {tot_size} pages x {layer_num} layers "
              f"({self.total_bytes() / 1024 ** 3:.2f} GB) on cuda:{torch.cuda.current_device()}")

    def profile_size(self, memory_utilization: float) -> int:
        """Pick the pool size from the memory left after model weights are loaded."""
        torch.cuda.synchronize()
        gc.collect()
        torch.cuda.empty_cache()
        free, total = torch.cuda.mem_get_info()
        reserved_for_activations = int(total * (1 - memory_utilization))
        usable = max(free - reserved_for_activations, 0)
        dtype_size = torch.tensor([], dtype=self.dtype).element_size()
        # one page = key + value row in every layer
        per_page = 2 * self.layer_num * self.cell_size * dtype_size
        return usable // per_page

    def init_buffers(self):
        self.mem_state = torch.ones((self.tot_size,), dtype=torch.bool, device="cuda")
        self._mem_cum_sum = torch.empty((self.tot_size,), dtype=torch.int32, device="cuda")
        self.page_type = torch.zeros((self.tot_size,), dtype=torch.int8, device="cuda")
        self.indexes = torch.arange(0, self.tot_size, dtype=torch.long, device="cuda")
        self.can_use_mem_size = self.tot_size

        self.key_buffer = [
            torch.empty((self.tot_size, self.head_num, self.head_dim), dtype=self.dtype, device="cuda")
            for _ in range(self.layer_num)
        ]
        self.value_buffer = [torch.empty_like(k) for k in self.key_buffer]

    def total_bytes(self) -> int:
        per = self.key_buffer[0].numel() * self.key_buffer[0].element_size()
        return 2 * per * self.layer_num

    # ------------------------------------------------------------------ alloc
    @torch.no_grad()
    def alloc(self, need_size: int, page_type: PageType = PageType.KV) -> Optional[torch.Tensor]:
        if need_size > self.can_use_mem_size:
            print(f"warn no enough pool space: need_size {need_size} left_size {self.can_use_mem_size}")
            return None

        torch.cumsum(self.mem_state, dim=0, dtype=torch.int32, out=self._mem_cum_sum)
        select_index = torch.logical_and(self._mem_cum_sum <= need_size, self.mem_state == 1)
        select_index = self.indexes[select_index]
        self.mem_state[select_index] = 0
        self.page_type[select_index] = page_type.value
        self.can_use_mem_size -= len(select_index)
        return select_index

    @torch.no_grad()
    def alloc_contiguous(self, need_size: int, page_type: PageType = PageType.KV):
        if need_size > self.can_use_mem_size:
            print(f"warn no enough pool space: need_size {need_size} left_size {self.can_use_mem_size}")
            return None

        torch.cumsum(self.mem_state, dim=0, dtype=torch.int32, out=self._mem_cum_sum)
        sum_size = len(self._mem_cum_sum)
        loc_sums = (
            self._mem_cum_sum[need_size - 1:]
            - self._mem_cum_sum[0:sum_size - need_size + 1]
            + self.mem_state[0:sum_size - need_size + 1]
        )
        can_used_loc = self.indexes[0:sum_size - need_size + 1][loc_sums == need_size]
        if can_used_loc.shape[0] == 0:
            return None
        start_loc = can_used_loc[0]
        select_index = self.indexes[start_loc:start_loc + need_size]

        self.mem_state[select_index] = 0
        self.page_type[select_index] = page_type.value
        self.can_use_mem_size -= need_size
        start = start_loc.item()
        end = start + need_size
        return select_index, start, end

    def alloc_adapter_pages(self, rank: int, num_modules: int = 4) -> torch.Tensor:
        """An adapter of rank ``r`` with q/k/v/o LoRA needs ``2 * 4 * r`` rows per
        layer (A and B for each projection); rows are stored K-side for A and
        V-side for B so one page index serves both."""
        need = num_modules * rank
        idx = self.alloc(need, PageType.ADAPTER)
        if idx is None:
            raise MemoryAllocationError(
                f"cannot fit adapter of rank {rank}: need {need} pages, {self.can_use_mem_size} free"
            )
        return idx

    @torch.no_grad()
    def free(self, free_index: torch.Tensor):
        """_summary_

        Args:
            free_index (torch.Tensor): page indices, may live on CPU or GPU
        """
        free_index = free_index.to(self.mem_state.device, non_blocking=True)
        self.can_use_mem_size += free_index.shape[0]
        self.mem_state[free_index] = 1
        self.page_type[free_index] = PageType.FREE.value

    @torch.no_grad()
    def free_all(self):
        self.can_use_mem_size = len(self.mem_state)
        self.mem_state[:] = 1
        self.page_type[:] = PageType.FREE.value

    def usage(self) -> Tuple[int, int, int]:
        n_kv = int((self.page_type == PageType.KV.value).sum())
        n_ad = int((self.page_type == PageType.ADAPTER.value).sum())
        return n_kv, n_ad, self.can_use_mem_size

    # --------------------------------------------------------- adapter copy
    @torch.no_grad()
    def write_adapter(
        self,
        layer_id: int,
        index: torch.Tensor,
        a_rows: torch.Tensor,
        b_rows: torch.Tensor,
        stream: Optional[torch.cuda.Stream] = None,
    ):
        """Copy pinned host rows of one layer into the pool (async if ``stream``)."""
        ctx = torch.cuda.stream(stream) if stream is not None else _nullcontext()
        with ctx:
            a = a_rows.view(-1, self.head_num, self.head_dim)
            b = b_rows.view(-1, self.head_num, self.head_dim)
            self.key_buffer[layer_id][index] = a.to(self.key_buffer[layer_id].device, non_blocking=True)
            self.value_buffer[layer_id][index] = b.to(self.value_buffer[layer_id].device, non_blocking=True)


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
