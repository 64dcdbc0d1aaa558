"""Fine-tune a pretrained Octo checkpoint (PyTorch port) on a new RLDS dataset.

    torchrun --nproc_per_node 8 scripts/finetune.py --config scripts/configs/finetune_config.py:full,language_conditioned \
        --pretrained_path hf://rail-berkeley/octo-small-1.5-pt --save_dir /checkpoints/octo_ft

The data pipeline is still tf.data (dlimp/RLDS), wrapped as a torch IterableDataset; TensorFlow is kept off the
accelerators so that it does not grab device memory.
"""

import copy
import datetime
import logging
import os
import time
from functools import partial

import numpy as np
import tensorflow as tf
import torch
import torch.distributed as dist
import tqdm
import wandb
from absl import app, flags
from ml_collections import config_flags
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset

from octo_pytorch.data.dataset import make_single_dataset
from octo_pytorch.model.octo_model import OctoModel
from octo_pytorch.utils.spec import ModuleSpec
from octo_pytorch.utils.train_utils import (
    EMA,
    check_config_diff,
    create_optimizer,
    freeze_weights,
    merge_params,
    process_text,
)

FLAGS = flags.FLAGS
flags.DEFINE_string("name", "octo_pt_finetune", "Experiment name.")
flags.DEFINE_string("pretrained_path", None, "Path or hf:// id of the pretrained checkpoint.")
flags.DEFINE_string("save_dir", None, "Where to write checkpoints.")
flags.DEFINE_bool("debug", False, "Debug config (no wandb logging)")
flags.DEFINE_bool("compile", True, "torch.compile the model")

default_config_file = os.path.join(os.path.dirname(__file__), "configs/finetune_config.py")
config_flags.DEFINE_config_file("config", default_config_file, "File path to the training hyperparameter configuration.", lock_config=False)


class RLDSTorchDataset(IterableDataset):
    """Thin adapter: iterates a (sharded) tf.data dataset and yields numpy trees converted to torch tensors."""

    def __init__(self, tf_dataset, rank: int, world_size: int):
        self.tf_dataset = tf_dataset.shard(world_size, rank)

    def __iter__(self):
        for batch in self.tf_dataset.as_numpy_iterator():
            yield _to_torch(batch)


def _to_torch(tree):
    if isinstance(tree, dict):
        return {k: _to_torch(v) for k, v in tree.items()}
    if isinstance(tree, np.ndarray) and tree.dtype != object:
        return torch.from_numpy(tree)
    return tree


def _move(tree, device):
    if isinstance(tree, dict):
        return {k: _move(v, device) for k, v in tree.items()}
    if torch.is_tensor(tree):
        return tree.to(device, non_blocking=True)
    return tree


def setup_distributed():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    rank = int(os.environ.get("RANK", 0))
    if world_size > 1:
        dist.init_process_group(backend="nccl", timeout=datetime.timedelta(minutes=30))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    return rank, local_rank, world_size, device


def main(_):
    rank, local_rank, world_size, device = setup_distributed()
    is_main = rank == 0
    logging.basicConfig(level=logging.INFO if is_main else logging.WARNING)

    # prevent tensorflow from using the accelerators
    tf.config.set_visible_devices([], "GPU")

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(FLAGS.config.seed + rank)
    np.random.seed(FLAGS.config.seed + rank)

    #########
    #
    # Load pretrained model
    #
    #########
    pretrained_model = OctoModel.load_pretrained(FLAGS.pretrained_path, map_location="cpu")
    config = copy.deepcopy(pretrained_model.config)
    for key, value in FLAGS.config.get("update_config", {}).items():
        config[key] = value
    text_processor = pretrained_model.text_processor

    #########
    #
    # Setup Data Loader
    #
    #########
    dataset = make_single_dataset(
        FLAGS.config.dataset_kwargs,
        traj_transform_kwargs=FLAGS.config.traj_transform_kwargs,
        frame_transform_kwargs=FLAGS.config.frame_transform_kwargs,
        train=True,
    )
    train_data_iter = (
        dataset.repeat()
        .unbatch()
        .shuffle(FLAGS.config.shuffle_buffer_size)
        .batch(FLAGS.config.batch_size // world_size)
        .map(partial(process_text, text_processor=text_processor))
        .prefetch(tf.data.AUTOTUNE)
    )
    loader = DataLoader(
        RLDSTorchDataset(train_data_iter, rank, world_size),
        batch_size=None,
        num_workers=0,
        pin_memory=torch.cuda.is_available(),
    )
    data_iter = iter(loader)
    example_batch = next(data_iter)

    #########
    #
    # Build the fine-tuning model from the new example batch, then merge pretrained weights
    #
    #########
    model = OctoModel.from_config(config, example_batch, text_processor, dataset_statistics=dataset.dataset_statistics)
    merged = merge_params(model.state_dict(), pretrained_model.state_dict())
    model.load_state_dict(merged)
    del pretrained_model

    frozen_keys = FLAGS.config.optimizer.get("frozen_keys", [])
    freeze_weights(model, frozen_keys)
    model.to(device)

    ema = EMA(model, decay=FLAGS.config.get("ema_decay", 0.999)) if FLAGS.config.get("ema_decay") else None

    if FLAGS.compile:
        model = torch.compile(model, mode="max-autotune")
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], find_unused_parameters=False)

    optimizer, lr_scheduler = create_optimizer(model, **FLAGS.config.optimizer.to_dict())

    if is_main and not FLAGS.debug:
        wandb.init(project=FLAGS.config.wandb.project, group=FLAGS.config.wandb.group, name=FLAGS.name, config=FLAGS.config.to_dict())
    save_dir = os.path.join(FLAGS.save_dir, FLAGS.name, datetime.datetime.now().strftime("%Y%m%d_%H%M%S"))
    if is_main:
        os.makedirs(save_dir, exist_ok=True)
        check_config_diff(config, FLAGS.config)

    #########
    #
    # Train loop
    #
    #########
    def loss_fn(batch, train=True):
        transformer_embeddings = model(
            batch["observation"],
            batch["task"],
            batch["observation"]["timestep_pad_mask"],
            train=train,
        )
        action_loss, action_metrics = (model.module if world_size > 1 else model).heads["action"].loss(
            transformer_embeddings,
            batch["action"],
            batch["observation"]["timestep_pad_mask"],
            batch["action_pad_mask"],
            train=train,
        )
        return action_loss, action_metrics

    torch.cuda.reset_peak_memory_stats()
    model.train()
    timer_t0 = time.perf_counter()
    for step in tqdm.tqdm(range(FLAGS.config.num_steps), total=FLAGS.config.num_steps, dynamic_ncols=True, disable=not is_main):
        batch = _move(next(data_iter), device)

        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss, metrics = loss_fn(batch, train=True)

        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), FLAGS.config.optimizer.clip_gradient)
        optimizer.step()
        lr_scheduler.step()
        if ema is not None:
            ema.update(model)

        if (step + 1) % FLAGS.config.log_interval == 0:
            torch.cuda.synchronize()
            elapsed = time.perf_counter() - timer_t0
            timer_t0 = time.perf_counter()
            log = {
                "training/loss": loss.item(),
                "training/grad_norm": grad_norm.item(),
                "training/lr": lr_scheduler.get_last_lr()[0],
                "timing/step_s": elapsed / FLAGS.config.log_interval,
                "memory/peak_gb": torch.cuda.max_memory_allocated() / 1e9,
                **{f"training/{k}": v.item() if torch.is_tensor(v) else v for k, v in metrics.items()},
            }
            if is_main and not FLAGS.debug:
                wandb.log(log, step=step + 1)

        if (step + 1) % FLAGS.config.save_interval == 0:
            if is_main:
                to_save = ema.shadow if ema is not None else (model.module if world_size > 1 else model)
                path = os.path.join(save_dir, f"step_{step + 1}")
                (to_save if hasattr(to_save, "save_pretrained") else model).save_pretrained(path)
                logging.info(f"Saved checkpoint to {path}")
            if world_size > 1:
                dist.barrier()

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    app.run(main)
