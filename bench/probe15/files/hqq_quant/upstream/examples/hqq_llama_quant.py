"""Half-Quadratic Quantization of a Llama model, then run it with a fast backend.

HQQ needs no calibration data: the weights are quantized with a half-quadratic solver
on the GPU in a few minutes.
"""
import argparse
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from hqq.core.quantize import BaseQuantizeConfig, HQQLinear, HQQBackend
from hqq.models.hf.base import AutoHQQHFModel
from hqq.utils.patching import prepare_for_inference
from hqq.utils.generation_hf import HFGenerator

compute_dtype = torch.float16
device = "cuda:0"
cache_dir = "/tmp/hqq-cache"


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="meta-llama/Llama-2-7b-chat-hf")
    p.add_argument("--nbits", type=int, default=4)
    p.add_argument("--group-size", type=int, default=64)
    p.add_argument("--backend", default="torchao_int4", choices=["torchao_int4", "bitblas", "gemlite", "pytorch"])
    p.add_argument("--compile", action="store_true")
    p.add_argument("--save-dir", default="llama2-7b-hqq-4bit")
    return p.parse_args()


def quantize(args):
    model = AutoModelForCausalLM.from_pretrained(args.model, cache_dir=cache_dir, torch_dtype=compute_dtype,
                                                 attn_implementation="sdpa")
    tokenizer = AutoTokenizer.from_pretrained(args.model, cache_dir=cache_dir)

    quant_config = BaseQuantizeConfig(nbits=args.nbits, group_size=args.group_size, quant_zero=False,
                                      quant_scale=False, axis=1)
    t0 = time.time()
    AutoHQQHFModel.quantize_model(model, quant_config=quant_config, compute_dtype=compute_dtype, device=device)
    torch.cuda.synchronize()
    print(f"quantized in {time.time() - t0:.1f}s")
    return model, tokenizer


def eval_wikitext(model, tokenizer, max_len=1024, n=40):
    from datasets import load_dataset
    text = "\n\n".join(load_dataset("wikitext", "wikitext-2-raw-v1", split="test")["text"])
    enc = tokenizer(text, return_tensors="pt").input_ids
    nll, count = 0.0, 0
    for i in range(n):
        chunk = enc[:, i * max_len:(i + 1) * max_len].to(device)
        with torch.no_grad():
            out = model(chunk, labels=chunk)
        nll += out.loss.float().item() * chunk.shape[1]
        count += chunk.shape[1]
    return float(torch.exp(torch.tensor(nll / count)))


def main():
    args = parse()
    model, tokenizer = quantize(args)

    # HQQLinear dequantizes on the fly; for speed patch every layer to a fused int4 backend
    if args.backend == "pytorch":
        HQQLinear.set_backend(HQQBackend.PYTORCH_COMPILE if args.compile else HQQBackend.PYTORCH)
    else:
        prepare_for_inference(model, backend=args.backend)

    ppl = eval_wikitext(model, tokenizer)
    print(f"wikitext2 ppl: {ppl:.3f}")

    gen = HFGenerator(model, tokenizer, max_new_tokens=256, do_sample=False,
                      compile="partial" if args.compile else None).warmup()
    t0 = time.perf_counter()
    out = gen.generate("Write an essay about large language models.", print_tokens=False)
    dt = time.perf_counter() - t0
    print(out["output_text"][:400])
    print(f"{256 / dt:.1f} tok/s, peak {torch.cuda.max_memory_allocated() / 1e9:.2f} GB")

    AutoHQQHFModel.save_quantized(model, args.save_dir)


if __name__ == "__main__":
    main()
