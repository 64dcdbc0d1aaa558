"""
Copyright [2022-2023] Victor C Hall

Licensed under the GNU Affero General Public License;
You may not use this code except in compliance with the License.
You may obtain a copy of the License at

    https://www.gnu.org/licenses/agpl-3.0.en.html
"""

import argparse
import gc
import json
import logging
import math
import os
import random
import shutil
import signal
import sys
import time
import traceback
from datetime import datetime

import numpy as np
import torch
import torch.nn.functional as F
from colorama import Fore, Style
from diffusers import AutoencoderKL, DDIMScheduler, DDPMScheduler, StableDiffusionPipeline, UNet2DConditionModel
from diffusers.models.attention_processor import AttnProcessor2_0
from diffusers.optimization import get_scheduler
from torch.cuda.amp import GradScaler, autocast
from torch.utils.tensorboard import SummaryWriter
from tqdm.auto import tqdm
from transformers import CLIPTextModel, CLIPTokenizer

from data.data_loader import DataLoaderMultiAspect
from data.every_dream import EveryDreamBatch, build_torch_dataloader
from data.every_dream_validation import EveryDreamValidator
from optimizer.optimizers import EveryDreamOptimizer
from utils.convert_diff_to_ckpt import convert as converter
from utils.gpu import GPU
from utils.huggingface_downloader import try_download_model_from_hf
from utils.isolate_rng import isolate_rng
from utils.sample_generator import SampleGenerator

_SIGTERM_EXIT_CODE = 130
_VERY_LARGE_NUMBER = 1e9


def get_hf_ckpt_cache_path(ckpt_path):
    return os.path.join("ckpt_cache", os.path.basename(ckpt_path))


def convert_to_hf(ckpt_path):
    hf_cache = get_hf_ckpt_cache_path(ckpt_path)
    from utils.unet_utils import get_attn_yaml

    if os.path.isfile(ckpt_path):
        if not os.path.exists(hf_cache):
            os.makedirs(hf_cache)
            logging.info(f"Converting {ckpt_path} to Diffusers format")
            try:
                import utils.convert_original_stable_diffusion_to_diffusers as convert

                convert.convert(ckpt_path, f"ckpt_cache/{ckpt_path}")
            except Exception:
                logging.info("Please manually convert the checkpoint to Diffusers format (one time setup), see readme.")
                exit()
        else:
            logging.info(f"Found cached checkpoint at {hf_cache}")
        is_sd1attn, yaml = get_attn_yaml(hf_cache)
        return hf_cache, is_sd1attn, yaml
    elif os.path.isdir(hf_cache):
        is_sd1attn, yaml = get_attn_yaml(hf_cache)
        return hf_cache, is_sd1attn, yaml
    else:
        is_sd1attn, yaml = get_attn_yaml(ckpt_path)
        return ckpt_path, is_sd1attn, yaml


def setup_local_logger(args):
    """
    configures logger with file and console logging, logs args, and returns the datestamp
    """
    log_path = args.logdir
    os.makedirs(log_path, exist_ok=True)
    datetimestamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    logfilename = os.path.join(log_path, f"{args.project_name}-{datetimestamp}.log")
    logging.basicConfig(filename=logfilename, level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%m/%d/%Y %I:%M:%S %p")
    console_handler = logging.StreamHandler(sys.stdout)
    logging.getLogger().addHandler(console_handler)
    return datetimestamp


def log_optimizer(log_writer: SummaryWriter, optimizer, global_step):
    """
    logs the optimizer settings
    """
    all_params = sum([g["params"] for g in optimizer.param_groups], [])
    lr = optimizer.param_groups[0]["lr"]
    log_writer.add_scalar("hyperparameter/lr", lr, global_step)


def set_args_12gb(args):
    logging.info(" Setting args to 12GB mode")
    if not args.gradient_checkpointing:
        logging.info("  - Overiding gradient checkpointing to True")
        args.gradient_checkpointing = True
    if args.batch_size > 2:
        logging.info("  - Overiding batch size to max 2")
        args.batch_size = 2
        args.grad_accum = 1
    if args.resolution > 512:
        logging.info("  - Overiding resolution to max 512")
        args.resolution = 512


def update_grad_scaler(scaler: GradScaler, global_step, epoch, step):
    if global_step == 500:
        factor = 1.8
        scaler.set_growth_factor(factor)
        scaler.set_backoff_factor(1 / factor)
        scaler.set_growth_interval(100)
    if global_step == 1000:
        factor = 1.6
        scaler.set_growth_factor(factor)
        scaler.set_backoff_factor(1 / factor)
        scaler.set_growth_interval(200)


def get_gpu_memory(nvsmi):
    """
    returns the gpu memory usage
    """
    gpu_query = nvsmi.DeviceQuery("memory.used, memory.total")
    gpu_used_mem = int(gpu_query["gpu"][0]["fb_memory_usage"]["used"])
    gpu_total_mem = int(gpu_query["gpu"][0]["fb_memory_usage"]["total"])
    return gpu_used_mem, gpu_total_mem


def main(args):
    """
    Main entry point
    """
    if os.name == "nt":
        print(" * Windows detected, disabling Triton")
        os.environ["XFORMERS_FORCE_DISABLE_TRITON"] = "1"

    log_time = setup_local_logger(args)
    args = setup_args(args)

    seed = args.seed if args.seed != -1 else random.randint(0, 2**30)
    logging.info(f" Seed: {seed}")
    set_seed(seed)

    if torch.cuda.is_available():
        device = torch.device(f"cuda:{args.gpuid}")
        gpu = GPU(device)
        torch.backends.cudnn.benchmark = True
    else:
        logging.warning("*** Running on CPU. This is for testing loading/config parsing code only.")
        device = "cpu"
        gpu = None

    log_folder = os.path.join(args.logdir, f"{args.project_name}_{log_time}")
    os.makedirs(log_folder, exist_ok=True)

    model_root_folder, is_sd1attn, yaml = convert_to_hf(args.resume_ckpt)
    text_encoder = CLIPTextModel.from_pretrained(model_root_folder, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(model_root_folder, subfolder="vae")
    unet = UNet2DConditionModel.from_pretrained(model_root_folder, subfolder="unet")
    reference_scheduler = DDIMScheduler.from_pretrained(model_root_folder, subfolder="scheduler")
    noise_scheduler = DDPMScheduler.from_pretrained(model_root_folder, subfolder="scheduler")
    tokenizer = CLIPTokenizer.from_pretrained(model_root_folder, subfolder="tokenizer", use_fast=False)

    if args.gradient_checkpointing:
        unet.enable_gradient_checkpointing()
        text_encoder.gradient_checkpointing_enable()

    if args.attn_type == "xformers":
        if (args.amp and is_sd1attn) or (not is_sd1attn):
            try:
                unet.enable_xformers_memory_efficient_attention()
                logging.info("Enabled xformers")
            except Exception as ex:
                logging.warning("failed to load xformers, using default SDP attention instead")
                unet.set_attn_processor(AttnProcessor2_0())
        elif (args.disable_amp and is_sd1attn):
            logging.info("AMP is disabled but model is SD1.X, xformers is incompatible so using default attention")
    elif args.attn_type == "slice":
        unet.set_attention_slice("auto")
    else:
        logging.info("* Using SDP attention *")

    vae = vae.to(device, dtype=torch.float16 if args.amp else torch.float32)
    unet = unet.to(device, dtype=torch.float32)
    if args.disable_textenc_training and args.amp:
        text_encoder = text_encoder.to(device, dtype=torch.float16)
    else:
        text_encoder = text_encoder.to(device, dtype=torch.float32)

    ed_optimizer = EveryDreamOptimizer(args, args.optimizer_config, text_encoder, unet, epoch_len=args.max_epochs, log_writer=None)

    log_writer = SummaryWriter(log_dir=log_folder, flush_secs=20, comment=args.run_name if args.run_name is not None else log_time)

    data_loader = DataLoaderMultiAspect(image_train_items=args.image_train_items, seed=seed, batch_size=args.batch_size)
    train_batch = EveryDreamBatch(data_loader=data_loader, debug_level=1, conditional_dropout=args.cond_dropout, tokenizer=tokenizer, seed=seed)
    train_dataloader = build_torch_dataloader(train_batch, batch_size=args.batch_size)

    sample_generator = SampleGenerator(
        log_folder=log_folder,
        log_writer=log_writer,
        default_resolution=args.resolution,
        default_seed=args.seed,
        config_file_path=args.sample_prompts,
        batch_size=max(1, args.batch_size // 2),
        default_sample_steps=args.sample_steps,
        use_xformers=args.attn_type == "xformers",
        use_penultimate_clip_layer=(args.clip_skip >= 2),
        guidance_rescale=0.7 if args.enable_zero_terminal_snr else 0,
    )

    def get_model_prediction_and_target(image, tokens, zero_frequency_noise_ratio=0.0):
        with torch.no_grad():
            with autocast(enabled=args.amp):
                pixel_values = image.to(memory_format=torch.contiguous_format).to(unet.device)
                latents = vae.encode(pixel_values, return_dict=False)
            del pixel_values
            latents = latents[0].sample() * 0.18215

            noise = torch.randn_like(latents)
            if zero_frequency_noise_ratio != None:
                if zero_frequency_noise_ratio < 0:
                    zero_frequency_noise_ratio = 0
                # see https://www.crosslabs.org//blog/diffusion-with-offset-noise
                zero_frequency_noise = zero_frequency_noise_ratio * torch.randn(latents.shape[0], latents.shape[1], 1, 1, device=latents.device)
                noise = noise + zero_frequency_noise

            bsz = latents.shape[0]
            timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (bsz,), device=latents.device)
            timesteps = timesteps.long()

            cuda_caption = tokens.to(text_encoder.device)

        encoder_hidden_states = text_encoder(cuda_caption, output_hidden_states=True)
        if args.clip_skip > 0:
            encoder_hidden_states = text_encoder.text_model.final_layer_norm(encoder_hidden_states.hidden_states[-args.clip_skip])
        else:
            encoder_hidden_states = encoder_hidden_states.last_hidden_state

        noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps)
        target = noise if noise_scheduler.config.prediction_type == "epsilon" else noise_scheduler.get_velocity(latents, noise, timesteps)
        del noise, latents, cuda_caption

        with autocast(enabled=args.amp):
            model_pred = unet(noisy_latents, timesteps, encoder_hidden_states).sample

        return model_pred, target

    global_step = 0
    training_start_time = time.time()
    loss_log_step = []

    torch.cuda.empty_cache()
    try:
        for epoch in range(args.max_epochs):
            epoch_start_time = time.time()
            steps_pbar = tqdm(range(len(train_dataloader)), position=1, leave=False, dynamic_ncols=True)
            for step, full_batch in enumerate(train_dataloader):
                step_start_time = time.time()
                model_pred, target = get_model_prediction_and_target(full_batch["image"], full_batch["tokens"], args.zero_frequency_noise_ratio)
                loss = F.mse_loss(model_pred.float(), target.float(), reduction="mean")
                del target, model_pred

                ed_optimizer.step(loss, step, global_step)

                if args.amp:
                    update_grad_scaler(ed_optimizer.scaler, global_step, epoch, step)

                loss_step = loss.detach().item()
                loss_log_step.append(loss_step)
                steps_pbar.update(1)

                if (global_step + 1) % args.log_step == 0:
                    loss_local = sum(loss_log_step) / len(loss_log_step)
                    loss_log_step = []
                    if gpu is not None:
                        gpu_used_mem, gpu_total_mem = gpu.get_gpu_memory()
                        log_writer.add_scalar("performance/vram", gpu_used_mem, global_step)
                    log_writer.add_scalar("loss/log_step", loss_local, global_step)
                    log_optimizer(log_writer, ed_optimizer.optimizer_unet, global_step)

                if (global_step + 1) % args.sample_steps == 0:
                    with isolate_rng():
                        sample_generator.generate_samples(unet=unet, text_encoder=text_encoder, vae=vae, tokenizer=tokenizer, gs=global_step)
                    torch.cuda.empty_cache()  # after sampling

                global_step += 1
            steps_pbar.close()
            logging.info(f"epoch {epoch} done in {time.time() - epoch_start_time:.1f}s")
    except Exception as ex:
        logging.error(f"{Fore.LIGHTYELLOW_EX}Something went wrong, attempting to save model{Style.RESET_ALL}")
        raise ex

    logging.info(f"{Fore.LIGHTWHITE_EX} ***************************{Style.RESET_ALL}")
    logging.info(f"{Fore.LIGHTWHITE_EX} **** Finished training ****{Style.RESET_ALL}")
    logging.info(f"{Fore.LIGHTWHITE_EX} ***************************{Style.RESET_ALL}")


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_args(args):
    if args.disable_amp:
        logging.warning(f"{Fore.LIGHTYELLOW_EX} Disabling AMP, not recommended.{Style.RESET_ALL}")
        args.amp = False
    else:
        args.amp = True
    if args.useadam8bit:
        logging.warning(f"{Fore.LIGHTYELLOW_EX} Useadam8bit arg is deprecated, use optimizer.json instead{Style.RESET_ALL}")
    if args.lowvram:
        set_args_12gb(args)
    if not args.shuffle_tags:
        args.shuffle_tags = False
    args.clip_skip = max(min(4, args.clip_skip), 0)
    return args


if __name__ == "__main__":
    supported_resolutions = [256, 384, 448, 512, 576, 640, 704, 768, 832, 896, 960, 1024, 1088, 1152]
    argparser = argparse.ArgumentParser(description="EveryDream2 Training options")
    argparser.add_argument("--config", type=str, required=False, default=None, help="JSON config file to load options from")
    argparser.add_argument("--amp", action="store_true", default=True, help="deprecated, use --disable_amp if you wish to disable AMP")
    argparser.add_argument("--attn_type", type=str, default="sdp", help="Attention mechanismto use", choices=["xformers", "sdp", "slice"])
    argparser.add_argument("--batch_size", type=int, default=2, help="Batch size (def: 2)")
    argparser.add_argument("--clip_skip", type=int, default=0, help="Train using penultimate layer (def: 0) (2 is 'penultimate')", choices=[0, 1, 2, 3, 4])
    argparser.add_argument("--disable_amp", action="store_true", default=False, help="disables automatic mixed precision (def: False)")
    argparser.add_argument("--disable_textenc_training", action="store_true", default=False, help="disables training of text encoder (def: False)")
    argparser.add_argument("--gpuid", type=int, default=0, help="id of gpu to use for training, (def: 0) (ex: 1 to use GPU_ID 1), use nvidia-smi to find your GPU ids")
    argparser.add_argument("--gradient_checkpointing", action="store_true", default=False, help="enable gradient checkpointing to reduce VRAM use, may reduce performance (def: False)")
    argparser.add_argument("--lowvram", action="store_true", default=False, help="automatically overrides various args to support 12GB gpu")
    argparser.add_argument("--logdir", type=str, default="logs", help="folder to save logs to (def: logs)")
    argparser.add_argument("--log_step", type=int, default=25, help="How often to log training stats, def: 25, recommend default!")
    argparser.add_argument("--max_epochs", type=int, default=300, help="Maximum number of epochs to train for")
    argparser.add_argument("--optimizer_config", default="optimizer.json", help="Path to a JSON configuration file for the optimizer.  Default is 'optimizer.json'")
    argparser.add_argument("--project_name", type=str, default="myproj", help="Project name for logs and checkpoints")
    argparser.add_argument("--resolution", type=int, default=512, help="resolution to train", choices=supported_resolutions)
    argparser.add_argument("--resume_ckpt", type=str, required=not ("--config" in sys.argv), default="sd_v1-5_vae.ckpt")
    argparser.add_argument("--run_name", type=str, required=False, default=None, help="Run name for wandb (child of project name), and comment for tensorboard")
    argparser.add_argument("--sample_prompts", type=str, default="sample_prompts.txt", help="Text file with prompts to generate test samples from")
    argparser.add_argument("--sample_steps", type=int, default=250, help="Number of steps between samples (def: 250)")
    argparser.add_argument("--seed", type=int, default=555, help="seed used for samples and shuffling, use -1 for random")
    argparser.add_argument("--shuffle_tags", action="store_true", default=False, help="randomly shuffles CSV tags in captions, for booru datasets")
    argparser.add_argument("--useadam8bit", action="store_true", default=False, help="deprecated, use optimizer.json instead")
    argparser.add_argument("--zero_frequency_noise_ratio", type=float, default=0.02, help="adds zero frequency noise, for improving contrast (def: 0.0) use 0.0 to 0.15")
    argparser.add_argument("--enable_zero_terminal_snr", action="store_true", default=None, help="Use zero terminal SNR noising beta schedule")

    args, argv = argparser.parse_known_args()
    main(args)
