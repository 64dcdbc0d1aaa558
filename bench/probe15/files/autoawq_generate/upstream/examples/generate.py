"""Quantize a model with AWQ and stream a chat completion from it.

usage:
    python examples/generate.py --quantize --model mistralai/Mistral-7B-Instruct-v0.2
    python examples/generate.py --quant-path mistral-instruct-v0.2-awq
"""
import argparse
import time

import torch
from awq import AutoAWQForCausalLM
from awq.utils.utils import get_best_device
from transformers import AutoTokenizer, TextStreamer

PROMPT = "[INST] You're standing on the surface of the Earth. You walk one mile south, one mile west " \
         "and one mile north. You end up exactly where you started. Where are you? [/INST]"


def quantize(model_path, quant_path, w_bit, group_size, version):
    quant_config = {"zero_point": True, "q_group_size": group_size, "w_bit": w_bit, "version": version}
    model = AutoAWQForCausalLM.from_pretrained(model_path, low_cpu_mem_usage=True, use_cache=False)
    tokenizer = AutoTokenizer.from_pretrained(model_path, trust_remote_code=True)
    model.quantize(tokenizer, quant_config=quant_config, calib_data="pileval", max_calib_samples=128)
    model.save_quantized(quant_path)
    tokenizer.save_pretrained(quant_path)
    print(f'Model is quantized and saved at "{quant_path}"')


def load(quant_path, fuse_layers, max_seq_len):
    model = AutoAWQForCausalLM.from_quantized(
        quant_path,
        fuse_layers=fuse_layers,
        max_seq_len=max_seq_len,
        batch_size=1,
        use_exllama_v2=False,
        device_map="cuda",
    )
    tokenizer = AutoTokenizer.from_pretrained(quant_path, trust_remote_code=True)
    return model, tokenizer


def benchmark(model, tokenizer, n_tokens=256, warmup=2):
    ids = tokenizer(PROMPT, return_tensors="pt").input_ids.cuda()
    for _ in range(warmup):
        model.generate(ids, max_new_tokens=8, do_sample=False)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    out = model.generate(ids, max_new_tokens=n_tokens, do_sample=False, min_new_tokens=n_tokens)
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end)
    new = out.shape[1] - ids.shape[1]
    mem = torch.cuda.max_memory_allocated() / 1024**3
    print(f"decode: {new / (ms / 1000):.1f} tok/s  peak memory {mem:.2f} GB")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="mistralai/Mistral-7B-Instruct-v0.2")
    p.add_argument("--quant-path", default="mistral-instruct-v0.2-awq")
    p.add_argument("--quantize", action="store_true")
    p.add_argument("--w-bit", type=int, default=4)
    p.add_argument("--group-size", type=int, default=128)
    p.add_argument("--version", default="GEMM", choices=["GEMM", "GEMV", "Marlin"])
    p.add_argument("--no-fuse", action="store_true", help="do not fuse attention/MLP/norm into the AWQ CUDA kernels")
    p.add_argument("--max-seq-len", type=int, default=4096)
    p.add_argument("--bench", action="store_true")
    args = p.parse_args()

    print(f"best device: {get_best_device()}")
    if args.quantize:
        quantize(args.model, args.quant_path, args.w_bit, args.group_size, args.version)

    model, tokenizer = load(args.quant_path, fuse_layers=not args.no_fuse, max_seq_len=args.max_seq_len)
    streamer = TextStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)

    tokens = tokenizer(PROMPT, return_tensors="pt").input_ids.cuda()
    t0 = time.time()
    out = model.generate(tokens, streamer=streamer, max_new_tokens=512)
    dt = time.time() - t0
    print(f"\n{out.shape[1] - tokens.shape[1]} tokens in {dt:.2f}s")

    if args.bench:
        benchmark(model, tokenizer)


if __name__ == "__main__":
    main()
