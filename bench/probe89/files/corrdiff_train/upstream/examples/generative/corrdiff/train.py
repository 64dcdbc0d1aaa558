# SPDX-License-Identifier: Apache-2.0
"""Train the regression UNet and the residual diffusion model of CorrDiff
(km-scale atmospheric downscaling from a coarse global model onto a regional grid)."""

import json
import os
import time

import hydra
import numpy as np
import psutil
import torch
import wandb
from hydra.utils import to_absolute_path
from omegaconf import DictConfig, OmegaConf
from torch.nn.parallel import DistributedDataParallel
from torch.utils.tensorboard import SummaryWriter

from modulus import Module
from modulus.distributed import DistributedManager
from modulus.launch.logging import PythonLogger, RankZeroLoggingWrapper
from modulus.launch.utils import load_checkpoint, save_checkpoint
from modulus.metrics.diffusion import RegressionLoss, ResLoss
from modulus.models.diffusion import EDMPrecondSR, UNet
from modulus.utils.generative import InfiniteSampler

from datasets.dataset import init_train_valid_datasets_from_config
from helpers.train_helpers import (
    compute_num_accumulation_rounds,
    handle_and_clip_gradients,
    is_time_for_periodic_task,
    set_patch_shape,
    set_seed,
)


def checkpoint_list(path, suffix=".mdlus"):
    checkpoints = []
    for file in os.listdir(path):
        if file.endswith(suffix):
            try:
                checkpoints.append((int(file.split(".")[-2]), file))
            except ValueError:
                pass
    checkpoints.sort()
    return [f for _, f in checkpoints]


@hydra.main(version_base="1.2", config_path="conf", config_name="config_training")
def main(cfg: DictConfig) -> None:
    """Train regression or diffusion models for use in the CorrDiff workflow."""

    # Initialize distributed environment for training
    DistributedManager.initialize()
    dist = DistributedManager()

    # Initialize loggers
    if dist.rank == 0:
        writer = SummaryWriter(log_dir="tensorboard")
        wandb.init(project=cfg.wandb.project, mode=cfg.wandb.mode, config=OmegaConf.to_container(cfg))
    logger = PythonLogger("main")
    logger0 = RankZeroLoggingWrapper(logger, dist)
    logger.file_logging()

    # Resolve and parse configs
    OmegaConf.resolve(cfg)
    dataset_cfg = OmegaConf.to_container(cfg.dataset)
    if hasattr(cfg, "validation"):
        train_test_split = True
        validation_dataset_cfg = OmegaConf.to_container(cfg.validation)
    else:
        train_test_split = False
        validation_dataset_cfg = None
    fp_optimizations = cfg.training.perf.fp_optimizations
    songunet_checkpoint_level = cfg.training.perf.songunet_checkpoint_level
    fp16 = fp_optimizations == "fp16"
    enable_amp = fp_optimizations.startswith("amp")
    amp_dtype = torch.float16 if (fp_optimizations == "amp-fp16") else torch.bfloat16
    logger.info(f"Saving the outputs in {os.getcwd()}")
    checkpoint_dir = os.path.join(
        cfg.training.io.get("checkpoint_dir", "."), f"checkpoints_{cfg.model.name}"
    )
    if cfg.training.hp.batch_size_per_gpu == "auto":
        cfg.training.hp.batch_size_per_gpu = (
            cfg.training.hp.total_batch_size // dist.world_size
        )

    # Set seeds and configure torch backends
    set_seed(dist.rank)
    torch.backends.cudnn.benchmark = cfg.training.perf.cudnn_benchmark
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False

    # Bfloat16 needs Ampere or newer; fall back to fp16 autocast on older parts
    if enable_amp and amp_dtype == torch.bfloat16:
        if torch.cuda.get_device_capability(dist.device)[0] < 8:
            logger0.warning("bf16 autocast needs sm_80+, using fp16 autocast instead")
            amp_dtype = torch.float16

    # Instantiate the dataset
    data_loader_kwargs = {
        "pin_memory": True,
        "num_workers": cfg.training.perf.dataloader_workers,
        "prefetch_factor": 2,
    }
    (
        dataset,
        dataset_iterator,
        validation_dataset,
        validation_dataset_iterator,
    ) = init_train_valid_datasets_from_config(
        dataset_cfg,
        data_loader_kwargs,
        batch_size=cfg.training.hp.batch_size_per_gpu,
        seed=0,
        validation_dataset_cfg=validation_dataset_cfg,
        train_test_split=train_test_split,
    )

    # Parse image configuration & update model args
    dataset_channels = len(dataset.input_channels())
    img_in_channels = dataset_channels
    img_shape = dataset.image_shape()
    img_out_channels = len(dataset.output_channels())
    if cfg.model.hr_mean_conditioning:
        img_in_channels += img_out_channels

    patch_shape = (cfg.training.hp.get("patch_shape_x", None), cfg.training.hp.get("patch_shape_y", None))
    img_shape, patch_shape = set_patch_shape(img_shape, patch_shape)
    use_patching = patch_shape != img_shape

    # Instantiate the model and move to device.
    model_args = {
        "img_out_channels": img_out_channels,
        "img_resolution": list(img_shape),
        "use_fp16": fp16,
        "checkpoint_level": songunet_checkpoint_level,
    }
    if cfg.training.perf.use_apex_gn:
        model_args["use_apex_gn"] = True
        model_args["amp_mode"] = enable_amp
    if cfg.model.name == "regression":
        model = UNet(img_in_channels=img_in_channels + cfg.model.model_args.get("N_grid_channels", 0),
                     **model_args)
    else:
        model = EDMPrecondSR(img_in_channels=img_in_channels, **model_args)
    model.train().requires_grad_(True).to(dist.device)
    if cfg.training.perf.use_apex_gn:
        model.to(memory_format=torch.channels_last)

    # Enable distributed data parallel if applicable
    if dist.world_size > 1:
        model = DistributedDataParallel(
            model,
            device_ids=[dist.local_rank],
            broadcast_buffers=True,
            output_device=dist.device,
            find_unused_parameters=True,
            bucket_cap_mb=35,
            gradient_as_bucket_view=True,
        )

    # Load the regression checkpoint if applicable
    if hasattr(cfg.training.io, "regression_checkpoint_path"):
        regression_checkpoint_path = to_absolute_path(cfg.training.io.regression_checkpoint_path)
        regression_net = Module.from_checkpoint(regression_checkpoint_path)
        regression_net.eval().requires_grad_(False).to(dist.device)
        logger0.success("Loaded the pre-trained regression model")
    else:
        regression_net = None

    # Compile the model and regression net if applicable
    if cfg.training.perf.torch_compile:
        model = torch.compile(model, mode="max-autotune-no-cudagraphs")
        if regression_net:
            regression_net = torch.compile(regression_net)

    # Instantiate the loss function
    patch_num = getattr(cfg.training.hp, "patch_num", 1)
    if cfg.model.name in ("diffusion", "patched_diffusion"):
        loss_fn = ResLoss(regression_net=regression_net, img_shape_x=img_shape[1],
                          img_shape_y=img_shape[0], patch_shape_x=patch_shape[1],
                          patch_shape_y=patch_shape[0], patch_num=patch_num,
                          hr_mean_conditioning=cfg.model.hr_mean_conditioning)
    else:
        loss_fn = RegressionLoss()

    # Instantiate the optimizer
    optimizer = torch.optim.Adam(
        params=model.parameters(), lr=cfg.training.hp.lr, betas=[0.9, 0.999], eps=1e-8, fused=True
    )

    # Record the current time to measure the duration of subsequent operations.
    start_time = time.time()

    # Compute the number of required gradient accumulation rounds
    batch_gpu_total, num_accumulation_rounds = compute_num_accumulation_rounds(
        cfg.training.hp.total_batch_size, cfg.training.hp.batch_size_per_gpu, dist.world_size
    )
    batch_size_per_gpu = cfg.training.hp.batch_size_per_gpu
    logger0.info(f"Using {num_accumulation_rounds} gradient accumulation rounds")

    # Resume training from previous checkpoints if exists
    if dist.world_size > 1:
        torch.distributed.barrier()
    try:
        cur_nimg = load_checkpoint(path=checkpoint_dir, models=model, optimizer=optimizer,
                                   device=dist.device)
    except Exception:
        cur_nimg = 0

    ############################################################################
    #                            MAIN TRAINING LOOP                            #
    ############################################################################

    logger0.info(f"Training for {cfg.training.hp.training_duration} images...")
    done = False
    while not done:
        tick_start_nimg = cur_nimg
        tick_start_time = time.time()
        # Compute & accumulate gradients
        optimizer.zero_grad(set_to_none=True)
        loss_accum = 0
        for _ in range(num_accumulation_rounds):
            img_clean, img_lr, labels = next(dataset_iterator)
            img_clean = img_clean.to(dist.device).to(torch.float32).contiguous()
            img_lr = img_lr.to(dist.device).to(torch.float32).contiguous()
            labels = labels.to(dist.device).contiguous()
            with torch.autocast("cuda", dtype=amp_dtype, enabled=enable_amp):
                loss = loss_fn(net=model, img_clean=img_clean, img_lr=img_lr,
                               labels=labels, augment_pipe=None)
            loss = loss.sum() / batch_size_per_gpu
            loss_accum += loss / num_accumulation_rounds
            loss.backward()

        loss_sum = torch.tensor([loss_accum], device=dist.device)
        if dist.world_size > 1:
            torch.distributed.barrier()
            torch.distributed.all_reduce(loss_sum, op=torch.distributed.ReduceOp.SUM)
        average_loss = (loss_sum / dist.world_size).cpu().item()

        # Update weights.
        lr_rampup = cfg.training.hp.lr_rampup
        for g in optimizer.param_groups:
            g["lr"] = cfg.training.hp.lr * min(cur_nimg / max(lr_rampup, 1e-8), 1)
            g["lr"] *= cfg.training.hp.lr_decay ** ((cur_nimg - lr_rampup) // 5e6)
        handle_and_clip_gradients(model, grad_clip_threshold=cfg.training.hp.grad_clip_threshold)
        optimizer.step()

        cur_nimg += cfg.training.hp.total_batch_size
        done = cur_nimg >= cfg.training.hp.training_duration

        # Validation
        if validation_dataset_iterator is not None and is_time_for_periodic_task(
            cur_nimg, cfg.training.io.validation_freq, done,
            cfg.training.hp.total_batch_size, dist.rank,
        ):
            with torch.no_grad():
                valid_loss_accum = 0
                for _ in range(cfg.training.io.validation_steps):
                    img_clean_valid, img_lr_valid, labels_valid = next(validation_dataset_iterator)
                    img_clean_valid = img_clean_valid.to(dist.device).to(torch.float32).contiguous()
                    img_lr_valid = img_lr_valid.to(dist.device).to(torch.float32).contiguous()
                    labels_valid = labels_valid.to(dist.device).contiguous()
                    loss_valid = loss_fn(net=model, img_clean=img_clean_valid,
                                         img_lr=img_lr_valid, labels=labels_valid,
                                         augment_pipe=None)
                    loss_valid = (loss_valid.sum() / batch_size_per_gpu).cpu().item()
                    valid_loss_accum += loss_valid / cfg.training.io.validation_steps
                if dist.rank == 0:
                    writer.add_scalar("validation_loss", valid_loss_accum, cur_nimg)

        if is_time_for_periodic_task(
            cur_nimg, cfg.training.io.print_progress_freq, done,
            cfg.training.hp.total_batch_size, dist.rank, rank_0_only=True,
        ):
            # Print stats if we crossed the printing threshold with this batch
            tick_end_time = time.time()
            fields = []
            fields += [f"samples {cur_nimg:<9.1f}"]
            fields += [f"training_loss {average_loss:<7.2f}"]
            fields += [f"learning_rate {g['lr']:<7.8f}"]
            fields += [f"total_sec {(tick_end_time - start_time):<7.1f}"]
            fields += [f"sec_per_tick {(tick_end_time - tick_start_time):<7.1f}"]
            fields += [
                f"sec_per_sample {((tick_end_time - tick_start_time) / (cur_nimg - tick_start_nimg)):<7.2f}"
            ]
            fields += [f"cpu_mem_gb {(psutil.Process(os.getpid()).memory_info().rss / 2**30):<6.2f}"]
            if torch.cuda.is_available():
                fields += [f"peak_gpu_mem_gb {(torch.cuda.max_memory_allocated(dist.device) / 2**30):<6.2f}"]
                fields += [f"peak_gpu_mem_reserved_gb {(torch.cuda.max_memory_reserved(dist.device) / 2**30):<6.2f}"]
                torch.cuda.reset_peak_memory_stats()
            logger0.info(" ".join(fields))
            if dist.rank == 0:
                writer.add_scalar("training_loss", average_loss, cur_nimg)
                wandb.log({"training_loss": average_loss, "lr": g["lr"]}, step=cur_nimg)

        # Save checkpoints
        if dist.world_size > 1:
            torch.distributed.barrier()
        if is_time_for_periodic_task(
            cur_nimg, cfg.training.io.save_checkpoint_freq, done,
            cfg.training.hp.total_batch_size, dist.rank, rank_0_only=True,
        ):
            save_checkpoint(path=checkpoint_dir, models=model, optimizer=optimizer, epoch=cur_nimg)

    # Done.
    logger0.info("Training Completed.")


if __name__ == "__main__":
    main()
