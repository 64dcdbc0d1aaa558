"""
Train a SAR despeckling diffusion model (SAR-DDPM).

The model is conditioned on the speckled image: the noisy SAR patch is
concatenated to the diffusion state at every step, and the network learns to
generate the clean (multi-look / synthetic) reflectivity.
"""

import argparse

import torch as th

from guided_diffusion import dist_util, logger
from guided_diffusion.image_datasets import load_data_sar
from guided_diffusion.resample import create_named_schedule_sampler
from guided_diffusion.script_util import (
    sr_model_and_diffusion_defaults,
    sr_create_model_and_diffusion,
    args_to_dict,
    add_dict_to_argparser,
)
from guided_diffusion.train_util import TrainLoop


train_path = "./data/SAR_despeckling/train/"
val_path = "./data/SAR_despeckling/val/"


def main():
    args = create_argparser().parse_args()

    dist_util.setup_dist()
    logger.configure(dir=args.log_dir)

    logger.log("creating model...")
    model, diffusion = sr_create_model_and_diffusion(
        **args_to_dict(args, sr_model_and_diffusion_defaults().keys())
    )

    if args.pretrained_model:
        # start from the ImageNet 256x256 unconditional model, the first
        # conv is re-initialised because of the extra conditioning channels
        pretrained = dist_util.load_state_dict(args.pretrained_model, map_location="cpu")
        own = model.state_dict()
        pretrained = {k: v for k, v in pretrained.items() if k in own and own[k].shape == v.shape}
        model.load_state_dict(pretrained, strict=False)
        logger.log(f"loaded {len(pretrained)} tensors from {args.pretrained_model}")

    model.to(dist_util.dev())
    schedule_sampler = create_named_schedule_sampler(args.schedule_sampler, diffusion)

    logger.log("creating data loader...")
    data = load_sar_data(
        train_path,
        args.batch_size,
        large_size=args.large_size,
        small_size=args.small_size,
    )
    val_data = load_sar_data(
        val_path,
        1,
        large_size=args.large_size,
        small_size=args.small_size,
        deterministic=True,
    )

    logger.log("training...")
    TrainLoop(
        model=model,
        diffusion=diffusion,
        data=data,
        val_dat=val_data,
        batch_size=args.batch_size,
        microbatch=args.microbatch,
        lr=args.lr,
        ema_rate=args.ema_rate,
        log_interval=args.log_interval,
        save_interval=args.save_interval,
        resume_checkpoint=args.resume_checkpoint,
        use_fp16=args.use_fp16,
        fp16_scale_growth=args.fp16_scale_growth,
        schedule_sampler=schedule_sampler,
        weight_decay=args.weight_decay,
        lr_anneal_steps=args.lr_anneal_steps,
        max_steps=args.max_steps,
    ).run_loop()


def load_sar_data(data_dir, batch_size, large_size, small_size, deterministic=False):
    data = load_data_sar(
        data_dir=data_dir,
        batch_size=batch_size,
        image_size=large_size,
        class_cond=False,
        deterministic=deterministic,
    )
    for clean, model_kwargs in data:
        # model_kwargs["SR"] holds the speckled image (single look, log-scaled)
        yield clean, model_kwargs


def create_argparser():
    defaults = dict(
        log_dir="./logs/sarddpm",
        schedule_sampler="uniform",
        lr=1e-4,
        weight_decay=0.0,
        lr_anneal_steps=0,
        max_steps=50000,
        batch_size=2,
        microbatch=-1,
        ema_rate="0.9999",
        log_interval=100,
        save_interval=2000,
        resume_checkpoint="",
        pretrained_model="./weights/256x256_diffusion_uncond.pt",
        use_fp16=False,
        fp16_scale_growth=1e-3,
    )
    defaults.update(sr_model_and_diffusion_defaults())
    parser = argparse.ArgumentParser()
    add_dict_to_argparser(parser, defaults)
    return parser


if __name__ == "__main__":
    main()
