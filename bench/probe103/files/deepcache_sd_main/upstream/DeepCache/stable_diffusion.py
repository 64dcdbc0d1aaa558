import os
import time
import random
import argparse
import logging

import numpy as np
import torch
from torchvision.utils import save_image
from transformers import CLIPModel, CLIPProcessor

from diffusers import StableDiffusionPipeline
from DeepCache import DeepCacheSDHelper
from DeepCache.sd.pipeline_stable_diffusion import StableDiffusionPipeline as DeepCacheStableDiffusionPipeline

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
logger = logging.getLogger("deepcache.sd")


def set_random_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    # cudnn determinism only matters for the VAE convs, UNet is attention bound
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def get_prompts(dataset, n):
    if dataset == "coco2017":
        from datasets import load_dataset
        ds = load_dataset("phiyodr/coco2017", split="validation")
        prompts = [sample["captions"][0] for sample in ds]
    elif dataset == "parti":
        from datasets import load_dataset
        ds = load_dataset("nateraw/parti-prompts", split="train")
        prompts = [sample["Prompt"] for sample in ds]
    else:
        prompts = ["a photo of an astronaut on a moon"] * n
    return prompts[:n]


class ClipScorer(object):
    """CLIP score on GPU; keeps the CLIP model in fp32 to match the paper numbers."""

    def __init__(self, name="openai/clip-vit-large-patch14", device="cuda"):
        self.model = CLIPModel.from_pretrained(name).to(device)
        self.processor = CLIPProcessor.from_pretrained(name)
        self.device = device

    @torch.no_grad()
    def __call__(self, images, prompts):
        inputs = self.processor(text=prompts, images=images, return_tensors="pt", padding=True, truncation=True)
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        out = self.model(**inputs)
        img = out.image_embeds / out.image_embeds.norm(dim=-1, keepdim=True)
        txt = out.text_embeds / out.text_embeds.norm(dim=-1, keepdim=True)
        return (100.0 * (img * txt).sum(dim=-1)).clamp(min=0).mean().item()


def timed(fn, *args, **kwargs):
    torch.cuda.synchronize()
    start = time.time()
    out = fn(*args, **kwargs)
    torch.cuda.synchronize()  # wait for the VAE decode before stopping the clock
    return out, time.time() - start


def main(args):
    seed = args.seed
    set_random_seed(seed)
    dtype = torch.float16 if args.fp16 else torch.float32

    baseline_pipe = StableDiffusionPipeline.from_pretrained(args.model, torch_dtype=dtype).to("cuda:0")
    pipe = DeepCacheStableDiffusionPipeline.from_pretrained(args.model, torch_dtype=dtype).to("cuda:0")
    if args.channels_last:
        baseline_pipe.unet.to(memory_format=torch.channels_last)
        pipe.unet.to(memory_format=torch.channels_last)
    baseline_pipe.set_progress_bar_config(disable=True)
    pipe.set_progress_bar_config(disable=True)

    prompts = get_prompts(args.dataset, args.n_prompts)
    scorer = ClipScorer(device="cuda:0") if args.clip_score else None

    # Warmup GPU. Only for testing the speed.
    logger.info("Warming up GPU...")
    for _ in range(2):
        set_random_seed(seed)
        _ = baseline_pipe(prompts[0], output_type="pt").images
        _ = pipe(prompts[0], output_type="pt").images

    base_times, dc_times = [], []
    base_scores, dc_scores = [], []
    os.makedirs(args.output_dir, exist_ok=True)
    for i in range(0, len(prompts), args.bs):
        batch = prompts[i:i + args.bs]

        set_random_seed(seed)
        ori_output, t = timed(baseline_pipe, batch, num_inference_steps=args.steps, output_type="pt")
        base_times.append(t)

        set_random_seed(seed)
        dc_output, t = timed(
            pipe,
            batch,
            num_inference_steps=args.steps,
            cache_interval=args.update_interval,
            cache_layer_id=args.layer,
            cache_block_id=args.block,
            uniform=args.uniform,
            pow=args.pow,
            center=args.center,
            output_type="pt",
        )
        dc_times.append(t)

        if scorer is not None:
            base_scores.append(scorer([img for img in ori_output.images], batch))
            dc_scores.append(scorer([img for img in dc_output.images], batch))
        if i == 0:
            save_image([ori_output.images[0], dc_output.images[0]], f"{args.output_dir}/output.png")
            logger.info("Saved to %s/output.png. Left: Original, Right: DeepCache", args.output_dir)

    use_time = sum(base_times)
    logger.info("Original Pipeline: %.2f seconds", use_time)
    dc_time = sum(dc_times)
    logger.info("DeepCache: %.2f seconds (%.2fx)", dc_time, use_time / max(dc_time, 1e-6))
    if base_scores:
        logger.info("CLIP score original=%.3f deepcache=%.3f", np.mean(base_scores), np.mean(dc_scores))
    mem = torch.cuda.max_memory_allocated() / 2 ** 30
    logger.info("Peak GPU memory: %.2f GiB", mem)


def main_helper(args):
    """Same experiment but through the DeepCacheSDHelper on a stock diffusers pipeline."""
    set_random_seed(args.seed)
    pipe = StableDiffusionPipeline.from_pretrained(args.model, torch_dtype=torch.float16)
    pipe = pipe.to("cuda")
    helper = DeepCacheSDHelper(pipe=pipe)
    helper.set_params(cache_interval=args.update_interval, cache_branch_id=args.layer + 3 * args.block)
    prompt = get_prompts("none", 1)[0]
    _, t0 = timed(pipe, prompt, num_inference_steps=args.steps)
    helper.enable()
    _, t1 = timed(pipe, prompt, num_inference_steps=args.steps)
    helper.disable()
    logger.info("helper mode: %.2fs -> %.2fs", t0, t1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=str, default="runwayml/stable-diffusion-v1-5")
    parser.add_argument("--dataset", type=str, default="none", choices=["none", "coco2017", "parti"])
    parser.add_argument("--n_prompts", type=int, default=8)
    parser.add_argument("--bs", type=int, default=1)
    parser.add_argument("--steps", type=int, default=50)
    # For choosing baseline. If these two are not set, then it will use DeepCache.
    parser.add_argument("--layer", type=int, default=0)
    parser.add_argument("--block", type=int, default=0)
    parser.add_argument("--update_interval", type=int, default=3)
    parser.add_argument("--uniform", action="store_true", default=False)
    parser.add_argument("--pow", type=float, default=None)
    parser.add_argument("--center", type=int, default=None)
    parser.add_argument("--seed", type=int, default=2023)
    parser.add_argument("--fp16", action="store_true", default=True)
    parser.add_argument("--channels_last", action="store_true")
    parser.add_argument("--clip_score", action="store_true")
    parser.add_argument("--helper", action="store_true", help="use DeepCacheSDHelper instead of the patched pipeline")
    parser.add_argument("--output_dir", type=str, default="outputs")
    args = parser.parse_args()
    if args.helper:
        main_helper(args)
    else:
        main(args)
