"""Cache last-token residual-stream activations of a HF causal LM for probing.

    python scripts/cache_activations.py --model meta-llama/Llama-2-7b-hf \
        --dataset truthfulqa --out acts/llama2-7b/truthfulqa --batch_size 32

Writes one file per layer: layer_{L}.pt ([n_examples, d_model], fp16) and labels.pt.
"""

import argparse
import os

import torch
from datasets import load_dataset
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer

from probing.datasets import format_truthfulqa

# flash-attn 2 needs right-padding off for batched last-token reads; we left-pad below.
import flash_attn  # noqa: F401  (fail fast if the wheel is missing)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="meta-llama/Llama-2-7b-hf")
    p.add_argument("--dataset", default="truthfulqa")
    p.add_argument("--out", required=True)
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--max_len", type=int, default=256)
    return p.parse_args()


@torch.inference_mode()
def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)

    tok = AutoTokenizer.from_pretrained(args.model)
    tok.pad_token = tok.pad_token or tok.eos_token
    tok.padding_side = "left"

    model = AutoModelForCausalLM.from_pretrained(
        args.model,
        torch_dtype=torch.bfloat16,
        device_map="cuda",
        attn_implementation="flash_attention_2",
    )
    model.eval()
    n_layers = model.config.num_hidden_layers

    if args.dataset == "truthfulqa":
        ds = load_dataset("truthful_qa", "generation", split="validation")
        texts, labels = format_truthfulqa(ds)
    else:
        raise ValueError(f"unknown dataset {args.dataset}")

    per_layer = [[] for _ in range(n_layers + 1)]
    for i in tqdm(range(0, len(texts), args.batch_size)):
        batch = tok(
            texts[i : i + args.batch_size],
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=args.max_len,
        ).to("cuda")
        out = model(**batch, output_hidden_states=True)
        # hidden_states: tuple of (n_layers + 1) x [batch, seq, d_model]; left padding -> last token is -1
        for l, h in enumerate(out.hidden_states):
            per_layer[l].append(h[:, -1, :].to(torch.float16))
        del out
        if i % (50 * args.batch_size) == 0:
            torch.cuda.empty_cache()

    for l in range(n_layers + 1):
        torch.save(torch.cat(per_layer[l]), os.path.join(args.out, f"layer_{l}.pt"))
    torch.save(torch.tensor(labels).cpu(), os.path.join(args.out, "labels.pt"))
    print(f"saved {len(texts)} examples x {n_layers + 1} layers to {args.out}")
    print(f"peak memory: {torch.cuda.max_memory_allocated() / 1e9:.1f} GB")


if __name__ == "__main__":
    main()
