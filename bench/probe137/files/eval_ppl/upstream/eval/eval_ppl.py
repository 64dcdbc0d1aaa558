"""Sliding-window perplexity of a (optionally LoRA-merged) causal LM on WikiText-2 / PTB / C4-val.

    python eval/eval_ppl.py --model output/alpaca-7b --datasets wikitext2 c4 --stride 512
    python eval/eval_ppl.py --model huggyllama/llama-7b --adapter output/lora/adapter_model.bin

Numbers in the paper were produced on a single A100 with fp16 weights and the flash SDPA backend.
"""
import argparse
import json
import math
import os
import time

import torch
from datasets import load_dataset
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer


DATASETS = {
    "wikitext2": ("wikitext", "wikitext-2-raw-v1", "test", "text"),
    "ptb": ("ptb_text_only", "penn_treebank", "test", "sentence"),
    "c4": ("allenai/c4", "en", "validation[:1100]", "text"),
}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--adapter", default=None, help="LoRA state dict (adapter_model.bin) to merge before eval")
    p.add_argument("--datasets", nargs="+", default=["wikitext2"], choices=list(DATASETS))
    p.add_argument("--max_length", type=int, default=2048)
    p.add_argument("--stride", type=int, default=512)
    p.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--flash_sdp", action="store_true", help="force the flash SDPA kernel (A100/H100)")
    p.add_argument("--out", default="results/ppl.json")
    return p.parse_args()


def load_text(name):
    path, config, split, field = DATASETS[name]
    ds = load_dataset(path, config, split=split)
    return "\n\n".join(ds[field])


def merge_lora_state_dict(model, adapter_path, scale=2.0):
    """Tiny merge for q/v LoRA adapters saved by alpaca-lora (A: r x in, B: out x r)."""
    sd = torch.load(adapter_path, map_location="cuda:0")
    merged = 0
    for name, module in model.named_modules():
        key_a = f"base_model.model.{name}.lora_A.weight"
        key_b = f"base_model.model.{name}.lora_B.weight"
        if key_a in sd and key_b in sd:
            delta = (sd[key_b].float() @ sd[key_a].float()) * scale
            module.weight.data += delta.to(module.weight.dtype).to(module.weight.device)
            merged += 1
    print(f"merged {merged} LoRA pairs from {adapter_path}")


@torch.no_grad()
def perplexity(model, tokenizer, text, max_length, stride, device):
    encodings = tokenizer(text, return_tensors="pt")
    seq_len = encodings.input_ids.size(1)

    nlls = []
    prev_end_loc = 0
    for begin_loc in tqdm(range(0, seq_len, stride)):
        end_loc = min(begin_loc + max_length, seq_len)
        trg_len = end_loc - prev_end_loc  # may be different from stride on last loop
        input_ids = encodings.input_ids[:, begin_loc:end_loc].to(device)
        target_ids = input_ids.clone()
        target_ids[:, :-trg_len] = -100

        with torch.autocast(device_type="cuda", dtype=torch.float16):
            outputs = model(input_ids, labels=target_ids)

        # loss is calculated using CrossEntropyLoss which averages over valid labels
        # N.B. the model only calculates loss over trg_len - 1 labels, because it internally shifts the labels
        # to the left by 1.
        neg_log_likelihood = outputs.loss

        nlls.append(neg_log_likelihood)

        prev_end_loc = end_loc
        if end_loc == seq_len:
            break

    return torch.exp(torch.stack(nlls).mean()).item()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)

    device = torch.device(args.device if torch.cuda.is_available() else "cpu")
    dtype = getattr(torch, args.dtype)

    tokenizer = AutoTokenizer.from_pretrained(args.model, use_fast=False)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype, low_cpu_mem_usage=True)
    model = model.cuda(device)
    model.eval()
    if args.adapter:
        merge_lora_state_dict(model, args.adapter)

    results = {}
    for name in args.datasets:
        text = load_text(name)
        t0 = time.time()
        if args.flash_sdp:
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
                ppl = perplexity(model, tokenizer, text, args.max_length, args.stride, device)
        else:
            ppl = perplexity(model, tokenizer, text, args.max_length, args.stride, device)
        results[name] = {"ppl": ppl, "seconds": round(time.time() - t0, 1)}
        print(f"{name}: ppl={ppl:.3f} ({results[name]['seconds']}s)")
        torch.cuda.empty_cache()

    results["_meta"] = {
        "model": args.model,
        "adapter": args.adapter,
        "max_length": args.max_length,
        "stride": args.stride,
        "dtype": args.dtype,
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
    }
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(json.dumps({k: v for k, v in results.items() if not k.startswith("_")}, indent=2))
    if any(math.isnan(v["ppl"]) for k, v in results.items() if not k.startswith("_")):
        raise SystemExit("NaN perplexity - try --dtype bfloat16")


if __name__ == "__main__":
    main()
