"""Latent consistency distillation for a pretrained motion latent diffusion model (MLD).

Adapted from diffusers/examples/consistency_distillation/train_lcm_distill_sd_wds.py,
stripped of accelerate: single GPU, plain PyTorch loop, fp16/bf16 autocast.
"""
import os
import sys
import time
import logging
import datetime
import os.path as osp

from tqdm.auto import tqdm
from omegaconf import OmegaConf

import diffusers
import transformers
import torch
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter
from diffusers.optimization import get_scheduler

from mld.config import parse_args
from mld.data.get_data import get_dataset
from mld.models.modeltype.mld import MLD
from mld.utils.utils import print_table, set_seed, move_batch_to_device

os.environ["TOKENIZERS_PARALLELISM"] = "false"


def guidance_scale_embedding(w, embedding_dim=512, dtype=torch.float32):
    assert len(w.shape) == 1
    w = w * 1000.0

    half_dim = embedding_dim // 2
    emb = torch.log(torch.tensor(10000.0)) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=dtype) * -emb)
    emb = w.to(dtype)[:, None] * emb[None, :]
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1)
    if embedding_dim % 2 == 1:  # zero pad
        emb = torch.nn.functional.pad(emb, (0, 1))
    assert emb.shape == (w.shape[0], embedding_dim)
    return emb


def append_dims(x, target_dims):
    """Appends dimensions to the end of a tensor until it has target_dims dimensions."""
    dims_to_append = target_dims - x.ndim
    if dims_to_append < 0:
        raise ValueError(f"input has {x.ndim} dims but target_dims is {target_dims}, which is less")
    return x[(...,) + (None,) * dims_to_append]


def scalings_for_boundary_conditions(timestep, sigma_data=0.5, timestep_scaling=10.0):
    c_skip = sigma_data ** 2 / ((timestep / 0.1) ** 2 + sigma_data ** 2)
    c_out = (timestep / 0.1) / ((timestep / 0.1) ** 2 + sigma_data ** 2) ** 0.5
    return c_skip, c_out


def predicted_origin(model_output, timesteps, sample, prediction_type, alphas, sigmas):
    if prediction_type == "epsilon":
        sigmas = extract_into_tensor(sigmas, timesteps, sample.shape)
        alphas = extract_into_tensor(alphas, timesteps, sample.shape)
        pred_x_0 = (sample - sigmas * model_output) / alphas
    elif prediction_type == "v_prediction":
        sigmas = extract_into_tensor(sigmas, timesteps, sample.shape)
        alphas = extract_into_tensor(alphas, timesteps, sample.shape)
        pred_x_0 = alphas * sample - sigmas * model_output
    else:
        raise ValueError(f"Prediction type {prediction_type} currently not supported.")
    return pred_x_0


def extract_into_tensor(a, t, x_shape):
    b, *_ = t.shape
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))


class DDIMSolver:
    def __init__(self, alpha_cumprods, timesteps=1000, ddim_timesteps=50):
        # DDIM sampling parameters
        step_ratio = timesteps // ddim_timesteps
        self.ddim_timesteps = (torch.arange(1, ddim_timesteps + 1) * step_ratio).round().long() - 1
        self.ddim_alpha_cumprods = alpha_cumprods[self.ddim_timesteps]
        self.ddim_alpha_cumprods_prev = torch.cat(
            [alpha_cumprods[:1], alpha_cumprods[self.ddim_timesteps[:-1]]])

    def to(self, device):
        self.ddim_timesteps = self.ddim_timesteps.to(device)
        self.ddim_alpha_cumprods = self.ddim_alpha_cumprods.to(device)
        self.ddim_alpha_cumprods_prev = self.ddim_alpha_cumprods_prev.to(device)
        return self

    def ddim_step(self, pred_x0, pred_noise, timestep_index):
        alpha_cumprod_prev = extract_into_tensor(self.ddim_alpha_cumprods_prev, timestep_index, pred_x0.shape)
        dir_xt = (1.0 - alpha_cumprod_prev).sqrt() * pred_noise
        x_prev = alpha_cumprod_prev.sqrt() * pred_x0 + dir_xt
        return x_prev


@torch.no_grad()
def update_ema(target_params, source_params, rate=0.99):
    for targ, src in zip(target_params, source_params):
        targ.detach().mul_(rate).add_(src, alpha=1 - rate)


def main():
    cfg = parse_args()
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    set_seed(cfg.SEED_VALUE)

    name_time_str = osp.join(cfg.NAME, datetime.datetime.now().strftime("%Y-%m-%dT%H-%M-%S"))
    cfg.output_dir = osp.join(cfg.FOLDER, name_time_str)
    os.makedirs(cfg.output_dir, exist_ok=False)
    os.makedirs(f"{cfg.output_dir}/checkpoints", exist_ok=False)

    writer = SummaryWriter(cfg.output_dir)

    stream_handler = logging.StreamHandler(sys.stdout)
    file_handler = logging.FileHandler(osp.join(cfg.output_dir, 'output.log'))
    handlers = [file_handler, stream_handler]
    logging.basicConfig(level=logging.INFO,
                        format='%(asctime)s %(message)s',
                        datefmt='%m/%d/%Y %H:%M:%S',
                        handlers=handlers)
    logger = logging.getLogger(__name__)

    OmegaConf.save(cfg, osp.join(cfg.output_dir, 'config.yaml'))

    transformers.utils.logging.set_verbosity_warning()
    diffusers.utils.logging.set_verbosity_info()

    logger.info(f"device: {device}, {torch.cuda.device_count()} GPU(s) visible")
    if torch.cuda.is_available():
        logger.info(f"GPU 0: {torch.cuda.get_device_name(0)}")

    dataset = get_dataset(cfg)
    train_dataloader = dataset.train_dataloader()
    val_dataloader = dataset.val_dataloader()

    state_dict = torch.load(cfg.TRAIN.PRETRAINED, map_location="cpu")["state_dict"]
    base_model = MLD(cfg, dataset)

    logger.info(f"Loading pretrained model: {cfg.TRAIN.PRETRAINED}")
    base_model.load_state_dict(state_dict)

    scheduler = base_model.scheduler
    alpha_schedule = torch.sqrt(scheduler.alphas_cumprod)
    sigma_schedule = torch.sqrt(1 - scheduler.alphas_cumprod)
    solver = DDIMSolver(
        scheduler.alphas_cumprod,
        timesteps=scheduler.config.num_train_timesteps,
        ddim_timesteps=cfg.TRAIN.num_ddim_timesteps)

    base_model.to(device)

    vae = base_model.vae
    text_encoder = base_model.text_encoder
    teacher_unet = base_model.denoiser
    base_model.denoiser = None

    vae.requires_grad_(False)
    text_encoder.requires_grad_(False)
    teacher_unet.requires_grad_(False)

    # Apply CFG here
    teacher_unet.time_cond_proj_dim = None

    unet = instantiate_student(cfg, teacher_unet)
    unet.load_state_dict(teacher_unet.state_dict(), strict=False)
    target_unet = instantiate_student(cfg, teacher_unet)
    target_unet.load_state_dict(teacher_unet.state_dict(), strict=False)

    unet = unet.to(device)
    target_unet = target_unet.to(device)
    target_unet.requires_grad_(False)

    # For mixed precision training we cast all non-trainable weights (vae, text_encoder, teacher_unet)
    # to half-precision as these weights are only used for inference, keeping weights in full precision
    # is not required.
    weight_dtype = torch.float32
    if cfg.TRAIN.mixed_precision == "fp16":
        weight_dtype = torch.float16
    elif cfg.TRAIN.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16

    vae.to(device, dtype=weight_dtype)
    text_encoder.to(device, dtype=weight_dtype)
    teacher_unet.to(device)

    solver = solver.to(device)
    alpha_schedule = alpha_schedule.to(device)
    sigma_schedule = sigma_schedule.to(device)

    # Enable TF32 for faster training on Ampere GPUs,
    # cf https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-devices
    if cfg.TRAIN.allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = True

    if cfg.TRAIN.use_8bit_adam:
        import bitsandbytes as bnb
        optimizer_class = bnb.optim.AdamW8bit
    else:
        optimizer_class = torch.optim.AdamW

    optimizer = optimizer_class(
        unet.parameters(),
        lr=cfg.TRAIN.learning_rate,
        betas=(cfg.TRAIN.adam_beta1, cfg.TRAIN.adam_beta2),
        weight_decay=cfg.TRAIN.adam_weight_decay,
        eps=cfg.TRAIN.adam_epsilon)

    lr_scheduler = get_scheduler(
        cfg.TRAIN.lr_scheduler,
        optimizer=optimizer,
        num_warmup_steps=cfg.TRAIN.lr_warmup_steps,
        num_training_steps=cfg.TRAIN.max_train_steps)

    scaler = torch.cuda.amp.GradScaler(enabled=cfg.TRAIN.mixed_precision == "fp16")

    logger.info("***** Running training *****")
    logging.info(f"  Num examples = {len(train_dataloader.dataset)}")
    logging.info(f"  Num Epochs = {cfg.TRAIN.max_train_epochs}")
    logging.info(f"  Instantaneous batch size per device = {cfg.TRAIN.BATCH_SIZE}")
    logging.info(f"  Total optimization steps = {cfg.TRAIN.max_train_steps}")

    global_step = 0
    progress_bar = tqdm(range(0, cfg.TRAIN.max_train_steps), desc="Steps")

    uncond_prompt_embeds = text_encoder([""] * cfg.TRAIN.BATCH_SIZE)

    for epoch in range(cfg.TRAIN.max_train_epochs):
        for step, batch in enumerate(train_dataloader):
            batch = move_batch_to_device(batch, device)
            feats_ref = batch["motion"]
            lengths = batch["length"]
            text = batch['text']

            with torch.no_grad():
                with torch.autocast("cuda", dtype=weight_dtype):
                    latents, _ = vae.encode(feats_ref, lengths)
                    prompt_embeds = text_encoder(text)

            latents = latents.permute(1, 0, 2).float()
            prompt_embeds = prompt_embeds.float()

            noise = torch.randn_like(latents)
            bsz = latents.shape[0]

            # Sample a random timestep for each image t_n ~ U[0, N - k - 1] without bias.
            topk = scheduler.config.num_train_timesteps // cfg.TRAIN.num_ddim_timesteps
            index = torch.randint(0, cfg.TRAIN.num_ddim_timesteps, (bsz,), device=latents.device).long()
            start_timesteps = solver.ddim_timesteps[index]
            timesteps = start_timesteps - topk
            timesteps = torch.where(timesteps < 0, torch.zeros_like(timesteps), timesteps)

            # Get boundary scalings for start_timesteps and (end) timesteps.
            c_skip_start, c_out_start = scalings_for_boundary_conditions(start_timesteps)
            c_skip_start, c_out_start = [append_dims(x, latents.ndim) for x in [c_skip_start, c_out_start]]
            c_skip, c_out = scalings_for_boundary_conditions(timesteps)
            c_skip, c_out = [append_dims(x, latents.ndim) for x in [c_skip, c_out]]

            noisy_model_input = scheduler.add_noise(latents, noise, start_timesteps)

            w = (cfg.TRAIN.w_max - cfg.TRAIN.w_min) * torch.rand((bsz,)) + cfg.TRAIN.w_min
            w_embedding = guidance_scale_embedding(w, embedding_dim=cfg.TRAIN.unet_time_cond_proj_dim)
            w = append_dims(w, latents.ndim)
            w = w.to(device=latents.device, dtype=latents.dtype)
            w_embedding = w_embedding.to(device=latents.device, dtype=latents.dtype)

            with torch.autocast("cuda", enabled=cfg.TRAIN.mixed_precision != "no", dtype=weight_dtype):
                noise_pred = unet(
                    noisy_model_input,
                    start_timesteps,
                    timestep_cond=w_embedding,
                    encoder_hidden_states=prompt_embeds)[0]

                pred_x_0 = predicted_origin(
                    noise_pred,
                    start_timesteps,
                    noisy_model_input,
                    scheduler.config.prediction_type,
                    alpha_schedule,
                    sigma_schedule)

                model_pred = c_skip_start * noisy_model_input + c_out_start * pred_x_0

            with torch.no_grad():
                with torch.autocast("cuda", dtype=weight_dtype):  # teacher runs in half precision
                    cond_teacher_output = teacher_unet(
                        noisy_model_input.to(weight_dtype),
                        start_timesteps,
                        encoder_hidden_states=prompt_embeds.to(weight_dtype))[0]
                    cond_pred_x0 = predicted_origin(
                        cond_teacher_output, start_timesteps, noisy_model_input,
                        scheduler.config.prediction_type, alpha_schedule, sigma_schedule)

                    uncond_teacher_output = teacher_unet(
                        noisy_model_input.to(weight_dtype),
                        start_timesteps,
                        encoder_hidden_states=uncond_prompt_embeds[:bsz].to(weight_dtype))[0]
                    uncond_pred_x0 = predicted_origin(
                        uncond_teacher_output, start_timesteps, noisy_model_input,
                        scheduler.config.prediction_type, alpha_schedule, sigma_schedule)

                    pred_x0 = cond_pred_x0 + w * (cond_pred_x0 - uncond_pred_x0)
                    pred_noise = cond_teacher_output + w * (cond_teacher_output - uncond_teacher_output)
                    x_prev = solver.ddim_step(pred_x0, pred_noise, index)

            with torch.no_grad():
                target_noise_pred = target_unet(
                    x_prev.float(),
                    timesteps,
                    timestep_cond=w_embedding,
                    encoder_hidden_states=prompt_embeds.float())[0]
                pred_x_0 = predicted_origin(
                    target_noise_pred, timesteps, x_prev,
                    scheduler.config.prediction_type, alpha_schedule, sigma_schedule)
                target = c_skip * x_prev + c_out * pred_x_0

            if cfg.TRAIN.loss_type == "l2":
                loss = F.mse_loss(model_pred.float(), target.float(), reduction="mean")
            elif cfg.TRAIN.loss_type == "huber":
                loss = torch.mean(
                    torch.sqrt((model_pred.float() - target.float()) ** 2 + cfg.TRAIN.huber_c ** 2) - cfg.TRAIN.huber_c)

            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(unet.parameters(), cfg.TRAIN.max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            lr_scheduler.step()
            optimizer.zero_grad(set_to_none=True)

            update_ema(target_unet.parameters(), unet.parameters(), cfg.TRAIN.ema_decay)
            progress_bar.update(1)
            global_step += 1

            if global_step % cfg.TRAIN.checkpointing_steps == 0:
                save_path = os.path.join(cfg.output_dir, 'checkpoints', f"checkpoint-{global_step}.ckpt")
                ckpt = dict(state_dict=base_model.state_dict())
                base_model.on_save_checkpoint(ckpt)
                torch.save(ckpt, save_path)
                logger.info(f"Saved state to {save_path}")

            if global_step % cfg.TRAIN.validation_steps == 0:
                base_model.denoiser = unet
                base_model.eval()
                start_event = torch.cuda.Event(enable_timing=True)
                end_event = torch.cuda.Event(enable_timing=True)
                start_event.record()
                for val_batch in tqdm(val_dataloader):
                    val_batch = move_batch_to_device(val_batch, device)
                    base_model.allsplit_step(split='test', batch=val_batch)
                end_event.record()
                torch.cuda.synchronize()
                metrics = base_model.allsplit_epoch_end()
                metrics["Val/AITS"] = start_event.elapsed_time(end_event) / 1000.0 / len(val_dataloader.dataset)
                max_memory = torch.cuda.max_memory_allocated() / 1024 ** 3
                metrics["Val/max_memory_GB"] = max_memory
                print_table(f"Validation@Step-{global_step}", metrics)
                for k, v in metrics.items():
                    writer.add_scalar(k, v, global_step=global_step)
                base_model.denoiser = None
                base_model.train()
                torch.cuda.empty_cache()

            logs = {"loss": loss.item(), "lr": lr_scheduler.get_last_lr()[0]}
            progress_bar.set_postfix(**logs)
            for k, v in logs.items():
                writer.add_scalar(f"Train/{k}", v, global_step=global_step)

            if global_step >= cfg.TRAIN.max_train_steps:
                save_path = os.path.join(cfg.output_dir, 'checkpoints', "checkpoint-last.ckpt")
                ckpt = dict(state_dict=base_model.state_dict())
                base_model.on_save_checkpoint(ckpt)
                torch.save(ckpt, save_path)
                exit(0)


def instantiate_student(cfg, teacher_unet):
    from mld.models.architectures.mld_denoiser import MldDenoiser
    params = dict(cfg.model.denoiser.params)
    params['time_cond_proj_dim'] = cfg.TRAIN.unet_time_cond_proj_dim
    return MldDenoiser(**params)


if __name__ == "__main__":
    main()
