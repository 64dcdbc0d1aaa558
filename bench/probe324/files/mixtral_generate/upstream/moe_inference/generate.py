#!/usr/bin/env python
"""Greedy / top-p generation with the compact Mixtral implementation.

    CUDA_VISIBLE_DEVICES=0 python -m moe_inference.generate \
        --ckpt /models/Mixtral-8x7B-Instruct-v0.1 --prompt "Explain MoE routing"

Experts are split across all visible GPUs with a simple layer-wise device map
when the model does not fit on a single card (8x7B in bf16 needs ~94 GB).
"""
import argparse
import json
import os
import time

import torch
from safetensors.torch import load_file
from transformers import AutoTokenizer

from .modeling_mixtral import MixtralConfig, MixtralForCausalLM


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", required=True)
    p.add_argument("--prompt", default="Hello, my name is")
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--top-p", type=float, default=0.0)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    p.add_argument("--device", default="cuda")
    p.add_argument("--compile", action="store_true", help="torch.compile the decode step")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def pick_dtype(name):
    if name == "bfloat16" and not torch.cuda.is_bf16_supported():
        print("bf16 not supported on this GPU (pre-Ampere), falling back to fp16")
        return torch.float16
    return getattr(torch, name)


def layer_device_map(num_layers, num_devices):
    """Contiguous split of decoder layers over GPUs: {layer_idx: 'cuda:k'}."""
    per_dev = (num_layers + num_devices - 1) // num_devices
    return {i: f"cuda:{i // per_dev}" for i in range(num_layers)}


def load_model(ckpt_dir, dtype, device):
    with open(os.path.join(ckpt_dir, "config.json")) as f:
        raw = json.load(f)
    cfg = MixtralConfig(
        vocab_size=raw["vocab_size"],
        hidden_size=raw["hidden_size"],
        intermediate_size=raw["intermediate_size"],
        num_hidden_layers=raw["num_hidden_layers"],
        num_attention_heads=raw["num_attention_heads"],
        num_key_value_heads=raw["num_key_value_heads"],
        rope_theta=raw.get("rope_theta", 1e6),
        num_local_experts=raw["num_local_experts"],
        num_experts_per_tok=raw["num_experts_per_tok"],
        torch_dtype=dtype,
    )
    with torch.device("meta"):
        model = MixtralForCausalLM(cfg)

    state_dict = {}
    for name in sorted(os.listdir(ckpt_dir)):
        if name.endswith(".safetensors"):
            state_dict.update(load_file(os.path.join(ckpt_dir, name), device="cpu"))
    model.load_state_dict(state_dict, strict=False, assign=True)
    model = model.to(dtype)

    n_gpus = torch.cuda.device_count()
    if device == "cuda" and n_gpus > 1:
        dmap = layer_device_map(cfg.num_hidden_layers, n_gpus)
        for i, layer in enumerate(model.layers):
            layer.to(dmap[i])
        model.embed_tokens.to("cuda:0")
        last = f"cuda:{n_gpus - 1}"
        model.norm.to(last)
        model.lm_head.to(last)
    else:
        model.to(device)
    return model.eval(), cfg


def _now():
    torch.cuda.synchronize()
    return time.perf_counter()


def sample(logits, temperature, top_p):
    if top_p <= 0.0:
        return logits.argmax(dim=-1)
    probs = torch.softmax(logits / temperature, dim=-1)
    sorted_probs, sorted_idx = torch.sort(probs, descending=True)
    cum = torch.cumsum(sorted_probs, dim=-1)
    mask = cum - sorted_probs > top_p
    sorted_probs[mask] = 0.0
    sorted_probs.div_(sorted_probs.sum(dim=-1, keepdim=True))
    choice = torch.multinomial(sorted_probs, num_samples=1)
    return torch.gather(sorted_idx, -1, choice).squeeze(-1)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True

    dtype = pick_dtype(args.dtype)
    tok = AutoTokenizer.from_pretrained(args.ckpt)
    model, cfg = load_model(args.ckpt, dtype, args.device)

    input_ids = tok(args.prompt, return_tensors="pt").input_ids.to(args.device)
    bsz, prompt_len = input_ids.shape
    max_len = prompt_len + args.max_new_tokens
    kv_caches = model.allocate_kv_cache(bsz, max_len, device=args.device, dtype=dtype)
    cache_seqlens = torch.zeros(bsz, dtype=torch.int32, device=args.device)

    decode = model.forward
    if args.compile:
        decode = torch.compile(model.forward, mode="reduce-overhead", fullgraph=False)

    t0 = _now()
    logits = model(input_ids, 0, kv_caches, cache_seqlens)
    cache_seqlens += prompt_len
    t_prefill = _now() - t0

    out_ids = []
    next_id = sample(logits[:, -1, :], args.temperature, args.top_p)
    t0 = _now()
    for step in range(args.max_new_tokens):
        out_ids.append(next_id)
        if next_id.item() == tok.eos_token_id:
            break
        logits = decode(next_id[:, None], prompt_len + step, kv_caches, cache_seqlens)
        cache_seqlens += 1
        next_id = sample(logits[:, -1, :], args.temperature, args.top_p)
    t_decode = _now() - t0

    text = tok.decode(torch.stack(out_ids, dim=-1)[0].tolist(), skip_special_tokens=True)
    print(text)
    print(f"prefill {prompt_len} tok: {t_prefill * 1e3:.1f} ms | decode {len(out_ids)} tok: "
          f"{len(out_ids) / t_decode:.1f} tok/s | peak mem {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")


if __name__ == "__main__":
    main()
