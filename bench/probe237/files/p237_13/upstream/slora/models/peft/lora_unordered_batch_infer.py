import time
from typing import List, Optional

import numpy as np
import torch
import torch.nn as nn

from slora.common.infer_utils import init_bloc
from slora.models.llama.triton_kernel.context_flashattention_nopad import context_attention_fwd
from slora.models.llama.triton_kernel.rotary_emb import rotary_emb_fwd
from slora.models.peft.layer_weights.lora_layer_weight import LoraLayerWeight
from slora.models.peft.triton_kernel.lora.lora_prefill import (
    dispatch_bgmv_triton,
    lora_get_qkvo_fwd_expand,
    lora_get_qkvo_fwd_shrink,
)
from slora.server.router.model_infer.infer_adapter import InferAdapter
from slora.server.router.model_infer.naive_infer_adapter import NaiveInferAdapter
from slora.utils.infer_utils import calculate_time, mark_cost_time, mark_end, mark_start

try:
    from slora._kernels import dispatch_bgmv
    HAS_BGMV_KERNEL = True
except ImportError:
    dispatch_bgmv = None
    HAS_BGMV_KERNEL = False


class LoraUnorderedBatchInfer:
    """Runs one batch where every request may use a different adapter.

    Prefill uses the Triton MBGMM kernels on the unified pool; decode uses the
    custom ``dispatch_bgmv`` CUDA kernel (punica BGMV patched for the pool's
    page layout), falling back to the Triton MBGMV kernel when the extension is
    not built.
    """

    def __init__(self, base_model, adapters, infer_adapter=None):
        self.base_model = base_model

        lora_layer_dim = [adapter.r if adapter is not None else 0 for adapter in adapters]
        self.max_lora_dim = max(lora_layer_dim)

        self.req_bins = torch.zeros(len(adapters), dtype=torch.long, device="cuda")

        if infer_adapter is not None:
            self.infer_adapter = infer_adapter
            if isinstance(infer_adapter, NaiveInferAdapter):
                self.key_buffer = infer_adapter.key_buffer
                self.value_buffer = infer_adapter.value_buffer
            else:
                self.key_buffer = infer_adapter.mem_manager.key_buffer
                self.value_buffer = infer_adapter.mem_manager.value_buffer
            for i, adapter in enumerate(adapters):
                # FIX ME @TODO: currently not supporting adapter is None
                if adapter is None:
                    continue
                idx = infer_adapter.adapter_dirs.index(adapter.lora_dir)
                self.req_bins[i] = idx

        self.kv_embed_dim = base_model.tp_k_head_num_ * base_model.head_dim_

    @torch.no_grad()
    def forward(
        self,
        batch_size,  # number of request
        total_token_num,
        max_len_in_batch,
        input_ids,  # 1D input tensor
        b_loc,  # mapping to memory pool
        b_start_loc,  # the start index of each request
        b_seq_len,  # the current length of each request
        is_prefill=True,
        use_bmm=True,
        no_lora_compute=False,
        no_lora_copy=False,
    ):
        # Notice that batch_lora only support decoding
        assert len(b_loc) == len(b_start_loc) == len(b_seq_len)
        self.delta = []

        self.max_b_seq_len = torch.max(b_seq_len).item()

        if is_prefill:
            assert len(self.req_bins) == len(b_seq_len)
            self.batch_req_bins = torch.repeat_interleave(self.req_bins, b_seq_len)
            # self.b_start_loc = torch.cumsum(torch.cat([torch.tensor([0], dtype=torch.long, device="cuda"), b_seq_len[:-1]]), dim=0)
            for _ in range(3):
                self.delta.append(torch.zeros((len(self.batch_req_bins), self.max_lora_dim), dtype=torch.float16, device="cuda"))

            return self._prefill(batch_size, total_token_num, max_len_in_batch,
                                 input_ids, b_loc, b_start_loc, b_seq_len, no_lora_compute)
        else:
            for _ in range(3):
                self.delta.append(torch.zeros((len(b_seq_len), self.max_lora_dim), dtype=torch.float16, device="cuda"))
            return self._decode(batch_size, total_token_num, max_len_in_batch,
                                input_ids, b_loc, b_start_loc, b_seq_len,
                                no_lora_compute, no_lora_copy)

    def _prefill(self, batch_size, total_token_num, max_len_in_batch,
                 input_ids, b_loc, b_start_loc, b_seq_len, no_lora_compute=False):

        infer_state = self.base_model.infer_state_class()
        infer_state.is_prefill = True
        infer_state.batch_size = batch_size
        infer_state.total_token_num = total_token_num
        infer_state.max_len_in_batch = max_len_in_batch
        assert (input_ids.shape[0] == total_token_num)
        assert (b_loc.shape[0] == b_start_loc.shape[0] == b_seq_len.shape[0])

        b_seq_len_numpy = b_seq_len.cpu().numpy()
        position_ids = torch.from_numpy(np.concatenate([np.arange(0, b_seq_len_numpy[i])
                                        for i in range(len(b_seq_len_numpy))], axis=0)).cuda()
        infer_state.position_cos = torch.index_select(
            self.base_model._cos_cached, 0, position_ids).view(position_ids.shape[0], -1)
        infer_state.position_sin = torch.index_select(
            self.base_model._sin_cached, 0, position_ids).view(position_ids.shape[0], -1)
        position_ids = None

        infer_state.b_loc = b_loc
        infer_state.b_start_loc = b_start_loc
        infer_state.b_seq_len = b_seq_len
        infer_state.mem_manager = self.base_model.mem_manager
        infer_state.prefill_mem_index = self.base_model.mem_manager.alloc(infer_state.total_token_num)
        infer_state.prefill_key_buffer = torch.empty(
            (infer_state.total_token_num, self.base_model.tp_k_head_num_, self.base_model.head_dim_),
            dtype=torch.float16, device="cuda")
        infer_state.prefill_value_buffer = torch.empty_like(infer_state.prefill_key_buffer)
        init_bloc(b_loc, b_seq_len, max_len_in_batch, infer_state.prefill_mem_index)

        predict_logics = self._context_forward(input_ids, infer_state, no_lora_compute)
        return predict_logics

    def _decode(self, batch_size, total_token_num, max_len_in_batch,
                input_ids, b_loc, b_start_loc, b_seq_len, no_lora_compute=False,
                no_lora_copy=False):
        infer_state = self.base_model.infer_state_class()
        infer_state.is_prefill = False
        infer_state.batch_size = batch_size
        infer_state.total_token_num = total_token_num
        infer_state.max_len_in_batch = max_len_in_batch
        assert (b_loc.shape[0] == b_start_loc.shape[0] == b_seq_len.shape[0])

        infer_state.b_loc = b_loc
        infer_state.b_start_loc = b_start_loc
        infer_state.b_seq_len = b_seq_len

        infer_state.mem_manager = self.base_model.mem_manager

        alloc_mem = self.base_model.mem_manager.alloc_contiguous(batch_size)
        if alloc_mem is not None:
            infer_state.decode_is_contiguous = True
            infer_state.decode_mem_index = alloc_mem[0]
            infer_state.decode_mem_start = alloc_mem[1]
            infer_state.decode_mem_end = alloc_mem[2]
            b_loc[:, max_len_in_batch - 1] = infer_state.decode_mem_index
        else:
            infer_state.decode_is_contiguous = False
            alloc_mem = self.base_model.mem_manager.alloc(batch_size)
            infer_state.decode_mem_index = alloc_mem
            infer_state.decode_key_buffer = torch.empty(
                (batch_size, self.base_model.tp_k_head_num_, self.base_model.head_dim_), dtype=torch.float16, device="cuda")
            infer_state.decode_value_buffer = torch.empty_like(infer_state.decode_key_buffer)
            b_loc[:, max_len_in_batch - 1] = infer_state.decode_mem_index

        infer_state.init_some_extra_state(self.base_model, batch_size, total_token_num,
                                          max_len_in_batch, input_ids, b_loc, b_start_loc,
                                          b_seq_len, False)
        predict_logics = self._token_forward(input_ids, infer_state, no_lora_compute, no_lora_copy)
        return predict_logics

    @mark_cost_time("prefill: context forward")
    def _context_forward(self, input_ids, infer_state, no_lora_compute=False):
        cuda_input_ids = input_ids
        input_embs = self.base_model.pre_infer.context_forward(
            cuda_input_ids, infer_state, self.base_model.pre_post_weight)
        for i in range(self.base_model.layers_num):
            input_embs = self._lora_context_forward(i, input_embs, infer_state, no_lora_compute)
        predict_logics = self.base_model.post_infer.token_forward(
            input_embs, infer_state, self.base_model.pre_post_weight, return_logics=True)
        return predict_logics

    def _token_forward(self, input_ids, infer_state, no_lora_compute=False, no_lora_copy=False):
        cuda_input_ids = input_ids
        input_embs = self.base_model.pre_infer.token_forward(
            cuda_input_ids, infer_state, self.base_model.pre_post_weight)
        for i in range(self.base_model.layers_num):
            input_embs = self._lora_token_forward(i, input_embs, infer_state, no_lora_compute, no_lora_copy)
        predict_logics = self.base_model.post_infer.token_forward(
            input_embs, infer_state, self.base_model.pre_post_weight, return_logics=True)
        return predict_logics

    def _lora_context_forward(self, layer_id, input_embs, infer_state, no_lora_compute=False):
        self._lora_context_attention(layer_id, input_embs, infer_state, no_lora_compute)
        layer_weight = self.base_model.trans_layers_weight[layer_id]
        layer_infer = self.base_model.layers_infer[layer_id]
        layer_infer._context_ffn(input_embs, infer_state, layer_weight)
        return input_embs

    def _lora_token_forward(self, layer_id, input_embs, infer_state, no_lora_compute=False, no_lora_copy=False):
        self._lora_token_attention(layer_id, input_embs, infer_state, no_lora_compute, no_lora_copy)
        layer_weight = self.base_model.trans_layers_weight[layer_id]
        layer_infer = self.base_model.layers_infer[layer_id]
        layer_infer._token_ffn(input_embs, infer_state, layer_weight)
        return input_embs

    def _lora_context_attention(self, layer_id, input_embs, infer_state, no_lora_compute=False):
        layer_weight = self.base_model.trans_layers_weight[layer_id]
        layer_infer = self.base_model.layers_infer[layer_id]
        input1 = layer_infer._att_norm(input_embs, infer_state, layer_weight)
        q = self._lora_get_qkv(layer_id, input1, infer_state.prefill_key_buffer,
                               infer_state.prefill_value_buffer, infer_state, no_lora_compute)
        input1 = None
        layer_infer._post_cache_kv(infer_state.prefill_key_buffer, infer_state.prefill_value_buffer,
                                   infer_state, layer_weight)
        o = layer_infer._context_attention_kernel(q, infer_state.prefill_key_buffer,
                                                  infer_state.prefill_value_buffer, infer_state, layer_weight)
        q = None
        o = self._lora_get_o(layer_id, o, infer_state, no_lora_compute)
        input_embs.add_(o.view(-1, layer_infer.embed_dim_))
        return

    def _lora_token_attention(self, layer_id, input_embs, infer_state, no_lora_compute=False, no_lora_copy=False):
        layer_weight = self.base_model.trans_layers_weight[layer_id]
        layer_infer = self.base_model.layers_infer[layer_id]
        input1 = layer_infer._att_norm(input_embs, infer_state, layer_weight)
        cache_k, cache_v = layer_infer._pre_cache_kv(infer_state, layer_weight)
        q = self._batch_lora_get_qkv(layer_id, input1, cache_k, cache_v, infer_state,
                                     no_lora_compute, no_lora_copy)
        input1 = None
        layer_infer._post_cache_kv(cache_k, cache_v, infer_state, layer_weight)
        o = layer_infer._token_attention_kernel(q, infer_state, layer_weight)
        q = None
        o = self._batch_lora_get_o(layer_id, o, infer_state, no_lora_compute)
        input_embs.add_(o.view(-1, layer_infer.embed_dim_))
        return

    def _lora_get_qkv(self, layer_id, input_embs, cache_k, cache_v, infer_state, no_lora_compute=False):
        base_model = self.base_model
        base_layer_weight = base_model.trans_layers_weight[layer_id]
        base_layer_infer = base_model.layers_infer[layer_id]
        # q (S, H)
        q = torch.mm(input_embs.view(-1, base_layer_infer.embed_dim_), base_layer_weight.q_weight_)
        if not no_lora_compute:
            delta_qA = self.delta[0]
            lora_get_qkvo_fwd_shrink(input_embs.view(-1, base_layer_infer.embed_dim_),
                                     self.key_buffer[layer_id].view(-1, self.kv_embed_dim),
                                     delta_qA, self.infer_adapter.a_loc, self.infer_adapter.a_start,
                                     self.infer_adapter.a_len, infer_state.b_start_loc,
                                     infer_state.b_seq_len, self.req_bins, base_layer_infer.embed_dim_,
                                     0, self.max_lora_dim, self.max_b_seq_len)
            lora_get_qkvo_fwd_expand(delta_qA, self.value_buffer[layer_id].view(-1, self.kv_embed_dim),
                                     q, self.infer_adapter.a_scaling,
                                     self.infer_adapter.a_loc, self.infer_adapter.a_start,
                                     self.infer_adapter.a_len, infer_state.b_start_loc,
                                     infer_state.b_seq_len, self.req_bins, self.kv_embed_dim,
                                     0, self.max_lora_dim, self.max_b_seq_len)
        rotary_emb_fwd(q.view(-1, base_layer_infer.tp_q_head_num_, base_model.head_dim_),
                       infer_state.position_cos, infer_state.position_sin)
        torch.mm(input_embs.view(-1, base_layer_infer.embed_dim_), base_layer_weight.k_weight_,
                 out=cache_k.view(-1, base_model.tp_k_head_num_ * base_model.head_dim_))
        rotary_emb_fwd(cache_k, infer_state.position_cos, infer_state.position_sin)
        torch.mm(input_embs.view(-1, base_layer_infer.embed_dim_), base_layer_weight.v_weight_,
                 out=cache_v.view(-1, base_model.tp_k_head_num_ * base_model.head_dim_))
        return q

    def _batch_lora_get_qkv(self, layer_id, input_embs, cache_k, cache_v, infer_state,
                            no_lora_compute=False, no_lora_copy=False) -> torch.Tensor:
        base_model = self.base_model
        base_layer_weight = base_model.trans_layers_weight[layer_id]
        base_layer_infer = base_model.layers_infer[layer_id]

        # q (bs, H)
        q = torch.mm(input_embs.view(-1, base_layer_infer.embed_dim_), base_layer_weight.q_weight_)
        if not no_lora_compute:
            delta_qA = self.delta[0]
            if HAS_BGMV_KERNEL:
                dispatch_bgmv(delta_qA, input_embs.view(-1, base_layer_infer.embed_dim_),
                              self.key_buffer[layer_id], self.infer_adapter.a_start,
                              self.infer_adapter.a_len, self.infer_adapter.a_loc,
                              self.req_bins, 0, self.infer_adapter.a_scaling)
                dispatch_bgmv(q, delta_qA, self.value_buffer[layer_id], self.infer_adapter.a_start,
                              self.infer_adapter.a_len, self.infer_adapter.a_loc,
                              self.req_bins, 0, self.infer_adapter.a_scaling)
            else:
                lora_get_qkvo_fwd_shrink(input_embs.view(-1, base_layer_infer.embed_dim_),
                                         self.key_buffer[layer_id].view(-1, self.kv_embed_dim),
                                         delta_qA, self.infer_adapter.a_loc, self.infer_adapter.a_start,
                                         self.infer_adapter.a_len, infer_state.b_start_loc,
                                         infer_state.b_seq_len, self.req_bins, base_layer_infer.embed_dim_,
                                         0, self.max_lora_dim, 1)
                dispatch_bgmv_triton(q, delta_qA, self.value_buffer[layer_id].view(-1, self.kv_embed_dim),
                                     self.infer_adapter.a_loc, self.infer_adapter.a_start,
                                     self.infer_adapter.a_len, self.req_bins, self.infer_adapter.a_scaling,
                                     self.kv_embed_dim, 0, self.max_lora_dim)

        rotary_emb_fwd(q.view(-1, base_layer_infer.tp_q_head_num_, base_model.head_dim_),
                       infer_state.position_cos, infer_state.position_sin)
        torch.mm(input_embs.view(-1, base_layer_infer.embed_dim_), base_layer_weight.k_weight_,
                 out=cache_k.view(-1, base_model.tp_k_head_num_ * base_model.head_dim_))
        rotary_emb_fwd(cache_k, infer_state.position_cos, infer_state.position_sin)
        torch.mm(input_embs.view(-1, base_layer_infer.embed_dim_), base_layer_weight.v_weight_,
                 out=cache_v.view(-1, base_model.tp_k_head_num_ * base_model.head_dim_))
        return q

    def _lora_get_o(self, layer_id, input, infer_state, no_lora_compute=False) -> torch.Tensor:
        base_model = self.base_model
        base_layer_weight = base_model.trans_layers_weight[layer_id]
        base_layer_infer = base_model.layers_infer[layer_id]
        o = torch.mm(input.view(-1, base_layer_infer.embed_dim_), base_layer_weight.o_weight_)
        if not no_lora_compute:
            delta_oA = self.delta[0]
            lora_get_qkvo_fwd_shrink(input.view(-1, base_layer_infer.embed_dim_),
                                     self.key_buffer[layer_id].view(-1, self.kv_embed_dim),
                                     delta_oA, self.infer_adapter.a_loc, self.infer_adapter.a_start,
                                     self.infer_adapter.a_len, infer_state.b_start_loc,
                                     infer_state.b_seq_len, self.req_bins, base_layer_infer.embed_dim_,
                                     3, self.max_lora_dim, self.max_b_seq_len)
            lora_get_qkvo_fwd_expand(delta_oA, self.value_buffer[layer_id].view(-1, self.kv_embed_dim),
                                     o, self.infer_adapter.a_scaling,
                                     self.infer_adapter.a_loc, self.infer_adapter.a_start,
                                     self.infer_adapter.a_len, infer_state.b_start_loc,
                                     infer_state.b_seq_len, self.req_bins, base_layer_infer.embed_dim_,
                                     3, self.max_lora_dim, self.max_b_seq_len)
        return o

    def _batch_lora_get_o(self, layer_id, input, infer_state, no_lora_compute=False) -> torch.Tensor:
        base_model = self.base_model
        base_layer_weight = base_model.trans_layers_weight[layer_id]
        base_layer_infer = base_model.layers_infer[layer_id]
        o = torch.mm(input.view(-1, base_layer_infer.embed_dim_), base_layer_weight.o_weight_)
        if not no_lora_compute:
            if self.base_model.profile:
                torch.cuda.synchronize()  # exclude the base o_proj from lora_time
                t0 = time.perf_counter()
            delta_oA = self.delta[1]
            if HAS_BGMV_KERNEL:
                dispatch_bgmv(delta_oA, input.view(-1, base_layer_infer.embed_dim_),
                              self.key_buffer[layer_id], self.infer_adapter.a_start,
                              self.infer_adapter.a_len, self.infer_adapter.a_loc,
                              self.req_bins, 3, self.infer_adapter.a_scaling)
                dispatch_bgmv(o, delta_oA, self.value_buffer[layer_id], self.infer_adapter.a_start,
                              self.infer_adapter.a_len, self.infer_adapter.a_loc,
                              self.req_bins, 3, self.infer_adapter.a_scaling)
            else:
                lora_get_qkvo_fwd_shrink(input.view(-1, base_layer_infer.embed_dim_),
                                         self.key_buffer[layer_id].view(-1, self.kv_embed_dim),
                                         delta_oA, self.infer_adapter.a_loc, self.infer_adapter.a_start,
                                         self.infer_adapter.a_len, infer_state.b_start_loc,
                                         infer_state.b_seq_len, self.req_bins, base_layer_infer.embed_dim_,
                                         3, self.max_lora_dim, 1)
                dispatch_bgmv_triton(o, delta_oA, self.value_buffer[layer_id].view(-1, self.kv_embed_dim),
                                     self.infer_adapter.a_loc, self.infer_adapter.a_start,
                                     self.infer_adapter.a_len, self.req_bins, self.infer_adapter.a_scaling,
                                     base_layer_infer.embed_dim_, 3, self.max_lora_dim)
            if self.base_model.profile:
                torch.cuda.synchronize()
                self.base_model.lora_time += time.perf_counter() - t0
        return o
