"""Quantise a causal LM for deployment and compare perplexity / memory of the variants.

  gptq     : auto-gptq 4-bit (calibrated on C4 / wikitext), saved with safetensors
  optimum  : transformers GPTQConfig path (optimum + exllama v2 kernels)
  int8     : bitsandbytes LLM.int8() on load (no calibration)

    python tools/quantize_model.py --model meta-llama/Llama-2-7b-hf --method gptq --out quant/llama2-7b-gptq
    python tools/quantize_model.py --model quant/llama2-7b-gptq --eval-only
"""
import argparse
import gc
import json
import math
import os
import random
import time

import torch
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, GPTQConfig

from auto_gptq import AutoGPTQForCausalLM, BaseQuantizeConfig


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--method", choices=["gptq", "optimum", "int8"], default="gptq")
    ap.add_argument("--out", default=None)
    ap.add_argument("--bits", type=int, default=4)
    ap.add_argument("--group-size", type=int, default=128)
    ap.add_argument("--desc-act", action="store_true")
    ap.add_argument("--calib", default="c4", choices=["c4", "wikitext2"])
    ap.add_argument("--n-samples", type=int, default=128)
    ap.add_argument("--seqlen", type=int, default=2048)
    ap.add_argument("--eval-only", action="store_true")
    return ap.parse_args()


def calibration_examples(tokenizer, name, n, seqlen, seed=0):
    random.seed(seed)
    if name == "c4":
        ds = load_dataset("allenai/c4", data_files={"train": "en/c4-train.00000-of-01024.json.gz"}, split="train")
        key = "text"
    else:
        ds = load_dataset("wikitext", "wikitext-2-raw-v1", split="train")
        key = "text"
    examples = []
    while len(examples) < n:
        row = ds[random.randint(0, len(ds) - 1)][key]
        enc = tokenizer(row, return_tensors="pt")
        if enc.input_ids.shape[1] <= seqlen:
            continue
        i = random.randint(0, enc.input_ids.shape[1] - seqlen - 1)
        ids = enc.input_ids[:, i: i + seqlen]
        examples.append({"input_ids": ids, "attention_mask": torch.ones_like(ids)})
    return examples


@torch.no_grad()
def wikitext_ppl(model, tokenizer, seqlen=2048, max_chunks=40):
    test = load_dataset("wikitext", "wikitext-2-raw-v1", split="test")
    enc = tokenizer("\n\n".join(test["text"]), return_tensors="pt").input_ids
    nlls = []
    n_chunks = min(enc.shape[1] // seqlen, max_chunks)
    for i in range(n_chunks):
        batch = enc[:, i * seqlen: (i + 1) * seqlen].to("cuda:0")
        loss = model(batch, labels=batch).loss
        nlls.append(loss.float() * seqlen)
    return math.exp(torch.stack(nlls).sum() / (n_chunks * seqlen))


def quantize_autogptq(args, tokenizer):
    quantize_config = BaseQuantizeConfig(bits=args.bits, group_size=args.group_size, desc_act=args.desc_act,
                                         damp_percent=0.01)
    model = AutoGPTQForCausalLM.from_pretrained(args.model, quantize_config, torch_dtype=torch.float16)
    examples = calibration_examples(tokenizer, args.calib, args.n_samples, args.seqlen)
    t0 = time.time()
    model.quantize(examples, batch_size=1, use_triton=False, cache_examples_on_gpu=True)
    print(f"quantised in {(time.time() - t0) / 60:.1f} min")
    model.save_quantized(args.out, use_safetensors=True)
    tokenizer.save_pretrained(args.out)
    del model
    gc.collect()
    torch.cuda.empty_cache()
    return AutoGPTQForCausalLM.from_quantized(args.out, device="cuda:0", use_triton=False, use_safetensors=True,
                                              inject_fused_attention=True, inject_fused_mlp=True)


def quantize_optimum(args, tokenizer):
    gptq_config = GPTQConfig(bits=args.bits, group_size=args.group_size, dataset=args.calib, tokenizer=tokenizer,
                             desc_act=args.desc_act, use_exllama=True, exllama_config={"version": 2})
    model = AutoModelForCausalLM.from_pretrained(args.model, quantization_config=gptq_config, device_map="auto",
                                                 torch_dtype=torch.float16)
    model.save_pretrained(args.out, safe_serialization=True)
    tokenizer.save_pretrained(args.out)
    return model


def load_int8(args):
    bnb_config = BitsAndBytesConfig(load_in_8bit=True, llm_int8_threshold=6.0)
    return AutoModelForCausalLM.from_pretrained(args.model, quantization_config=bnb_config, device_map="auto")


def main():
    args = parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.model, use_fast=True)
    torch.cuda.reset_peak_memory_stats()

    if args.eval_only:
        model = AutoModelForCausalLM.from_pretrained(args.model, device_map="auto", torch_dtype="auto")
    elif args.method == "gptq":
        model = quantize_autogptq(args, tokenizer)
    elif args.method == "optimum":
        model = quantize_optimum(args, tokenizer)
    else:
        model = load_int8(args)

    model.eval()
    ppl = wikitext_ppl(model, tokenizer)
    footprint = model.get_memory_footprint() / 2**30 if hasattr(model, "get_memory_footprint") else float("nan")
    report = {
        "model": args.model,
        "method": "eval" if args.eval_only else args.method,
        "bits": args.bits,
        "group_size": args.group_size,
        "wikitext2_ppl": round(ppl, 3),
        "weights_gib": round(footprint, 2),
        "peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
    }
    print(json.dumps(report, indent=2))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "quant_report.json"), "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
