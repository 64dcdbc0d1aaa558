# Copyright (C) 2023 CERN for the benefit of the ATLAS collaboration

# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at

#     http://www.apache.org/licenses/LICENSE-2.0

# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
This script runs a single stage of training.
It takes a config file as input, and trains the model specified in the config file.
"""

import os
import sys
import yaml
import click
import logging

import torch
from lightning.pytorch import Trainer
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger, WandbLogger
from lightning.pytorch.strategies import DDPStrategy
from lightning.pytorch.plugins.environments import SLURMEnvironment

from .core_utils import str_to_class, get_default_root_dir, load_config_and_checkpoint, get_trainer_precision

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

# Tensor cores: trade a bit of fp32 matmul precision for speed (A100/H100)
torch.set_float32_matmul_precision("medium")


@click.command()
@click.argument("config_file")
@click.option("--checkpoint", "-c", default=None, help="Checkpoint to use for training")
@click.option("--sweep", "-s", default=False, type=bool, help="Run WANDB sweep")
@click.option("--checkpoint_resume_dir", default=None, help="Pass a default rootdir for saving model checkpoint")
def main(config_file, checkpoint, sweep, checkpoint_resume_dir):
    """
    Main function to train a stage. Separate the main and train_stage functions to allow for testing.
    """
    train(config_file, checkpoint, sweep, checkpoint_resume_dir)


def train(config_file, checkpoint=None, sweep=False, checkpoint_resume_dir=None):
    # load config
    with open(config_file, "r") as f:
        config = yaml.load(f, Loader=yaml.FullLoader)

    # allows to use wandb.ai sweep functionality
    if sweep:
        import wandb

        wandb.init(project=config["project"])
        config.update(dict(wandb.config))

    if not torch.cuda.is_available():
        logging.warning("No GPU found! Training on CPU will be very slow for the full detector graphs.")

    # load stage
    stage = config["stage"]
    model = config["model"]
    stage_module_class = str_to_class(stage, model)

    checkpoint_path, stage_module, default_root_dir = load_config_and_checkpoint(
        config, stage_module_class, checkpoint, checkpoint_resume_dir
    )

    # setup stage
    os.makedirs(config["stage_dir"], exist_ok=True)
    stage_module.setup(stage="fit")

    # run training, depending on whether we are using a Lightning trainable model or not
    if isinstance(stage_module, torch.nn.Module):
        lightning_train(config, stage_module, checkpoint_path, default_root_dir)
    else:
        stage_module.train()


def lightning_train(config, stage_module, checkpoint_path, default_root_dir):
    trainer = get_trainer(config, default_root_dir)
    trainer.fit(stage_module, ckpt_path=checkpoint_path)


def get_trainer(config, default_root_dir):
    metric_to_monitor = config.get("metric_to_monitor", "val_loss")
    metric_mode = config.get("metric_mode", "min")

    # handle resume
    filename_suffix = (
        str(os.environ.get("SLURM_JOB_ID"))
        if "SLURM_JOB_ID" in os.environ
        else "default"
    )
    filename = "best-" + filename_suffix + "-{" + metric_to_monitor + ":5f}-{epoch}"

    checkpoint_callback = ModelCheckpoint(
        dirpath=os.path.join(config["stage_dir"], "artifacts"),
        filename=filename,
        monitor=metric_to_monitor,
        mode=metric_mode,
        save_top_k=config.get("save_top_k", 1),
        save_last=True,
    )
    checkpoint_callback.CHECKPOINT_NAME_LAST = f"last-{filename_suffix}"

    logger = (
        WandbLogger(project=config["project"], save_dir=config["stage_dir"])
        if config.get("logger", "csv") == "wandb"
        else CSVLogger(save_dir=config["stage_dir"])
    )

    gpus = config.get("gpus", 0)
    accelerator = config.get("accelerator") or ("gpu" if torch.cuda.is_available() else "cpu")
    devices = config.get("devices", gpus if gpus > 0 else "auto")

    if isinstance(devices, int) and devices > 1 or config.get("nodes", 1) > 1:
        strategy = DDPStrategy(
            find_unused_parameters=config.get("find_unused_parameters", False),
            static_graph=config.get("static_graph", False),
            process_group_backend="nccl",
        )
    else:
        strategy = "auto"

    plugins = [SLURMEnvironment(auto_requeue=False)] if "SLURM_JOB_ID" in os.environ else None

    return Trainer(
        accelerator=accelerator,
        gradient_clip_val=config.get("gradient_clip_val"),
        devices=devices,
        num_nodes=config.get("nodes", 1),
        max_epochs=config["max_epochs"],
        callbacks=[checkpoint_callback],
        logger=logger,
        strategy=strategy,
        plugins=plugins,
        precision=get_trainer_precision(config),
        default_root_dir=default_root_dir,
        num_sanity_val_steps=config.get("num_sanity_val_steps", 2),
        log_every_n_steps=config.get("log_every_n_steps", 50),
        benchmark=config.get("cudnn_benchmark", True),
    )


if __name__ == "__main__":
    main()
