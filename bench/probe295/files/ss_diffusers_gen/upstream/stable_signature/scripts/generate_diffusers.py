"""
Generate watermarked images with the diffusers implementation of Stable Diffusion 2.1,
replacing the VAE decoder by the Stable Signature fine-tuned one.

    python scripts/generate_diffusers.py --decoder_ckpt models/sd2_decoder.pth \
        --prompts prompts.txt --output_dir outputs/wm --num_imgs 1000

Tested with diffusers 0.21 / torch 2.0.1+cu118 on A100-80GB (batch 8 at 512px in fp16).
"""
import argparse
import os
import time

import torch
from diffusers import StableDiffusionPipeline, DPMSolverMultistepScheduler
from omegaconf import OmegaConf
from tqdm import tqdm

import sys
sys.path.append('.')
sys.path.append('src')
from ldm.models.autoencoder import AutoencoderKL
import utils_model


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_id", type=str, default="stabilityai/stable-diffusion-2-1-base")
    parser.add_argument("--ldm_config", type=str, default="sd/stable-diffusion-2-1-base/v2-inference.yaml")
    parser.add_argument("--ldm_ckpt", type=str, default="sd/stable-diffusion-2-1-base/v2-1_512-ema-pruned.ckpt")
    parser.add_argument("--decoder_ckpt", type=str, required=True, help="checkpoint_XXX.pth from finetune_ldm_decoder.py")
    parser.add_argument("--prompts", type=str, required=True, help="text file, one prompt per line")
    parser.add_argument("--output_dir", type=str, default="outputs/wm")
    parser.add_argument("--num_imgs", type=int, default=100)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--guidance", type=float, default=7.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no_wm", action="store_true", help="keep the original VAE decoder (baseline images)")
    parser.add_argument("--xformers", type=int, default=1)
    return parser.parse_args()


def load_prompts(path, n):
    with open(path) as f:
        prompts = [l.strip() for l in f if l.strip()]
    reps = (n + len(prompts) - 1) // len(prompts)
    return (prompts * reps)[:n]


def main():
    args = get_args()
    os.makedirs(args.output_dir, exist_ok=True)

    scheduler = DPMSolverMultistepScheduler.from_pretrained(args.model_id, subfolder="scheduler")
    pipe = StableDiffusionPipeline.from_pretrained(args.model_id, scheduler=scheduler, torch_dtype=torch.float16,
                                                   safety_checker=None).to("cuda")
    if args.xformers:
        pipe.enable_xformers_memory_efficient_attention()
    pipe.set_progress_bar_config(disable=True)

    if not args.no_wm:
        # build an ldm AutoencoderKL with the watermarked decoder weights and plug it into the pipeline
        config = OmegaConf.load(args.ldm_config)
        ldm_ae: AutoencoderKL = utils_model.load_model_from_config(config, args.ldm_ckpt).first_stage_model
        ldm_ae = utils_model.load_watermarked_decoder(ldm_ae, args.decoder_ckpt)
        ldm_ae.eval().half()
        ldm_ae.encoder = torch.nn.Identity()
        ldm_ae.quant_conv = torch.nn.Identity()
        # diffusers' vae.decode returns a DecoderOutput; we only need the sample tensor
        pipe.vae.decode = (lambda x, *args, **kwargs: (ldm_ae.decode(x),))

    prompts = load_prompts(args.prompts, args.num_imgs)
    generator = torch.Generator(device="cuda").manual_seed(args.seed)

    start = time.time()
    idx = 0
    for i in tqdm(range(0, len(prompts), args.batch_size)):
        batch = prompts[i:i + args.batch_size]
        with torch.inference_mode():
            images = pipe(batch, num_inference_steps=args.steps, guidance_scale=args.guidance,
                          generator=generator).images
        for img in images:
            img.save(os.path.join(args.output_dir, f"{idx:05d}.png"))
            idx += 1
    torch.cuda.synchronize()
    elapsed = time.time() - start
    print(f"{idx} images in {elapsed:.1f}s ({elapsed / max(idx, 1):.2f}s/img), "
          f"peak mem {torch.cuda.max_memory_allocated() / 2**30:.1f} GB")


if __name__ == "__main__":
    main()
