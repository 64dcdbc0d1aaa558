"""Minimal HuggingFace-transformers chat example for DeepSeek-V2(-Lite)-Chat.

The full model needs 8 x 80GB GPUs in BF16. `device_map` cannot be "auto" for this
model (the MoE layers are too uneven for the balancer), so we place layers
sequentially and cap the per-GPU budget with `max_memory`.
"""
import argparse
import time

import torch
from transformers import AutoTokenizer, AutoModelForCausalLM, GenerationConfig


def parse_args():
    parser = argparse.ArgumentParser(description="DeepSeek-V2 chat with transformers")
    parser.add_argument("--model", type=str, default="deepseek-ai/DeepSeek-V2-Lite-Chat")
    parser.add_argument("--max-memory-per-gpu", type=str, default="75GB",
                        help="memory budget handed to accelerate for every visible GPU")
    parser.add_argument("--max-new-tokens", type=int, default=256)
    parser.add_argument("--prompt", type=str, default="Write a piece of quicksort code in C++")
    parser.add_argument("--bench", action="store_true", help="report decode throughput")
    return parser.parse_args()


def main():
    args = parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.model, trust_remote_code=True)

    # `max_memory` should be set based on your devices
    num_gpus = torch.cuda.device_count()
    max_memory = {i: args.max_memory_per_gpu for i in range(num_gpus)}
    # `device_map` cannot be set to `auto`
    model = AutoModelForCausalLM.from_pretrained(
        args.model,
        trust_remote_code=True,
        device_map="sequential",
        torch_dtype=torch.bfloat16,
        max_memory=max_memory,
        attn_implementation="eager",
    )
    model.generation_config = GenerationConfig.from_pretrained(args.model)
    model.generation_config.pad_token_id = model.generation_config.eos_token_id

    messages = [{"role": "user", "content": args.prompt}]
    input_tensor = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")

    start = time.perf_counter()
    outputs = model.generate(input_tensor.to(model.device), max_new_tokens=args.max_new_tokens)
    if args.bench:
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start

    new_tokens = outputs[0][input_tensor.shape[1]:]
    result = tokenizer.decode(new_tokens, skip_special_tokens=True)
    print(result)
    if args.bench:
        print(f"[bench] {len(new_tokens)} tokens in {elapsed:.2f}s "
              f"({len(new_tokens) / elapsed:.1f} tok/s on {num_gpus} GPU(s))")


if __name__ == "__main__":
    main()
