"""Prefill / decode latency and peak memory of a LLaVA-style model on one image.

    python scripts/bench_latency.py --model-path liuhaotian/llava-v1.5-7b --image docs/snapshot.png \
        --batch-size 4 --max-new-tokens 128 --iters 10 [--profile --trace-dir ./traces]
"""
import argparse
import json
import statistics
import time

import torch
from PIL import Image

from llava.constants import DEFAULT_IMAGE_TOKEN, IMAGE_TOKEN_INDEX
from llava.conversation import conv_templates
from llava.mm_utils import get_model_name_from_path, process_images, tokenizer_image_token
from llava.model.builder import load_pretrained_model


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-path", required=True)
    parser.add_argument("--model-base", default=None)
    parser.add_argument("--image", required=True)
    parser.add_argument("--conv-mode", default="llava_v1")
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--compile", action="store_true", help="torch.compile the vision tower")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--trace-dir", default="./traces")
    return parser.parse_args()


def build_inputs(args, tokenizer, image_processor, model):
    qs = DEFAULT_IMAGE_TOKEN + "\nDescribe this image in detail."
    conv = conv_templates[args.conv_mode].copy()
    conv.append_message(conv.roles[0], qs)
    conv.append_message(conv.roles[1], None)
    prompt = conv.get_prompt()

    image = Image.open(args.image).convert("RGB")
    images = process_images([image] * args.batch_size, image_processor, model.config)
    images = images.to(model.device, dtype=torch.float16)
    image_sizes = [image.size] * args.batch_size

    input_ids = tokenizer_image_token(prompt, tokenizer, IMAGE_TOKEN_INDEX, return_tensors="pt")
    input_ids = input_ids.unsqueeze(0).repeat(args.batch_size, 1).to(model.device)
    return input_ids, images, image_sizes


@torch.inference_mode()
def time_prefill(model, input_ids, images, image_sizes, iters):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        torch.cuda.synchronize()
        start.record()
        torch.cuda.nvtx.range_push("prefill")
        model(input_ids=input_ids, images=images, image_sizes=image_sizes, use_cache=True)
        torch.cuda.nvtx.range_pop()
        end.record()
        torch.cuda.synchronize()  # wait for end event
        times.append(start.elapsed_time(end))
    return times


@torch.inference_mode()
def time_generate(model, input_ids, images, image_sizes, max_new_tokens, iters):
    times = []
    for _ in range(iters):
        torch.cuda.synchronize()  # drain queued work before starting the clock
        t0 = time.perf_counter()
        out = model.generate(
            input_ids,
            images=images,
            image_sizes=image_sizes,
            do_sample=False,
            max_new_tokens=max_new_tokens,
            min_new_tokens=max_new_tokens,
            use_cache=True,
        )
        torch.cuda.synchronize()  # generation finished on device
        times.append((time.perf_counter() - t0) * 1000.0)
    n_new = out.shape[1]
    return times, n_new


def main():
    args = parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True

    model_name = get_model_name_from_path(args.model_path)
    tokenizer, model, image_processor, _ = load_pretrained_model(
        args.model_path, args.model_base, model_name, device_map="cuda:0")
    model.eval()

    if args.compile:
        vt = model.get_model().get_vision_tower()
        vt.vision_tower = torch.compile(vt.vision_tower, mode="max-autotune")

    input_ids, images, image_sizes = build_inputs(args, tokenizer, image_processor, model)

    # warmup (also triggers compilation / autotuning)
    time_prefill(model, input_ids, images, image_sizes, iters=args.warmup)
    torch.cuda.reset_peak_memory_stats()

    if args.profile:
        from torch.profiler import profile, ProfilerActivity, tensorboard_trace_handler
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     record_shapes=True,
                     on_trace_ready=tensorboard_trace_handler(args.trace_dir)) as prof:
            time_prefill(model, input_ids, images, image_sizes, iters=3)
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=20))

    prefill_ms = time_prefill(model, input_ids, images, image_sizes, iters=args.iters)
    gen_ms, n_new = time_generate(model, input_ids, images, image_sizes, args.max_new_tokens, iters=args.iters)
    peak_gib = torch.cuda.max_memory_allocated() / 2 ** 30

    decode_ms = statistics.median(gen_ms) - statistics.median(prefill_ms)
    result = {
        "model": model_name,
        "device": torch.cuda.get_device_name(0),
        "batch_size": args.batch_size,
        "prefill_ms_p50": statistics.median(prefill_ms),
        "generate_ms_p50": statistics.median(gen_ms),
        "decode_ms_per_token": decode_ms / max(1, args.max_new_tokens),
        "tokens_per_s": args.batch_size * args.max_new_tokens / (statistics.median(gen_ms) / 1000.0),
        "peak_mem_gib": round(peak_gib, 2),
        "peak_reserved_gib": round(torch.cuda.max_memory_reserved() / 2 ** 30, 2),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
