# Memory / throughput benchmark for the KIVI KV cache vs. the fp16 baseline.
# Example:
#   CUDA_VISIBLE_DEVICES=0 python mem_spd_test.py --k_bits 2 --v_bits 2 --batch_size 64
import argparse
import os
import time

import torch
from transformers import LlamaConfig, AutoTokenizer, LlamaForCausalLM


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", type=str, default="meta-llama/Llama-2-7b-hf")
    parser.add_argument("--cache_dir", type=str, default="./cache")
    parser.add_argument("--k_bits", type=int, default=2)
    parser.add_argument("--v_bits", type=int, default=2)
    parser.add_argument("--group_size", type=int, default=32)
    parser.add_argument("--residual_length", type=int, default=128)
    parser.add_argument("--batch_size", type=int, default=96)
    parser.add_argument("--prompt_length", type=int, default=160)
    parser.add_argument("--output_length", type=int, default=338)
    parser.add_argument("--num_repeats", type=int, default=3)
    parser.add_argument("--baseline", action="store_true", help="run the fp16 HF cache instead of KIVI")
    return parser.parse_args()


def build_model(args):
    config = LlamaConfig.from_pretrained(args.model_name_or_path)
    if args.baseline:
        model = LlamaForCausalLM.from_pretrained(
            pretrained_model_name_or_path=args.model_name_or_path,
            config=config,
            cache_dir=args.cache_dir,
            torch_dtype=torch.float16,
            low_cpu_mem_usage=True,
        ).cuda()
    else:
        from models.llama_kivi import LlamaForCausalLM_KIVI
        config.k_bits = args.k_bits
        config.v_bits = args.v_bits
        config.group_size = args.group_size
        config.residual_length = args.residual_length
        config.use_flash = True
        model = LlamaForCausalLM_KIVI.from_pretrained(
            pretrained_model_name_or_path=args.model_name_or_path,
            config=config,
            cache_dir=args.cache_dir,
            torch_dtype=torch.float16,
            low_cpu_mem_usage=True,
        ).cuda()  # KIVI kernels expect every layer on the same GPU
    return model


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("This benchmark needs a CUDA GPU.")
    gpu_name = torch.cuda.get_device_name(0)
    total_mem = torch.cuda.get_device_properties(0).total_memory / 1024 ** 3
    print(f"Running on {gpu_name} ({total_mem:.1f} GiB)")

    model = build_model(args)
    tokenizer = AutoTokenizer.from_pretrained(
        args.model_name_or_path,
        use_fast=False,
        trust_remote_code=True,
        tokenizer_type="llama")
    model.eval()

    context = []
    batch_size = args.batch_size
    prompt_length = args.prompt_length
    output_length = args.output_length
    num_repeats = args.num_repeats
    for _ in range(batch_size):
        string = "t," * (prompt_length // 2)
        context.append(string[:-1])
    inputs = tokenizer(context, return_tensors="pt").to("cuda")
    input_ids = inputs["input_ids"]
    print(f"bs: {batch_size}, seqlen: {input_ids.shape[1]}+{output_length}\nmodel:{args.model_name_or_path}")

    torch.cuda.reset_peak_memory_stats()
    with torch.no_grad():
        torch.cuda.synchronize()
        st = time.time()
        for i in range(num_repeats):
            outputs = model.generate(**inputs, max_new_tokens=output_length)
        torch.cuda.synchronize()  # generate() can return before the last kernels finish
        print(f"used time: {(time.time() - st) / num_repeats * 1000} ms")
        used_mem = torch.cuda.max_memory_allocated()
        print(f"peak mem: {used_mem / 1024 ** 3} GB")

    tokens = batch_size * output_length
    throughput = tokens / ((time.time() - st) / num_repeats)
    print(f"throughput: {throughput:.1f} tokens/s")
    del model
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
