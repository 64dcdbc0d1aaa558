import os
import sys
try:
    import utils

    from diffusion import create_diffusion
    from download import find_model
except:
    sys.path.append(os.path.split(sys.path[0])[0])

    import utils

    from diffusion import create_diffusion
    from download import find_model

import torch
import argparse
import torchvision

from einops import rearrange
from models import get_models
from torchvision.utils import save_image
from diffusers.schedulers import (DDIMScheduler, DDPMScheduler, PNDMScheduler,
                                  EulerDiscreteScheduler, DPMSolverMultistepScheduler,
                                  HeunDiscreteScheduler, EulerAncestralDiscreteScheduler,
                                  DEISMultistepScheduler, KDPM2AncestralDiscreteScheduler)
from diffusers.schedulers.scheduling_dpmsolver_singlestep import DPMSolverSinglestepScheduler
from diffusers.models import AutoencoderKL, AutoencoderKLTemporalDecoder
from omegaconf import OmegaConf
from transformers import T5EncoderModel, T5Tokenizer

import imageio
from sample.pipeline_videogen import VideoGenPipeline


def build_scheduler(args):
    common = dict(beta_start=args.beta_start, beta_end=args.beta_end, beta_schedule=args.beta_schedule,
                  variance_type=args.variance_type)
    if args.sample_method == 'DDIM':
        return DDIMScheduler.from_pretrained(args.pretrained_model_path, subfolder="scheduler", **common)
    elif args.sample_method == 'EulerDiscrete':
        return EulerDiscreteScheduler.from_pretrained(args.pretrained_model_path, subfolder="scheduler", **common)
    elif args.sample_method == 'DDPM':
        return DDPMScheduler.from_pretrained(args.pretrained_model_path, subfolder="scheduler", **common)
    elif args.sample_method == 'DPMSolverMultistep':
        return DPMSolverMultistepScheduler.from_pretrained(args.pretrained_model_path, subfolder="scheduler", **common)
    elif args.sample_method == 'DPMSolverSinglestep':
        return DPMSolverSinglestepScheduler.from_pretrained(args.pretrained_model_path, subfolder="scheduler", **common)
    elif args.sample_method == 'PNDM':
        return PNDMScheduler.from_pretrained(args.pretrained_model_path, subfolder="scheduler", **common)
    elif args.sample_method == 'HeunDiscrete':
        return HeunDiscreteScheduler.from_pretrained(args.pretrained_model_path, subfolder="scheduler", **common)
    elif args.sample_method == 'EulerAncestralDiscrete':
        return EulerAncestralDiscreteScheduler.from_pretrained(args.pretrained_model_path, subfolder="scheduler", **common)
    elif args.sample_method == 'DEISMultistep':
        return DEISMultistepScheduler.from_pretrained(args.pretrained_model_path, subfolder="scheduler", **common)
    elif args.sample_method == 'KDPM2AncestralDiscrete':
        return KDPM2AncestralDiscreteScheduler.from_pretrained(args.pretrained_model_path, subfolder="scheduler", **common)
    raise ValueError(f"unknown sample_method {args.sample_method}")


def main(args):
    # torch.manual_seed(args.seed)
    torch.set_grad_enabled(False)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    # bf16 only pays off on Ampere and newer; older cards stay on fp16
    dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16

    transformer_model = get_models(args).to(device, dtype=dtype)

    if args.enable_vae_temporal_decoder:
        vae = AutoencoderKLTemporalDecoder.from_pretrained(args.pretrained_model_path, subfolder="vae_temporal_decoder", torch_dtype=dtype).to(device)
    else:
        vae = AutoencoderKL.from_pretrained(args.pretrained_model_path, subfolder="vae", torch_dtype=dtype).to(device)
    tokenizer = T5Tokenizer.from_pretrained(args.pretrained_model_path, subfolder="tokenizer")
    text_encoder = T5EncoderModel.from_pretrained(args.pretrained_model_path, subfolder="text_encoder", torch_dtype=dtype).to(device)

    # set eval mode
    transformer_model.eval()
    vae.eval()
    text_encoder.eval()

    if args.use_compile:
        transformer_model = torch.compile(transformer_model)

    scheduler = build_scheduler(args)

    videogen_pipeline = VideoGenPipeline(vae=vae,
                                         text_encoder=text_encoder,
                                         tokenizer=tokenizer,
                                         scheduler=scheduler,
                                         transformer=transformer_model).to(device)
    videogen_pipeline.enable_xformers_memory_efficient_attention()

    if not os.path.exists(args.save_img_path):
        os.makedirs(args.save_img_path)

    video_grids = []
    for num_prompt, prompt in enumerate(args.text_prompt):
        print('Processing the ({}) prompt'.format(prompt))
        videos = videogen_pipeline(prompt,
                                   video_length=args.video_length,
                                   height=args.image_size[0],
                                   width=args.image_size[1],
                                   num_inference_steps=args.num_sampling_steps,
                                   guidance_scale=args.guidance_scale,
                                   enable_temporal_attentions=args.enable_temporal_attentions,
                                   num_images_per_prompt=1,
                                   mask_feature=True,
                                   enable_vae_temporal_decoder=args.enable_vae_temporal_decoder
                                   ).video
        if videos.shape[1] == 1:
            try:
                save_image(videos[0][0], args.save_img_path + prompt.replace(' ', '_') + '.png')
            except:
                save_image(videos[0][0], args.save_img_path + str(num_prompt) + '.png')
                print('Error when saving {}'.format(prompt))
        else:
            try:
                imageio.mimwrite(args.save_img_path + prompt.replace(' ', '_') + '_%04d' % args.run_time + '.mp4', videos[0], fps=8, quality=9)  # highest quality is 10, lowest is 0
            except:
                print('Error when saving {}'.format(prompt))
        video_grids.append(videos)
        torch.cuda.empty_cache()

    video_grids = torch.cat(video_grids, dim=0)

    # torchvision.io.write_video(args.save_img_path + '_%04d' % args.run_time + '-.mp4', video_grids, fps=6)
    video_grids = utils.save_video_grid(video_grids)

    # torchvision.io.write_video(args.save_img_path + '_%04d' % args.run_time + '-.mp4', video_grids, fps=6)
    imageio.mimwrite(args.save_img_path + '_%04d' % args.run_time + '-.mp4', video_grids, fps=8, quality=5)
    print('save path {}'.format(args.save_img_path))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default="./configs/t2x/t2v_sample.yaml")
    args = parser.parse_args()

    main(OmegaConf.load(args.config))
