"""
Consistent synthesis with MasaCtrl on Stable Diffusion XL.

    python run_synthesis_sdxl.py --out_dir ./workdir/masactrl_exp_sdxl --gpu 0
"""
import os
import argparse

import torch
import torch.nn.functional as F
from torchvision.utils import save_image
from torchvision.io import read_image

from diffusers import DDIMScheduler, StableDiffusionXLPipeline
from pytorch_lightning import seed_everything

from masactrl.masactrl_utils import AttentionBase
from masactrl.masactrl_utils import regiter_attention_editor_diffusers
from masactrl.masactrl import MutualSelfAttentionControl


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_path", type=str, default="stabilityai/stable-diffusion-xl-base-1.0")
    parser.add_argument("--out_dir", type=str, default="./workdir/masactrl_exp_sdxl")
    parser.add_argument("--gpu", type=int, default=0, help="index of the GPU to run on")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--step", type=int, default=4, help="MasaCtrl start step")
    parser.add_argument("--layer", type=int, default=44, help="MasaCtrl start layer (SDXL has 70)")
    parser.add_argument("--no_xformers", action="store_true")
    return parser.parse_args()


def main():
    args = parse_args()
    torch.cuda.set_device(args.gpu)
    device = torch.device(f"cuda:{args.gpu}")

    scheduler = DDIMScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                              clip_sample=False, set_alpha_to_one=False)
    model = StableDiffusionXLPipeline.from_pretrained(args.model_path, scheduler=scheduler,
                                                      torch_dtype=torch.float16).to(device)
    if not args.no_xformers:
        model.enable_xformers_memory_efficient_attention()

    seed_everything(args.seed)
    os.makedirs(args.out_dir, exist_ok=True)
    sample_count = len(os.listdir(args.out_dir))
    out_dir = os.path.join(args.out_dir, f"sample_{sample_count}")
    os.makedirs(out_dir, exist_ok=True)

    prompts = [
        "A portrait of an old man, facing camera, best quality",
        "A portrait of an old man, facing camera, smiling, best quality",
    ]

    # initialize the noise map
    start_code = torch.randn([1, 4, 128, 128], device=device, dtype=torch.float16)
    start_code = start_code.expand(len(prompts), -1, -1, -1)

    # inference the synthesized image without MasaCtrl
    editor = AttentionBase()
    regiter_attention_editor_diffusers(model, editor)
    image_ori = model(prompts, latents=start_code, guidance_scale=7.5,
                      num_inference_steps=args.steps, output_type="pt").images

    # hijack the attention module and run again with MasaCtrl
    editor = MutualSelfAttentionControl(args.step, args.layer, total_steps=args.steps, model_type="SDXL")
    regiter_attention_editor_diffusers(model, editor)
    image_masactrl = model(prompts, latents=start_code, guidance_scale=7.5,
                           num_inference_steps=args.steps, output_type="pt").images[-1:]

    out_image = torch.cat([image_ori, image_masactrl], dim=0)
    save_image(out_image, os.path.join(out_dir, f"all_step{args.step}_layer{args.layer}.png"))
    save_image(out_image[0], os.path.join(out_dir, f"source_step{args.step}_layer{args.layer}.png"))
    save_image(out_image[1], os.path.join(out_dir, f"without_step{args.step}_layer{args.layer}.png"))
    save_image(out_image[2], os.path.join(out_dir, f"masactrl_step{args.step}_layer{args.layer}.png"))
    print("Syntheiszed images are saved in", out_dir)

    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
