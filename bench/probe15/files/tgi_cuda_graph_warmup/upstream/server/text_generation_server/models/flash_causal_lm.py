import math
import os
import time
from typing import Dict, List, Optional

import torch
import torch.distributed
from loguru import logger

from text_generation_server.models.globals import BLOCK_SIZE, CUDA_GRAPHS, MEM_POOL
from text_generation_server.utils.import_utils import SYSTEM, empty_cache, get_free_memory, synchronize
from text_generation_server.utils.dist import MEMORY_FRACTION

tracer = None


class FlashCausalLMWarmup:
    """Warmup / KV-cache sizing / CUDA graph capture, split out of FlashCausalLM."""

    def __init__(self, model, device: torch.device, dtype: torch.dtype, num_layers: int, num_kv_heads: int,
                 head_size: int, rank: int = 0, world_size: int = 1):
        self.model = model
        self.device = device
        self.dtype = dtype
        self.num_layers = num_layers
        self.num_kv_heads = num_kv_heads
        self.head_size = head_size
        self.rank = rank
        self.world_size = world_size
        self.kv_cache: List = []
        self.cuda_graphs: Dict[int, Dict] = {}

    def init_kv_cache(self, num_blocks: int):
        self.kv_cache = []
        empty_cache()
        element_size = torch.tensor([], dtype=self.dtype).element_size()
        x = BLOCK_SIZE // element_size
        for _ in range(self.num_layers):
            k = torch.empty((num_blocks, self.num_kv_heads, self.head_size // x, BLOCK_SIZE, x),
                            dtype=self.dtype, device=self.device)
            v = torch.empty((num_blocks, self.num_kv_heads, self.head_size, BLOCK_SIZE),
                            dtype=self.dtype, device=self.device)
            self.kv_cache.append((k, v))

    def cuda_graph_warmup(self, bs: int, max_s: int, max_bt: int):
        input_ids = torch.zeros(bs, dtype=torch.int64, device=self.device)
        position_ids = torch.zeros(bs, dtype=torch.int32, device=self.device)
        slots = torch.arange(bs, dtype=torch.int64, device=self.device)
        input_lengths = torch.ones(bs, dtype=torch.int32, device=self.device) * max_s
        block_tables = torch.arange(max_bt, dtype=torch.int32, device=self.device).repeat(bs).reshape((bs, max_bt))

        graph = torch.cuda.CUDAGraph()
        self.cuda_graphs[bs] = {
            "input_ids": input_ids,
            "position_ids": position_ids,
            "kv_cache": self.kv_cache,
            "block_tables": block_tables,
            "slots": slots,
            "input_lengths": input_lengths,
            "graph": graph,
        }
        # run once outside the graph to warm up allocators / autotuned kernels
        self.model.forward(input_ids=input_ids, position_ids=position_ids, kv_cache=self.kv_cache,
                           block_tables=block_tables, slots=slots, input_lengths=input_lengths, max_s=max_s)
        torch.cuda.synchronize()

        with torch.cuda.graph(graph, pool=MEM_POOL):
            logits = self.model.forward(input_ids=input_ids, position_ids=position_ids, kv_cache=self.kv_cache,
                                        block_tables=block_tables, slots=slots, input_lengths=input_lengths,
                                        max_s=max_s)
            self.cuda_graphs[bs]["logits"] = logits
        torch.cuda.synchronize()  # capture finished

    def warmup(self, max_input_tokens: int, max_total_tokens: int, max_batch_prefill_tokens: int):
        empty_cache()
        try:
            self.init_kv_cache(num_blocks=max_batch_prefill_tokens // BLOCK_SIZE + 1)
            self.model.forward_prefill_dummy(max_batch_prefill_tokens)
        except torch.cuda.OutOfMemoryError as e:
            raise RuntimeError(
                f"Not enough memory to handle {max_batch_prefill_tokens} prefill tokens. "
                "You need to decrease `--max-batch-prefill-tokens`"
            ) from e

        synchronize(self.device)
        dtype_size = torch.tensor([], dtype=self.dtype).element_size()
        cache_block_size = BLOCK_SIZE * self.num_kv_heads * self.head_size
        total_cache_size = self.num_layers * cache_block_size * 2 * dtype_size

        free_memory = get_free_memory(self.device, MEMORY_FRACTION)
        batch_num_blocks = len(self.kv_cache[0][0])
        num_blocks = int(free_memory * 0.95 // total_cache_size) + batch_num_blocks
        del self.kv_cache
        self.init_kv_cache(num_blocks)
        logger.info(f"KV-cache blocks: {num_blocks}, size: {BLOCK_SIZE}")

        if SYSTEM == "rocm" and os.environ.get("PYTORCH_TUNABLEOP_ENABLED") is None:
            torch.cuda.tunable.enable()
            torch.cuda.tunable.tuning_enable(True)
            torch.cuda.tunable.set_max_tuning_iterations(100)

        if CUDA_GRAPHS:
            try:
                logger.info(f"Cuda Graphs are enabled for sizes {CUDA_GRAPHS}")
                max_bt = math.ceil(max_total_tokens / BLOCK_SIZE)
                for bs in CUDA_GRAPHS:
                    if self.world_size == 1 or bs <= 256:
                        self.cuda_graph_warmup(bs, max_total_tokens, max_bt)
            except torch.cuda.OutOfMemoryError:
                logger.exception("Decode cuda graph warmup failed")
        else:
            logger.info(f"Cuda Graphs are disabled (CUDA_GRAPHS={CUDA_GRAPHS}).")

        return int(num_blocks * BLOCK_SIZE)

    def replay(self, bs: int, input_ids, position_ids, block_tables, slots, input_lengths):
        padded_bs = next(b for b in sorted(self.cuda_graphs) if b >= bs)
        g = self.cuda_graphs[padded_bs]
        g["input_ids"][:bs] = input_ids
        g["position_ids"][:bs] = position_ids
        g["block_tables"][:bs, :block_tables.shape[1]] = block_tables
        g["slots"].fill_(-1)
        g["slots"][:bs] = slots
        g["input_lengths"].zero_()
        g["input_lengths"][:bs] = input_lengths
        g["graph"].replay()
        return g["logits"][:bs]
