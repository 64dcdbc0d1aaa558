# Copyright (c) 2024, NVIDIA CORPORATION. All rights reserved.

from abc import abstractmethod
from typing import List, Optional, Tuple

import torch

from megatron.core import parallel_state, tensor_parallel
from megatron.core.tensor_parallel.mappings import (
    _gather_along_first_dim_moe,
    gather_from_sequence_parallel_region,
    reduce_scatter_to_sequence_parallel_region,
)
from megatron.core.transformer.moe.moe_utils import (
    get_capacity,
    permute,
    sort_chunks_by_idxs,
    unpermute,
)
from megatron.core.transformer.moe.shared_experts import SharedExpertMLP
from megatron.core.transformer.transformer_config import TransformerConfig

""" We use the following notation throughout this file:
     H: hidden size
     B: micro batch size
     S: sequence length
     TP: tensor model parallel size
     EP: expert model parallel size
     num_local_tokens: S/TP*B
     num_global_tokens: num_local_tokens*TP*EP
"""


class MoETokenDispatcher:
    """Base class for the token dispatchers (permute -> all-to-all / all-gather -> unpermute)."""

    def __init__(self, config: TransformerConfig) -> None:
        self.config = config
        self.shared_experts: Optional[SharedExpertMLP] = None
        self.tp_size = self.config.tensor_model_parallel_size
        self.ep_size = self.config.expert_model_parallel_size

    @property
    def ep_group(self):
        return parallel_state.get_expert_model_parallel_group()

    @property
    def tp_group(self):
        return parallel_state.get_expert_tensor_parallel_group()

    @property
    def tp_rank(self):
        return parallel_state.get_expert_tensor_parallel_rank()

    @property
    def tp_ep_group(self):
        return parallel_state.get_expert_tensor_and_model_parallel_group()

    @abstractmethod
    def token_permutation(self, tokens: torch.Tensor, probs: torch.Tensor, routing_map: torch.Tensor):
        raise NotImplementedError("Permutation function not implemented.")

    @abstractmethod
    def token_unpermutation(self, expert_output: torch.Tensor, bias: torch.Tensor = None):
        raise NotImplementedError("Restore function not implemented.")

    def set_shared_experts(self, shared_experts):
        assert self.config.moe_shared_expert_overlap
        assert shared_experts is not None
        self.shared_experts = shared_experts


class MoEAllGatherTokenDispatcher(MoETokenDispatcher):
    """AllGather-based token dispatcher (used when EP is small or TP-only)."""

    def __init__(self, num_local_experts: int, local_expert_indices: List[int], config: TransformerConfig) -> None:
        super().__init__(config=config)
        self.num_local_experts = num_local_experts
        assert self.num_local_experts > 0, "Expected at least one expert"
        self.local_expert_indices = local_expert_indices
        assert len(self.local_expert_indices) > 0, "Expected at least one local expert index"
        self.router_topk = config.moe_router_topk
        self.add_bias = config.add_bias_linear

        # self.local_probs: probs of global token assignment to local experts.
        self.local_probs = None

        # Mask over the gathered tokens that selects the ones routed to this rank's experts.
        self.global_local_map = None

    def token_permutation(self, hidden_states: torch.Tensor, probs: torch.Tensor, routing_map: torch.Tensor):
        self.hidden_shape = hidden_states.shape
        # [S/TP, B, H] -> [S*B/TP, H]
        hidden_states = hidden_states.view(-1, self.hidden_shape[-1])

        # Permute the tokens across the expert parallel devices.
        if self.tp_size > 1 or self.ep_size > 1:
            ## local_indices calculation
            with torch.no_grad():
                # [num_local_tokens, num_experts] -> [num_global_tokens, num_experts], where:
                #     num_local_tokens=(S/TP)*B, num_global_tokens=S*B*EP
                routing_map = gather_from_sequence_parallel_region(routing_map, group=self.tp_ep_group)

            ## local_probs calculation
            # max_prob: [S/TP*B, num_experts] -> global_probs: [S*B*EP, num_experts]
            probs = gather_from_sequence_parallel_region(probs, group=self.tp_ep_group)
            # Note that this allgather spans the communication domain of TP*EP.
            #  [(S/TP)*B, H] -> [((S/TP)*B)*(TP*EP), H] = [S*B*EP, H]
            hidden_states = gather_from_sequence_parallel_region(hidden_states, group=self.tp_ep_group, use_global_buffer=True)
        self.hidden_shape_before_permute = hidden_states.shape

        # The routing map and probs that for local experts.
        self.local_map = routing_map[:, self.local_expert_indices[0]:self.local_expert_indices[-1] + 1].contiguous()
        # probs of global token assignment to local experts.
        self.local_probs = probs[:, self.local_expert_indices[0]:self.local_expert_indices[-1] + 1].contiguous()

        tokens_per_expert = self.local_map.sum(dim=0).long().cpu()

        (permuted_local_hidden_states, self.reversed_local_input_permutation_mapping) = permute(hidden_states, self.local_map)

        return permuted_local_hidden_states, tokens_per_expert

    def token_unpermutation(self, hidden_states: torch.Tensor, bias: torch.Tensor = None):
        # Scale the expert output prior to reduction and subsequent to local unpermutation if k > 1.
        # Unpermute the expert output and bias
        permuted_probs = self.local_probs.T.contiguous().masked_select(self.local_map.T.contiguous())
        hidden_states = hidden_states * permuted_probs.unsqueeze(-1)
        unpermuted_local_hidden = unpermute(
            hidden_states,
            self.reversed_local_input_permutation_mapping,
            restore_shape=self.hidden_shape_before_permute,
            routing_map=self.local_map,
        )

        unpermuted_local_bias = None
        if self.add_bias:
            assert bias is not None
            bias = bias * permuted_probs.unsqueeze(-1)
            unpermuted_local_bias = unpermute(
                bias,
                self.reversed_local_input_permutation_mapping,
                restore_shape=self.hidden_shape_before_permute,
                routing_map=self.local_map,
            )

        output_total = unpermuted_local_hidden
        output_bias_total = unpermuted_local_bias

        # Unpermute the tokens across ranks.
        if self.tp_size > 1 or self.ep_size > 1:
            output_total = reduce_scatter_to_sequence_parallel_region(output_total, group=self.tp_ep_group)
            if self.add_bias:
                # Unpermute the bias across expert parallel devices.
                # bias is duplicated across tensor parallelism ranks;
                output_bias_total = reduce_scatter_to_sequence_parallel_region(output_bias_total, group=self.tp_ep_group) / self.tp_size

        output_total = output_total.view(self.hidden_shape)
        if self.add_bias:
            output_bias_total = output_bias_total.view(self.hidden_shape)

        return output_total, output_bias_total


class MoEAlltoAllTokenDispatcher(MoETokenDispatcher):
    """All-to-all dispatcher for expert parallelism.

    Dispatch: permute by expert -> all-to-all over EP -> all-gather over expert-TP ->
    regroup chunks by local expert. Combine runs the same steps in reverse.
    """

    def __init__(self, num_local_experts: int, local_expert_indices: List[int], config: TransformerConfig) -> None:
        super().__init__(config=config)
        self.num_local_experts = num_local_experts
        assert config.num_moe_experts is not None
        self.num_experts = config.num_moe_experts
        assert self.num_local_experts > 0, "Expected at least one expert"
        self.local_expert_indices = local_expert_indices
        assert len(self.local_expert_indices) == self.num_local_experts, "Invalid local expert indices"
        for i in range(len(self.local_expert_indices) - 1):
            assert self.local_expert_indices[i] == self.local_expert_indices[i + 1] - 1, "local_expert_indices must be continous"

        # [ep_size]. Represents the number of tokens sent by the current rank to other EP ranks.
        self.input_splits = None
        # [ep_size]. Represents the number of tokens received by the current rank from other EP ranks.
        self.output_splits = None
        # [tp_size]. Represents the number of tokens received by the current rank from other TP ranks.
        self.output_splits_tp = None
        self.permute_idx_device = torch.device("cuda") if self.config.moe_permute_fusion else None
        input_chunk_idxs = torch.arange(self.num_experts * self.tp_size, device=self.permute_idx_device)
        # [num_local_experts, tp_size * ep_size]. Sort the input chunks by local experts.
        self.sort_input_by_local_experts = input_chunk_idxs.reshape(-1, self.num_local_experts).T.ravel()
        # [tp_size * ep_size, num_local_experts]. Restore the output chunks by local experts.
        self.restore_output_by_local_experts = input_chunk_idxs.reshape(self.num_local_experts, -1).T.ravel()

        # Token drop and padding.
        # Drop and pad the input to capacity.
        self.drop_and_pad = self.config.moe_pad_expert_input_to_capacity
        if self.drop_and_pad:
            assert self.config.moe_expert_capacity_factor is not None
            self.moe_expert_capacity_factor = self.config.moe_expert_capacity_factor
        self.capacity = None

        # The split sizes are copied to the host with non_blocking=True; the host waits for
        # them once, at the latest point where they are needed. Which point that is depends
        # on dropping / EP / local-expert settings (see preprocess()).
        self.cuda_sync_point = "no_sync"

        self.shared_experts = None
        self.shared_expert_stream = None
        if self.config.moe_shared_expert_overlap:
            self.shared_expert_stream = torch.cuda.Stream()

    def preprocess(self, routing_map: torch.Tensor) -> torch.Tensor:
        """Compute the token splits for the all-to-all and decide where the host must wait
        for the device-to-host copies of those splits."""
        # [num_local_tokens, num_experts] -> [num_experts]
        num_local_tokens_per_expert = routing_map.sum(dim=0).long()

        # num_local_tokens_per_expert: [num_experts]
        tp_size = self.tp_size
        ep_size = self.ep_size

        if self.drop_and_pad:
            # Drop and pad the input to capacity.
            num_tokens = routing_map.size(0) * self.config.moe_router_topk
            self.capacity = get_capacity(num_tokens=num_tokens, num_experts=self.num_experts, capacity_factor=self.moe_expert_capacity_factor)
            self.num_out_tokens = self.capacity * self.num_experts
            # [num_local_experts], number of tokens processed by each expert.
            num_tokens_per_local_expert = torch.full((self.num_local_experts,), self.capacity * tp_size * ep_size, dtype=torch.long)
            # [tp_size * ep_size, num_local_experts]. Represents the number of tokens sent
            # to each local expert by all ranks.
            self.num_global_tokens_per_local_expert = torch.full((self.num_experts * tp_size,), self.capacity, dtype=torch.long, device=self.permute_idx_device)
            return num_tokens_per_local_expert
        elif self.config.moe_expert_capacity_factor is not None:
            # Drop tokens to capacity, no padding.
            self.num_out_tokens = num_local_tokens_per_expert.sum().to(torch.device("cpu"), non_blocking=True)
            self.cuda_sync_point = "before_permutation_1"
        else:
            # Dropless
            self.num_out_tokens = routing_map.size(0) * self.config.moe_router_topk
            if self.ep_size > 1 or self.num_local_experts > 1:
                # Token dropless and enable ep. A synchronization is needed before expert parallel
                # AlltoAll communication to get the `input_splits` and `output_splits` CPU values.
                self.cuda_sync_point = "before_ep_alltoall"
            else:
                # Token dropless and no ep. A synchronization is needed to get the
                # `tokens_per_expert` CPU value.
                self.cuda_sync_point = "before_finish"

        if ep_size > 1 or tp_size > 1:
            # [ep_size]. Represents the number of tokens sent by the current rank to other EP ranks.
            self.input_splits = num_local_tokens_per_expert.reshape(ep_size, self.num_local_experts).sum(axis=1).to(torch.device("cpu"), non_blocking=True)
            # Gather the global distribution of tokens across ranks.
            num_global_tokens_per_expert = _gather_along_first_dim_moe(num_local_tokens_per_expert, group=self.tp_ep_group).reshape(ep_size, tp_size, self.num_experts).transpose(0, 1)
            num_global_tokens_per_local_expert = num_global_tokens_per_expert[:, :, self.local_expert_indices[0]:self.local_expert_indices[-1] + 1].contiguous()
            num_global_tokens_per_rank = num_global_tokens_per_local_expert.sum(axis=2)
            self.output_splits = num_global_tokens_per_rank[self.tp_rank].to(torch.device("cpu"), non_blocking=True)
            self.output_splits_tp = num_global_tokens_per_rank.sum(axis=1).to(torch.device("cpu"), non_blocking=True)
            num_tokens_per_local_expert = num_global_tokens_per_local_expert.sum(dim=(0, 1))
            self.num_global_tokens_per_local_expert = num_global_tokens_per_local_expert.view(-1, self.num_local_experts)
        else:
            num_tokens_per_local_expert = num_local_tokens_per_expert

        if self.num_local_experts > 1:
            if not self.config.moe_permute_fusion:
                self.num_global_tokens_per_local_expert = self.num_global_tokens_per_local_expert.to(torch.device("cpu"), non_blocking=False)
        return num_tokens_per_local_expert.to(torch.device("cpu"), non_blocking=True)

    def _maybe_synchronize(self, point: str) -> None:
        if self.cuda_sync_point == point:
            torch.cuda.current_stream().synchronize()

    def token_permutation(self, hidden_states: torch.Tensor, probs: torch.Tensor, routing_map: torch.Tensor):
        # Preprocess: Get the metadata for communication, permutation and computation operations.
        self.hidden_shape = hidden_states.shape
        self.probs = probs
        self.routing_map = routing_map
        assert probs.dim() == 2, "Expected 2D tensor for probs"
        assert routing_map.dim() == 2, "Expected 2D tensor for token2expert mask"
        assert routing_map.dtype == torch.bool, "Expected bool tensor for mask"
        hidden_states = hidden_states.view(-1, self.hidden_shape[-1])
        tokens_per_expert = self.preprocess(self.routing_map)

        if self.shared_experts is not None:
            self.shared_experts.pre_forward_comm(hidden_states.view(self.hidden_shape))

        # Permutation 1: input to AlltoAll input
        self.hidden_shape_before_permute = hidden_states.shape
        self._maybe_synchronize("before_permutation_1")
        permutated_local_input_tokens, self.reversed_local_input_permutation_mapping = permute(
            hidden_states, routing_map, num_out_tokens=self.num_out_tokens,
            fused=self.config.moe_permute_fusion, drop_and_pad=self.drop_and_pad,
        )

        # Perform expert parallel AlltoAll communication
        self._maybe_synchronize("before_ep_alltoall")
        global_input_tokens = tensor_parallel.all_to_all(parallel_state.get_expert_model_parallel_group(), permutated_local_input_tokens, self.output_splits, self.input_splits)
        if self.shared_experts is not None:
            with torch.cuda.stream(self.shared_expert_stream):
                self.shared_experts.linear_fc1_forward_and_act(global_input_tokens)

        if self.tp_size > 1:
            global_input_tokens = gather_from_sequence_parallel_region(global_input_tokens, group=self.tp_group, output_split_sizes=self.output_splits_tp.tolist())

        # Permutation 2: Sort tokens by local expert.
        self._maybe_synchronize("before_permutation_2")
        if self.num_local_experts > 1:
            global_input_tokens = sort_chunks_by_idxs(global_input_tokens, self.num_global_tokens_per_local_expert.ravel(), self.sort_input_by_local_experts, fused=self.config.moe_permute_fusion)

        self._maybe_synchronize("before_finish")
        return global_input_tokens, tokens_per_expert

    def token_unpermutation(self, hidden_states: torch.Tensor, bias: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        assert bias is None, "Bias is not supported in MoEAlltoAllTokenDispatcher"

        # Unpermutation 2: Unsort tokens by local expert.
        if self.num_local_experts > 1:
            hidden_states = sort_chunks_by_idxs(hidden_states, self.num_global_tokens_per_local_expert.T.ravel(), self.restore_output_by_local_experts, fused=self.config.moe_permute_fusion)

        if self.tp_size > 1:
            hidden_states = reduce_scatter_to_sequence_parallel_region(hidden_states, group=self.tp_group, input_split_sizes=self.output_splits_tp.tolist())

        # Perform expert parallel AlltoAll communication
        # hidden_states: [SEQL, H] -> [SEQL, H/TP]
        permutated_local_input_tokens = tensor_parallel.all_to_all(parallel_state.get_expert_model_parallel_group(), hidden_states, self.input_splits, self.output_splits)
        if self.shared_experts is not None:
            self.shared_experts.linear_fc2_forward(permutated_local_input_tokens)
            self.shared_experts.post_forward_comm()
            torch.cuda.current_stream().wait_stream(self.shared_expert_stream)

        # Unpermutation 1: AlltoAll output to output
        output = unpermute(
            permutated_local_input_tokens,
            self.reversed_local_input_permutation_mapping,
            restore_shape=self.hidden_shape_before_permute,
            probs=self.probs,
            routing_map=self.routing_map,
            fused=self.config.moe_permute_fusion,
            drop_and_pad=self.drop_and_pad,
        )

        # Reshape the output tensor
        output = output.view(self.hidden_shape)

        # Add shared experts output
        if self.shared_experts is not None:
            shared_expert_output = self.shared_experts.get_output()
            output += shared_expert_output
        return output, None
