"""HuggingFace LogitsProcessor that restricts generation to syntactically valid SQL.

One GrammarMatcher per sequence (batch * num_beams); after every step the matchers consume the
last sampled token and write the next-token bitmask into a shared host buffer, which is copied
to the device and applied to the scores in place.
"""
import logging
import os
from typing import List, Optional

import torch
from transformers import LogitsProcessor, PreTrainedTokenizerBase

from sqlgrammar.kernels.apply_token_bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from sqlgrammar.matcher import CompiledGrammar, GrammarMatcher, compile_sql_grammar

logger = logging.getLogger(__name__)

try:
    from sqlgrammar import _C

    _HAS_CUDA_KERNEL = hasattr(_C, "apply_token_bitmask_inplace_cuda")
except ImportError:
    _C = None
    _HAS_CUDA_KERNEL = False

_PROFILE = os.environ.get("SQLGRAMMAR_PROFILE", "0") == "1"


class SQLGrammarLogitsProcessor(LogitsProcessor):
    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        schemas: List[dict],
        num_beams: int = 1,
        dialect: str = "sqlite",
        use_cuda_kernel: bool = True,
        max_rollback_tokens: int = 0,
    ):
        self.tokenizer = tokenizer
        self.vocab_size = len(tokenizer)
        self.num_beams = num_beams
        self.use_cuda_kernel = use_cuda_kernel and _HAS_CUDA_KERNEL
        # schema-aware grammars: table / column names of each example's database are terminals
        self.grammars: List[CompiledGrammar] = [compile_sql_grammar(s, tokenizer, dialect=dialect) for s in schemas]
        self.matchers: Optional[List[GrammarMatcher]] = None
        self.max_rollback_tokens = max_rollback_tokens
        self.prefix_len: Optional[int] = None
        self.host_bitmask: Optional[torch.Tensor] = None
        self.device_bitmask: Optional[torch.Tensor] = None

    def _init(self, input_ids: torch.LongTensor):
        batch_beams = input_ids.shape[0]
        assert batch_beams == len(self.grammars) * self.num_beams, "one schema per example expected"
        self.matchers = [
            GrammarMatcher(self.grammars[i // self.num_beams], max_rollback_tokens=self.max_rollback_tokens)
            for i in range(batch_beams)
        ]
        self.prefix_len = input_ids.shape[1]
        # page-locked so that the H2D copy below can be asynchronous
        self.host_bitmask = allocate_token_bitmask(batch_beams, self.vocab_size).pin_memory()
        self.device_bitmask = torch.empty_like(self.host_bitmask, device=input_ids.device)

    def _reorder_for_beams(self, input_ids: torch.LongTensor):
        """Beam search reorders hypotheses every step; re-sync matchers from the decoded prefix."""
        generated = input_ids[:, self.prefix_len:].tolist()
        for i, tokens in enumerate(generated):
            m = self.matchers[i]
            if m.num_accepted_tokens() != len(tokens) or m.accepted_tokens() != tokens:
                m.reset()
                for t in tokens:
                    m.accept_token(t)

    @torch.no_grad()
    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.matchers is None:
            self._init(input_ids)
        elif self.num_beams > 1:
            self._reorder_for_beams(input_ids)
        else:
            last_tokens = input_ids[:, -1].tolist()
            for m, t in zip(self.matchers, last_tokens):
                if not m.is_terminated():
                    m.accept_token(t)

        if _PROFILE:
            torch.cuda.nvtx.range_push("sqlgrammar.fill_bitmask")
        for i, m in enumerate(self.matchers):
            if m.is_terminated():
                # only EOS allowed
                self.host_bitmask[i].zero_()
                eos = self.tokenizer.eos_token_id
                self.host_bitmask[i, eos // 32] = 1 << (eos % 32)
            else:
                m.fill_next_token_bitmask(self.host_bitmask, i)
        if _PROFILE:
            torch.cuda.nvtx.range_pop()

        self.device_bitmask.copy_(self.host_bitmask, non_blocking=True)

        if self.use_cuda_kernel and scores.is_cuda:
            _C.apply_token_bitmask_inplace_cuda(scores, self.device_bitmask, self.vocab_size)
        else:
            apply_token_bitmask_inplace(scores, self.device_bitmask, self.vocab_size)
        return scores

    def all_terminated(self) -> bool:
        return self.matchers is not None and all(m.is_terminated() for m in self.matchers)


def build_sql_logits_processor(tokenizer, batch, num_beams=1, **kwargs) -> SQLGrammarLogitsProcessor:
    """`batch` is the list of examples being generated, each with its `schema` (tables -> columns)."""
    return SQLGrammarLogitsProcessor(tokenizer, [ex["schema"] for ex in batch], num_beams=num_beams, **kwargs)
