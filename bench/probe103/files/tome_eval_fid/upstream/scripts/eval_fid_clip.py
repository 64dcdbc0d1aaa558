"""FID / CLIP-score sweep for ToMe and DeepCache settings on COCO-2017 captions.

Generates N images per setting with a fixed seed schedule, then scores them
against the COCO val images with torchmetrics. Everything runs on one GPU:

    python scripts/eval_fid_clip.py --model runwayml/stable-diffusion-v1-5 \
        --tome-ratios 0 0.3 0.5 --deepcache-intervals 1 3 --num-images 5000
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchmetrics.image.fid import FrechetInceptionDistance
from torchmetrics.multimodal.clip_score import CLIPScore
from tqdm import tqdm

import tomesd
from diffusers import DPMSolverMultistepScheduler, StableDiffusionPipeline
from DeepCache import DeepCacheSDHelper


class CocoCaptions(Dataset):
    def __init__(self, root, split="val2017", resolution=512, limit=None):
        from PIL import Image  # noqa: F401  (lazy: only needed for real images)
        with open(os.path.join(root, "annotations", f"captions_{split}.json")) as f:
            anns = json.load(f)
        by_image = {}
        for a in anns["annotations"]:
            by_image.setdefault(a["image_id"], a["caption"])
        self.items = [(os.path.join(root, split, f"{i:012d}.jpg"), c) for i, c in sorted(by_image.items())]
        if limit is not None:
            self.items = self.items[:limit]
        self.resolution = resolution

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        from PIL import Image
        path, caption = self.items[idx]
        img = Image.open(path).convert("RGB").resize((self.resolution, self.resolution), Image.BICUBIC)
        img = torch.from_numpy(np.asarray(img).copy()).permute(2, 0, 1)  # uint8 CHW
        return img, caption


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="runwayml/stable-diffusion-v1-5")
    p.add_argument("--coco-root", default="data/coco")
    p.add_argument("--num-images", type=int, default=5000)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--guidance", type=float, default=7.5)
    p.add_argument("--tome-ratios", type=float, nargs="+", default=[0.0, 0.5])
    p.add_argument("--deepcache-intervals", type=int, nargs="+", default=[1])
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--fp16", action="store_true", default=True)
    p.add_argument("--flash", action="store_true", help="force the FlashAttention SDPA backend")
    p.add_argument("--out", default="results/fid_clip.jsonl")
    return p.parse_args()


@torch.no_grad()
def generate(pipe, captions, seed, steps, guidance, device):
    generator = torch.Generator(device=device).manual_seed(seed)
    out = pipe(list(captions), num_inference_steps=steps, guidance_scale=guidance,
               generator=generator, output_type="pt").images
    return (out * 255).round().to(torch.uint8)


def main():
    args = parse_args()
    torch.cuda.set_device(args.gpu)
    device = torch.device("cuda", args.gpu)
    dtype = torch.float16 if args.fp16 else torch.float32
    torch.backends.cudnn.benchmark = True

    pipe = StableDiffusionPipeline.from_pretrained(args.model, torch_dtype=dtype, safety_checker=None)
    pipe.scheduler = DPMSolverMultistepScheduler.from_config(pipe.scheduler.config)
    pipe = pipe.to(device)
    pipe.set_progress_bar_config(disable=True)

    dataset = CocoCaptions(args.coco_root, limit=args.num_images)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=False, num_workers=8, pin_memory=True, drop_last=False)

    fid = FrechetInceptionDistance(feature=2048, normalize=False).cuda()
    clip = CLIPScore(model_name_or_path="openai/clip-vit-large-patch14").cuda()

    # real statistics are shared across settings
    for real, _ in tqdm(loader, desc="real"):
        fid.update(real.cuda(non_blocking=True), real=True)
    real_state = {k: v.clone() for k, v in fid.state_dict().items()}

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    for ratio in args.tome_ratios:
        for interval in args.deepcache_intervals:
            tomesd.remove_patch(pipe)
            if ratio > 0:
                tomesd.apply_patch(pipe, ratio=ratio)
            helper = None
            if interval > 1:
                helper = DeepCacheSDHelper(pipe=pipe)
                helper.set_params(cache_interval=interval, cache_branch_id=0)
                helper.enable()

            fid.reset()
            fid.load_state_dict(real_state, strict=False)
            clip.reset()

            torch.cuda.synchronize()
            t0 = time.time()
            for i, (_, captions) in enumerate(tqdm(loader, desc=f"tome={ratio} dc={interval}")):
                with torch.autocast("cuda", dtype=dtype):
                    if args.flash:
                        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
                            fake = generate(pipe, captions, 1234 + i, args.steps, args.guidance, device)
                    else:
                        fake = generate(pipe, captions, 1234 + i, args.steps, args.guidance, device)
                fid.update(fake, real=False)
                clip.update(fake, list(captions))
            torch.cuda.synchronize()  # end of generation loop
            elapsed = time.time() - t0

            if helper is not None:
                helper.disable()

            row = {
                "tome_ratio": ratio,
                "deepcache_interval": interval,
                "fid": float(fid.compute()),
                "clip": float(clip.compute()),
                "sec_per_image": elapsed / len(dataset),
                "peak_mem_gb": torch.cuda.max_memory_allocated() / 2 ** 30,
                "gpu": torch.cuda.get_device_name(args.gpu),
            }
            print(json.dumps(row))
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")
            torch.cuda.reset_peak_memory_stats()


if __name__ == "__main__":
    main()
