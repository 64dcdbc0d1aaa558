"""Open-source LLM backend for ask_llm.py (DAIL-SQL style prompting).

Lets the same prompt files (questions.json produced by generate_question.py) be answered by a
local HuggingFace model instead of the OpenAI API, e.g.

    python ask_llm.py --model codellama/CodeLlama-34b-Instruct-hf --question dataset/process/SPIDER-TEST_SQL_9-SHOT_... \
        --local --load_8bit --max_gpu_memory 38
"""
import gc
import logging
import os
import re
from typing import List, Optional

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    BitsAndBytesConfig,
    StoppingCriteria,
    StoppingCriteriaList,
)

logger = logging.getLogger(__name__)

# models we have prompt templates for; anything else falls back to the plain completion format
CHAT_TEMPLATES = {
    "codellama": "[INST] {prompt} [/INST]",
    "vicuna": "USER: {prompt}\nASSISTANT:",
    "llama-2": "[INST] <<SYS>>\nYou are a SQLite expert.\n<</SYS>>\n\n{prompt} [/INST]",
}


class StopOnTokens(StoppingCriteria):
    """Stop as soon as any sequence in the batch ends with one of the stop token sequences
    (e.g. "\\n\\n" or ";\\n" after the SELECT statement)."""

    def __init__(self, stop_token_ids: List[List[int]]):
        super().__init__()
        self.stop_token_ids = [torch.tensor(ids, dtype=torch.long).cuda() for ids in stop_token_ids]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs) -> bool:
        for stop_ids in self.stop_token_ids:
            n = stop_ids.shape[0]
            if input_ids.shape[1] >= n and torch.all(input_ids[:, -n:] == stop_ids, dim=1).any():
                return True
        return False


def _max_memory(max_gpu_memory_gib: Optional[int]):
    if max_gpu_memory_gib is None:
        return None
    return {i: f"{max_gpu_memory_gib}GiB" for i in range(torch.cuda.device_count())}


class LocalLLM:
    def __init__(
        self,
        model_name_or_path: str,
        load_8bit: bool = False,
        max_gpu_memory: Optional[int] = None,
        dtype: str = "float16",
        seed: int = 42,
    ):
        self.name = model_name_or_path
        torch.manual_seed(seed)
        torch.cuda.manual_seed(seed)

        self.tokenizer = AutoTokenizer.from_pretrained(model_name_or_path, use_fast=True)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "left"

        quantization_config = BitsAndBytesConfig(load_in_8bit=True) if load_8bit else None
        torch_dtype = getattr(torch, dtype)
        self.model = AutoModelForCausalLM.from_pretrained(
            model_name_or_path,
            device_map="auto",
            max_memory=_max_memory(max_gpu_memory),
            torch_dtype=torch_dtype,
            quantization_config=quantization_config,
        )
        self.model.eval()
        logger.info("loaded %s, hf_device_map=%s", model_name_or_path, getattr(self.model, "hf_device_map", None))

        self.template = next((t for k, t in CHAT_TEMPLATES.items() if k in model_name_or_path.lower()), "{prompt}")
        stop_words = ["\n\n", ";\n", "Q:"]
        self.stopping_criteria = StoppingCriteriaList(
            [StopOnTokens([self.tokenizer.encode(w, add_special_tokens=False) for w in stop_words])]
        )

    @torch.no_grad()
    def complete(self, prompts: List[str], max_new_tokens: int = 200, temperature: float = 0.0, n: int = 1):
        texts = [self.template.format(prompt=p) for p in prompts]
        inputs = self.tokenizer(texts, return_tensors="pt", padding=True).to("cuda")
        do_sample = temperature > 0
        with torch.autocast("cuda", dtype=torch.float16):
            outputs = self.model.generate(
                **inputs,
                max_new_tokens=max_new_tokens,
                do_sample=do_sample,
                temperature=temperature if do_sample else None,
                num_return_sequences=n,
                stopping_criteria=self.stopping_criteria,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        gen = outputs[:, inputs["input_ids"].shape[1]:]
        decoded = self.tokenizer.batch_decode(gen, skip_special_tokens=True)
        return [decoded[i * n:(i + 1) * n] for i in range(len(prompts))]

    def close(self):
        del self.model
        gc.collect()
        torch.cuda.empty_cache()


def postprocess_sql(text: str) -> str:
    """Mirror of the OpenAI branch in ask_llm.py: the prompt ends with "SELECT", so re-attach it."""
    text = text.strip()
    text = re.split(r"\n\s*\n|;\s*\n|Q:", text)[0]
    text = " ".join(text.replace("\n", " ").split())
    if not text.lower().startswith("select"):
        text = "SELECT " + text
    return text.rstrip(";") + ";" if text else "SELECT"


def ask_local_llm(llm: LocalLLM, questions: List[str], batch_size: int, temperature: float, n: int):
    results = []
    for start in range(0, len(questions), batch_size):
        batch = questions[start:start + batch_size]
        try:
            outs = llm.complete(batch, temperature=temperature, n=n)
        except RuntimeError as e:
            if "out of memory" not in str(e):
                raise
            logger.warning("OOM with batch size %d, falling back to 1", len(batch))
            torch.cuda.empty_cache()  # drop the failed batch's activations
            outs = [llm.complete([q], temperature=temperature, n=n)[0] for q in batch]
        for candidates in outs:
            results.append([postprocess_sql(c) for c in candidates])
    return results


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--question", required=True, help="folder containing questions.json")
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--n", type=int, default=1)
    parser.add_argument("--load_8bit", action="store_true")
    parser.add_argument("--max_gpu_memory", type=int, default=None, help="GiB per GPU for device_map='auto'")
    args = parser.parse_args()

    with open(os.path.join(args.question, "questions.json")) as f:
        qs = json.load(f)["questions"]
    llm = LocalLLM(args.model, load_8bit=args.load_8bit, max_gpu_memory=args.max_gpu_memory)
    answers = ask_local_llm(llm, [q["prompt"] for q in qs], args.batch_size, args.temperature, args.n)
    out_file = os.path.join(args.question, f"RESULTS_MODEL-{os.path.basename(args.model)}.txt")
    with open(out_file, "w") as f:
        for cands in answers:
            f.write(cands[0] + "\n")
    llm.close()
