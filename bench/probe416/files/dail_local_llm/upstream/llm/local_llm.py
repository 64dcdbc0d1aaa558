"""Run DAIL-SQL prompts against open-source LLMs (LLaMA / Vicuna / CodeLlama ...) on local GPUs.

Two backends:
  * "hf"   -- plain transformers generate(), one GPU, batched greedy decoding
  * "vllm" -- vLLM with tensor parallelism over all visible GPUs
"""
import argparse
import json
import os
import time

import torch
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer, StoppingCriteria, StoppingCriteriaList

from utils.post_process import process_duplication

QUESTION_FILE = "questions.json"


class StopOnTokens(StoppingCriteria):
    """Stop as soon as every sequence in the batch produced one of the stop strings (e.g. ';' or a blank line)."""

    def __init__(self, stop_ids, device):
        self.stop_ids = [torch.LongTensor(ids).to(device) for ids in stop_ids]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs) -> bool:
        done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        for stop in self.stop_ids:
            if input_ids.shape[1] >= stop.shape[0]:
                done |= (input_ids[:, -stop.shape[0]:] == stop).all(dim=1)
        return bool(done.all())


class HFLocalLLM:
    def __init__(self, model_path, dtype="fp16", max_new_tokens=200, device="cuda:0"):
        self.device = device
        self.max_new_tokens = max_new_tokens
        torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
        self.tokenizer = AutoTokenizer.from_pretrained(model_path, use_fast=False, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.unk_token or self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(
            model_path, torch_dtype=torch_dtype, low_cpu_mem_usage=True
        ).to(self.device)
        self.model.eval()
        stop_ids = [self.tokenizer.encode(s, add_special_tokens=False) for s in [";", "\n\n"]]
        self.stopping = StoppingCriteriaList([StopOnTokens(stop_ids, self.device)])

    @torch.inference_mode()
    def generate(self, prompts):
        enc = self.tokenizer(prompts, return_tensors="pt", padding=True).to(self.device)
        out = self.model.generate(
            **enc,
            max_new_tokens=self.max_new_tokens,
            do_sample=False,
            stopping_criteria=self.stopping,
            pad_token_id=self.tokenizer.pad_token_id,
        )
        texts = self.tokenizer.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        return texts


class VLLMLocalLLM:
    def __init__(self, model_path, dtype="fp16", max_new_tokens=200):
        from vllm import LLM, SamplingParams

        self.llm = LLM(
            model=model_path,
            dtype={"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}[dtype],
            tensor_parallel_size=torch.cuda.device_count(),
            gpu_memory_utilization=0.9,
            trust_remote_code=True,
        )
        self.params = SamplingParams(temperature=0.0, max_tokens=max_new_tokens, stop=[";", "\n\n"])

    def generate(self, prompts):
        outputs = self.llm.generate(prompts, self.params)
        return [o.outputs[0].text for o in outputs]


def to_sql(text):
    sql = " ".join(text.replace("\n", " ").split())
    sql = process_duplication(sql)
    if sql.startswith("SELECT"):
        return sql
    if sql.startswith(" "):
        return "SELECT" + sql
    return "SELECT " + sql


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--question", type=str, required=True)
    parser.add_argument("--model_path", type=str, required=True)
    parser.add_argument("--backend", type=str, default="hf", choices=["hf", "vllm"])
    parser.add_argument("--dtype", type=str, default="fp16", choices=["fp16", "bf16", "fp32"])
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--max_new_tokens", type=int, default=200)
    parser.add_argument("--gpu", type=str, default="0", help="value for CUDA_VISIBLE_DEVICES")
    args = parser.parse_args()

    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
    torch.backends.cuda.matmul.allow_tf32 = True

    questions_json = json.load(open(os.path.join(args.question, QUESTION_FILE), "r"))
    prompts = [q["prompt"] for q in questions_json["questions"]]

    if args.backend == "hf":
        llm = HFLocalLLM(args.model_path, args.dtype, args.max_new_tokens)
    else:
        llm = VLLMLocalLLM(args.model_path, args.dtype, args.max_new_tokens)

    model_name = os.path.basename(args.model_path.rstrip("/"))
    out_file = os.path.join(args.question, f"RESULTS_MODEL-{model_name}.txt")
    start = time.time()
    with open(out_file, "w") as f:
        for i in tqdm(range(0, len(prompts), args.batch_size)):
            batch = prompts[i:i + args.batch_size]
            for text in llm.generate(batch):
                f.write(to_sql(text) + "\n")
            if args.backend == "hf":
                torch.cuda.empty_cache()

    elapsed = time.time() - start
    print(f"{len(prompts)} questions in {elapsed:.1f}s, peak GPU memory "
          f"{torch.cuda.max_memory_allocated() / 2**30:.1f} GB")


if __name__ == "__main__":
    main()
