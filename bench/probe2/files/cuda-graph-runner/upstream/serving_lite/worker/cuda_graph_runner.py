"""CUDA-graph capture of the decode step for a small inference server (synthetic imitation)."""
import gc
import logging
import time
from typing import Dict, List, Optional

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)

_BATCH_SIZE_ALIGNMENT = 8
# Capture graphs for batch size 1, 2, 4, 8, 16, 24, 32, 40, ..., 256.
_BATCH_SIZES_TO_CAPTURE = [1, 2, 4] + [_BATCH_SIZE_ALIGNMENT * i for i in range(1, 33)]
_NUM_WARMUP_ITERS = 2


def _get_graph_batch_size(batch_size: int) -> int:
    if batch_size <= 2:
        return batch_size
    elif batch_size <= 4:
        return 4
    else:
        return ((batch_size + _BATCH_SIZE_ALIGNMENT - 1) // _BATCH_SIZE_ALIGNMENT * _BATCH_SIZE_ALIGNMENT)


class CUDAGraphRunner:

    def __init__(self, model: nn.Module):
        self.model = model
        self.input_buffers: Dict[str, torch.Tensor] = {}
        self.output_buffers: Dict[str, torch.Tensor] = {}
        self._graph: Optional[torch.cuda.CUDAGraph] = None

    @property
    def graph(self):
        assert self._graph is not None
        return self._graph

    def capture(self, input_ids: torch.Tensor, positions: torch.Tensor, kv_caches: List[torch.Tensor],
                attn_metadata, memory_pool, stream: torch.cuda.Stream, **kwargs) -> torch.Tensor:
        assert self._graph is None
        # Run the model a few times without capturing the graph.
        # This is to make sure that the captured graph does not include the
        # kernel launches for initial benchmarking (e.g., Triton autotune).
        # Note one iteration is not enough for torch.jit.script
        for _ in range(_NUM_WARMUP_ITERS):
            self.model(input_ids, positions, kv_caches, attn_metadata, **kwargs)
        torch.cuda.synchronize()

        # Capture the graph.
        self._graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self._graph, pool=memory_pool, stream=stream):
            output_hidden_states = self.model(input_ids, positions, kv_caches, attn_metadata, **kwargs)
        torch.cuda.synchronize()

        # Save the input and output buffers.
        self.input_buffers = {
            "input_ids": input_ids,
            "positions": positions,
            "kv_caches": kv_caches,
            "slot_mapping": attn_metadata.slot_mapping,
            "seq_lens_tensor": attn_metadata.seq_lens_tensor,
            "block_tables": attn_metadata.block_tables,
        }
        self.output_buffers = {"hidden_states": output_hidden_states}
        return output_hidden_states

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, kv_caches: List[torch.Tensor],
                attn_metadata, **kwargs) -> torch.Tensor:
        # KV caches are fixed tensors, so we don't need to copy them.
        del kv_caches

        # Copy the input tensors to the input buffers.
        self.input_buffers["input_ids"].copy_(input_ids, non_blocking=True)
        self.input_buffers["positions"].copy_(positions, non_blocking=True)
        self.input_buffers["slot_mapping"].copy_(attn_metadata.slot_mapping, non_blocking=True)
        self.input_buffers["seq_lens_tensor"].copy_(attn_metadata.seq_lens_tensor, non_blocking=True)
        self.input_buffers["block_tables"].copy_(attn_metadata.block_tables, non_blocking=True)

        # Run the graph.
        self.graph.replay()

        # Return the output tensor.
        return self.output_buffers["hidden_states"]

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


class ModelRunner:

    def __init__(self, model: nn.Module, block_size: int, max_num_blocks: int, enforce_eager: bool = False):
        self.model = model
        self.block_size = block_size
        self.max_num_blocks = max_num_blocks
        self.enforce_eager = enforce_eager
        self.device = torch.device("cuda", torch.cuda.current_device())
        self.graph_runners: Dict[int, CUDAGraphRunner] = {}
        self.graph_memory_pool = None

    @torch.inference_mode()
    def capture_model(self, kv_caches: List[torch.Tensor], make_metadata) -> None:
        """Cuda graph capture a model.

        Since it is used for decoding-only, it assumes there's only 1 token
        per sequence in the batch.
        """
        assert not self.enforce_eager
        logger.info("Capturing the model for CUDA graphs. This may lead to "
                    "unexpected consequences if the model is not static. To "
                    "run the model in eager mode, set 'enforce_eager=True'.")
        start_time = time.perf_counter()

        # Prepare dummy inputs. These will be reused for all batch sizes.
        max_batch_size = max(_BATCH_SIZES_TO_CAPTURE)
        input_tokens = torch.zeros(max_batch_size, dtype=torch.long).cuda()
        input_positions = torch.zeros(max_batch_size, dtype=torch.long).cuda()
        slot_mapping = torch.empty(max_batch_size, dtype=torch.long).cuda()
        slot_mapping.fill_(-1)
        seq_lens = torch.ones(max_batch_size, dtype=torch.int32).cuda()
        block_tables = torch.zeros((max_batch_size, self.max_num_blocks), dtype=torch.int32, device=self.device)

        self.graph_memory_pool = torch.cuda.graph_pool_handle()
        capture_stream = torch.cuda.Stream()

        with torch.cuda.stream(capture_stream):
            # NOTE: Capturing the largest batch size first may help reduce the
            # memory usage of CUDA graph.
            for batch_size in reversed(_BATCH_SIZES_TO_CAPTURE):
                attn_metadata = make_metadata(slot_mapping=slot_mapping[:batch_size],
                                              seq_lens_tensor=seq_lens[:batch_size],
                                              block_tables=block_tables[:batch_size])
                graph_runner = CUDAGraphRunner(self.model)
                graph_runner.capture(input_tokens[:batch_size], input_positions[:batch_size], kv_caches,
                                     attn_metadata, memory_pool=self.graph_memory_pool, stream=capture_stream)
                self.graph_memory_pool = graph_runner.graph.pool()
                self.graph_runners[batch_size] = graph_runner

        end_time = time.perf_counter()
        elapsed_time = end_time - start_time
        # This usually takes < 10 seconds.
        logger.info("Graph capturing finished in %.0f secs.", elapsed_time)

    def execute(self, input_ids, positions, kv_caches, attn_metadata):
        batch_size = input_ids.shape[0]
        if not self.enforce_eager and batch_size <= max(_BATCH_SIZES_TO_CAPTURE):
            graph_batch_size = _get_graph_batch_size(batch_size)
            model_executable = self.graph_runners[graph_batch_size]
        else:
            model_executable = self.model
        return model_executable(input_ids, positions, kv_caches, attn_metadata)

    def profile_peak_memory(self, run_dummy_batch) -> int:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        run_dummy_batch()
        torch.cuda.synchronize()
        peak_memory = torch.cuda.max_memory_allocated()
        free_gpu_memory, total_gpu_memory = torch.cuda.mem_get_info()
        gc.collect()
        logger.info("peak=%.2fGiB free=%.2fGiB total=%.2fGiB", peak_memory / 2**30,
                    free_gpu_memory / 2**30, total_gpu_memory / 2**30)
        return peak_memory
