# Copyright (c) 2024, EleutherAI
#
# Licensed under the Apache License, Version 2.0 (the "License");

"""lm-evaluation-harness adapter: lets the harness call a NeoX model in the middle of training."""

import copy
from functools import partial

import torch
import torch.nn.functional as F
from lm_eval.api.model import LM
from lm_eval import evaluator, tasks
from tqdm import tqdm

from megatron import mpu
from megatron.text_generation_utils import generate_samples_from_prompt
from megatron.utils import is_mp_rank_0, setup_for_inference_or_eval


class EvalHarnessAdapter(LM):
    """
    An adapter to run NeoX models on LM Evaluation Harness (https://github.com/EleutherAI/lm-evaluation-harness) tasks.
    """

    def __init__(self, model, forward_step_fn, neox_args, batch_size=None):
        self.cache_hook = None
        self.model = model
        self.neox_args = neox_args
        self.tokenizer = neox_args.tokenizer
        self._device = torch.device(f"cuda:{neox_args.local_rank}")
        self._eot_token_id = neox_args.tokenizer.eod_id
        self._max_length = neox_args.max_position_embeddings
        self._batch_size = batch_size or (neox_args.batch_size * 8)
        self.is_main = neox_args.rank == 0
        self.is_local_main = neox_args.local_rank == 0
        self.is_model_parallel = neox_args.model_parallel_size > 1
        self.is_pipe_parallel = self.model.is_pipe_parallel
        self.is_data_parallel = self.model.is_data_parallel
        self.is_last_stage = True if not self.is_pipe_parallel else model.is_last_stage()
        self.dp_world_size = mpu.get_data_parallel_world_size()
        self.dp_rank = mpu.get_data_parallel_rank()
        self.dp_group = mpu.get_data_parallel_group()
        self.is_mp_rank_0 = is_mp_rank_0()
        self._forward_step_fn = partial(forward_step_fn, neox_args=neox_args, timers=None, return_logits=True)

    @property
    def device(self):
        return self._device

    def tok_encode(self, string: str):
        return self.tokenizer.encode(string)

    def _collate(self, x):
        toks = x[1] + x[2]
        return -len(toks), tuple(toks)

    def loglikelihood(self, requests):
        new_reqs = []
        for context, continuation in [req.args for req in requests]:
            context_enc = [self._eot_token_id] if context == "" else self.tok_encode(context)
            continuation_enc = self.tok_encode(continuation)
            new_reqs.append(((context, continuation), context_enc, continuation_enc))
        return self._loglikelihood_tokens(new_reqs)

    def _loglikelihood_tokens(self, requests, disable_tqdm=False):
        res = []
        self.model.module.inference_mode(use_cache=False)
        with torch.no_grad():
            reord = sorted(requests, key=self._collate)
            for start in tqdm(range(0, len(reord), self._batch_size), disable=disable_tqdm or not self.is_main):
                chunk = reord[start:start + self._batch_size]
                inps, contlens, inplens = [], [], []
                padding_length = None
                for _, context_enc, continuation_enc in chunk:
                    inp = torch.tensor((context_enc + continuation_enc)[-(self._max_length + 1):][:-1],
                                       dtype=torch.long).cuda()
                    (inplen,) = inp.shape
                    padding_length = padding_length if padding_length is not None else inplen
                    inp = torch.cat([inp, torch.zeros(padding_length - inplen, dtype=torch.long).to(inp.device)], dim=0)
                    inps.append(inp.unsqueeze(0))
                    contlens.append(continuation_enc)
                    inplens.append(inplen)
                with torch.cuda.amp.autocast(dtype=torch.float16, enabled=self.neox_args.precision == "fp16"):
                    logits = self._model_call(torch.cat(inps, dim=0))
                if logits is not None:
                    multi_logits = F.log_softmax(logits, dim=-1)
                    for (cache_key, _, _), logits, inp, inplen, cont_toks in zip(chunk, multi_logits, inps, inplens, contlens):
                        contlen = len(cont_toks)
                        logits = logits[inplen - contlen:inplen].unsqueeze(0)
                        greedy_tokens = logits.argmax(dim=-1)
                        cont_toks = torch.tensor(cont_toks, dtype=torch.long).unsqueeze(0).to(self.device)
                        max_equal = (greedy_tokens == cont_toks).all()
                        logits = torch.gather(logits, 2, cont_toks.unsqueeze(-1)).squeeze(-1)
                        res.append((float(logits.sum()), bool(max_equal)))
        self.model.module.train_mode()
        torch.cuda.synchronize()
        return res

    def _dp_scatter(self, inps):
        if self.is_data_parallel:
            inps = list(inps.split(max(1, inps.shape[0] // self.dp_world_size) or 1))
            inps = inps[self.dp_rank] if self.dp_rank < len(inps) else inps[0]
        return inps

    def _dp_gather(self, logits):
        if self.is_data_parallel and logits is not None:
            tensor_list = [torch.zeros_like(logits) for _ in range(self.dp_world_size)]
            torch.distributed.all_gather(tensor_list, logits, group=self.dp_group)
            logits = torch.cat(tensor_list, dim=0)
        return logits

    def _model_call(self, inps):
        batch_size = inps.shape[0]
        inps = self._dp_scatter(inps)
        data_wrapped = iter([{"text": F.pad(inps, pad=(0, 1))}])
        logits, _ = self._forward_step_fn(model=self.model, data_iterator=data_wrapped)
        if self.is_pipe_parallel:
            logits = mpu.broadcast_from_last_stage(logits)
        return self._dp_gather(logits)

    @torch.no_grad()
    def run_eval(self, eval_tasks=None, num_fewshot=0, bootstrap_iters=2, seed=1234):
        was_training = self.model.training
        self.model.eval()
        results = evaluator.evaluate(lm=self, task_dict=tasks.get_task_dict(eval_tasks),
                                     bootstrap_iters=bootstrap_iters)
        if was_training:
            self.model.train()
        return results
