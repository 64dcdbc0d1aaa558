# SPDX-FileCopyrightText: Copyright (c) 2023 - 2024 NVIDIA CORPORATION & AFFILIATES.
# SPDX-FileCopyrightText: All rights reserved.
# SPDX-License-Identifier: Apache-2.0

import os
import time

import hydra
import torch
import wandb
from hydra.utils import to_absolute_path
from omegaconf import DictConfig
from torch.cuda.amp import GradScaler
from torch.nn.parallel import DistributedDataParallel

try:
    import apex
except ImportError:
    apex = None

from modulus.datapipes.climate import ERA5HDF5Datapipe
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

from loss.utils import normalized_grid_cell_area
from train_utils import count_trainable_params, prepare_input
from validation import Validation


class GraphCastTrainer:
    """GraphCast Trainer"""

    def __init__(self, cfg: DictConfig, dist, rank_zero_logger):
        self.dist = dist
        self.dtype = torch.bfloat16 if cfg.full_bf16 else torch.float32
        self.enable_scaler = False
        self.amp_dtype = None
        self.cfg = cfg

        if cfg.full_bf16:
            assert torch.cuda.is_bf16_supported()
            rank_zero_logger.info("Using bfloat16 precision")
            if cfg.amp:
                rank_zero_logger.warning("Mixed precision is disabled when full_bf16 is enabled")

        if cfg.amp:
            self.amp_dtype = torch.bfloat16 if cfg.amp_dtype == "bfloat16" else torch.float16
            self.enable_scaler = cfg.amp_dtype == "float16"
            rank_zero_logger.info(f"Using automatic mixed precision ({cfg.amp_dtype})")

        # instantiate the model
        self.model = GraphCastNet(
            meshgraph_path=to_absolute_path(cfg.icospheres_path),
            static_dataset_path=to_absolute_path(cfg.static_dataset_path),
            input_res=tuple(cfg.latlon_res),
            input_dim_grid_nodes=cfg.num_channels_climate + cfg.use_cos_zenith + 4 * cfg.use_time_of_year_index + cfg.num_channels_static,
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

        # enable train mode
        self.model.train()

        # get normalized area
        self.area = normalized_grid_cell_area(self.model.module.lat_lon_grid[:, :, 0] if dist.world_size > 1 else self.model.lat_lon_grid[:, :, 0], unit="deg")
        self.area = self.area.to(dtype=self.dtype).to(device=dist.device)

        # instantiate the training datapipe
        self.datapipe = ERA5HDF5Datapipe(
            data_dir=to_absolute_path(os.path.join(cfg.dataset_path, "train")),
            stats_dir=to_absolute_path(os.path.join(cfg.dataset_path, "stats")),
            channels=[i for i in range(cfg.num_channels_climate)],
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
        self.criterion = CellAreaWeightedLossFunction(self.area)
        try:
            self.optimizer = apex.optimizers.FusedAdam(
                self.model.parameters(), lr=cfg.lr, betas=(0.9, 0.95), adam_w_mode=True, weight_decay=0.1
            )
            rank_zero_logger.info("Using FusedAdam")
        except:
            self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, betas=(0.9, 0.95), weight_decay=0.1)
        scheduler1 = torch.optim.lr_scheduler.LinearLR(self.optimizer, start_factor=1e-3, end_factor=1.0, total_iters=cfg.num_iters_step1)
        scheduler2 = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=cfg.num_iters_step2, eta_min=0.0)
        scheduler3 = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lr_lambda=lambda epoch: (cfg.lr_step3 / cfg.lr))
        self.scheduler = torch.optim.lr_scheduler.SequentialLR(
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
        if cfg.num_channels_static > 0:
            self.static_data = StaticData(to_absolute_path(cfg.static_dataset_path), self.model.latitudes, self.model.longitudes).get()
            self.static_data = self.static_data.to(device=dist.device)
        else:
            self.static_data = None

        # instantiate the validation
        if dist.rank == 0:
            self.validation = Validation(cfg, self.model, self.dtype, self.dist, rank_zero_logger)

        # side stream for capturing the training step
        self.capture_stream = torch.cuda.Stream()
        self.train_graph = None

    def rollout(self, grid_nfeat, y):
        with torch.autocast(device_type="cuda", enabled=self.cfg.amp, dtype=self.amp_dtype):
            # full bf16 has no autocast: the model itself is bf16
            loss = 0
            pred_prev = grid_nfeat
            for i in range(y.size(dim=1)):
                pred = self.model(pred_prev)
                loss += self.criterion(pred, y[:, i : i + 1])
                pred_prev = pred
            return loss

    def train(self, grid_nfeat, y):
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.rollout(grid_nfeat, y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss

    def train_step_graphed(self, grid_nfeat, y):
        """Replay a captured CUDA graph of forward+backward+optimizer step (static shapes only)."""
        if self.train_graph is None:
            self.static_in = grid_nfeat.clone()
            self.static_y = y.clone()
            self.capture_stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.capture_stream):
                for _ in range(3):  # warm up the allocator and the optimizer state
                    self.train(self.static_in, self.static_y)
            torch.cuda.current_stream().wait_stream(self.capture_stream)
            self.train_graph = torch.cuda.CUDAGraph()
            self.optimizer.zero_grad(set_to_none=True)
            with torch.cuda.graph(self.train_graph):
                self.static_loss = self.train(self.static_in, self.static_y)
        self.static_in.copy_(grid_nfeat)
        self.static_y.copy_(y)
        self.train_graph.replay()
        return self.static_loss


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    # initialize distributed manager
    DistributedManager.initialize()
    dist = DistributedManager()

    # initialize loggers
    if dist.rank == 0:
        initialize_wandb(project="Modulus-Launch", entity="Modulus", name=f"GraphCast-{cfg.run_id}", group="graphcast",
                         mode=cfg.wb_mode)
    logger = PythonLogger("main")  # General python logger
    rank_zero_logger = RankZeroLoggingWrapper(logger, dist)  # Rank 0 logger
    rank_zero_logger.file_logging()

    # print ranks and devices
    logger.info(f"Rank: {dist.rank}, Device: {dist.device}")

    # specify the datapipe
    trainer = GraphCastTrainer(cfg, dist, rank_zero_logger)
    start = time.time()
    rank_zero_logger.info("Training started...")
    loss_agg, iter, tagged_iter, num_rollout_steps = 0, trainer.iter_init, 1, 1
    terminate_training, finetune, update_dataloader = False, False, False

    with torch.autograd.profiler.emit_nvtx(enabled=cfg.profile, record_shapes=cfg.profile):
        while True:
            for i, data in enumerate(trainer.datapipe):
                if iter >= cfg.num_iters_step1 + cfg.num_iters_step2 + cfg.num_iters_step3:
                    terminate_training = True
                    break
                # profiler hooks
                if cfg.profile and iter == cfg.profile_range[0]:
                    rank_zero_logger.info("Starting profile", "green")
                    torch.cuda.profiler.start()
                if cfg.profile and iter == cfg.profile_range[1]:
                    rank_zero_logger.info("Ending profile", "green")
                    torch.cuda.profiler.stop()
                torch.cuda.nvtx.range_push("Training iteration")

                invar = data[0]["invar"]
                outvar = data[0]["outvar"]
                invar, outvar = prepare_input(invar, outvar, trainer.static_data, cfg.num_channels_climate, dist.device,
                                              trainer.dtype)

                # training step
                if cfg.cuda_graphs and not finetune:
                    loss = trainer.train_step_graphed(invar, outvar)
                else:
                    loss = trainer.train(invar, outvar)
                trainer.scheduler.step()
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
                    save_checkpoint(to_absolute_path(cfg.ckpt_path), models=trainer.model, optimizer=trainer.optimizer,
                                    scheduler=trainer.scheduler, scaler=trainer.scaler, epoch=iter)
                    logger.info(f"Saved model on rank {dist.rank}")
                    logger.log(
                        f"iteration: {iter}, loss: {loss_agg/cfg.save_freq:10.3e}, time per iter: {(time.time()-start)/cfg.save_freq:10.3e}, "
                        f"peak mem: {torch.cuda.max_memory_allocated(dist.device) / 2**30:.2f} GiB"
                    )
                    wandb.log({"loss": loss_agg / cfg.save_freq, "learning_rate": trainer.scheduler.get_last_lr()[0]}, step=iter)
                    loss_agg = 0
                    start = time.time()
                iter += 1

                torch.cuda.nvtx.range_pop()

            if terminate_training:
                break
    rank_zero_logger.info("Finished training!")


if __name__ == "__main__":
    import numpy as np

    main()
