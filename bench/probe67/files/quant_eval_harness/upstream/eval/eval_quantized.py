"""Compare perplexity, MMLU accuracy and decode speed of fp16 / bnb-nf4 / GPTQ / AWQ / HQQ variants of one model.

python eval/eval_quantized.py --model meta-llama/Llama-2-7b-hf --gptq TheBloke/Llama-2-7B-GPTQ --awq TheBloke/Llama-2-7B-AWQ
"""
import argparse
import gc
import json
import os
import time
from collections import defaultdict

import numpy as np
import torch
import torch.nn.functional as F
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, GPTQConfig, AwqConfig, HqqConfig

MMLU_CHOICES = ["A", "B", "C", "D"]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--gptq", default=None, help="pre-quantized GPTQ repo")
    p.add_argument("--awq", default=None, help="pre-quantized AWQ repo")
    p.add_argument("--hqq_bits", type=int, default=4)
    p.add_argument("--seqlen", type=int, default=2048)
    p.add_argument("--ppl_chunks", type=int, default=40)
    p.add_argument("--mmlu_subjects", default="abstract_algebra,anatomy,college_physics,econometrics")
    p.add_argument("--decode_tokens", type=int, default=128)
    p.add_argument("--out", default="eval_results.json")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def free_memory():
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.ipc_collect()


def load_variant(name, args):
    common = dict(torch_dtype=torch.float16, device_map="auto", low_cpu_mem_usage=True)
    if name == "fp16":
        return AutoModelForCausalLM.from_pretrained(args.model, **common)
    if name == "nf4":
        q = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.float16,
                               bnb_4bit_use_double_quant=True)
        return AutoModelForCausalLM.from_pretrained(args.model, quantization_config=q, **common)
    if name == "int8":
        q = BitsAndBytesConfig(load_in_8bit=True)
        return AutoModelForCausalLM.from_pretrained(args.model, quantization_config=q, **common)
    if name == "gptq":
        q = GPTQConfig(bits=4, use_exllama=True, exllama_config={"version": 2})
        return AutoModelForCausalLM.from_pretrained(args.gptq, quantization_config=q, **common)
    if name == "awq":
        q = AwqConfig(version="gemm", do_fuse=True, fuse_max_seq_len=args.seqlen)
        return AutoModelForCausalLM.from_pretrained(args.awq, quantization_config=q, **common)
    if name == "hqq":
        q = HqqConfig(nbits=args.hqq_bits, group_size=64)
        return AutoModelForCausalLM.from_pretrained(args.model, quantization_config=q, torch_dtype=torch.float16,
                                                    device_map="cuda")
    raise ValueError(name)


@torch.no_grad()
def perplexity(model, tok, seqlen, n_chunks):
    text = "\n\n".join(load_dataset("wikitext", "wikitext-2-raw-v1", split="test")["text"])
    enc = tok(text, return_tensors="pt").input_ids
    n = min(n_chunks, enc.shape[1] // seqlen)
    nlls = []
    for i in range(n):
        batch = enc[:, i * seqlen:(i + 1) * seqlen].to(model.device)
        logits = model(batch).logits.float()
        loss = F.cross_entropy(logits[0, :-1], batch[0, 1:], reduction="sum")
        nlls.append(loss.item())
    return float(np.exp(sum(nlls) / (n * (seqlen - 1))))


def format_mmlu(example, include_answer=True):
    prompt = example["question"]
    for letter, choice in zip(MMLU_CHOICES, example["choices"]):
        prompt += f"\n{letter}. {choice}"
    prompt += "\nAnswer:"
    if include_answer:
        prompt += f" {MMLU_CHOICES[example['answer']]}\n\n"
    return prompt


@torch.no_grad()
def mmlu(model, tok, subjects):
    choice_ids = [tok(f" {c}", add_special_tokens=False).input_ids[-1] for c in MMLU_CHOICES]
    acc = {}
    for subject in subjects:
        ds = load_dataset("cais/mmlu", subject)
        shots = "".join(format_mmlu(ex) for ex in ds["dev"].select(range(5)))
        correct = 0
        for ex in ds["test"]:
            prompt = shots + format_mmlu(ex, include_answer=False)
            ids = tok(prompt, return_tensors="pt").input_ids.to("cuda")
            logits = model(ids).logits[0, -1, choice_ids]
            correct += int(logits.argmax().item() == ex["answer"])
        acc[subject] = correct / len(ds["test"])
    return acc


@torch.no_grad()
def decode_speed(model, tok, n_tokens):
    ids = tok("The quick brown fox", return_tensors="pt").input_ids.to(model.device)
    model.generate(ids, max_new_tokens=8, do_sample=False)  # warmup
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    out = model.generate(ids, max_new_tokens=n_tokens, min_new_tokens=n_tokens, do_sample=False)
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end)
    return (out.shape[1] - ids.shape[1]) / (ms / 1000)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    tok = AutoTokenizer.from_pretrained(args.model)
    variants = ["fp16", "nf4", "int8", "hqq"]
    if args.gptq:
        variants.append("gptq")
    if args.awq:
        variants.append("awq")

    results = defaultdict(dict)
    for name in variants:
        print(f"=== {name}")
        torch.cuda.reset_peak_memory_stats()
        t0 = time.time()
        model = load_variant(name, args)
        model.eval()
        results[name]["load_s"] = time.time() - t0
        results[name]["ppl"] = perplexity(model, tok, args.seqlen, args.ppl_chunks)
        results[name]["mmlu"] = mmlu(model, tok, args.mmlu_subjects.split(","))
        results[name]["tok_s"] = decode_speed(model, tok, args.decode_tokens)
        results[name]["peak_gib"] = torch.cuda.max_memory_allocated() / 2**30
        print(json.dumps(results[name], indent=1))
        del model
        free_memory()

    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {args.out}")
    header = f"{'variant':8s} {'ppl':>8s} {'mmlu':>6s} {'tok/s':>8s} {'GiB':>6s}"
    print(header)
    for name, r in results.items():
        m = np.mean(list(r["mmlu"].values()))
        print(f"{name:8s} {r['ppl']:8.3f} {m:6.3f} {r['tok_s']:8.1f} {r['peak_gib']:6.1f}")


if __name__ == "__main__":
    main()
