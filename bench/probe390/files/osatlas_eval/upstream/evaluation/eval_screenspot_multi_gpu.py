"""ScreenSpot / ScreenSpot-v2 evaluation for OS-Atlas-Base-7B with one process per GPU.

    python evaluation/eval_screenspot_multi_gpu.py --model_path OS-Copilot/OS-Atlas-Base-7B \
        --data_dir ./ScreenSpot-v2 --split all --out results/os_atlas_7b.json

Each worker loads its own replica and handles a contiguous shard of the samples; the
main process merges the shards and prints the per-platform accuracy table.
"""
import argparse
import json
import math
import os
import re
import time

import torch
import torch.multiprocessing as mp
from PIL import Image
from tqdm import tqdm
from transformers import AutoProcessor, Qwen2VLForConditionalGeneration
from qwen_vl_utils import process_vision_info

PROMPT = ("In this UI screenshot, what is the position of the element corresponding to the "
          "command \"{}\" (with bbox)?")
BOX_RE = re.compile(r"\((\d+),(\d+)\),\((\d+),(\d+)\)")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_path", type=str, default="OS-Copilot/OS-Atlas-Base-7B")
    parser.add_argument("--data_dir", type=str, required=True)
    parser.add_argument("--split", type=str, default="all", choices=["all", "mobile", "desktop", "web"])
    parser.add_argument("--out", type=str, default="results/screenspot.json")
    parser.add_argument("--num_gpus", type=int, default=-1, help="-1 = all visible GPUs")
    parser.add_argument("--max_pixels", type=int, default=1280 * 28 * 28)
    parser.add_argument("--max_new_tokens", type=int, default=64)
    return parser.parse_args()


def load_samples(data_dir, split):
    splits = ["mobile", "desktop", "web"] if split == "all" else [split]
    samples = []
    for s in splits:
        with open(os.path.join(data_dir, f"screenspot_{s}_v2.json")) as f:
            for item in json.load(f):
                item["platform"] = s
                samples.append(item)
    return samples


def parse_box(text, img_w, img_h):
    m = BOX_RE.search(text)
    if m is None:
        return None
    x1, y1, x2, y2 = [int(v) for v in m.groups()]
    # Qwen2-VL boxes are on a 0-1000 grid
    return [x1 / 1000 * img_w, y1 / 1000 * img_h, x2 / 1000 * img_w, y2 / 1000 * img_h]


def hit(pred_box, gt_xywh):
    if pred_box is None:
        return False
    cx = (pred_box[0] + pred_box[2]) / 2
    cy = (pred_box[1] + pred_box[3]) / 2
    x, y, w, h = gt_xywh
    return x <= cx <= x + w and y <= cy <= y + h


def worker(gpu_id, shard, args, return_dict):
    torch.cuda.set_device(gpu_id)
    device = torch.device(f"cuda:{gpu_id}")
    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16

    model = Qwen2VLForConditionalGeneration.from_pretrained(
        args.model_path,
        torch_dtype=dtype,
        attn_implementation="flash_attention_2",
    ).to(device).eval()
    processor = AutoProcessor.from_pretrained(args.model_path, max_pixels=args.max_pixels)

    results = []
    start = time.time()
    for item in tqdm(shard, desc=f"gpu{gpu_id}", position=gpu_id):
        img_path = os.path.join(args.data_dir, "images", item["img_filename"])
        image = Image.open(img_path)
        w, h = image.size
        messages = [{
            "role": "user",
            "content": [
                {"type": "image", "image": img_path},
                {"type": "text", "text": PROMPT.format(item["instruction"])},
            ],
        }]
        text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        image_inputs, video_inputs = process_vision_info(messages)
        inputs = processor(text=[text], images=image_inputs, videos=video_inputs,
                           padding=True, return_tensors="pt").to(device)
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=args.max_new_tokens, do_sample=False)
        out = out[:, inputs.input_ids.shape[1]:]
        response = processor.batch_decode(out, skip_special_tokens=False)[0]
        pred = parse_box(response, w, h)
        results.append({
            "img_filename": item["img_filename"],
            "instruction": item["instruction"],
            "platform": item["platform"],
            "data_type": item["data_type"],
            "response": response,
            "pred_box": pred,
            "correct": hit(pred, item["bbox"]),
        })
    elapsed = time.time() - start
    peak = torch.cuda.max_memory_allocated(device) / 2 ** 30
    print(f"[gpu{gpu_id}] {len(shard)} samples in {elapsed:.1f}s, peak mem {peak:.1f} GiB")
    return_dict[gpu_id] = results


def summarize(results):
    table = {}
    for platform in ["mobile", "desktop", "web"]:
        for dtype in ["text", "icon"]:
            sub = [r for r in results if r["platform"] == platform and r["data_type"] == dtype]
            if sub:
                table[f"{platform}-{dtype}"] = sum(r["correct"] for r in sub) / len(sub)
    table["avg"] = sum(r["correct"] for r in results) / max(len(results), 1)
    return table


def main():
    args = parse_args()
    samples = load_samples(args.data_dir, args.split)
    num_gpus = torch.cuda.device_count() if args.num_gpus < 0 else args.num_gpus
    assert num_gpus > 0, "no GPU found"
    chunk = math.ceil(len(samples) / num_gpus)
    shards = [samples[i * chunk:(i + 1) * chunk] for i in range(num_gpus)]

    mp.set_start_method("spawn", force=True)
    manager = mp.Manager()
    return_dict = manager.dict()
    procs = []
    for gpu_id in range(num_gpus):
        p = mp.Process(target=worker, args=(gpu_id, shards[gpu_id], args, return_dict))
        p.start()
        procs.append(p)
    for p in procs:
        p.join()

    merged = []
    for gpu_id in range(num_gpus):
        merged.extend(return_dict.get(gpu_id, []))
    table = summarize(merged)
    for k, v in table.items():
        print(f"{k:>16s}: {v * 100:.2f}")

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"summary": table, "results": merged}, f, indent=2)


if __name__ == "__main__":
    main()
