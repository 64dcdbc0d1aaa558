#!/usr/bin/env python
# coding=utf-8
"""Sample from a fine-tuned GPT-2 checkpoint and report generation throughput.

    python generate.py --model_dir out/ --prompt "Once upon a time" --fp16 --num_samples 8
"""

import argparse
import json
import logging
import time

import torch
from transformers import GPT2LMHeadModel, GPT2TokenizerFast

logger = logging.getLogger(__name__)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", type=str, required=True)
    parser.add_argument("--prompt", type=str, default="")
    parser.add_argument("--prompts_file", type=str, default=None, help="one prompt per line")
    parser.add_argument("--max_new_tokens", type=int, default=128)
    parser.add_argument("--num_samples", type=int, default=1)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--top_k", type=int, default=0)
    parser.add_argument("--top_p", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--device", type=str, default="cuda", help="cuda, cuda:N or cpu")
    parser.add_argument("--fp16", action="store_true", help="run the model in half precision")
    parser.add_argument("--sdpa_flash", action="store_true",
                        help="force the flash SDPA backend (PyTorch >= 2.0, sm80+)")
    parser.add_argument("--output", type=str, default=None, help="write samples as JSON lines")
    return parser.parse_args()


def load(args):
    tokenizer = GPT2TokenizerFast.from_pretrained(args.model_dir)
    model = GPT2LMHeadModel.from_pretrained(args.model_dir, attn_implementation="sdpa")
    model.to(args.device)
    if args.fp16:
        model.half()
    model.eval()
    return tokenizer, model


@torch.inference_mode()
def generate(args, tokenizer, model, prompt):
    enc = tokenizer(prompt or tokenizer.bos_token, return_tensors="pt").to(args.device)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    if args.sdpa_flash:
        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
            out = model.generate(**enc, do_sample=True, max_new_tokens=args.max_new_tokens,
                                 temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
                                 num_return_sequences=args.num_samples,
                                 pad_token_id=tokenizer.eos_token_id)
    else:
        out = model.generate(**enc, do_sample=True, max_new_tokens=args.max_new_tokens,
                             temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
                             num_return_sequences=args.num_samples,
                             pad_token_id=tokenizer.eos_token_id)
    end.record()
    torch.cuda.synchronize()
    elapsed_ms = start.elapsed_time(end)
    new_tokens = (out.shape[1] - enc["input_ids"].shape[1]) * out.shape[0]
    texts = [tokenizer.decode(o, skip_special_tokens=True) for o in out]
    return texts, new_tokens, elapsed_ms


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = parse_args()
    torch.manual_seed(args.seed)
    if args.device.startswith("cuda"):
        torch.cuda.manual_seed(args.seed)
        logger.info("running on %s (%s)", args.device, torch.cuda.get_device_name(torch.device(args.device)))

    tokenizer, model = load(args)

    prompts = [args.prompt]
    if args.prompts_file:
        with open(args.prompts_file, encoding="utf-8") as f:
            prompts = [line.rstrip("\n") for line in f if line.strip()]

    sink = open(args.output, "w", encoding="utf-8") if args.output else None
    total_tokens, total_ms = 0, 0.0
    for prompt in prompts:
        texts, n_tokens, ms = generate(args, tokenizer, model, prompt)
        total_tokens += n_tokens
        total_ms += ms
        for t in texts:
            print("=" * 40)
            print(t)
            if sink:
                sink.write(json.dumps({"prompt": prompt, "text": t}) + "\n")
    if sink:
        sink.close()

    logger.info("generated %d tokens in %.1f s (%.1f tok/s), peak memory %.2f GB",
                total_tokens, total_ms / 1000, total_tokens / max(total_ms / 1000, 1e-6),
                torch.cuda.max_memory_allocated() / 2 ** 30)


if __name__ == "__main__":
    main()
