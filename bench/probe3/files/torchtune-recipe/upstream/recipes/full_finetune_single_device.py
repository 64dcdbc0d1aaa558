# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.
"""Full-parameter fine-tuning on one device: bf16, torch.compile, fused optimizers, pinned-memory loading."""
import sys
import time
from functools import partial
from typing import Any, Dict, Optional

import torch
from omegaconf import DictConfig
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.data import DataLoader, DistributedSampler
from torchtune import config, modules, training, utils
from torchtune.data import padded_collate_sft
from torchtune.recipe_interfaces import FTRecipeInterface
from tqdm import tqdm

log = utils.get_logger("DEBUG")


class FullFinetuneRecipeSingleDevice(FTRecipeInterface):
    """Full finetuning recipe for dense transformer-based LLMs such as Llama / Qwen / Gemma."""

    def __init__(self, cfg: DictConfig) -> None:
        self._device = utils.get_device(device=cfg.device)
        self._dtype = training.get_dtype(cfg.dtype, device=self._device)
        # fp16 needs a loss scaler, which this recipe does not carry
        if self._dtype == torch.float16:
            raise ValueError("full fp16 training is not supported with this recipe. Please use bf16 or fp32 instead.")
        if self._dtype == torch.bfloat16 and torch.cuda.get_device_capability(self._device) < (8, 0):
            raise RuntimeError("bf16 training needs an Ampere or newer GPU")
        self._output_dir = cfg.output_dir
        self._log_every_n_steps = cfg.get("log_every_n_steps", 1)
        self._log_peak_memory_stats = cfg.get("log_peak_memory_stats", False)
        self._gradient_accumulation_steps = cfg.gradient_accumulation_steps
        self._compile = cfg.compile
        self._autocast = cfg.get("autocast", False)
        self.seed = training.set_seed(seed=cfg.seed)
        self.epochs_run = 0
        self.total_epochs = cfg.epochs
        self.max_steps_per_epoch = cfg.max_steps_per_epoch
        self.global_step = 0

    def setup(self, cfg: DictConfig) -> None:
        ckpt_dict = self.load_checkpoint(cfg_checkpointer=cfg.checkpointer)
        self._model = self._setup_model(cfg_model=cfg.model,
                                        enable_activation_checkpointing=cfg.enable_activation_checkpointing,
                                        compile_model=cfg.compile, model_state_dict=ckpt_dict[training.MODEL_KEY])
        self._tokenizer = config.instantiate(cfg.tokenizer)
        self._optimizer = self._setup_optimizer(cfg_optimizer=cfg.optimizer)
        self._loss_fn = config.instantiate(cfg.loss)
        if self._compile:
            training.compile_loss(self._loss_fn)
        self._sampler, self._dataloader = self._setup_data(cfg_dataset=cfg.dataset, shuffle=cfg.shuffle,
                                                           batch_size=cfg.batch_size)
        self._steps_per_epoch = len(self._dataloader) // self._gradient_accumulation_steps
        if self.max_steps_per_epoch is not None and self.max_steps_per_epoch < self._steps_per_epoch:
            self._steps_per_epoch = self.max_steps_per_epoch
        self._lr_scheduler = config.instantiate(cfg.lr_scheduler, self._optimizer,
                                                num_training_steps=self.total_epochs * self._steps_per_epoch)

    def load_checkpoint(self, cfg_checkpointer: DictConfig) -> Dict[str, Any]:
        self._checkpointer = config.instantiate(cfg_checkpointer)
        return self._checkpointer.load_checkpoint()

    def _setup_model(self, cfg_model: DictConfig, enable_activation_checkpointing: bool, compile_model: bool,
                     model_state_dict: Dict[str, Any]) -> torch.nn.Module:
        with training.set_default_dtype(self._dtype), self._device:
            model = config.instantiate(cfg_model)
        if enable_activation_checkpointing:
            training.set_activation_checkpointing(model, auto_wrap_policy={modules.TransformerSelfAttentionLayer})
        model.load_state_dict(model_state_dict)
        training.validate_expected_param_dtype(model.named_parameters(), dtype=self._dtype)
        if compile_model:
            # per-layer compile keeps recompiles cheap; max-autotune picks the best Triton GEMM templates
            for m in reversed(list(model.modules())):
                if isinstance(m, modules.TransformerSelfAttentionLayer):
                    m.compile(mode="max-autotune", dynamic=False)
        log.info(f"Model is initialized with precision {self._dtype}.")
        if self._device.type != "cpu":
            memory_stats = training.get_memory_stats(device=self._device)
            training.log_memory_stats(memory_stats)
        return model

    def _setup_optimizer(self, cfg_optimizer: DictConfig) -> torch.optim.Optimizer:
        params = [p for p in self._model.parameters() if p.requires_grad]
        name = cfg_optimizer.get("name", "adamw")
        if name == "adamw":
            optimizer = torch.optim.AdamW(params, lr=cfg_optimizer.lr, weight_decay=cfg_optimizer.weight_decay,
                                          fused=True)
        elif name == "adam":
            optimizer = torch.optim.Adam(params, lr=cfg_optimizer.lr, fused=True)
        elif name == "sgd":
            optimizer = torch.optim.SGD(params, lr=cfg_optimizer.lr, momentum=0.9, fused=True)
        elif name == "apex_adam":
            from apex.optimizers import FusedAdam
            optimizer = FusedAdam(params, lr=cfg_optimizer.lr, weight_decay=cfg_optimizer.weight_decay,
                                  adam_w_mode=True)
        else:
            optimizer = config.instantiate(cfg_optimizer, params)
        log.info(f"Optimizer {type(optimizer).__name__} is initialized.")
        return optimizer

    def _setup_data(self, cfg_dataset: DictConfig, shuffle: bool, batch_size: int):
        ds = config.instantiate(cfg_dataset, self._tokenizer)
        sampler = DistributedSampler(ds, num_replicas=1, rank=0, shuffle=shuffle, seed=0)
        dataloader = DataLoader(
            dataset=ds,
            sampler=sampler,
            batch_size=batch_size,
            drop_last=True,
            num_workers=4,
            pin_memory=True,
            pin_memory_device="cuda",
            collate_fn=partial(padded_collate_sft, padding_idx=self._tokenizer.pad_id,
                               ignore_idx=self._loss_fn.ignore_index),
        )
        log.info("Dataset and Sampler are initialized.")
        return sampler, dataloader

    def _loss_step(self, batch: Dict[str, torch.Tensor]) -> torch.Tensor:
        labels = batch.pop("labels")
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=self._autocast):
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
                logits = self._model(**batch)
        labels = torch.hstack((labels[..., 1:], self.ignore_labels_cache[: labels.shape[0]]))
        if not isinstance(logits, list):
            labels = labels.reshape(-1)
            logits = logits.reshape(-1, logits.size(-1))
        loss = self._loss_fn(logits, labels)
        del logits
        return loss

    def train(self) -> None:
        if self._compile:
            log.info("NOTE: torch.compile is enabled and model is compiled in first forward. "
                     "Expect a relatively slow first iteration.")
        self.ignore_labels_cache = torch.full((64, 1), self._loss_fn.ignore_index, device=self._device)
        t0 = time.perf_counter()
        running_loss, num_tokens = 0, 0
        self._optimizer.zero_grad()
        for curr_epoch in range(self.epochs_run, self.total_epochs):
            self._sampler.set_epoch(curr_epoch)
            pbar = tqdm(total=self._steps_per_epoch)
            for idx, batch in enumerate(self._dataloader):
                if self.max_steps_per_epoch is not None and \
                        (idx // self._gradient_accumulation_steps) == self.max_steps_per_epoch:
                    break
                utils.batch_to_device(batch, self._device)
                num_tokens += (batch["labels"] != self._loss_fn.ignore_index).sum()
                current_loss = self._loss_step(batch) * (batch["labels"] != -100).sum()
                running_loss += current_loss
                current_loss.backward()
                if (idx + 1) % self._gradient_accumulation_steps == 0:
                    training.scale_grads(self._model, 1 / num_tokens)
                    self._optimizer.step()
                    self._optimizer.zero_grad(set_to_none=True)
                    self._lr_scheduler.step()
                    self.global_step += 1
                    loss_to_log = running_loss.item() / num_tokens
                    pbar.update(1)
                    pbar.set_description(f"{curr_epoch + 1}|{self.global_step}|Loss: {loss_to_log}")
                    if self.global_step % self._log_every_n_steps == 0:
                        time_per_step = time.perf_counter() - t0
                        log_dict = {"loss": loss_to_log, "lr": self._optimizer.param_groups[0]["lr"],
                                    "tokens_per_second_per_gpu": num_tokens / time_per_step}
                        if self._device.type != "cpu" and self._log_peak_memory_stats:
                            log_dict.update(training.get_memory_stats(device=self._device))
                        log.info(log_dict)
                    running_loss, num_tokens = 0, 0
                    t0 = time.perf_counter()
            self.epochs_run += 1


@config.parse
def recipe_main(cfg: DictConfig) -> None:
    config.log_config(recipe_name="FullFinetuneRecipeSingleDevice", cfg=cfg)
    recipe = FullFinetuneRecipeSingleDevice(cfg=cfg)
    recipe.setup(cfg=cfg)
    recipe.train()


if __name__ == "__main__":
    sys.exit(recipe_main())
