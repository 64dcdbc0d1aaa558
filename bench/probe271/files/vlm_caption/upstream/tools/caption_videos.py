#!/usr/bin/env python
"""Dense / chaptered captions for a folder of videos with a video-language model
(Qwen2-VL-7B-Instruct by default). Used to bootstrap pseudo-labels for dense video
captioning pre-training (timestamps + one sentence per event).

Data-parallel over GPUs: the launcher splits the video list into one shard per GPU and
starts one worker process per shard, pinned with CUDA_VISIBLE_DEVICES.

    python tools/caption_videos.py --video_dir videos/ --out captions.jsonl --num_gpus 8
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import torch
from transformers import AutoProcessor, Qwen2VLForConditionalGeneration

try:
    from qwen_vl_utils import process_vision_info
except ImportError:  # older checkpoints ship the helper inside the repo
    from utils.vision_process import process_vision_info

PROMPT = (
    "Localize every distinct event in this video. For each event output one line in the format "
    "'<start seconds> - <end seconds>: <one-sentence description>'. Cover the whole video."
)
LINE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*(?:s|sec|seconds)?\s*:\s*(.+)$")

VIDEO_EXTS = {".mp4", ".mkv", ".webm", ".avi", ".mov"}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--video_dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--model", default="Qwen/Qwen2-VL-7B-Instruct")
    p.add_argument("--device", default="cuda")
    p.add_argument("--attn_impl", default="flash_attention_2", choices=["flash_attention_2", "sdpa", "eager"])
    p.add_argument("--fps", type=float, default=1.0)
    p.add_argument("--max_pixels", type=int, default=360 * 420)
    p.add_argument("--max_new_tokens", type=int, default=512)
    p.add_argument("--num_gpus", type=int, default=0, help="0 = all visible GPUs")
    p.add_argument("--shard", type=int, default=-1, help="internal: index of the shard this worker handles")
    p.add_argument("--profile", action="store_true", help="profile the first 3 videos with torch.profiler")
    return p.parse_args()


def list_videos(video_dir):
    return sorted(str(p) for p in Path(video_dir).rglob("*") if p.suffix.lower() in VIDEO_EXTS)


def parse_events(text, duration=None):
    events = []
    for line in text.splitlines():
        m = LINE_RE.match(line)
        if not m:
            continue
        start, end, sent = float(m.group(1)), float(m.group(2)), m.group(3).strip()
        if duration is not None:
            end = min(end, duration)
        if end > start and sent:
            events.append({"timestamp": [start, end], "sentence": sent})
    return events


def pick_dtype():
    # bf16 on Ampere+, fp16 on V100/T4
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def load_model(args):
    dtype = pick_dtype()
    model = Qwen2VLForConditionalGeneration.from_pretrained(
        args.model,
        torch_dtype=dtype,
        attn_implementation=args.attn_impl,
        device_map=args.device,
    )
    model.eval()
    processor = AutoProcessor.from_pretrained(args.model, max_pixels=args.max_pixels)
    return model, processor


@torch.inference_mode()
def caption_one(model, processor, video_path, args):
    messages = [{
        "role": "user",
        "content": [
            {"type": "video", "video": video_path, "fps": args.fps, "max_pixels": args.max_pixels},
            {"type": "text", "text": PROMPT},
        ],
    }]
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    image_inputs, video_inputs = process_vision_info(messages)
    inputs = processor(text=[text], images=image_inputs, videos=video_inputs, padding=True, return_tensors="pt")
    inputs = inputs.to(model.device)
    out_ids = model.generate(**inputs, max_new_tokens=args.max_new_tokens, do_sample=False)
    out_ids = out_ids[:, inputs.input_ids.shape[1]:]
    return processor.batch_decode(out_ids, skip_special_tokens=True)[0]


def run_worker(args):
    torch.backends.cuda.matmul.allow_tf32 = True
    videos = list_videos(args.video_dir)
    n = max(args.num_gpus, 1)
    videos = videos[args.shard::n]
    model, processor = load_model(args)

    out_path = "{}.shard{}".format(args.out, args.shard)
    done = set()
    if os.path.exists(out_path):
        with open(out_path) as f:
            done = {json.loads(l)["video"] for l in f}

    prof = None
    if args.profile:
        from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                       schedule=schedule(wait=0, warmup=1, active=2, repeat=1),
                       on_trace_ready=tensorboard_trace_handler("./prof_caption"),
                       record_shapes=True)
        prof.start()

    with open(out_path, "a") as fout:
        for i, vp in enumerate(videos):
            if vp in done:
                continue
            t0 = time.time()
            try:
                text = caption_one(model, processor, vp, args)
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                print("[shard {}] OOM on {}, skipped".format(args.shard, vp), flush=True)
                continue
            torch.cuda.synchronize()
            rec = {"video": vp, "raw": text, "events": parse_events(text), "sec": round(time.time() - t0, 2)}
            fout.write(json.dumps(rec) + "\n")
            fout.flush()
            if prof is not None:
                prof.step()
                if i >= 2:
                    prof.stop()
                    prof = None
            if i % 20 == 0:
                print("[shard {}] {}/{} {:.1f}s peak {:.1f} GB".format(
                    args.shard, i, len(videos), rec["sec"], torch.cuda.max_memory_allocated() / 2 ** 30), flush=True)


def launch(args):
    num_gpus = args.num_gpus or torch.cuda.device_count()
    procs = []
    for gpu in range(num_gpus):
        env = dict(os.environ)
        env["CUDA_VISIBLE_DEVICES"] = str(gpu)
        cmd = [sys.executable, __file__] + sys.argv[1:] + ["--shard", str(gpu), "--num_gpus", str(num_gpus)]
        procs.append(subprocess.Popen(cmd, env=env))
    rc = [p.wait() for p in procs]
    with open(args.out, "w") as fout:
        for gpu in range(num_gpus):
            shard = "{}.shard{}".format(args.out, gpu)
            if os.path.exists(shard):
                with open(shard) as f:
                    fout.write(f.read())
    return max(rc) if rc else 0


if __name__ == "__main__":
    args = parse_args()
    if args.shard >= 0:
        run_worker(args)
    else:
        sys.exit(launch(args))
