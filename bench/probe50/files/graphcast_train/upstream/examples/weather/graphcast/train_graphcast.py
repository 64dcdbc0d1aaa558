# Copyright (c) 2023, NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
"""GraphCast training on ERA5 (0.25 deg, 37 levels subset) with a 3-phase schedule:
linear warm-up, cosine decay, then fine-tuning with an increasing number of rollout steps."""

import os
import time
import hydra
import torch
import wandb
import numpy as np
import torch.nn.functional as F
from hydra.utils import to_absolute_path
from omegaconf import DictConfig
from torch.nn.parallel import DistributedDataParallel
from torch.optim.lr_scheduler import CosineAnnealingLR, LambdaLR, SequentialLR

from apex import optimizers

from modulus.datapipes.climate import ERA5HDF5Datapipe, SyntheticWeatherDataLoader
from modulus.distributed import DistributedManager
from modulus.launch.logging import LaunchLogger, PythonLogger, RankZeroLoggingWrapper, initialize_wandb
from modulus.launch.utils import load_checkpoint, save_checkpoint
from modulus.models.graphcast.graph_cast_net import GraphCastNet
from modulus.utils.graphcast.loss import CellAreaWeightedLossFunction
from modulus.utils.graphcast.data_utils import StaticData

from train_utils import count_trainable_params, prepare_input
from loss.utils import normalized_grid_cell_area
from validation_base import Validation


class BaseTrainer:
    """Trainer class"""

    def __init__(self):
        pass

    def rollout(self, grid_nfeat, y):
        with torch.autocast(device_type="cuda", enabled=self.amp, dtype=self.amp_dtype):
            # first step
            y_pred = self.model(grid_nfeat)
            loss = self.criterion(y_pred, y[0])

            # subsequent steps
            for step in range(1, self.num_autoreg_steps):
                grid_nfeat = prepare_input(y_pred, self.static_data, self.step_idx + step)
                y_pred = self.model(grid_nfeat)
                loss += self.criterion(y_pred, y[step])
            return loss

    def train(self, grid_nfeat, y):
        self.optimizer.zero_grad()
        loss = self.rollout(grid_nfeat, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip_norm)
        self.optimizer.step()
        return loss


class GraphCastTrainer(BaseTrainer):
    """GraphCast Trainer"""

    def __init__(self, cfg: DictConfig, dist, rank_zero_logger):
        super().__init__()
        self.cfg = cfg
        self.dist = dist
        self.dtype = torch.bfloat16 if cfg.full_bf16 else torch.float32
        self.enable_scaler = False
        self.amp = cfg.amp
        self.amp_dtype = torch.bfloat16 if (cfg.amp_dtype == "bfloat16") else torch.float16
        if cfg.amp and cfg.amp_dtype == "float16":
            self.enable_scaler = True
            self.scaler = torch.cuda.amp.GradScaler()
        self.num_autoreg_steps = cfg.num_autoreg_steps
        self.step_idx = 0

        if cfg.cugraphops_encoder or cfg.cugraphops_processor or cfg.cugraphops_decoder:
            try:
                import pylibcugraphops
            except ImportError:
                raise ImportError(
                    "pylibcugraphops is not installed. Refer the Dockerfile for instructions"
                    + "on how to install this package."
                )

        # instantiate the model
        self.model = GraphCastNet(
            meshgraph_path=to_absolute_path(cfg.icospheres_path),
            static_dataset_path=to_absolute_path(cfg.static_dataset_path),
            input_dim_grid_nodes=cfg.num_channels_climate + cfg.use_cos_zenith + 4 * cfg.use_time_of_year_index + cfg.num_channels_static,
            input_dim_mesh_nodes=3,
            input_dim_edges=4,
            output_dim_grid_nodes=cfg.num_channels_climate,
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

        # Get required model attributes
        if hasattr(self.model, "module"):
            self.latitudes = self.model.module.latitudes
            self.longitudes = self.model.module.longitudes
            self.lat_lon_grid = self.model.module.lat_lon_grid
            self.is_distributed = self.model.module.is_distributed
        else:
            self.latitudes = self.model.latitudes
            self.longitudes = self.model.longitudes
            self.lat_lon_grid = self.model.lat_lon_grid
            self.is_distributed = self.model.is_distributed

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
        rank_zero_logger.info(f"Model parameter count is {count_trainable_params(self.model)}")

        # instantiate the training datapipe
        DataPipe = SyntheticWeatherDataLoader if cfg.synthetic_dataset else ERA5HDF5Datapipe
        self.interpolation_type = "INTER_AREA" if cfg.latlon_res != (721, 1440) else None
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
            self.area = normalized_grid_cell_area(self.lat_lon_grid[:, :, 0], unit="deg")
        else:
            self.area = normalized_grid_cell_area(self.lat_lon_grid[:, :, 0], unit="deg")
        self.area = self.area.to(dtype=self.dtype).to(device=dist.device)

        # instantiate loss, optimizer, and scheduler
        self.criterion = CellAreaWeightedLossFunction(self.area)
        try:
            self.optimizer = optimizers.FusedAdam(
                self.model.parameters(), lr=cfg.lr, betas=(0.9, 0.95), adam_w_mode=True, weight_decay=0.1,
            )
            rank_zero_logger.info("Using FusedAdam optimizer")
        except:
            self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr)
        scheduler1 = LambdaLR(self.optimizer, lr_lambda=lambda epoch: epoch / cfg.num_iters_step1)
        scheduler2 = CosineAnnealingLR(self.optimizer, T_max=cfg.num_iters_step2, eta_min=0.0)
        scheduler3 = LambdaLR(self.optimizer, lr_lambda=lambda epoch: (cfg.lr_step3 / cfg.lr))
        self.scheduler = SequentialLR(
            self.optimizer,
            schedulers=[scheduler1, scheduler2, scheduler3],
            milestones=[cfg.num_iters_step1, cfg.num_iters_step1 + cfg.num_iters_step2],
        )

        # load checkpoint
        if dist.world_size > 1:
            torch.distributed.barrier()
        self.iter_init = load_checkpoint(
            to_absolute_path(cfg.ckpt_path),
            models=self.model,
            optimizer=self.optimizer,
            scheduler=self.scheduler,
            scaler=self.scaler if self.enable_scaler else None,
            device=dist.device,
        )

        # Get the static data
        if cfg.static_dataset_path:
            self.static_channels = torch.tensor(
                StaticData(to_absolute_path(cfg.static_dataset_path), self.latitudes, self.longitudes).get(),
                dtype=self.dtype,
            ).to(device=dist.device)
        else:
            self.static_channels = None

        # instantiate the validation
        if dist.rank == 0:
            self.validation = Validation(cfg, self.model, self.dtype, self.dist, rank_zero_logger)


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    # initialize distributed manager
    DistributedManager.initialize()
    dist = DistributedManager()

    # initialize loggers
    if dist.rank == 0:
        initialize_wandb(project="GraphCast", entity="Modulus", name=f"GraphCast-{cfg.wb_experiment_desc}",
                         group="group", mode=cfg.wb_mode)
    logger = PythonLogger("main")
    rank_zero_logger = RankZeroLoggingWrapper(logger, dist)
    rank_zero_logger.file_logging()

    # print ranks and devices
    logger.info(f"Rank: {dist.rank}, Device: {dist.device}")
    torch.cuda.set_per_process_memory_fraction(0.95, dist.local_rank)

    # specify the trainer
    trainer = GraphCastTrainer(cfg, dist, rank_zero_logger)

    # training loop
    start = time.time()
    rank_zero_logger.info("Training started...")
    loss_agg, iter, tagged_iter, num_rollout_steps = 0, trainer.iter_init, 1, 0
    terminate_training, finetune, update_dataloader = False, False, False

    with torch.autograd.profiler.emit_nvtx(enabled=cfg.profile):
        # training loop
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

                # update the dataloader for finetuning
                if update_dataloader:
                    num_rollout_steps = (iter - tagged_iter) // cfg.step_change_freq + 2
                    trainer.num_autoreg_steps = num_rollout_steps
                    update_dataloader = False
                    rank_zero_logger.info(f"Switching to {num_rollout_steps}-step rollout!")
                    break

                # prepare the data
                invar = data[0]["invar"]
                outvar = data[0]["outvar"][0:num_rollout_steps + 1].to(dtype=trainer.dtype)
                invar = prepare_input(invar, trainer.static_channels, iter).to(dtype=trainer.dtype)

                # training step
                loss = trainer.train(invar, outvar)
                if dist.rank == 0:
                    loss_agg += loss.detach().cpu()

                # validation
                if dist.rank == 0 and iter % cfg.val_freq == 0:
                    # free up GPU memory
                    del invar, outvar
                    torch.cuda.empty_cache()
                    error = trainer.validation.step(channels=list(np.arange(cfg.num_channels_val)), iter=iter)
                    logger.log(f"iteration {iter}, Validation MSE: {error:.04f}")

                # distributed barrier
                if dist.world_size > 1:
                    torch.distributed.barrier()

                # print logs and save checkpoint
                if dist.rank == 0 and iter % cfg.save_freq == 0:
                    save_checkpoint(to_absolute_path(cfg.ckpt_path), models=trainer.model,
                                    optimizer=trainer.optimizer, scheduler=trainer.scheduler,
                                    scaler=trainer.scaler if trainer.enable_scaler else None, epoch=iter)
                    logger.info(f"Saved model on rank {dist.rank}")
                    logger.log(f"iteration: {iter}, loss: {loss_agg/cfg.save_freq:10.3e}, "
                               f"time per iter: {(time.time()-start)/cfg.save_freq:10.3e}, "
                               f"max mem: {torch.cuda.max_memory_allocated(dist.device) / 2**30:.1f} GiB")
                    wandb.log({"loss": loss_agg / cfg.save_freq, "learning_rate": trainer.scheduler.get_last_lr()[0]}, step=iter)
                    loss_agg = 0
                    start = time.time()
                iter += 1

                torch.cuda.nvtx.range_pop()

                # wrap up & terminate if training is finished
                if iter >= cfg.num_iters_step1 + cfg.num_iters_step2 + cfg.num_iters_step3:
                    if dist.rank == 0:
                        del invar, outvar
                        torch.cuda.empty_cache()  # before the final validation
                        error = trainer.validation.step(channels=list(np.arange(cfg.num_channels_val)), iter=iter)
                        logger.log(f"iteration {iter}, Validation MSE: {error:.04f}")
                        save_checkpoint(to_absolute_path(cfg.ckpt_path), trainer.model, trainer.optimizer,
                                        trainer.scheduler, trainer.scaler, iter)
                        logger.info(f"Saved model on rank {dist.rank}")
                    terminate_training = True
                    break
            if terminate_training:
                rank_zero_logger.info("Finished training!")
                break


if __name__ == "__main__":
    main()
