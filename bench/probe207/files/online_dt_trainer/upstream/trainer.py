"""
Copyright (c) Meta Platforms, Inc. and affiliates.

This source code is licensed under the CC BY-NC 4.0 license found in the
LICENSE file in the root directory of this source tree.

Mixed-precision variant of the sequence trainer: bf16 autocast on Ampere+
cards, fp16 + GradScaler on older ones.
"""

import numpy as np
import torch
import time


class SequenceTrainer:
    def __init__(
        self,
        model,
        optimizer,
        log_temperature_optimizer,
        scheduler=None,
        device="cuda",
        use_amp=True,
    ):
        self.model = model
        self.optimizer = optimizer
        self.log_temperature_optimizer = log_temperature_optimizer
        self.scheduler = scheduler
        self.device = device
        self.use_amp = use_amp
        # bf16 needs sm_80+, otherwise fall back to fp16 with loss scaling
        self.amp_dtype = (
            torch.bfloat16
            if torch.cuda.get_device_capability()[0] >= 8
            else torch.float16
        )
        self.scaler = torch.cuda.amp.GradScaler(
            enabled=use_amp and self.amp_dtype == torch.float16
        )
        self.start_time = time.time()

    def train_iteration(
        self,
        loss_fn,
        dataloader,
    ):

        losses, nlls, entropies = [], [], []
        logs = dict()
        train_start = time.time()

        self.model.train()
        for _, trajs in enumerate(dataloader):
            loss, nll, entropy = self.train_step_stochastic(loss_fn, trajs)
            losses.append(loss)
            nlls.append(nll)
            entropies.append(entropy)

        logs["time/training"] = time.time() - train_start
        logs["training/train_loss_mean"] = np.mean(losses)
        logs["training/train_loss_std"] = np.std(losses)
        logs["training/nll"] = nlls[-1]
        logs["training/entropy"] = entropies[-1]
        logs["training/temp_value"] = self.model.temperature().detach().cpu().item()
        logs["training/max_mem_gb"] = torch.cuda.max_memory_allocated(self.device) / 1e9
        torch.cuda.reset_peak_memory_stats(self.device)

        return logs

    def train_step_stochastic(self, loss_fn, trajs):
        (
            states,
            actions,
            rewards,
            dones,
            rtg,
            timesteps,
            ordering,
            padding_mask,
        ) = trajs

        states = states.to(self.device, non_blocking=True)
        actions = actions.to(self.device, non_blocking=True)
        rewards = rewards.to(self.device, non_blocking=True)
        dones = dones.to(self.device, non_blocking=True)
        rtg = rtg.to(self.device, non_blocking=True)
        timesteps = timesteps.to(self.device, non_blocking=True)
        ordering = ordering.to(self.device, non_blocking=True)
        padding_mask = padding_mask.to(self.device, non_blocking=True)

        action_target = torch.clone(actions)

        with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=self.amp_dtype):
            _, action_preds, _ = self.model.forward(
                states,
                actions,
                rewards,
                rtg[:, :-1],
                timesteps,
                ordering,
                padding_mask=padding_mask,
            )

            loss, nll, entropy = loss_fn(
                action_preds,  # a_hat_dist
                action_target,
                padding_mask,
                self.model.temperature().detach(),  # no gradient taken here
            )
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 0.25)
        self.scaler.step(self.optimizer)
        self.scaler.update()

        # temperature is tiny; keep it in fp32 and outside the scaler
        self.log_temperature_optimizer.zero_grad()
        temperature_loss = (
            self.model.temperature() * (entropy - self.model.target_entropy).detach()
        )
        temperature_loss.backward()
        self.log_temperature_optimizer.step()

        if self.scheduler is not None:
            self.scheduler.step()

        return (
            loss.detach().cpu().item(),
            nll.detach().cpu().item(),
            entropy.detach().cpu().item(),
        )
