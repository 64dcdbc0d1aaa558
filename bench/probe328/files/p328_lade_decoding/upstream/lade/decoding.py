import copy
import inspect
import math
import os
import random
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

import torch
import torch.distributed as dist
from torch import nn
from transformers.generation.logits_process import LogitsProcessorList
from transformers.generation.stopping_criteria import StoppingCriteriaList, validate_stopping_criteria
from transformers.generation.streamers import BaseStreamer
from transformers.generation.utils import GreedySearchDecoderOnlyOutput, GreedySearchEncoderDecoderOutput

FUNC_MAP = {}
CONFIG_MAP = {}
COLOR_PRINT = int(os.environ.get("COLOR_PRINT", 0))


def greedy_search_proxy(self, *args, **kwargs):
    USE_LADE = int(os.environ.get("USE_LADE", 0))
    CHAT = int(os.environ.get("CHAT", 0))
    if CHAT and USE_LADE:
        return jacobi_greedy_search_multilevel(self, chat=True, *args, **kwargs)
    elif CHAT:
        return greedy_search_chat(self, chat=True, *args, **kwargs)

    if USE_LADE:
        return jacobi_greedy_search_multilevel(self, chat=False, *args, **kwargs)
    else:
        return FUNC_MAP["greedy_search"](self, *args, **kwargs)


def update_token_map(token_map, lst_token, past_tokens, new_results, LEVEL, WINDOW_SIZE, GUESS_SET_SIZE):
    if GUESS_SET_SIZE != -1:  # limited guess set size for each key, lru policy
        if lst_token not in token_map:
            token_map[lst_token] = []
        tup = tuple(past_tokens[ll][0] for ll in range(1, LEVEL - 1)) + (new_results[0],)
        if tup in token_map[lst_token]:
            token_map[lst_token].remove(tup)
            token_map[lst_token].append(tup)
        elif len(token_map[lst_token]) < GUESS_SET_SIZE:
            token_map[lst_token].append(tup)
        else:
            assert len(token_map[lst_token]) == GUESS_SET_SIZE
            token_map[lst_token] = token_map[lst_token][1:] + [tup]

        for i in range(1, WINDOW_SIZE):
            if past_tokens[0][i - 1] not in token_map:
                token_map[past_tokens[0][i - 1]] = []
            tup = tuple(past_tokens[ll][i] for ll in range(1, LEVEL - 1)) + (new_results[i],)

            if tup in token_map[past_tokens[0][i - 1]]:
                token_map[past_tokens[0][i - 1]].remove(tup)
                token_map[past_tokens[0][i - 1]].append(tup)
            elif len(token_map[past_tokens[0][i - 1]]) < GUESS_SET_SIZE:
                token_map[past_tokens[0][i - 1]].append(tup)
            else:
                assert len(token_map[past_tokens[0][i - 1]]) == GUESS_SET_SIZE
                token_map[past_tokens[0][i - 1]] = token_map[past_tokens[0][i - 1]][1:] + [tup]

    else:  # unlimited guess set size for each key
        # first add
        if lst_token not in token_map:
            token_map[lst_token] = set()
        # build tuple
        tup = tuple(past_tokens[ll][0] for ll in range(1, LEVEL - 1)) + (new_results[0],)
        # add tuple
        token_map[lst_token].add(tup)

        for i in range(1, WINDOW_SIZE):
            if past_tokens[0][i - 1] not in token_map:
                token_map[past_tokens[0][i - 1]] = set()
            tup = tuple(past_tokens[ll][i] for ll in range(1, LEVEL - 1)) + (new_results[i],)
            token_map[past_tokens[0][i - 1]].add(tup)


def append_new_generated_pool(tokens, token_map, LEVEL, GUESS_SET_SIZE):
    if len(tokens) != LEVEL:
        return
    lst_token = tokens[0]
    tup = tuple(tokens[1:])

    if GUESS_SET_SIZE != -1:  # limited guess set size for each key, lru policy
        if lst_token not in token_map:
            token_map[lst_token] = []
        if tup in token_map[lst_token]:
            token_map[lst_token].remove(tup)
            token_map[lst_token].append(tup)
        elif len(token_map[lst_token]) < GUESS_SET_SIZE:
            token_map[lst_token].append(tup)
        else:
            assert len(token_map[lst_token]) == GUESS_SET_SIZE
            token_map[lst_token] = token_map[lst_token][1:] + [tup]
    else:  # unlimited guess set size for each key
        # first add
        if lst_token not in token_map:
            token_map[lst_token] = set()
        token_map[lst_token].add(tup)


def fill_pool_with_prompt(prompts, token_map, LEVEL, GUESS_SET_SIZE):
    for start_idx in range(len(prompts) - LEVEL + 1):
        lst_token = prompts[start_idx]
        tup = tuple(prompts[start_idx + 1 : start_idx + LEVEL])

        if len(tup) != LEVEL - 1:
            return

        if GUESS_SET_SIZE != -1:  # limited guess set size for each key, lru policy
            if lst_token not in token_map:
                token_map[lst_token] = []
            if tup in token_map[lst_token]:
                token_map[lst_token].remove(tup)
                token_map[lst_token].append(tup)
            elif len(token_map[lst_token]) < GUESS_SET_SIZE:
                token_map[lst_token].append(tup)
            else:
                assert len(token_map[lst_token]) == GUESS_SET_SIZE
                token_map[lst_token] = token_map[lst_token][1:] + [tup]
        else:  # unlimited guess set size for each key
            # first add
            if lst_token not in token_map:
                token_map[lst_token] = set()
            token_map[lst_token].add(tup)


def filter_window(level_window, eos_token_id, reset_func):
    for idx in range(len(level_window)):
        if level_window[idx] == eos_token_id:
            level_window[idx] = reset_func()


def jacobi_greedy_search_multilevel(
    self,
    input_ids: torch.LongTensor,
    logits_processor: Optional[LogitsProcessorList] = None,
    stopping_criteria: Optional[StoppingCriteriaList] = None,
    max_length: Optional[int] = None,
    pad_token_id: Optional[int] = None,
    eos_token_id: Optional[Union[int, List[int]]] = None,
    output_attentions: Optional[bool] = None,
    output_hidden_states: Optional[bool] = None,
    output_scores: Optional[bool] = None,
    return_dict_in_generate: Optional[bool] = None,
    synced_gpus: bool = False,
    streamer: Optional["BaseStreamer"] = None,
    chat: bool = False,
    **model_kwargs,
) -> Union[GreedySearchDecoderOnlyOutput, torch.LongTensor]:
    # init values
    logits_processor = logits_processor if logits_processor is not None else LogitsProcessorList()
    stopping_criteria = stopping_criteria if stopping_criteria is not None else StoppingCriteriaList()
    if max_length is not None:
        warnings.warn(
            "`max_length` is deprecated in this function, use"
            " `stopping_criteria=StoppingCriteriaList([MaxLengthCriteria(max_length=max_length)])` instead.",
            UserWarning,
        )
        stopping_criteria = validate_stopping_criteria(stopping_criteria, max_length)
    pad_token_id = pad_token_id if pad_token_id is not None else self.generation_config.pad_token_id
    eos_token_id = eos_token_id if eos_token_id is not None else self.generation_config.eos_token_id
    if isinstance(eos_token_id, int):
        eos_token_id = [eos_token_id]
    eos_token_id_tensor = torch.tensor(eos_token_id).to(input_ids.device) if eos_token_id is not None else None
    output_scores = output_scores if output_scores is not None else self.generation_config.output_scores
    return_dict_in_generate = (
        return_dict_in_generate
        if return_dict_in_generate is not None
        else self.generation_config.return_dict_in_generate
    )

    # init attention / hidden states / scores tuples
    scores = () if (return_dict_in_generate and output_scores) else None

    # keep track of which sequences are already finished
    unfinished_sequences = torch.ones(input_ids.shape[0], dtype=torch.long, device=input_ids.device)

    this_peer_finished = False  # used by synced_gpus only

    WINDOW_SIZE = CONFIG_MAP.get("WINDOW_SIZE", 60)
    GUESS_SET_SIZE = CONFIG_MAP.get("GUESS_SET_SIZE", 60)
    ALWAYS_FWD_ONE = CONFIG_MAP.get("ALWAYS_FWD_ONE", 1)
    LEVEL = CONFIG_MAP.get("LEVEL", 8)
    DEBUG = CONFIG_MAP.get("DEBUG", 0)
    DIST_WORKERS = CONFIG_MAP.get("DIST_WORKERS", 1)
    LOCAL_RANK = CONFIG_MAP.get("LOCAL_RANK", 0)
    USE_FLASH = CONFIG_MAP.get("USE_FLASH", 0)  # not use flash by default
    POOL_FROM_PROMPT = CONFIG_MAP.get("POOL_FROM_PROMPT", 0)
    USE_AWQ = False  # not support AWQ
    # IN FLASH ATTENTION WE REORDERED LOOKAHEAD WINDOW

    GUESS_SIZE = LEVEL - 1
    NOT_SEQ = 0
    CONTINUE_ALL = 0
    TEMP_FOR_GUESS = 0.0

    assert TEMP_FOR_GUESS == 0
    # assert LEVEL <= 8
    def random_set():
        return random.randint(0, self.vocab_size - 1)

    all_old_tokens = input_ids[0].tolist()
    init_len = len(all_old_tokens)

    def copy_from():
        return random.choice(all_old_tokens)

    order_copy_from_idx = [0]

    def order_copy_from():
        if order_copy_from_idx[0] >= len(all_old_tokens):
            order_copy_from_idx[0] = 0
        ret = all_old_tokens[order_copy_from_idx[0]]
        order_copy_from_idx[0] = 1 + order_copy_from_idx[0]
        return ret

    def copy_from_last():
        return all_old_tokens[-1]

    set_token = copy_from

    past_tokens = [[set_token() for _ in range(WINDOW_SIZE + LEVEL - 3)]] + [None for _ in range(LEVEL - 2)]
    # past_tokens is the lookahead window. Current we initialize it with random copy from prompts

    if DIST_WORKERS > 1:
        dist.broadcast_object_list(past_tokens, src=0)  # keep past_tokens always the same on different GPUs

    # lookahead_branch
    fill_level = 0
    guess_tokens = None
    token_map = {}
    steps = 0
    guess_skip_dist = 0

    if POOL_FROM_PROMPT:
        fill_pool_with_prompt(all_old_tokens, token_map, LEVEL, GUESS_SET_SIZE)

    if chat:
        init = self.tokenizer.decode(
            all_old_tokens,
            skip_special_tokens=True,
            spaces_between_special_tokens=False,
            clean_up_tokenization_spaces=True,
        )
        prev = len(init)

    FWD_TIME = 0.0
    FWD_CNT = 0
    ACCEPT_CNT = 0

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

        # prepare model inputs
        # this only support single-batch
        model_inputs = self.prepare_inputs_for_generation(input_ids, **model_kwargs)
        past_key_values = model_inputs.pop("past_key_values", None)
        model_inputs.pop("use_cache", None)
        if past_key_values is None:
            model_inputs["input_ids"] = input_ids
        else:
            model_inputs["input_ids"] = model_inputs["input_ids"][:, -1 - guess_skip_dist :]
            model_inputs["position_ids"] = model_inputs["position_ids"][:, -1 - guess_skip_dist :]

        lst_token = int(model_inputs["input_ids"][0, -1])
        guess_tokens = None
        if GUESS_SET_SIZE > 0 and fill_level >= LEVEL - 2 and lst_token in token_map:
            guess_tokens_ = token_map[lst_token]
            guess_tokens = []
            for tok in list(guess_tokens_):
                guess_tokens += list(tok)

        if DEBUG:
            torch.cuda.synchronize()
            t0 = time.time()

        # forward the lookahead branch, the verification branch and the input token in one call
        outputs = self.jforward_multilevel(
            **model_inputs,
            past_key_values=past_key_values,
            guess_tokens=guess_tokens,
            return_dict=True,
            not_seq=NOT_SEQ,
            continue_all=CONTINUE_ALL,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            level=LEVEL,
            WINDOWS_SIZE=WINDOW_SIZE,
            guess_size=GUESS_SIZE,
            fill_level=fill_level,
            dist_workers=DIST_WORKERS,
            la_mask_offset=0,
            local_rank=LOCAL_RANK,
            use_flash=USE_FLASH,
        )

        if DEBUG:
            torch.cuda.synchronize(input_ids.device)
            FWD_TIME += time.time() - t0
            FWD_CNT += 1

        steps += 1

        if synced_gpus and this_peer_finished:
            continue  # don't waste resources running the code we don't need

        next_token_logits = outputs.out_logits  # outputs.logits[:, -1, :]

        # pre-process distribution
        next_tokens_scores = logits_processor(input_ids, next_token_logits)

        # argmax
        next_tokens = torch.argmax(next_tokens_scores, dim=-1)

        # finished sentences should have their next token be a padding token
        if eos_token_id is not None:
            if pad_token_id is None:
                raise ValueError("If `eos_token_id` is defined, make sure that `pad_token_id` is defined.")
            next_tokens = next_tokens * unfinished_sequences + pad_token_id * (1 - unfinished_sequences)

        first_guess = next_tokens.item()
        max_hit = 0
        hits = [first_guess] + [0] * (GUESS_SIZE - 1)

        new_results = []

        if past_tokens[1] is None:  # filling multi-level window, the very first step is different
            assert fill_level == 0
            past_tokens[0] = past_tokens[0][1:]
            past_tokens[1] = torch.argmax(outputs.inp_logits, dim=-1)[0].tolist()

            if DIST_WORKERS > 1:
                nn_past_tokens = [copy.deepcopy(past_tokens[1])]
                dist.broadcast_object_list(nn_past_tokens, src=DIST_WORKERS - 1)
                past_tokens[1] = nn_past_tokens[0]

            fill_level += 1
        elif past_tokens[LEVEL - 2] is None:  # filling multi-level window
            for level in range(fill_level + 1):
                past_tokens[level] = past_tokens[level][1:]
            current_past_tokens = torch.argmax(outputs.inp_logits, dim=-1)[0].tolist()

            if DIST_WORKERS > 1:
                nn_past_tokens = [copy.deepcopy(current_past_tokens)]
                dist.broadcast_object_list(nn_past_tokens, src=DIST_WORKERS - 1)
                current_past_tokens = nn_past_tokens[0]

            past_tokens[fill_level + 1] = current_past_tokens[1:]

            fill_level += 1
        else:
            # time to generate output
            if guess_tokens is not None:
                guess_results = torch.argmax(outputs.guess_logits, dim=-1)[0].tolist()
                for eg in range(len(guess_results) // GUESS_SIZE):
                    egx = eg * GUESS_SIZE
                    correct = [first_guess] + guess_results[egx : egx + GUESS_SIZE]
                    myguess = guess_tokens[egx : egx + GUESS_SIZE]
                    gg = 0
                    for gg in range(len(myguess)):
                        if myguess[gg] != correct[gg]:
                            break
                    if gg > max_hit:
                        max_hit = gg
                        max_hit_idx = eg
                        hits[: max_hit + 1] = correct[: max_hit + 1]
            # max_hit is the length of longest accepted sequence in verification branch

            new_results = torch.argmax(outputs.inp_logits, dim=-1)[0].tolist()

            if DIST_WORKERS > 1:
                nn_past_tokens = [copy.deepcopy(new_results)]
                dist.broadcast_object_list(nn_past_tokens, src=DIST_WORKERS - 1)
                new_results = nn_past_tokens[0]

            assert len(past_tokens[LEVEL - 2]) == WINDOW_SIZE and len(new_results) == WINDOW_SIZE

            update_token_map(token_map, lst_token, past_tokens, new_results, LEVEL, WINDOW_SIZE, GUESS_SET_SIZE)

            # update windows when max_hit > 1
            if ALWAYS_FWD_ONE:
                past_tokens[0] = past_tokens[1][1:]
                for level in range(1, LEVEL - 2):
                    past_tokens[level] = past_tokens[level + 1][:]

                past_tokens[LEVEL - 2] = new_results
            else:
                past_tokens[0] = past_tokens[1][1 + max_hit :]
                for level in range(1, LEVEL - 2):
                    past_tokens[level] = past_tokens[level + 1][max_hit:]

                past_tokens[LEVEL - 2] = new_results[max_hit:]

            if max_hit > 0:
                if not ALWAYS_FWD_ONE:
                    for level in range(LEVEL - 1):
                        past_tokens[level] = past_tokens[level] + [set_token() for _ in range(max_hit)]

                attention_mask = model_kwargs["attention_mask"]
                model_kwargs["attention_mask"] = torch.cat(
                    (attention_mask, torch.ones(1, max_hit, device=attention_mask.device, dtype=attention_mask.dtype)),
                    dim=1,
                )

        # not support awq
        # compute one token and maybe some accepted guesses
        if max_hit > 0:
            guess_skip_dist = max_hit
            ACCEPT_CNT += max_hit
            for hit_ids in range(max_hit + 1):
                if eos_token_id is not None and hits[hit_ids] in eos_token_id:
                    hits = hits[: hit_ids + 1]
                    max_hit = hit_ids - 1
                    break
        else:
            guess_skip_dist = 0

        all_old_tokens += hits[: max_hit + 1]
        input_ids = torch.cat([input_ids, torch.tensor(hits[: max_hit + 1], device=input_ids.device, dtype=input_ids.dtype).unsqueeze(0)], dim=-1)

        if streamer is not None:
            streamer.put(torch.tensor(hits[: max_hit + 1]).cpu())

        model_kwargs = self._update_model_kwargs_for_generation(
            outputs, model_kwargs, is_encoder_decoder=self.config.is_encoder_decoder
        )
        if max_hit > 0 and "past_key_values" in model_kwargs:
            # drop the kv of the lookahead / verification branches that were not accepted
            model_kwargs["past_key_values"] = outputs.kvcache

        if chat and LOCAL_RANK == 0:
            all_str = self.tokenizer.decode(
                all_old_tokens,
                skip_special_tokens=True,
                spaces_between_special_tokens=False,
                clean_up_tokenization_spaces=True,
            )
            if COLOR_PRINT:
                from termcolor import colored

                if max_hit > 1:
                    not_hit = self.tokenizer.decode(all_old_tokens[: -max_hit + 1], skip_special_tokens=True)
                    pt = colored(not_hit[prev:], "blue") + colored(all_str[len(not_hit) :], "green")
                else:
                    pt = all_str[prev:]
                print(pt, flush=True, end="")
            else:
                print(all_str[prev:], flush=True, end="")
            prev = len(all_str)

        # if eos_token was found in one sentence, set sentence to finished
        if eos_token_id_tensor is not None:
            unfinished_sequences = unfinished_sequences.mul(
                torch.tensor(hits[: max_hit + 1], device=input_ids.device)[-1:]
                .tile(eos_token_id_tensor.shape[0], 1)
                .ne(eos_token_id_tensor.unsqueeze(1))
                .prod(dim=0)
            )

            # stop when each sentence is finished
            if unfinished_sequences.max() == 0:
                this_peer_finished = True

        # stop if we exceed the maximum length
        if stopping_criteria(input_ids, scores):
            this_peer_finished = True

        if this_peer_finished and not synced_gpus:
            break

    if DEBUG and LOCAL_RANK == 0:
        print(
            f"\n==SUM: steps {steps} | accepted {ACCEPT_CNT} | fwd {FWD_CNT} x {FWD_TIME / max(FWD_CNT, 1) * 1000:.2f} ms"
            f" | init len {init_len} | generated {len(all_old_tokens) - init_len}"
        )
        print(f"==peak mem {torch.cuda.max_memory_allocated() / 1024 ** 3:.2f} GB")

    if streamer is not None:
        streamer.end()

    if return_dict_in_generate:
        return GreedySearchDecoderOnlyOutput(sequences=input_ids, scores=scores)
    return input_ids


def greedy_search_chat(self, input_ids, chat=True, **kwargs):
    """Plain greedy decoding that streams to stdout; used as the CHAT=1 baseline."""
    out = FUNC_MAP["greedy_search"](self, input_ids, **kwargs)
    if CONFIG_MAP.get("LOCAL_RANK", 0) == 0:
        print(self.tokenizer.decode(out[0][input_ids.shape[1] :], skip_special_tokens=True), flush=True)
    return out
