# coding=utf-8
# Copyright 2020 The Google AI Language Team Authors, Facebook AI Research authors and The HuggingFace Inc. team.
# Copyright (c) 2020, NVIDIA CORPORATION.  All rights reserved.
# Licensed under the Apache License, Version 2.0 (see the LICENSE file of transformers).
#
# NOTE: this file is a trimmed copy of transformers v4.29.2 `generation/utils.py`;
# only the OPERA-specific beam search (Over-trust Penalty and Retrospection-Allocation)
# is kept here, the remaining GenerationMixin methods are unchanged from upstream.

import copy
import warnings
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

import torch
import torch.distributed as dist
from torch import nn

from .beam_search import BeamScorer
from .logits_process import LogitsProcessorList
from .stopping_criteria import StoppingCriteriaList, validate_stopping_criteria
from ..utils import ModelOutput, logging


logger = logging.get_logger(__name__)


class GenerationMixinOpera:
    """Mixin carrying `opera_beam_search`; merged into `GenerationMixin` in the patched package."""

    def opera_beam_search(
        self,
        input_ids: torch.LongTensor,
        beam_scorer: BeamScorer,
        logits_processor: Optional[LogitsProcessorList] = None,
        stopping_criteria: Optional[StoppingCriteriaList] = None,
        max_length: Optional[int] = None,
        pad_token_id: Optional[int] = None,
        eos_token_id: Optional[Union[int, List[int]]] = None,
        output_attentions: Optional[bool] = None,
        output_hidden_states: Optional[bool] = None,
        output_scores: Optional[bool] = None,
        return_dict_in_generate: Optional[bool] = None,
        synced_gpus: Optional[bool] = False,
        key_position: Optional[dict] = None,
        scale_factor: Optional[float] = 50.0,
        threshold: Optional[int] = 15,
        num_attn_candidates: Optional[int] = 5,
        window_size: Optional[int] = 512,
        penalty_weights: Optional[float] = 1.0,
        **model_kwargs,
    ):
        # init values
        logits_processor = logits_processor if logits_processor is not None else LogitsProcessorList()
        stopping_criteria = stopping_criteria if stopping_criteria is not None else StoppingCriteriaList()
        if max_length is not None:
            warnings.warn(
                "`max_length` is deprecated in this function, use"
                " `stopping_criteria=StoppingCriteriaList(MaxLengthCriteria(max_length=max_length))` instead.",
                UserWarning,
            )
            stopping_criteria = validate_stopping_criteria(stopping_criteria, max_length)
        if len(stopping_criteria) == 0:
            warnings.warn("You don't have defined any stopping_criteria, this will likely loop forever", UserWarning)
        pad_token_id = pad_token_id if pad_token_id is not None else self.generation_config.pad_token_id
        eos_token_id = eos_token_id if eos_token_id is not None else self.generation_config.eos_token_id
        if isinstance(eos_token_id, int):
            eos_token_id = [eos_token_id]
        output_scores = output_scores if output_scores is not None else self.generation_config.output_scores
        output_attentions = (
            output_attentions if output_attentions is not None else self.generation_config.output_attentions
        )
        output_hidden_states = (
            output_hidden_states if output_hidden_states is not None else self.generation_config.output_hidden_states
        )
        return_dict_in_generate = (
            return_dict_in_generate
            if return_dict_in_generate is not None
            else self.generation_config.return_dict_in_generate
        )

        batch_size = len(beam_scorer._beam_hyps)
        num_beams = beam_scorer.num_beams

        batch_beam_size, cur_len = input_ids.shape

        if num_beams * batch_size != batch_beam_size:
            raise ValueError(
                f"Batch dimension of `input_ids` should be {num_beams * batch_size}, but is {batch_beam_size}."
            )

        # init attention / hidden states / scores tuples
        scores = () if (return_dict_in_generate and output_scores) else None
        beam_indices = (
            tuple(() for _ in range(batch_beam_size)) if (return_dict_in_generate and output_scores) else None
        )

        # initialise score of first beam with 0 and the rest with -1e9. This makes sure that only tokens
        # of the first beam are considered to avoid sampling the exact same tokens across all beams.
        beam_scores = torch.zeros((batch_size, num_beams), dtype=torch.float, device=input_ids.device)
        beam_scores[:, 1:] = -1e9
        beam_scores = beam_scores.view((batch_size * num_beams,))

        this_peer_finished = False  # used by synced_gpus only

        # OPERA bookkeeping: where the image tokens and the response start inside the sequence
        image_start = key_position["image_start"]
        image_end = key_position["image_end"]
        response_start = key_position["response_start"]
        history_states = []
        history_rollback_locs = None
        beam_next_tokens = None
        beam_idx = None
        rollback_pos = 0
        max_rollback_time = torch.zeros(window_size)
        history_length = window_size
        reject_token_pos_gather = {}
        model_kwargs_ori = model_kwargs.copy()

        while True:
            if synced_gpus:
                # Under synced_gpus the `forward` call must continue until all gpus complete their sequence.
                # The following logic allows an early break if all peers finished generating their sequence
                this_peer_finished_flag = torch.tensor(0.0 if this_peer_finished else 1.0).to(input_ids.device)
                # send 0.0 if we finished, 1.0 otherwise
                dist.all_reduce(this_peer_finished_flag, op=dist.ReduceOp.SUM)
                # did all peers finish? the reduced sum will be 0.0 then
                if this_peer_finished_flag.item() == 0.0:
                    break

            current_state = {}
            if output_attentions:
                current_state["beam_scores"] = beam_scores.clone()
                current_state["cur_len"] = cur_len
                current_state["input_ids"] = input_ids.clone()
                current_state["outputs"] = None
                current_state["model_kwargs"] = copy.deepcopy(model_kwargs)
                current_state["beam_next_tokens"] = beam_next_tokens
                current_state["beam_idx"] = beam_idx

            model_inputs = self.prepare_inputs_for_generation(input_ids, **model_kwargs)

            outputs = self(
                **model_inputs,
                return_dict=True,
                output_attentions=output_attentions,
                output_hidden_states=output_hidden_states,
            )

            if synced_gpus and this_peer_finished:
                cur_len = cur_len + 1
                continue  # don't waste resources running the code we don't need

            next_token_logits = outputs.logits[:, -1, :]
            next_token_logits = self.adjust_logits_during_generation(next_token_logits, cur_len=cur_len)
            next_token_scores = nn.functional.log_softmax(
                next_token_logits, dim=-1
            )  # (batch_size * num_beams, vocab_size)

            next_token_scores_processed = logits_processor(input_ids, next_token_scores)
            next_token_scores = next_token_scores_processed + beam_scores[:, None].expand_as(next_token_scores)

            # ---------------- over-trust penalty on the local attention window ----------------
            candidate_token_scores, candidate_tokens = torch.topk(
                next_token_scores_processed, num_attn_candidates, dim=-1, largest=True, sorted=True
            )

            attn_last = outputs.attentions[-1].clone()  # [B*num_beams, heads, len, len]
            attn_last = attn_last.max(1, keepdim=True).values.squeeze(1)

            attn_local = attn_last[:, response_start:, response_start:]
            attn_local = scale_factor * attn_local

            attn_local_scores = torch.zeros((
                attn_local.shape[0], attn_local.shape[-1]), dtype=torch.float16).to(candidate_token_scores.device)
            for j in range(attn_local.shape[-1]):
                local_score = 1e-7 * attn_local[..., j:, j].prod(-1).data
                attn_local_scores[..., j] = local_score.to(torch.float16)

            cur_response_lens = attn_local.shape[-1]
            attn_i = attn_last[:, -1, image_start:image_end + 1].sum(-1)
            attn_scores = attn_i  # [B*num_beams]

            rollback_scores, rollback_locs = attn_local_scores.max(-1)
            rollback_loc = rollback_locs.mode().values.data
            rollback_loc = rollback_loc.long().item()

            penalty_scores = -attn_local_scores.max(-1).values.unsqueeze(-1)
            candidate_token_scores = candidate_token_scores + penalty_weights * penalty_scores

            # ---------------- retrospection-allocation (rollback) ----------------
            if history_rollback_locs is None:
                history_rollback_locs = [rollback_loc]
            else:
                history_rollback_locs.append(rollback_loc)

            if len(history_rollback_locs) >= threshold:
                rollback_loc_gather = history_rollback_locs[-threshold:]
                if all(loc == rollback_loc_gather[0] for loc in rollback_loc_gather) and \
                        rollback_loc_gather[0] < cur_response_lens - 1 and \
                        max_rollback_time[rollback_loc_gather[0]] < 10:
                    rollback_pos = rollback_loc_gather[0] + 1
                    max_rollback_time[rollback_loc_gather[0]] += 1
                    reject_token_pos = rollback_pos
                    if reject_token_pos not in reject_token_pos_gather:
                        reject_token_pos_gather[reject_token_pos] = []
                    reject_token_pos_gather[reject_token_pos].append(
                        history_states[reject_token_pos]["beam_next_tokens"]
                    )

                    # restore the state saved at the rollback position
                    state = history_states[rollback_pos]
                    beam_scores = state["beam_scores"]
                    cur_len = state["cur_len"]
                    input_ids = state["input_ids"]
                    model_kwargs = state["model_kwargs"]
                    history_states = history_states[:rollback_pos]
                    history_rollback_locs = history_rollback_locs[:rollback_pos]
                    logger.info(f"OPERA rollback to response position {rollback_pos}")
                    continue

            history_states.append(current_state)

            next_token_scores = torch.full_like(next_token_scores, -999.0)
            next_token_scores.scatter_(-1, candidate_tokens, candidate_token_scores)
            next_token_scores = next_token_scores + beam_scores[:, None].expand_as(next_token_scores)

            # Store scores, attentions and hidden_states when required
            if return_dict_in_generate:
                if output_scores:
                    scores += (next_token_scores_processed,)

            # reshape for beam search
            vocab_size = next_token_scores.shape[-1]
            next_token_scores = next_token_scores.view(batch_size, num_beams * vocab_size)

            # Sample 2 next tokens for each beam (so we have some spare tokens and match output of beam search)
            next_token_scores, next_tokens = torch.topk(
                next_token_scores, 2 * num_beams, dim=1, largest=True, sorted=True
            )

            next_indices = torch.div(next_tokens, vocab_size, rounding_mode="floor")
            next_tokens = next_tokens % vocab_size

            # stateless
            beam_outputs = beam_scorer.process(
                input_ids,
                next_token_scores,
                next_tokens,
                next_indices,
                pad_token_id=pad_token_id,
                eos_token_id=eos_token_id,
                beam_indices=beam_indices,
            )

            beam_scores = beam_outputs["next_beam_scores"]
            beam_next_tokens = beam_outputs["next_beam_tokens"]
            beam_idx = beam_outputs["next_beam_indices"]

            input_ids = torch.cat([input_ids[beam_idx, :], beam_next_tokens.unsqueeze(-1)], dim=-1)

            model_kwargs = self._update_model_kwargs_for_generation(
                outputs, model_kwargs, is_encoder_decoder=self.config.is_encoder_decoder
            )
            if model_kwargs["past_key_values"] is not None:
                model_kwargs["past_key_values"] = self._reorder_cache(model_kwargs["past_key_values"], beam_idx)

            if return_dict_in_generate and output_scores:
                beam_indices = tuple((beam_indices[beam_idx[i]] + (beam_idx[i],) for i in range(len(beam_indices))))

            # increase cur_len
            cur_len = cur_len + 1

            if beam_scorer.is_done or stopping_criteria(input_ids, scores):
                if not synced_gpus:
                    break
                else:
                    this_peer_finished = True

        sequence_outputs = beam_scorer.finalize(
            input_ids,
            beam_scores,
            next_tokens,
            next_indices,
            pad_token_id=pad_token_id,
            eos_token_id=eos_token_id,
            max_length=stopping_criteria.max_length,
            beam_indices=beam_indices,
        )

        if return_dict_in_generate:
            if not output_scores:
                sequence_outputs["sequence_scores"] = None
            return ModelOutput(
                sequences=sequence_outputs["sequences"],
                sequences_scores=sequence_outputs["sequence_scores"],
                scores=scores,
                beam_indices=sequence_outputs["beam_indices"],
            )
        else:
            return sequence_outputs["sequences"]
