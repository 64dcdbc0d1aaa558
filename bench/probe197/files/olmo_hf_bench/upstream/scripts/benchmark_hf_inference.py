"""
Quick latency / throughput benchmark for OLMo checkpoints exported to the HF format.

Examples:

    python scripts/benchmark_hf_inference.py --model allenai/OLMo-1B-hf
    python scripts/benchmark_hf_inference.py --model allenai/OLMo-7B-hf --batch-size 16 --new-tokens 256 \
        --output results/olmo7b-a100.json

The numbers it reports are per-GPU; run one process per device if you want aggregate throughput.
"""

import argparse
import json
import logging
import platform
import time
from pathlib import Path
from statistics import mean, median
from typing import Dict, List, Tuple

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

log = logging.getLogger("benchmark")

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="allenai/OLMo-1B-hf")
    p.add_argument("--revision", default=None)
    p.add_argument("--device", default="cuda", help="Device the model is placed on (default: cuda).")
    p.add_argument("--dtype", choices=["auto", *DTYPES], default="auto")
    p.add_argument("--attn", choices=["auto", "eager", "sdpa", "flash_attention_2"], default="auto")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--prompt-len", type=int, default=512)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--force-flash-sdp", action="store_true", help="Restrict SDPA to the flash backend.")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--output", type=Path, default=None)
    return p.parse_args()


def pick_attn_and_dtype(args: argparse.Namespace) -> Tuple[str, torch.dtype]:
    major, minor = torch.cuda.get_device_capability()
    log.info(f"Compute capability: {major}.{minor}")

    if args.dtype != "auto":
        dtype = DTYPES[args.dtype]
    else:
        # bf16 needs Ampere (sm_80) or newer.
        dtype = torch.bfloat16 if major >= 8 else torch.float16

    if args.attn != "auto":
        return args.attn, dtype

    # FlashAttention-2 also needs Ampere or newer, and half precision.
    attn = "flash_attention_2" if major >= 8 and dtype in (torch.float16, torch.bfloat16) else "sdpa"
    return attn, dtype


def make_inputs(tokenizer, batch_size: int, prompt_len: int, device: str) -> Dict[str, torch.Tensor]:
    vocab = tokenizer.vocab_size
    g = torch.Generator().manual_seed(0)
    input_ids = torch.randint(100, vocab - 1, (batch_size, prompt_len), generator=g)
    attention_mask = torch.ones_like(input_ids)
    return {"input_ids": input_ids.to(device), "attention_mask": attention_mask.to(device)}


@torch.inference_mode()
def time_prefill(model, inputs, iters: int) -> List[float]:
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        model(**inputs, use_cache=False)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1000.0)
    return times


@torch.inference_mode()
def time_generate(model, inputs, new_tokens: int, iters: int, pad_token_id: int) -> List[float]:
    times = []
    for _ in range(iters):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model.generate(
            **inputs,
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
            pad_token_id=pad_token_id,
        )
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return times


def summarize(name: str, times: List[float], tokens: int) -> Dict[str, float]:
    out = {
        f"{name}/mean_s": mean(times),
        f"{name}/median_s": median(times),
        f"{name}/tokens_per_s": tokens / median(times),
    }
    for k, v in out.items():
        log.info(f"{k:>32s}: {v:.4f}")
    return out


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    attn, dtype = pick_attn_and_dtype(args)
    log.info(f"Loading {args.model} ({dtype}, attn_implementation={attn}) on {args.device}")

    tokenizer = AutoTokenizer.from_pretrained(args.model, revision=args.revision)
    model = AutoModelForCausalLM.from_pretrained(
        args.model,
        revision=args.revision,
        torch_dtype=dtype,
        attn_implementation=attn,
        device_map=args.device,
    )
    model.eval()

    inputs = make_inputs(tokenizer, args.batch_size, args.prompt_len, args.device)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    if args.force_flash_sdp:
        sdp_ctx = torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)
    else:
        import contextlib

        sdp_ctx = contextlib.nullcontext()

    results: Dict[str, object] = {
        "model": args.model,
        "device_name": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "dtype": str(dtype),
        "attn_implementation": attn,
        "batch_size": args.batch_size,
        "prompt_len": args.prompt_len,
        "new_tokens": args.new_tokens,
    }

    with sdp_ctx:
        log.info("Warming up...")
        time_prefill(model, inputs, args.warmup)
        time_generate(model, inputs, 8, args.warmup, pad_id)

        torch.cuda.reset_peak_memory_stats()
        prefill = time_prefill(model, inputs, args.iters)
        results.update(summarize("prefill", prefill, args.batch_size * args.prompt_len))

        decode = time_generate(model, inputs, args.new_tokens, args.iters, pad_id)
        results.update(summarize("generate", decode, args.batch_size * args.new_tokens))

    results["peak_memory_gb"] = torch.cuda.max_memory_allocated() / 1e9
    log.info(f"Peak memory: {results['peak_memory_gb']:.2f} GB")

    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2))
        log.info(f"Wrote {args.output}")


if __name__ == "__main__":
    main()
