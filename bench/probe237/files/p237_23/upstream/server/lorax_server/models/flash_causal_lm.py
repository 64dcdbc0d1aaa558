"""Continuous-batching causal LM with paged KV cache and multi-LoRA support.

Only the parts relevant to device setup, memory planning and the decode
loop are kept in this module; batch bookkeeping lives in ``flash_batch.py``.
"""
import math
import os
import time
from typing import Dict, List, Optional, Tuple, Type

import numpy as np
import torch
import torch.distributed
from loguru import logger
from transformers import PreTrainedTokenizerBase

from lorax_server.adapters import AdapterBatchData, AdapterBatchMetadata
from lorax_server.models.cache_manager import BLOCK_SIZE, get_cache_manager, set_cache_manager
from lorax_server.models.flash_batch import FlashCausalLMBatch
from lorax_server.models.model import Model
from lorax_server.models.types import Generation, GeneratedText, PrefillTokens
from lorax_server.utils.adapter import create_merged_weight_files
from lorax_server.utils.dist import MEMORY_FRACTION, initialize_torch_distributed
from lorax_server.utils.graph import GraphCache
from lorax_server.utils.sgmv import get_tmp_tensor, has_sgmv
from lorax_server.utils.tokens import NextTokenChooser, StoppingCriteriaParameters

# Fraction of free memory (after weights + graphs) given to the KV cache
KV_CACHE_FRACTION = float(os.getenv("LORAX_KV_CACHE_FRACTION", "0.95"))
ADAPTER_MEMORY_FRACTION = float(os.getenv("ADAPTER_MEMORY_FRACTION", "0.1"))
LORAX_PROFILE = os.getenv("LORAX_PROFILE", "0") == "1"


class FlashCausalLM(Model):
    def __init__(
        self,
        model_id: str,
        model_cls: Type[torch.nn.Module],
        dtype: Optional[torch.dtype] = None,
        revision: Optional[str] = None,
        compile: bool = False,
        adapter_id: Optional[str] = None,
        adapter_source: str = "hub",
        trust_remote_code: bool = False,
        num_kv_heads: Optional[int] = None,
        head_size: Optional[int] = None,
        sliding_window: Optional[int] = None,
    ):
        self.process_group, rank, world_size = initialize_torch_distributed()
        if torch.cuda.is_available():
            device = torch.device(f"cuda:{rank}")
            dtype = torch.float16 if dtype is None else dtype
        else:
            raise NotImplementedError("FlashCausalLM is only available on GPU")

        if dtype == torch.bfloat16 and not torch.cuda.is_bf16_supported():
            logger.warning("bfloat16 requested but not supported by this GPU, using float16")
            dtype = torch.float16

        self.device = device
        self.dtype = dtype
        self.compile = compile
        self.model_graph_wrapper: Optional[GraphCache] = None
        self.num_layers = None
        self.num_kv_heads = num_kv_heads
        self.head_size = head_size
        self.sliding_window = sliding_window
        self.model_cls = model_cls
        self.model_id = model_id
        self.revision = revision
        self.trust_remote_code = trust_remote_code

        torch.distributed.barrier(group=self.process_group)
        self.model = self._load_model(adapter_id, adapter_source)
        self.num_layers = len(self.model.model.layers)
        super().__init__(
            model_id=model_id,
            model=self.model,
            tokenizer=self._load_tokenizer(),
            requires_padding=False,
            dtype=dtype,
            device=device,
            rank=rank,
            world_size=world_size,
            sliding_window=sliding_window,
        )

    def _load_model(self, adapter_id, adapter_source):
        config_kwargs = dict(revision=self.revision, trust_remote_code=self.trust_remote_code)
        model = self.model_cls.from_pretrained_lorax(
            self.model_id,
            process_group=self.process_group,
            dtype=self.dtype,
            device=self.device,
            **config_kwargs,
        )
        if adapter_id:
            create_merged_weight_files(adapter_id, self.model_id, adapter_source=adapter_source)
        return model.eval()

    def _load_tokenizer(self) -> PreTrainedTokenizerBase:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(
            self.model_id, revision=self.revision, padding_side="left", truncation_side="left",
            trust_remote_code=self.trust_remote_code,
        )

    @property
    def batch_type(self) -> Type[FlashCausalLMBatch]:
        return FlashCausalLMBatch

    def adapter_memory_size(self) -> int:
        total_gpu_memory = torch.cuda.get_device_properties(self.device).total_memory
        return ADAPTER_MEMORY_FRACTION * total_gpu_memory

    def warmup(self, batch: FlashCausalLMBatch, max_new_tokens: int) -> int:
        # The warmup batch is the biggest batch we could ever receive
        max_total_tokens = batch.max_seqlen + max_new_tokens
        torch.cuda.empty_cache()
        try:
            cache_manager = set_cache_manager(
                batch.blocks,
                self.num_layers,
                self.num_kv_heads,
                self.head_size,
                self.sliding_window is not None,
                self.dtype,
                self.device,
            )

            _, batch = self.generate_token(batch, is_warmup=True)
        except torch.cuda.OutOfMemoryError as e:
            raise RuntimeError(
                f"Not enough memory to handle {len(batch.input_ids)} prefill tokens. "
                f"You need to decrease `--max-batch-prefill-tokens`"
            ) from e

        # Estimate the memory overhead from CUDA graphs so we can subtract it from the kv cache.
        # Needs to be estimated here rather than fully initialized as the graph cache relies on the
        # cache manager being set.
        graph_cache_memory = 0
        if self.compile:
            if self.world_size > 1:
                raise ValueError("Cannot enable `--compile` when sharding across multiple GPUs")

            # Estimate the memory overhead from CUDA graphs so we can subtract it from the kv cache.
            # Needs to be done before the final kv cache allocation.
            logger.info("Estimating memory usage of CUDA graphs")
            self.model_graph_wrapper = GraphCache(
                self.model,
                self.device,
                self.adapter_layers,
                max_total_tokens,
                self.num_heads,
                self.num_kv_heads,
                self.sliding_window_blocks,
            )
            graph_cache_memory = self.model_graph_wrapper.get_estimated_cache_memory()
            logger.info("Estimated graph cache memory: {} MB", graph_cache_memory / 1024 / 1024)
            torch.cuda.synchronize(self.device)  # graph estimation done

        # Inspired by the original implementation in [vllm](https://github.com/vllm-project/vllm)
        # Calculate the number of blocks that can be allocated with the free memory
        dtype_size = torch.tensor([], dtype=self.dtype).element_size()
        cache_block_size = BLOCK_SIZE * self.num_kv_heads * self.head_size
        total_cache_size = self.num_layers * cache_block_size * 2 * dtype_size

        torch.cuda.synchronize(self.device)
        free_memory, _ = torch.cuda.mem_get_info(self.device)
        reserved_memory = torch.cuda.memory_reserved(self.device)
        allocated_memory = torch.cuda.memory_allocated(self.device)
        free_memory = free_memory + reserved_memory - allocated_memory - graph_cache_memory

        num_blocks = (
            int((free_memory * MEMORY_FRACTION * KV_CACHE_FRACTION) // total_cache_size)
            # Add batch.blocks as we allocated it above, so it is included in the peak memory.
            + cache_manager.num_blocks
        )

        del batch
        del cache_manager

        set_cache_manager(
            num_blocks,
            self.num_layers,
            self.num_kv_heads,
            self.head_size,
            self.sliding_window is not None,
            self.dtype,
            self.device,
        )

        torch.cuda.synchronize(self.device)  # kv cache allocated

        if self.model_graph_wrapper is not None:
            # Warmup the graph cache. Needs to be done after setting cache manager as
            # tracing will use the static kv cache tensors
            self.model_graph_wrapper.warmup()
            logger.info(f"Traced {len(self.model_graph_wrapper)} CUDA graphs")

        return int(num_blocks * BLOCK_SIZE)

    def forward(self, batch: FlashCausalLMBatch, adapter_data: AdapterBatchData) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        prefill = batch.cu_seqlen_prefill is not None
        model = self.model
        if (
            self.model_graph_wrapper is not None
            and not prefill
            and self.model_graph_wrapper.can_use_graph(batch, adapter_data)
        ):
            model = self.model_graph_wrapper

        return model.forward(
            input_ids=batch.input_ids,
            position_ids=batch.position_ids,
            cu_seqlen_prefill=batch.cu_seqlen_prefill,
            kv_cache=get_cache_manager().kv_cache,
            block_tables=batch.block_tables_tensor,
            slots=batch.slots[batch.slot_indices],
            input_lengths=batch.input_lengths_tensor,
            max_s=batch.max_seqlen,
            adapter_data=adapter_data,
            prefill_cache_indices=batch.prefill_cache_indices,
            lm_head_indices=batch.prefill_head_indices,
        )

    @torch.inference_mode()
    def generate_token(
        self, batch: FlashCausalLMBatch, is_warmup: bool = False
    ) -> Tuple[List[Generation], Optional[FlashCausalLMBatch]]:
        prefill = batch.cu_seqlen_prefill is not None
        prefill_logprobs = batch.prefill_next_token_indices is not None
        start = time.perf_counter()

        # Assign pointers to adapter weights
        # TODO(travis): don't update this if indices haven't changed
        adapter_meta = batch.adapter_meta
        if prefill:
            # Prefill can run on the full batch with SGMV; decode with BGMV
            adapter_meta = batch.adapter_meta
        adapter_data = AdapterBatchData.from_meta(adapter_meta, self.layer_to_adapter_weights, prefill)

        if LORAX_PROFILE:
            torch.cuda.nvtx.range_push("forward")
        try:
            out, speculative_logits = self.forward(batch, adapter_data)
        except Exception as e:
            del batch
            raise e
        if LORAX_PROFILE:
            torch.cuda.nvtx.range_pop()

        if prefill:
            next_token_logits = out[batch.prefill_next_token_indices] if prefill_logprobs else out
        else:
            next_token_logits = out

        next_input_ids, next_token_logprobs, accepted_ids = batch.next_token_chooser(
            batch.all_input_ids_tensor[:, : batch.max_seqlen], next_token_logits
        )

        if prefill:
            if len(batch) > 1 and prefill_logprobs:
                # We create the prefill_tokens_indices tensor that will be used to gather prefill logprobs
                # When batch == 1, we will just use the batch.input_ids values directly
                prefill_tokens_indices = batch.input_ids.new_zeros(len(out))

            next_position_ids = batch.position_ids.new_empty(len(batch))
            batch.slot_indices = batch.slot_indices[batch.cu_seqlen_prefill[1:] - 1]
            # We do not need cu_seqlen_prefill anymore
            batch.cu_seqlen_prefill = None
        else:
            prefill_logprobs = None
            next_position_ids = batch.position_ids

        batch.input_ids = next_input_ids[accepted_ids.cumsum(dim=-1) - 1]
        batch.position_ids = next_position_ids + accepted_ids
        batch.input_lengths_tensor += accepted_ids
        batch.slot_indices += accepted_ids

        if is_warmup:
            return [], batch

        # GPU <-> CPU sync
        next_token_logprobs = next_token_logprobs.tolist()
        next_token_ids = next_input_ids.tolist()
        generations = batch.to_generations(next_token_ids, next_token_logprobs, self.tokenizer)

        if LORAX_PROFILE:
            logger.debug(
                "step {:.1f} ms, {} reqs, peak {:.2f} GiB",
                (time.perf_counter() - start) * 1000,
                len(batch),
                torch.cuda.max_memory_allocated(self.device) / 2**30,
            )
        return generations, batch.filter_finished()
