"""Measure AR decoding throughput of a LlamaGen-style GPT with and without torch.compile.

    python tools/benchmark_decode.py --gpt-model GPT-XL --compile --batch-size 16

Reports tokens/s, per-step latency (CUDA events) and peak GPU memory.
"""
import argparse
import time
import contextlib

import torch
import torch._dynamo.config
import torch._inductor.config

from autoregressive.models.gpt import GPT_models
from autoregressive.models.generate import decode_one_token, prefill

try:
    import pynvml
    pynvml.nvmlInit()
    _HAS_NVML = True
except Exception:  # pynvml is optional, only used for the power/util readout
    _HAS_NVML = False


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--gpt-model", type=str, choices=list(GPT_models.keys()), default="GPT-B")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--image-size", type=int, default=256)
    p.add_argument("--downsample-size", type=int, default=16)
    p.add_argument("--cfg-scale", type=float, default=2.0)
    p.add_argument("--precision", type=str, default="bf16", choices=["fp32", "fp16", "bf16"])
    p.add_argument("--compile", action="store_true")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--profile", action="store_true", help="wrap decoding in NVTX ranges for nsys")
    return p.parse_args()


def gpu_util_string(index):
    if not _HAS_NVML:
        return "n/a"
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    util = pynvml.nvmlDeviceGetUtilizationRates(handle)
    power = pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0
    return f"util={util.gpu}% power={power:.0f}W"


@contextlib.contextmanager
def nvtx_range(name, enabled):
    if enabled:
        torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        if enabled:
            torch.cuda.nvtx.range_pop()


def main():
    args = get_args()
    torch.cuda.set_device(args.gpu)
    device = torch.device(f"cuda:{args.gpu}")
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.precision]
    print(f"running on {torch.cuda.get_device_name(device)} (sm_{''.join(map(str, torch.cuda.get_device_capability(device)))})")

    if args.precision == "bf16" and not torch.cuda.is_bf16_supported():
        print("bf16 not supported on this GPU, falling back to fp16")
        dtype = torch.float16

    torch.backends.cuda.matmul.allow_tf32 = True
    torch._inductor.config.coordinate_descent_tuning = True
    torch._inductor.config.triton.unique_kernel_names = True
    torch._inductor.config.fx_graph_cache = True
    torch._dynamo.config.cache_size_limit = 64

    latent_size = args.image_size // args.downsample_size
    model = GPT_models[args.gpt_model](vocab_size=16384, block_size=latent_size ** 2, num_classes=1000,
                                       cls_token_num=1, model_type="c2i").to(device=device, dtype=dtype).eval()

    global decode_one_token
    if args.compile:
        decode_one_token = torch.compile(decode_one_token, mode="reduce-overhead", fullgraph=True)

    bs = args.batch_size
    bs_cfg = bs * 2 if args.cfg_scale > 1.0 else bs
    seq_len = latent_size ** 2
    with torch.device(device):
        model.setup_caches(max_batch_size=bs_cfg, max_seq_length=seq_len + 1, dtype=dtype)

    cond = torch.randint(0, 1000, (bs,), device=device)
    cond_null = torch.full_like(cond, 1000)
    cond_combined = torch.cat([cond, cond_null]) if args.cfg_scale > 1.0 else cond

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    torch.cuda.reset_peak_memory_stats(device)

    timings = []
    for it in range(args.warmup + args.iters):
        input_pos = torch.arange(0, 1, device=device)
        with torch.no_grad(), nvtx_range(f"iter{it}", args.profile):
            start_evt.record()
            tok = prefill(model, cond_combined, input_pos, args.cfg_scale, temperature=1.0, top_k=0, top_p=1.0)
            pos = torch.tensor([1], device=device, dtype=torch.int)
            for _ in range(seq_len - 1):
                tok, _ = decode_one_token(model, tok.view(-1, 1), pos, args.cfg_scale, True,
                                          temperature=1.0, top_k=0, top_p=1.0)
                pos += 1
            end_evt.record()
        torch.cuda.synchronize()
        if it >= args.warmup:
            timings.append(start_evt.elapsed_time(end_evt) / 1000.0)

    mean_t = sum(timings) / len(timings)
    toks = bs * seq_len / mean_t
    peak = torch.cuda.max_memory_allocated(device) / 2 ** 30
    print(f"[{args.gpt_model}] bs={bs} compile={args.compile} -> {mean_t*1000:.1f} ms/img-batch, "
          f"{toks:.0f} tok/s, {mean_t * 1000 / seq_len:.2f} ms/step, peak mem {peak:.2f} GiB, {gpu_util_string(args.gpu)}")
    torch.cuda.empty_cache()


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"total wall time {time.time() - t0:.1f}s")
