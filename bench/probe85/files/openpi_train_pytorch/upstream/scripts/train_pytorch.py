"""PyTorch training entry point for pi0 / pi0.5 (DDP, bf16 weights, gradient checkpointing).

Single GPU:   python scripts/train_pytorch.py pi05_libero --exp_name my_run
Multi GPU:    torchrun --standalone --nnodes=1 --nproc_per_node=8 scripts/train_pytorch.py pi05_libero --exp_name my_run
"""

import dataclasses
import gc
import logging
import os
import platform
import shutil
import time

import jax
import numpy as np
import safetensors.torch
import torch
import torch.distributed as dist
import torch.nn.parallel
import tqdm
import wandb

import openpi.models.pi0_config
import openpi.models_pytorch.pi0_pytorch
import openpi.shared.normalize as _normalize
import openpi.training.config as _config
import openpi.training.data_loader as _data

# Reduce fragmentation from the variable-length prefix/suffix batches.
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def init_logging():
    level_mapping = {"DEBUG": "D", "INFO": "I", "WARNING": "W", "ERROR": "E", "CRITICAL": "C"}

    class CustomFormatter(logging.Formatter):
        def format(self, record):
            record.levelname = level_mapping.get(record.levelname, record.levelname)
            return super().format(record)

    formatter = CustomFormatter(fmt="%(asctime)s.%(msecs)03d [%(levelname)s] %(message)-80s (%(process)d:%(filename)s:%(lineno)s)", datefmt="%H:%M:%S")
    logger = logging.getLogger()
    logger.setLevel(logging.INFO)
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(formatter)
        logger.addHandler(handler)
    else:
        logger.handlers[0].setFormatter(formatter)


def setup_ddp():
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    use_ddp = world_size > 1
    if use_ddp and not dist.is_initialized():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        dist.init_process_group(backend=backend, init_method="env://")

        # Set up debugging environment variables for DDP issues
        if os.environ.get("TORCH_DISTRIBUTED_DEBUG") is None:
            os.environ["TORCH_DISTRIBUTED_DEBUG"] = "INFO"

    local_rank = int(os.environ.get("LOCAL_RANK", os.environ.get("RANK", "0")))
    device = torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    return use_ddp, local_rank, device


def cleanup_ddp():
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def set_seed(seed: int, local_rank: int):
    torch.manual_seed(seed + local_rank)
    np.random.seed(seed + local_rank)
    torch.cuda.manual_seed_all(seed + local_rank)


def build_datasets(config: _config.TrainConfig, world_size: int, device: torch.device):
    # Use unified data loader with PyTorch framework
    data_loader = _data.create_data_loader(config, framework="pytorch", shuffle=True)
    return data_loader, data_loader.data_config()


def save_checkpoint(model, optimizer, global_step, config, is_main, data_config):
    """Save a checkpoint with model state, optimizer state, and metadata."""
    if not is_main:
        return

    # Only save if it's time to save or if it's the final step
    if (global_step % config.save_interval == 0 and global_step > 0) or global_step == config.num_train_steps - 1:
        final_ckpt_dir = config.checkpoint_dir / f"{global_step}"
        tmp_ckpt_dir = config.checkpoint_dir / f"tmp_{global_step}"
        if tmp_ckpt_dir.exists():
            shutil.rmtree(tmp_ckpt_dir)
        tmp_ckpt_dir.mkdir(parents=True, exist_ok=True)

        model_to_save = model.module if isinstance(model, torch.nn.parallel.DistributedDataParallel) else model
        safetensors.torch.save_model(model_to_save, tmp_ckpt_dir / "model.safetensors")
        torch.save(optimizer.state_dict(), tmp_ckpt_dir / "optimizer.pt")
        torch.save({"global_step": global_step, "config": dataclasses.asdict(config), "timestamp": time.time()}, tmp_ckpt_dir / "metadata.pt")

        norm_stats = data_config.norm_stats
        if norm_stats is not None and data_config.asset_id is not None:
            _normalize.save(tmp_ckpt_dir / "assets" / data_config.asset_id, norm_stats)

        if final_ckpt_dir.exists():
            shutil.rmtree(final_ckpt_dir)
        tmp_ckpt_dir.rename(final_ckpt_dir)
        logging.info(f"Saved checkpoint at step {global_step} -> {final_ckpt_dir}")


def train_loop(config: _config.TrainConfig):
    use_ddp, local_rank, device = setup_ddp()
    is_main = (not use_ddp) or (dist.get_rank() == 0)
    set_seed(config.seed, local_rank)

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    world_size = dist.get_world_size() if use_ddp else 1
    effective_batch_size = config.batch_size // world_size
    logging.info(f"Using batch size per GPU: {effective_batch_size} (total batch size across {world_size} GPUs: {config.batch_size})")

    loader, data_config = build_datasets(config, world_size, device)

    if not isinstance(config.model, openpi.models.pi0_config.Pi0Config):
        raise ValueError(f"PyTorch training only supports pi0 configs, got {type(config.model)}")
    model_cfg = dataclasses.replace(config.model, dtype=config.pytorch_training_precision)
    model = openpi.models_pytorch.pi0_pytorch.PI0Pytorch(model_cfg).to(device)

    if hasattr(model, "gradient_checkpointing_enable"):
        model.gradient_checkpointing_enable()

    if config.pytorch_weight_path is not None:
        model_path = os.path.join(config.pytorch_weight_path, "model.safetensors")
        safetensors.torch.load_model(model.module if isinstance(model, torch.nn.parallel.DistributedDataParallel) else model, model_path)
        logging.info(f"Loaded PyTorch weights from {config.pytorch_weight_path}")

    if use_ddp:
        model = torch.nn.parallel.DistributedDataParallel(
            model,
            device_ids=[device.index] if device.type == "cuda" else None,
            find_unused_parameters=True,
            gradient_as_bucket_view=True,
            static_graph=world_size >= 8,
        )

    optim = torch.optim.AdamW(
        model.parameters(),
        lr=config.lr_schedule.peak_lr,
        betas=(config.optimizer.b1, config.optimizer.b2),
        eps=config.optimizer.eps,
        weight_decay=config.optimizer.weight_decay,
    )

    def lr_schedule(step: int):
        warmup, peak, decay_steps, end_lr = (
            config.lr_schedule.warmup_steps,
            config.lr_schedule.peak_lr,
            config.lr_schedule.decay_steps,
            config.lr_schedule.decay_lr,
        )
        if step < warmup:
            return peak * (step + 1) / (warmup + 1)
        progress = min(1.0, (step - warmup) / max(1, decay_steps - warmup))
        return end_lr + (peak - end_lr) * 0.5 * (1 + np.cos(np.pi * progress))

    if is_main and config.wandb_enabled:
        wandb.init(name=config.exp_name, config=dataclasses.asdict(config), project=config.project_name)

    global_step = 0
    model.train()
    start_time = time.time()
    infos = []
    pbar = tqdm.tqdm(total=config.num_train_steps, initial=global_step, desc="Training", disable=not is_main)

    while global_step < config.num_train_steps:
        for observation, actions in loader:
            if global_step >= config.num_train_steps:
                break

            observation = jax.tree.map(lambda x: x.to(device), observation)  # noqa: PLW2901
            actions = actions.to(torch.float32).to(device)  # noqa: PLW2901

            for pg in optim.param_groups:
                pg["lr"] = lr_schedule(global_step)

            losses = model(observation, actions)
            loss = losses.mean()
            loss.backward()

            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=config.optimizer.clip_gradient_norm)
            optim.step()
            optim.zero_grad(set_to_none=True)

            if is_main:
                infos.append({"loss": loss.item(), "learning_rate": optim.param_groups[0]["lr"], "grad_norm": float(grad_norm)})

            if is_main and (global_step % config.log_interval == 0):
                elapsed = time.time() - start_time
                avg_loss = sum(info["loss"] for info in infos) / len(infos)
                avg_lr = sum(info["learning_rate"] for info in infos) / len(infos)
                log_payload = {"loss": avg_loss, "learning_rate": avg_lr, "step": global_step, "time_per_step": elapsed / config.log_interval}
                if torch.cuda.is_available():
                    log_payload["memory/max_allocated_gb"] = torch.cuda.max_memory_allocated(device) / 1e9
                    torch.cuda.reset_peak_memory_stats(device)
                logging.info(f"step={global_step} loss={avg_loss:.4f} lr={avg_lr:.2e} time={elapsed:.1f}s")
                if config.wandb_enabled:
                    wandb.log(log_payload, step=global_step)
                start_time = time.time()
                infos = []

            global_step += 1
            save_checkpoint(model, optim, global_step, config, is_main, data_config)

            if is_main:
                pbar.update(1)

        # Epoch boundary: the RLDS iterator re-shuffles; drop cached allocator blocks from the last epoch's shapes.
        gc.collect()
        torch.cuda.empty_cache()

    if is_main:
        pbar.close()
    if is_main and config.wandb_enabled:
        wandb.finish()
    cleanup_ddp()


def main():
    init_logging()
    logging.info(f"Running on: {platform.node()}")
    config = _config.cli()
    train_loop(config)


if __name__ == "__main__":
    main()
