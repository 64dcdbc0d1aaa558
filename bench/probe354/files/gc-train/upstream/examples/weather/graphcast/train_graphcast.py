# SPDX-FileCopyrightText: Copyright (c) 2023 - 2024 NVIDIA CORPORATION & AFFILIATES.
# SPDX-FileCopyrightText: All rights reserved.
# SPDX-License-Identifier: Apache-2.0
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import os
import time

import hydra
import torch
import wandb
from hydra.utils import to_absolute_path
from omegaconf import DictConfig, OmegaConf
from torch.cuda.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel
from torch.optim.lr_scheduler import CosineAnnealingLR, LambdaLR, SequentialLR

try:
    import apex
except ImportError:
    raise ImportError(
        "GraphCast training requires apex for the fused Adam optimizer. "
        "Install it from https://github.com/nvidia/apex."
    )

from modulus.datapipes.climate import ERA5HDF5Datapipe, SyntheticWeatherDataLoader
from modulus.distributed import DistributedManager
from modulus.launch.logging import (
    PythonLogger,
    RankZeroLoggingWrapper,
    initialize_wandb,
)
from modulus.launch.utils import load_checkpoint, save_checkpoint
from modulus.models.graphcast.graph_cast_net import GraphCastNet
from modulus.utils.graphcast.data_utils import StaticData
from modulus.utils.graphcast.loss import CellAreaWeightedLossFunction

from train_base import BaseTrainer
from validation_base import Validation


class GraphCastTrainer(BaseTrainer):
    """GraphCast Trainer"""

    def __init__(self, cfg: DictConfig, dist, rank_zero_logger):
        super().__init__()
        self.dist = dist
        self.dtype = torch.bfloat16 if cfg.full_bf16 else torch.float32
        self.enable_scaler = False
        self.amp = cfg.amp
        self.amp_dtype = None
        self.pyt_profiler = cfg.pyt_profiler
        self.grad_clip_norm = cfg.grad_clip_norm
        self.static_dataset_path = (
            to_absolute_path(cfg.static_dataset_path) if cfg.static_dataset_path else None
        )

        if cfg.full_bf16:
            assert torch.cuda.is_bf16_supported()
            rank_zero_logger.info(f"Using {str(self.dtype)} dtype")
            if cfg.amp:
                raise ValueError("Full bfloat16 training is enabled, switch off cfg.amp")

        if cfg.amp:
            self.amp_dtype = torch.float16 if (cfg.amp_dtype == "float16") else torch.bfloat16
            if self.amp_dtype == torch.float16:
                self.enable_scaler = True
            rank_zero_logger.info(f"Using autocast with dtype {self.amp_dtype}")

        # instantiate the model
        self.model = GraphCastNet(
            meshgraph_path=to_absolute_path(cfg.icospheres_path),
            static_dataset_path=self.static_dataset_path,
            input_res=tuple(cfg.latlon_res),
            input_dim_grid_nodes=cfg.num_channels_climate + cfg.num_channels_static + cfg.num_channels_val,
            input_dim_mesh_nodes=3,
            input_dim_edges=4,
            output_dim_grid_nodes=cfg.num_channels_climate,
            processor_type=cfg.processor_type,
            khop_neighbors=cfg.khop_neighbors,
            num_attention_heads=cfg.num_attention_heads,
            processor_layers=cfg.processor_layers,
            hidden_dim=cfg.hidden_dim,
            norm_type=cfg.norm_type,
            do_concat_trick=cfg.concat_trick,
            use_cugraphops_encoder=cfg.cugraphops_encoder,
            use_cugraphops_processor=cfg.cugraphops_processor,
            use_cugraphops_decoder=cfg.cugraphops_decoder,
            recompute_activation=cfg.recompute_activation,
        )

        # set gradient checkpointing
        if cfg.force_single_checkpoint:
            self.model.set_checkpoint_model(True)
        if cfg.checkpoint_encoder:
            self.model.set_checkpoint_encoder(True)
        if cfg.checkpoint_processor:
            self.model.set_checkpoint_processor(cfg.segments)
        if cfg.checkpoint_decoder:
            self.model.set_checkpoint_decoder(True)

        # JIT compile the model, and specify the device and dtype
        if cfg.jit:
            torch.jit.script(self.model).to(dtype=self.dtype).to(device=dist.device)
            rank_zero_logger.success("JIT compiled the model")
        else:
            self.model = self.model.to(dtype=self.dtype).to(device=dist.device)
        if cfg.watch_model and not cfg.jit and dist.rank == 0:
            wandb.watch(self.model)

        # distributed data parallel for multi-node training
        if dist.world_size > 1:
            self.model = DistributedDataParallel(
                self.model,
                device_ids=[dist.local_rank],
                output_device=dist.device,
                broadcast_buffers=dist.broadcast_buffers,
                find_unused_parameters=dist.find_unused_parameters,
                gradient_as_bucket_view=True,
                static_graph=True,
            )
        rank_zero_logger.info(
            f"Model parameter count is {sum(p.numel() for p in self.model.parameters())}"
        )

        # instantiate the training datapipe
        DataPipe = SyntheticWeatherDataLoader if cfg.synthetic_dataset else ERA5HDF5Datapipe
        self.interpolation_type = "INTERP_LINEAR" if cfg.latlon_res != (721, 1440) else None
        self.datapipe = DataPipe(
            data_dir=to_absolute_path(os.path.join(cfg.dataset_path, "train")),
            stats_dir=to_absolute_path(os.path.join(cfg.dataset_path, "stats")),
            channels=[i for i in range(cfg.num_channels_climate)],
            latlon_resolution=cfg.latlon_res,
            interpolation_type=self.interpolation_type,
            num_samples_per_year=cfg.num_samples_per_year_train,
            num_steps=1,
            batch_size=cfg.batch_size,
            num_workers=cfg.num_workers,
            device=dist.device,
            process_rank=dist.rank,
            world_size=dist.world_size,
        )
        rank_zero_logger.success(f"Loaded training datapipe of size {len(self.datapipe)}")

        # enable train mode
        self.model.train()

        # get area
        if hasattr(self.model, "module"):
            self.area = normalized_grid_cell_area(self.model.module.lat_lon_grid[:, :, 0], unit="deg")
        else:
            self.area = normalized_grid_cell_area(self.model.lat_lon_grid[:, :, 0], unit="deg")
        self.area = self.area.to(dtype=self.dtype).to(device=dist.device)

        # instantiate loss, optimizer, and scheduler
        self.criterion = CellAreaWeightedLossFunction(self.area)
        try:
            self.optimizer = apex.optimizers.FusedAdam(
                self.model.parameters(),
                lr=cfg.lr,
                betas=(0.9, 0.95),
                adam_w_mode=True,
                weight_decay=0.1,
            )
            rank_zero_logger.info("Using FusedAdam optimizer")
        except ModuleNotFoundError:
            self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, betas=(0.9, 0.95), weight_decay=0.1)
        scheduler1 = LambdaLR(self.optimizer, lr_lambda=lambda epoch: epoch / cfg.num_iters_step1)
        scheduler2 = CosineAnnealingLR(self.optimizer, T_max=cfg.num_iters_step2, eta_min=0.0)
        scheduler3 = LambdaLR(self.optimizer, lr_lambda=lambda epoch: (cfg.lr_step3 / cfg.lr))
        self.scheduler = SequentialLR(
            self.optimizer,
            schedulers=[scheduler1, scheduler2, scheduler3],
            milestones=[cfg.num_iters_step1, cfg.num_iters_step1 + cfg.num_iters_step2],
        )
        self.scaler = GradScaler(enabled=self.enable_scaler)

        # load checkpoint
        if dist.world_size > 1:
            torch.distributed.barrier()
        self.iter_init = load_checkpoint(
            to_absolute_path(cfg.ckpt_path),
            models=self.model,
            optimizer=self.optimizer,
            scheduler=self.scheduler,
            scaler=self.scaler,
            device=dist.device,
        )

        # Get the static data
        if self.static_dataset_path:
            self.static_data = StaticData(self.static_dataset_path, self.model.latitudes, self.model.longitudes).get()
            self.static_data = self.static_data.to(device=dist.device)
            assert cfg.num_channels_static == self.static_data.size(1), (
                f"Number of static channels in model ({cfg.num_channels_static}) "
                + f"does not match the static data ({self.static_data.size(1)})"
            )

        # instantiate the validation
        if dist.rank == 0:
            self.validation = Validation(cfg, self.model, self.dtype, self.dist, rank_zero_logger)

    def train_step(self, invar, outvar):
        """One optimizer step with optional autocast + grad scaling."""
        self.optimizer.zero_grad(set_to_none=True)
        with autocast(enabled=self.amp, dtype=self.amp_dtype):
            outpred = self.model(invar)
            loss = self.criterion(outpred, outvar)
        self.scaler.scale(loss).backward()
        if self.grad_clip_norm is not None:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    # initialize distributed manager
    DistributedManager.initialize()
    dist = DistributedManager()

    # initialize loggers
    if dist.rank == 0:
        initialize_wandb(
            project="GraphCast",
            entity="Modulus",
            name=f"GraphCast-{cfg.wb_experiment_desc}",
            group="group",
            mode=cfg.wb_mode,
            config=OmegaConf.to_container(cfg, resolve=True),
        )
    logger = PythonLogger("main")  # General python logger
    rank_zero_logger = RankZeroLoggingWrapper(logger, dist)  # Rank 0 logger
    rank_zero_logger.file_logging()

    # print ranks and devices
    logger.info(f"Rank: {dist.rank}, Device: {dist.device}")

    # TF32 for the Ampere+ tensor cores
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    # initialize trainer
    trainer = GraphCastTrainer(cfg, dist, rank_zero_logger)
    start = time.time()
    rank_zero_logger.info("Training started...")
    loss_agg, iter, tagged_iter, num_rollout_steps = 0, trainer.iter_init, 1, 1
    terminate_training, finetune, update_dataloader = False, False, False

    with torch.autograd.profiler.profile(enabled=cfg.profile) as prof:
        while True:
            assert iter < cfg.num_iters_step1 + cfg.num_iters_step2 + cfg.num_iters_step3, "Training is already finished!"
            for _, data in enumerate(trainer.datapipe):
                # profiling
                if cfg.profile and iter == cfg.profile_range[0]:
                    rank_zero_logger.info("Starting profile", "green")
                    torch.cuda.profiler.start()
                if cfg.profile and iter == cfg.profile_range[1]:
                    rank_zero_logger.info("Ending profile", "green")
                    torch.cuda.profiler.stop()
                torch.cuda.nvtx.range_push("Training iteration")

                if iter >= cfg.num_iters_step1 + cfg.num_iters_step2 and not finetune:
                    finetune = True
                    if cfg.force_single_checkpoint_finetune:
                        if hasattr(trainer.model, "module"):
                            trainer.model.module.set_checkpoint_model(True)
                        else:
                            trainer.model.set_checkpoint_model(True)
                    update_dataloader = True
                    tagged_iter = iter

                if finetune:
                    num_rollout_steps = (iter - tagged_iter) // cfg.step_change_freq + 2
                    if num_rollout_steps > cfg.num_rollout_steps:
                        terminate_training = True
                        break

                invar = data[0]["invar"]
                outvar = data[0]["outvar"][0 : num_rollout_steps].to(dtype=trainer.dtype)
                if trainer.static_dataset_path:
                    invar = torch.concat((invar, trainer.static_data), dim=1)
                invar = invar.to(dtype=trainer.dtype)

                loss = trainer.train_step(invar, outvar)
                trainer.scheduler.step()
                loss_agg += loss.detach().cpu()

                # validation
                if dist.rank == 0 and iter % cfg.val_freq == 0:
                    error = trainer.validation.step(channels=list(range(cfg.num_channels_val)), iter=iter)
                    logger.log(f"iteration {iter}, Validation MSE: {error:.04f}")

                # distributed barrier
                if dist.world_size > 1:
                    torch.distributed.barrier()

                # print logs and save checkpoint
                if dist.rank == 0 and iter % cfg.save_freq == 0:
                    save_checkpoint(
                        to_absolute_path(cfg.ckpt_path),
                        models=trainer.model,
                        optimizer=trainer.optimizer,
                        scheduler=trainer.scheduler,
                        scaler=trainer.scaler,
                        epoch=iter,
                    )
                    logger.info(f"Saved model on rank {dist.rank}")
                    logger.log(
                        f"iteration: {iter}, loss: {loss_agg/cfg.save_freq:10.3e}, "
                        f"time per iter: {(time.time()-start)/cfg.save_freq:10.3e}, "
                        f"max GPU mem: {torch.cuda.max_memory_allocated(dist.device) / 2**30:.1f} GB"
                    )
                    wandb.log({"loss": loss_agg / cfg.save_freq, "learning_rate": trainer.scheduler.get_last_lr()[0]}, step=iter)
                    loss_agg = 0
                    start = time.time()
                iter += 1

                torch.cuda.nvtx.range_pop()

                # wrap up & terminate if training is finished
                if iter >= cfg.num_iters_step1 + cfg.num_iters_step2 + cfg.num_iters_step3:
                    if dist.rank == 0:
                        del data
                        torch.cuda.empty_cache()
                        error = trainer.validation.step(channels=list(range(cfg.num_channels_val)), iter=iter)
                        logger.log(f"iteration {iter}, Validation MSE: {error:.04f}")
                    terminate_training = True
                    break
            if terminate_training:
                rank_zero_logger.info("Finished training!")
                break
            if update_dataloader:
                trainer.datapipe.num_steps = num_rollout_steps
                update_dataloader = False


def normalized_grid_cell_area(lat: torch.Tensor, unit="deg") -> torch.Tensor:
    """Normalized area of the latitude-longitude grid cell"""
    if unit == "deg":
        lat = torch.deg2rad(lat)
    area = torch.abs(torch.cos(lat))
    return area / torch.mean(area)


if __name__ == "__main__":
    main()
