"""LLM-based mutation operator for Evolution through Large Models (ELM).

A code-generation model proposes mutated programs given a parent program and
a natural-language instruction (the "diff model" prompt format). Used as the
variation operator inside MAP-Elites for the Sodarace and image-generation
domains.
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass, field
from typing import List, Optional

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, StoppingCriteria, StoppingCriteriaList
from transformers.utils import is_flash_attn_2_available

logger = logging.getLogger(__name__)


@dataclass
class MutationModelConfig:
    model_path: str = "Salesforce/codegen-2B-mono"
    device: str = "cuda"
    gpus: int = 1
    max_gpu_memory: str = "38GiB"
    batch_size: int = 32
    temp: float = 0.85
    top_p: float = 0.95
    gen_max_len: int = 512
    use_flash_attention: bool = True
    seed: Optional[int] = None
    stop_sequences: List[str] = field(default_factory=lambda: ["\ndef ", "\nclass ", "\n#", "\nif __name__"])


class _StopOnSequences(StoppingCriteria):
    def __init__(self, tokenizer, stops, prompt_len):
        self.tokenizer = tokenizer
        self.stops = stops
        self.prompt_len = prompt_len

    def __call__(self, input_ids, scores, **kwargs):
        texts = self.tokenizer.batch_decode(input_ids[:, self.prompt_len :])
        return all(any(s in t for s in self.stops) for t in texts)


DIFF_PROMPT = """<NME> {filename}
<BEF> {parent}
<MSG> {instruction}
<DFF>"""


class MutationModel:
    """Wraps a HF causal LM and turns parent programs into mutated children."""

    def __init__(self, config: MutationModelConfig):
        self.config = config
        if config.seed is not None:
            torch.manual_seed(config.seed)
            torch.cuda.manual_seed_all(config.seed)

        self.dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        attn_impl = "flash_attention_2" if (config.use_flash_attention and is_flash_attn_2_available()) else "sdpa"

        self.tokenizer = AutoTokenizer.from_pretrained(config.model_path)
        self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "left"

        if config.gpus > 1:
            max_memory = {i: config.max_gpu_memory for i in range(torch.cuda.device_count())}
            self.model = AutoModelForCausalLM.from_pretrained(
                config.model_path,
                torch_dtype=self.dtype,
                attn_implementation=attn_impl,
                device_map="auto",
                max_memory=max_memory,
            )
            self.device = torch.device("cuda:0")
        else:
            self.model = AutoModelForCausalLM.from_pretrained(
                config.model_path,
                torch_dtype=self.dtype,
                attn_implementation=attn_impl,
            ).to(config.device)
            self.device = torch.device(config.device)
        self.model.eval()
        logger.info("Loaded %s (%s, attn=%s) on %s", config.model_path, self.dtype, attn_impl, self.device)

    # ------------------------------------------------------------------
    def _sdp_context(self):
        # Force the flash / mem-efficient SDPA kernels; the math fallback is
        # ~3x slower for 2k-token prompts.
        if self.device.type == "cuda" and not is_flash_attn_2_available():
            return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True)
        return contextlib.nullcontext()

    @torch.inference_mode()
    def generate(self, prompts: List[str], num_return_sequences: int = 1) -> List[str]:
        outputs: List[str] = []
        bs = self.config.batch_size
        for start in range(0, len(prompts), bs):
            chunk = prompts[start : start + bs]
            enc = self.tokenizer(chunk, return_tensors="pt", padding=True, truncation=True, max_length=2048)
            enc = enc.to(self.device)
            prompt_len = enc["input_ids"].shape[1]
            stopping = StoppingCriteriaList([_StopOnSequences(self.tokenizer, self.config.stop_sequences, prompt_len)])
            try:
                with self._sdp_context():
                    gen = self.model.generate(
                        **enc,
                        do_sample=True,
                        temperature=self.config.temp,
                        top_p=self.config.top_p,
                        max_new_tokens=self.config.gen_max_len,
                        num_return_sequences=num_return_sequences,
                        stopping_criteria=stopping,
                        pad_token_id=self.tokenizer.eos_token_id,
                    )
            except torch.cuda.OutOfMemoryError:
                logger.warning("OOM with batch size %d; retrying one prompt at a time", len(chunk))
                torch.cuda.empty_cache()
                outputs.extend(self.generate_one_by_one(chunk, num_return_sequences))
                continue
            texts = self.tokenizer.batch_decode(gen[:, prompt_len:], skip_special_tokens=True)
            outputs.extend(self._truncate(t) for t in texts)
        return outputs

    def generate_one_by_one(self, prompts, num_return_sequences):
        old = self.config.batch_size
        self.config.batch_size = 1
        try:
            return self.generate(prompts, num_return_sequences)
        finally:
            self.config.batch_size = old

    def _truncate(self, text: str) -> str:
        cut = len(text)
        for s in self.config.stop_sequences:
            i = text.find(s)
            if i != -1:
                cut = min(cut, i)
        return text[:cut]

    # ------------------------------------------------------------------
    def mutate(self, parents: List[str], instruction: str, filename: str = "main.py") -> List[str]:
        prompts = [DIFF_PROMPT.format(filename=filename, parent=p, instruction=instruction) for p in parents]
        diffs = self.generate(prompts)
        children = []
        for parent, diff in zip(parents, diffs):
            children.append(apply_diff(parent, diff))
        return children

    def memory_summary(self) -> str:
        if self.device.type != "cuda":
            return "n/a"
        free, total = torch.cuda.mem_get_info(self.device)
        return f"{(total - free) / 2**30:.1f} / {total / 2**30:.1f} GiB used"


_HUNK = re.compile(r"^@@ -(\d+),?(\d*) \+(\d+),?(\d*) @@", re.M)


def apply_diff(parent: str, diff: str) -> str:
    """Applies a unified diff produced by the model; falls back to the parent on failure."""
    lines = parent.splitlines()
    out: List[str] = []
    pos = 0
    try:
        for m in _HUNK.finditer(diff):
            start = int(m.group(1)) - 1
            out.extend(lines[pos:start])
            body_start = m.end() + 1
            nxt = _HUNK.search(diff, m.end())
            body = diff[body_start : nxt.start() if nxt else len(diff)].splitlines()
            consumed = 0
            for b in body:
                if b.startswith("+"):
                    out.append(b[1:])
                elif b.startswith("-"):
                    consumed += 1
                else:
                    out.append(b[1:] if b.startswith(" ") else b)
                    consumed += 1
            pos = start + consumed
        out.extend(lines[pos:])
        return "\n".join(out)
    except (ValueError, IndexError):
        return parent


def elm_map_elites(model: MutationModel, seed_programs: List[str], evaluate, to_cell, iterations: int = 100,
                   batch: int = 32, instruction: str = "Changed the morphology of the walker.", rng=None):
    """Tiny MAP-Elites loop where the LLM is the mutation operator (ELM, Lehman et al. 2022)."""
    import random

    rng = rng or random.Random(0)
    archive = {}
    for prog in seed_programs:
        fit, desc = evaluate(prog)
        if fit is not None:
            archive[to_cell(desc)] = (fit, prog)
    for it in range(iterations):
        parents = [rng.choice(list(archive.values()))[1] for _ in range(batch)]
        children = model.mutate(parents, instruction)
        inserted = 0
        for child in children:
            fit, desc = evaluate(child)
            if fit is None:
                continue
            cell = to_cell(desc)
            if cell not in archive or archive[cell][0] < fit:
                archive[cell] = (fit, child)
                inserted += 1
        logger.info("iter %d: %d/%d children inserted, %d cells, %s", it, inserted, len(children), len(archive),
                    model.memory_summary())
    return archive
