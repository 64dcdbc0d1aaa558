#!/usr/bin/env python3
"""Merge a (Q)LoRA adapter into its base model and export GGUF files with llama.cpp.

    python scripts/merge_and_export_gguf.py --base meta-llama/Llama-2-7b-hf --adapter out/checkpoint-1000 \
        --out out/merged --llama_cpp ~/llama.cpp --quant q4_k_m
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoTokenizer


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True)
    p.add_argument("--adapter", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--llama_cpp", default=os.path.expanduser("~/llama.cpp"))
    p.add_argument("--quant", default="q4_k_m", help="llama-quantize type, e.g. q4_k_m, q5_k_m, q8_0")
    p.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])
    p.add_argument("--n_gpu_layers", type=int, default=99, help="layers offloaded by llama-cli in the smoke test")
    p.add_argument("--skip_test", action="store_true")
    return p.parse_args()


def merge(args):
    dtype = getattr(torch, args.dtype)
    print(f"loading base model {args.base} in {dtype}")
    base = AutoModelForCausalLM.from_pretrained(args.base, torch_dtype=dtype, low_cpu_mem_usage=True, device_map={"": 0})
    model = PeftModel.from_pretrained(base, args.adapter)
    model = model.merge_and_unload()
    # sanity check: merged model must still produce finite logits
    tok = AutoTokenizer.from_pretrained(args.base)
    with torch.no_grad():
        ids = tok("The capital of France is", return_tensors="pt").input_ids.cuda()
        logits = model(ids).logits
        assert torch.isfinite(logits).all(), "merged model produced non-finite logits"
    model = model.cpu()
    torch.cuda.empty_cache()
    os.makedirs(args.out, exist_ok=True)
    model.save_pretrained(args.out, safe_serialization=True, max_shard_size="4GB")
    tok.save_pretrained(args.out)
    with open(os.path.join(args.out, "merge_info.json"), "w") as f:
        json.dump({"base": args.base, "adapter": args.adapter, "dtype": args.dtype}, f, indent=2)


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def build_llama_cpp(llama_cpp):
    if os.path.exists(os.path.join(llama_cpp, "build", "bin", "llama-quantize")):
        return
    run(["cmake", "-B", "build", "-DGGML_CUDA=ON", "-DCMAKE_CUDA_ARCHITECTURES=80;86;89;90"], cwd=llama_cpp)
    run(["cmake", "--build", "build", "--config", "Release", "-j", str(os.cpu_count())], cwd=llama_cpp)


def export(args):
    f16 = os.path.join(args.out, "model-f16.gguf")
    quant = os.path.join(args.out, f"model-{args.quant}.gguf")
    run([sys.executable, os.path.join(args.llama_cpp, "convert_hf_to_gguf.py"), args.out, "--outfile", f16, "--outtype", "f16"])
    build_llama_cpp(args.llama_cpp)
    run([os.path.join(args.llama_cpp, "build", "bin", "llama-quantize"), f16, quant, args.quant.upper()])
    return quant


def smoke_test(args, gguf):
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = env.get("CUDA_VISIBLE_DEVICES", "0")
    run([os.path.join(args.llama_cpp, "build", "bin", "llama-cli"), "-m", gguf, "-p", "Hello", "-n", "32",
         "-ngl", str(args.n_gpu_layers), "--no-display-prompt"], env=env)


def main():
    args = parse_args()
    if shutil.which("cmake") is None:
        sys.exit("cmake is required to build llama.cpp")
    merge(args)
    gguf = export(args)
    if not args.skip_test:
        smoke_test(args, gguf)
    print(f"done: {gguf}")


if __name__ == "__main__":
    main()
