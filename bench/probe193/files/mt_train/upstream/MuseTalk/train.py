import argparse
import diffusers
import json
import logging
import math
import os
import time
import numpy as np
import random
import torch
import torch.nn.functional as F
import transformers
import warnings

from accelerate import Accelerator
from accelerate.utils import LoggerType
from accelerate import InitProcessGroupKwargs
from accelerate.logging import get_logger
from accelerate.utils import DistributedDataParallelKwargs
from datetime import timedelta

from diffusers import AutoencoderKL, UNet2DConditionModel
from diffusers.optimization import get_scheduler
from diffusers.utils import check_min_version
from diffusers.utils.import_utils import is_xformers_available
from einops import rearrange
from omegaconf import OmegaConf
from tqdm.auto import tqdm
from transformers import WhisperModel

from musetalk.data.dataset import PortraitDataset
from musetalk.models.unet import PositionalEncoding
from musetalk.loss.basic_loss import set_requires_grad
from musetalk.loss import vgg_face
from musetalk.utils.utils import (
    delete_additional_ckpt,
    seed_everything,
    get_mouth_region,
    process_audio_features,
    save_models
)

logger = get_logger(__name__, log_level="INFO")
warnings.filterwarnings("ignore")
check_min_version("0.10.0.dev0")


class Net(torch.nn.Module):
    def __init__(self, unet: UNet2DConditionModel):
        super().__init__()
        self.unet = unet

    def forward(self, input_latents, timesteps, audio_prompts):
        model_pred = self.unet(
            input_latents,
            timesteps,
            encoder_hidden_states=audio_prompts
        ).sample
        return model_pred


def initialize_models_and_optimizers(cfg, accelerator, weight_dtype):
    model_dict = {}

    model_dict['vae'] = AutoencoderKL.from_pretrained(
        cfg.pretrained_model_name_or_path,
        subfolder=cfg.vae_type,
    )

    unet_config_file = os.path.join(
        cfg.pretrained_model_name_or_path,
        cfg.unet_sub_folder + "/musetalk.json"
    )
    with open(unet_config_file, 'r') as f:
        unet_config = json.load(f)
    model_dict['unet'] = UNet2DConditionModel(**unet_config)

    if not cfg.random_init_unet:
        pretrained_unet_path = os.path.join(cfg.pretrained_model_name_or_path, cfg.unet_sub_folder, "pytorch_model.bin")
        print(f"### Loading existing unet weights from {pretrained_unet_path}. ###")
        checkpoint = torch.load(pretrained_unet_path, map_location=accelerator.device)
        model_dict['unet'].load_state_dict(checkpoint)

    unet_params = [p.numel() for n, p in model_dict['unet'].named_parameters()]
    logger.info(f"unet {sum(unet_params) / 1e6}M-parameter")

    model_dict['vae'].requires_grad_(False)
    model_dict['unet'].requires_grad_(True)

    model_dict['vae'].to(accelerator.device, dtype=weight_dtype)

    model_dict['net'] = Net(model_dict['unet'])
    model_dict['pe'] = PositionalEncoding(d_model=384).to(accelerator.device)

    model_dict['wav2vec'] = WhisperModel.from_pretrained(cfg.whisper_path).to(
        device="cuda", dtype=weight_dtype).eval()
    model_dict['wav2vec'].requires_grad_(False)

    if cfg.solver.enable_xformers_memory_efficient_attention:
        if is_xformers_available():
            model_dict['unet'].enable_xformers_memory_efficient_attention()
        else:
            raise ValueError(
                "xformers is not available. Make sure it is installed correctly"
            )

    if cfg.solver.gradient_checkpointing:
        model_dict['unet'].enable_gradient_checkpointing()

    if cfg.solver.scale_lr:
        learning_rate = (
            cfg.solver.learning_rate
            * cfg.solver.gradient_accumulation_steps
            * cfg.data.train_bs
            * accelerator.num_processes
        )
    else:
        learning_rate = cfg.solver.learning_rate

    if cfg.solver.use_8bit_adam:
        try:
            import bitsandbytes as bnb
        except ImportError:
            raise ImportError(
                "Please install bitsandbytes to use 8-bit Adam. You can do so by running `pip install bitsandbytes`"
            )
        optimizer_cls = bnb.optim.AdamW8bit
    else:
        optimizer_cls = torch.optim.AdamW

    model_dict['trainable_params'] = list(filter(lambda p: p.requires_grad, model_dict['net'].parameters()))
    model_dict['optimizer'] = optimizer_cls(
        model_dict['trainable_params'],
        lr=learning_rate,
        betas=(cfg.solver.adam_beta1, cfg.solver.adam_beta2),
        weight_decay=cfg.solver.adam_weight_decay,
        eps=cfg.solver.adam_epsilon,
    )

    model_dict['lr_scheduler'] = get_scheduler(
        cfg.solver.lr_scheduler,
        optimizer=model_dict['optimizer'],
        num_warmup_steps=cfg.solver.lr_warmup_steps * cfg.solver.gradient_accumulation_steps,
        num_training_steps=cfg.solver.max_train_steps * cfg.solver.gradient_accumulation_steps,
    )
    return model_dict


def initialize_dataloaders(cfg):
    train_dataset = PortraitDataset(cfg={
        'image_size': 256,
        'T': cfg.data.n_sample_frames,
        "sample_method": cfg.data.sample_method,
        'top_k_ratio': cfg.data.top_k_ratio,
        "contorl_face_min_size": cfg.data.contorl_face_min_size,
        "dataset_key": cfg.data.dataset_key,
        "padding_pixel_mouth": cfg.padding_pixel_mouth,
        "whisper_path": cfg.whisper_path,
        "min_face_size": cfg.data.min_face_size,
        "cropping_jaw2edge_margin_mean": cfg.cropping_jaw2edge_margin_mean,
        "cropping_jaw2edge_margin_std": cfg.cropping_jaw2edge_margin_std,
        "crop_type": cfg.crop_type,
        "random_margin_method": cfg.random_margin_method,
    })
    train_dataloader = torch.utils.data.DataLoader(
        train_dataset,
        batch_size=cfg.data.train_bs,
        shuffle=True,
        num_workers=cfg.data.num_workers,
        pin_memory=True,
        persistent_workers=cfg.data.num_workers > 0,
    )
    return train_dataset, train_dataloader


def main(cfg):
    exp_name = cfg.exp_name
    save_dir = f"{cfg.output_dir}/{exp_name}"
    os.makedirs(save_dir, exist_ok=True)

    kwargs = DistributedDataParallelKwargs()
    process_group_kwargs = InitProcessGroupKwargs(timeout=timedelta(seconds=5400))
    accelerator = Accelerator(
        gradient_accumulation_steps=cfg.solver.gradient_accumulation_steps,
        mixed_precision=cfg.solver.mixed_precision,
        log_with=["tensorboard", LoggerType.TENSORBOARD],
        project_dir=os.path.join(save_dir, "./tensorboard"),
        kwargs_handlers=[kwargs, process_group_kwargs],
    )

    # Make one log on every process with the configuration for debugging.
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        level=logging.INFO,
    )
    logger.info(accelerator.state, main_process_only=False)
    if accelerator.is_local_main_process:
        transformers.utils.logging.set_verbosity_warning()
        diffusers.utils.logging.set_verbosity_info()
    else:
        transformers.utils.logging.set_verbosity_error()
        diffusers.utils.logging.set_verbosity_error()

    # If passed along, set the training seed now.
    if cfg.seed is not None:
        print('cfg.seed', cfg.seed, accelerator.process_index)
        seed_everything(cfg.seed + accelerator.process_index)

    # Enable TF32 for faster training on Ampere GPUs,
    # cf https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-devices
    if cfg.solver.allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = True

    weight_dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        weight_dtype = torch.float16
    elif accelerator.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16

    model_dict = initialize_models_and_optimizers(cfg, accelerator, weight_dtype)
    train_dataset, train_dataloader = initialize_dataloaders(cfg)

    if cfg.loss_params.vgg_loss > 0:
        vgg_IN = vgg_face.Vgg19().to(accelerator.device)
        pyramid = vgg_face.ImagePyramide(cfg.loss_params.pyramid_scale, 3).to(accelerator.device)
        vgg_IN.eval()
        downsampler = torch.nn.AvgPool2d(kernel_size=2, stride=2).to(accelerator.device)
    else:
        vgg_IN, pyramid, downsampler = None, None, None

    # Prepare everything with our `accelerator`.
    model_dict['net'], model_dict['optimizer'], train_dataloader, model_dict['lr_scheduler'] = accelerator.prepare(
        model_dict['net'], model_dict['optimizer'], train_dataloader, model_dict['lr_scheduler']
    )

    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / cfg.solver.gradient_accumulation_steps)
    num_train_epochs = math.ceil(cfg.solver.max_train_steps / num_update_steps_per_epoch)

    if accelerator.is_main_process:
        run_time = time.strftime("%Y%m%dT%H%M%S", time.localtime())
        accelerator.init_trackers(exp_name, init_kwargs={"mlflow": {"run_name": run_time}})

    total_batch_size = cfg.data.train_bs * accelerator.num_processes * cfg.solver.gradient_accumulation_steps
    logger.info("***** Running training *****")
    logger.info(f"  Num examples = {len(train_dataset)}")
    logger.info(f"  Num Epochs = {num_train_epochs}")
    logger.info(f"  Instantaneous batch size per device = {cfg.data.train_bs}")
    logger.info(f"  Total train batch size (w. parallel, distributed & accumulation) = {total_batch_size}")
    logger.info(f"  Gradient Accumulation steps = {cfg.solver.gradient_accumulation_steps}")
    logger.info(f"  Total optimization steps = {cfg.solver.max_train_steps}")

    global_step = 0
    first_epoch = 0
    progress_bar = tqdm(range(global_step, cfg.solver.max_train_steps), disable=not accelerator.is_local_main_process)
    progress_bar.set_description("Steps")

    for epoch in range(first_epoch, num_train_epochs):
        model_dict['net'].train()
        train_loss = 0.0
        t_data_start = time.time()
        for step, batch in enumerate(train_dataloader):
            t_data = time.time() - t_data_start
            with accelerator.accumulate(model_dict['net']):
                pixel_values = batch["pixel_values_vid"].to(weight_dtype).to(accelerator.device, non_blocking=True)
                ref_pixel_values = batch["pixel_values_ref_img"].to(weight_dtype).to(accelerator.device, non_blocking=True)
                masked_pixel_values = pixel_values.clone()
                masked_pixel_values[:, :, :, pixel_values.shape[-2] // 2:, :] = -1

                bsz, num_frames, c, h, w = pixel_values.shape
                frames = rearrange(pixel_values, "b f c h w -> (b f) c h w")
                masked = rearrange(masked_pixel_values, "b f c h w -> (b f) c h w")
                refs = rearrange(ref_pixel_values, "b f c h w -> (b f) c h w")

                with torch.no_grad():
                    latents = model_dict['vae'].encode(frames).latent_dist.mode() * model_dict['vae'].config.scaling_factor
                    masked_latents = model_dict['vae'].encode(masked).latent_dist.mode() * model_dict['vae'].config.scaling_factor
                    ref_latents = model_dict['vae'].encode(refs).latent_dist.mode() * model_dict['vae'].config.scaling_factor

                    audio_prompts = process_audio_features(cfg, batch, model_dict['wav2vec'], bsz, num_frames, weight_dtype)
                    audio_prompts = model_dict['pe'](audio_prompts)

                input_latents = torch.cat([masked_latents, ref_latents], dim=1).to(weight_dtype)
                timesteps = torch.tensor([0], device=input_latents.device)

                latents_pred = model_dict['net'](input_latents, timesteps, audio_prompts)
                latents_pred = (1 / model_dict['vae'].config.scaling_factor) * latents_pred
                image_pred = model_dict['vae'].decode(latents_pred.to(model_dict['vae'].dtype)).sample

                loss = cfg.loss_params.l1_loss * F.l1_loss(image_pred.float(), frames.float(), reduction="mean")
                if vgg_IN is not None:
                    pyramide_real = pyramid(downsampler(frames))
                    pyramide_generated = pyramid(downsampler(image_pred))
                    loss_vgg = 0
                    for scale in cfg.loss_params.pyramid_scale:
                        x_vgg = vgg_IN(pyramide_generated['prediction_' + str(scale)])
                        y_vgg = vgg_IN(pyramide_real['prediction_' + str(scale)])
                        for i, weight in enumerate(cfg.loss_params.vgg_layer_weight):
                            value = torch.abs(x_vgg[i] - y_vgg[i].detach()).mean()
                            loss_vgg += value * weight
                    loss = loss + cfg.loss_params.vgg_loss * loss_vgg

                avg_loss = accelerator.gather(loss.repeat(cfg.data.train_bs)).mean()
                train_loss += avg_loss.item() / cfg.solver.gradient_accumulation_steps

                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model_dict['trainable_params'], cfg.solver.max_grad_norm)
                model_dict['optimizer'].step()
                model_dict['lr_scheduler'].step()
                model_dict['optimizer'].zero_grad()

            if accelerator.sync_gradients:
                progress_bar.update(1)
                global_step += 1
                accelerator.log({"train_loss": train_loss}, step=global_step)
                train_loss = 0.0

                if global_step % cfg.checkpointing_steps == 0 and accelerator.is_main_process:
                    save_path = os.path.join(save_dir, f"checkpoint-{global_step}")
                    delete_additional_ckpt(save_dir, cfg.total_limit)
                    accelerator.save_state(save_path)
                    save_models(accelerator, model_dict['net'], save_dir, global_step, cfg, logger=logger)
                    torch.cuda.empty_cache()

            logs = {
                "step_loss": loss.detach().item(),
                "lr": model_dict['lr_scheduler'].get_last_lr()[0],
                "td": f"{t_data:.2f}s",
                "mem": f"{torch.cuda.max_memory_allocated() / 1024 ** 3:.1f}G",
            }
            progress_bar.set_postfix(**logs)
            t_data_start = time.time()

            if global_step >= cfg.solver.max_train_steps:
                break

    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default="./configs/training/stage1.yaml")
    args = parser.parse_args()
    config = OmegaConf.load(args.config)
    main(config)
