"""LLM.int8() inference example.

Loads a causal LM, swaps every nn.Linear for bnb.nn.Linear8bitLt (outlier threshold 6.0)
and generates a few tokens.  Quantization happens when the module is moved to the GPU.
"""
import argparse
import time

import torch
import torch.nn as nn
import bitsandbytes as bnb
from bitsandbytes.nn import Linear8bitLt, Int8Params
from transformers import AutoModelForCausalLM, AutoTokenizer

MAX_NEW_TOKENS = 64


def parse_args():
    p = argparse.ArgumentParser(description="Run LLM.int8() inference on one CUDA GPU")
    p.add_argument("--model", default="facebook/opt-1.3b")
    p.add_argument("--threshold", type=float, default=6.0,
                   help="outlier threshold; columns above it stay in fp16 on the GPU")
    p.add_argument("--prompt", default="Hamburg is in which country?\n")
    p.add_argument("--skip", nargs="*", default=["lm_head"])
    p.add_argument("--has-fp16-weights", action="store_true")
    return p.parse_args()


def replace_linear(module, threshold, skip, has_fp16_weights=False, prefix=""):
    """Recursively swap nn.Linear -> Linear8bitLt, copying the fp16 weights over."""
    for name, child in list(module.named_children()):
        full = f"{prefix}.{name}" if prefix else name
        if any(full.endswith(s) for s in skip):
            continue
        if isinstance(child, nn.Linear):
            new = Linear8bitLt(
                child.in_features,
                child.out_features,
                bias=child.bias is not None,
                has_fp16_weights=has_fp16_weights,
                threshold=threshold,
            )
            new.weight = Int8Params(child.weight.data.clone(), requires_grad=has_fp16_weights,
                                    has_fp16_weights=has_fp16_weights)
            if child.bias is not None:
                new.bias = nn.Parameter(child.bias.data.clone())
            setattr(module, name, new)
        else:
            replace_linear(child, threshold, skip, has_fp16_weights, full)
    return module


def memory_footprint(model):
    total = 0
    for p in model.parameters():
        total += p.numel() * p.element_size()
    for b in model.buffers():
        total += b.numel() * b.element_size()
    return total / 2**30


@torch.no_grad()
def generate(model, tok, prompt, device):
    inputs = tok(prompt, return_tensors="pt")
    input_ids = inputs["input_ids"].to(device)
    torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    out = model.generate(input_ids, max_new_tokens=MAX_NEW_TOKENS, do_sample=False)
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    text = tok.decode(out[0], skip_special_tokens=True)
    n_new = out.shape[1] - input_ids.shape[1]
    return text, n_new / dt


def check_int8_matmul():
    """Sanity check the int8 matmul against fp16 for a random layer."""
    fp16 = nn.Linear(1024, 1024, bias=False).half()
    int8 = Linear8bitLt(1024, 1024, bias=False, has_fp16_weights=False, threshold=6.0)
    int8.weight = Int8Params(fp16.weight.data.clone(), requires_grad=False, has_fp16_weights=False)
    fp16 = fp16.cuda()
    int8 = int8.cuda()  # quantizes the weight to int8 (CB / SCB)
    x = torch.randn(8, 1024, dtype=torch.float16, device="cuda")
    ref = fp16(x)
    got = int8(x)
    err = (ref - got).abs().mean().item()
    print(f"int8 vs fp16 mean abs error: {err:.4f}")
    return err


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("LLM.int8() needs a CUDA GPU")
    device = torch.device("cuda:0")
    print(f"bitsandbytes {bnb.__version__}, device {torch.cuda.get_device_name(0)}")

    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.float16,
                                                 low_cpu_mem_usage=True)
    print(f"fp16 footprint: {memory_footprint(model):.2f} GiB")
    model = replace_linear(model, args.threshold, args.skip, args.has_fp16_weights)
    model = model.to(device)
    model.eval()
    print(f"int8 footprint: {memory_footprint(model):.2f} GiB")
    print(f"allocated: {torch.cuda.memory_allocated() / 2**30:.2f} GiB")

    check_int8_matmul()
    text, tps = generate(model, tok, args.prompt, device)
    print(text)
    print(f"{tps:.1f} tokens/s")
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
