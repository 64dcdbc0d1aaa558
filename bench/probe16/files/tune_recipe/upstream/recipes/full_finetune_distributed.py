# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

import sys
import time
from functools import partial
from typing import Any, Dict, Optional

import torch
from omegaconf import DictConfig
from torch import nn
from torch.distributed import destroy_process_group, init_process_group
from torch.utils.data import DataLoader, DistributedSampler

from torchtune import config, modules, training, utils
from torchtune.data import padded_collate_packed, padded_collate_sft
from torchtune.recipe_interfaces import FTRecipeInterface
from torchtune.training import DummyProfiler, PROFILER_KEY

log = utils.get_logger("DEBUG")


class FullFinetuneRecipeDistributed(FTRecipeInterface):
    """
    Full finetuning recipe for dense transformer-based LLMs such as Llama2. This recipe supports
    distributed training and can be run on a single node (1 to 8 GPUs).

    Features:
        - FSDP2 sharding via ``fully_shard``.
        - Activation checkpointing and activation offloading to CPU.
        - bf16 training only; fp16 is not supported.
    """

    def __init__(self, cfg: DictConfig) -> None:
        self._device = utils.get_device(device=cfg.device)
        self._dtype = training.get_dtype(cfg.dtype, device=self._device)

        if self._dtype == torch.float16:
            raise ValueError("full fp16 training is not supported with this recipe. Please use bf16 or fp32 instead.")

        if cfg.get("fsdp_cpu_offload", False) and cfg.optimizer.get("fused", False) and not utils.torch_version_ge("2.4.0"):
            raise RuntimeError("Using fused optimizer on CPU is only supported in PyTorch nightly.")

        self._output_dir = cfg.output_dir
        self._log_every_n_steps = cfg.get("log_every_n_steps", 1)
        self._log_peak_memory_stats = cfg.get("log_peak_memory_stats", False)

        if self._log_peak_memory_stats and self._device.type != "cuda":
            log.info("log_peak_memory_stats was set to True, however, training does not use cuda. Setting to False.")
            self._log_peak_memory_stats = False

        self.world_size, self.rank = training.get_world_size_and_rank()
        self._is_rank_zero = self.rank == 0
        self._enable_activation_checkpointing = cfg.get("enable_activation_checkpointing", False)
        self._enable_activation_offloading = cfg.get("enable_activation_offloading", False)
        if self._enable_activation_offloading and self._device.type != "cuda":
            raise RuntimeError("enable_activation_offloading should only be True when training on CUDA")

        self.seed = training.set_seed(seed=cfg.seed)
        self.epochs_run = 0
        self.total_epochs = cfg.epochs
        self.max_steps_per_epoch = cfg.max_steps_per_epoch
        self.global_step = 0

    def setup(self, cfg: DictConfig) -> None:
        if self._is_rank_zero:
            self._metric_logger = config.instantiate(cfg.metric_logger)
            self._metric_logger.log_config(cfg)

        self._compile = cfg.get("compile", False)
        self._model = self._setup_model(
            cfg_model=cfg.model,
            enable_activation_checkpointing=self._enable_activation_checkpointing,
            fsdp_cpu_offload=cfg.get("fsdp_cpu_offload", False),
            reshard_after_forward=cfg.get("fsdp_reshard_after_forward", True),
        )
        self._tokenizer = config.instantiate(cfg.tokenizer)
        self._optimizer = config.instantiate(cfg.optimizer, self._model.parameters())
        self._loss_fn = config.instantiate(cfg.loss)
        if self._compile:
            training.compile_loss(self._loss_fn, verbose=self._is_rank_zero)

        self._sampler, self._dataloader = self._setup_data(cfg.dataset, cfg.shuffle, cfg.batch_size)
        self._steps_per_epoch = len(self._dataloader) // cfg.gradient_accumulation_steps
        self._profiler = self._setup_profiler(cfg.get(PROFILER_KEY, None))

    def _setup_profiler(self, cfg_profiler: Optional[DictConfig]):
        if cfg_profiler is None:
            return DummyProfiler()
        profiler, profiler_cfg = config.instantiate(cfg_profiler)
        log.info(f" Profiler config after instantiation: {profiler_cfg}")
        return profiler

    def _setup_model(self, cfg_model, enable_activation_checkpointing, fsdp_cpu_offload, reshard_after_forward):
        init_start = time.perf_counter()
        with training.set_default_dtype(self._dtype), torch.device("meta"):
            model = config.instantiate(cfg_model)
        if self._compile:
            training.compile_model(model, verbose=self._is_rank_zero)
        if enable_activation_checkpointing:
            training.set_activation_checkpointing(model, auto_wrap_policy={modules.TransformerSelfAttentionLayer})
        training.shard_model(
            model=model,
            shard_conditions=[partial(training.get_shard_conditions, names_to_match=None)],
            cpu_offload=fsdp_cpu_offload,
            reshard_after_forward=reshard_after_forward,
        )
        with training.set_default_dtype(self._dtype), self._device:
            for m in model.modules():
                if hasattr(m, "rope_init"):
                    m.rope_init()
        self.activations_handling_ctx = training.get_act_offloading_ctx_manager(model, self._enable_activation_offloading)
        if self._is_rank_zero:
            log.info(f"Instantiating model and loading checkpoint took {time.perf_counter() - init_start:.2f} secs")
            memory_stats = training.get_memory_stats(device=self._device)
            training.log_memory_stats(memory_stats)
        torch.distributed.barrier()
        return model

    def _setup_data(self, cfg_dataset, shuffle, batch_size):
        ds = config.instantiate(cfg_dataset, self._tokenizer)
        collate_fn = padded_collate_packed if cfg_dataset.get("packed", False) else partial(
            padded_collate_sft, padding_idx=self._tokenizer.pad_id, ignore_idx=self._loss_fn.ignore_index
        )
        sampler = DistributedSampler(ds, num_replicas=self.world_size, rank=self.rank, shuffle=shuffle, seed=0)
        dataloader = DataLoader(dataset=ds, batch_size=batch_size, sampler=sampler, drop_last=True,
                                collate_fn=collate_fn, pin_memory=True, num_workers=4)
        return sampler, dataloader

    def train(self) -> None:
        training.cleanup_before_training()
        self._optimizer.zero_grad()
        t0 = time.perf_counter()
        running_loss, num_tokens = 0, 0
        self._profiler.start()
        for curr_epoch in range(self.epochs_run, self.total_epochs):
            self._sampler.set_epoch(curr_epoch)
            for idx, batch in enumerate(self._dataloader):
                if self._is_rank_zero and idx == 3 and self._log_peak_memory_stats:
                    torch.cuda.memory._record_memory_history()
                utils.batch_to_device(batch, self._device)
                current_num_tokens = (batch["labels"] != self._loss_fn.ignore_index).sum()
                num_tokens += current_num_tokens
                labels = batch.pop("labels")
                with self.activations_handling_ctx:
                    logits = self._model(**batch)
                labels = torch.hstack((labels[..., 1:], self.ignore_labels_cache[: labels.shape[0]]))
                current_loss = self._loss_fn(logits, labels) * current_num_tokens
                del logits
                running_loss += current_loss
                current_loss.backward()
                torch.distributed.all_reduce(num_tokens)
                torch.distributed.all_reduce(running_loss)
                training.scale_grads(self._model, self.world_size / num_tokens)
                self._optimizer.step()
                self._optimizer.zero_grad(set_to_none=True)
                self.global_step += 1
                loss_to_log = running_loss.item() / num_tokens
                if self.global_step % self._log_every_n_steps == 0 and self._is_rank_zero:
                    time_per_step = time.perf_counter() - t0
                    log_dict = {"loss": loss_to_log, "tokens_per_second_per_gpu": num_tokens / (time_per_step * self.world_size)}
                    if self._log_peak_memory_stats:
                        log_dict.update(training.get_memory_stats(device=self._device))
                    self._metric_logger.log_dict(log_dict, step=self.global_step)
                if self._is_rank_zero and idx == 6 and self._log_peak_memory_stats:
                    torch.cuda.memory._dump_snapshot("memory_snapshot.pickle")
                    torch.cuda.memory._record_memory_history(enabled=None)
                running_loss, num_tokens = 0, 0
                t0 = time.perf_counter()
                self._profiler.step()
            self.epochs_run += 1
        self._profiler.stop()

    def cleanup(self) -> None:
        if self._is_rank_zero:
            self._metric_logger.close()
        destroy_process_group()


@config.parse
def recipe_main(cfg: DictConfig) -> None:
    if not training.is_distributed():
        raise RuntimeError("Distributed finetune recipe should be run via a distributed launcher.")
    init_process_group("cuda:nccl,cpu:gloo")
    if cfg.get("fsdp_cpu_offload", False):
        # Utilize all available CPU cores for intra-op parallelism.
        training.set_torch_num_threads()
    config.log_config(recipe_name="FullFinetuneRecipeDistributed", cfg=cfg)
    recipe = FullFinetuneRecipeDistributed(cfg=cfg)
    recipe.setup(cfg=cfg)
    recipe.train()
    recipe.cleanup()


if __name__ == "__main__":
    sys.exit(recipe_main())
