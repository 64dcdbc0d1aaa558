# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

import typing as tp
from pathlib import Path

import flashy
import omegaconf
import torch
from torch import nn

from . import base, builders
from .. import models
from ..data.audio_dataset import AudioDataset
from ..losses.loudnessloss import TFLoudnessRatio
from ..losses.wmloss import WMMbLoss
from ..metrics.miou import calculate_miou
from ..metrics.pesq import PesqMetric
from ..modules.watermark import pad, mix
from ..utils.audio_effects import (
    compress_with_encodec,
    get_audio_effects,
    select_audio_effects,
)
from ..utils.samples.manager import SampleManager
from ..utils.utils import get_pool_executor


def get_encodec_audio_effect(encodec_cfg: omegaconf.DictConfig, sr: int) -> tp.Dict:
    """
    Construct encodec-based compression data agumentation. This method is
    is put here instead of in `audiocraft.utils.audio_effects` because
    it depends on the package `audiocraft.solvers`, which is one layer
    higher than `audiocraft.utils`, so we avoid the circle dependency
    from any solvers using `audiocraft.utils.audio_effects` to do the
    augmentation
    """
    from ..solvers.compression import CompressionSolver

    codec_model = CompressionSolver.model_from_checkpoint(encodec_cfg.ckpt)
    codec_model.train()
    return {
        f"encodec_nq={n_q}": partial(
            compress_with_encodec,
            model=codec_model,
            n_q=n_q,
            sample_rate=sr,
        )
        for n_q in encodec_cfg.n_qs
    }


def partial(fn, **kw):
    import functools
    return functools.partial(fn, **kw)


class WatermarkSolver(base.StandardSolver):
    """Solver for different watermarking models"""

    def __init__(self, cfg: omegaconf.DictConfig):
        super().__init__(cfg)
        self.rng: torch.Generator  # set at each epoch
        self.model: models.WMModel
        if hasattr(cfg, "fsdp"):
            assert not getattr(
                cfg.fsdp, "use", False
            ), "FSDP not supported by WatermarkSolver."
        self.scaler: tp.Optional[torch.cuda.amp.GradScaler] = None
        if self.cfg.autocast and self.autocast_dtype == torch.float16:
            self.scaler = torch.cuda.amp.GradScaler()
        self.register_stateful('scaler')
        self.augmentations = get_audio_effects(self.cfg)
        self.balancer = builders.get_balancer(self.loss_weights, self.cfg.balancer)
        self.path_specs = cfg.get("path_specs", None)

        # Encodec-based augmentation is costly, build the model only once
        if "encodec" in self.cfg.audio_effects.select_aug:
            self.augmentations.update(
                get_encodec_audio_effect(self.cfg.audio_effects.encodec, self.cfg.sample_rate)
            )

    @property
    def best_metric_name(self) -> tp.Optional[str]:
        # best model is the last for the watermark model for now
        return None

    def build_model(self):
        """Instantiate model and optimizer."""
        # Model and optimizer
        self.model = models.builders.get_watermark_model(self.cfg)
        # Need two optimizers ?
        self.optimizer = builders.get_optimizer(self.model.parameters(), self.cfg.optim)
        self.register_stateful("model", "optimizer")
        self.register_best_state("model")
        self.register_ema("model")

    def build_dataloaders(self):
        """Instantiate audio dataloaders for each stage."""
        self.dataloaders = builders.get_audio_datasets(self.cfg)

    def show(self):
        """Show the Watermarking model and employed adversarial loss."""
        self.log_model_summary(self.model)
        self.logger.info("Sould print losses here:")

    def crop(
        self, signal: torch.Tensor, watermark: torch.Tensor
    ) -> tp.Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """
        Applies a transformation to modify the watermarked signal to train localization.
        It can be one of the following:
            - zero padding: add zeros at the begining and the end of the signal
            - crop: Crop the watermark apply a watermark only on some parts of the signal
            - shuffle: replace some part of the audio with other non watermarked parts
                from the batch
        In every cases the function returns a mask that contains indicates the parts that are or
        not watermarked
        """
        assert self.cfg.crop.prob + self.cfg.crop.shuffle_prob + self.cfg.crop.pad_prob <= 1
        mask = torch.ones_like(watermark)
        p = torch.rand(1)
        if p < self.cfg.crop.pad_prob:  # Pad with some probability
            start = int(torch.rand(1) * 0.33 * watermark.size(-1))
            finish = int((0.66 + torch.rand(1) * 0.33) * watermark.size(-1))
            mask[:, :, :start] = 0
            mask[:, :, finish:] = 0
            if torch.rand(1) > 0.5:
                mask = 1 - mask
            signal *= mask  # pad signal

        elif p < self.cfg.crop.prob + self.cfg.crop.pad_prob + self.cfg.crop.shuffle_prob:
            # Define a mask, then crop or shuffle
            mask_size = round(watermark.shape[-1] * self.cfg.crop.size)
            n_windows = int(torch.randint(1, self.cfg.crop.max_n_windows + 1, (1,)).item())
            window_size = int(mask_size / n_windows)
            for _ in range(n_windows):  # Create multiple windows in the mask
                mask_start = torch.randint(0, watermark.shape[-1] - window_size, (1,))
                mask[:, :, mask_start: mask_start + window_size] = 0
            if torch.rand(1) > 0.5:
                mask = 1 - mask
            if p < self.cfg.crop.pad_prob + self.cfg.crop.shuffle_prob:  # shuffle
                # Create a mask for the entire batch
                shuffle_idx = torch.randint(0, signal.size(0), (signal.size(0),))
                signal = signal * mask + signal[shuffle_idx] * (1 - mask)
        watermark *= mask
        return signal, watermark, mask

    def run_step(self, idx: int, batch: torch.Tensor, metrics: dict):
        """Perform one training or valid step on a given batch."""
        x = batch.to(self.device)
        y = x.clone()
        nbits = getattr(self.model, "nbits")
        message = torch.randint(0, 2, (x.shape[0], nbits), device=x.device).float() if nbits else None

        with self.autocast:
            watermark = self.model.get_watermark(x, message=message)
            y, watermark, mask = self.crop(y, watermark)

            y_wm = y + watermark

            if (
                self.cfg.losses.adv != 0 or self.cfg.losses.feat != 0
            ) and self.is_training:  # train quality adv
                d_losses: dict = {}
                if idx % self.cfg.adversarial.every == 0:
                    for adv_name, adversary in self.adv_losses.items():
                        disc_loss = adversary.train_adv(y_wm, y)
                        d_losses[f"d_{adv_name}"] = disc_loss
                    metrics["d_loss"] = torch.sum(torch.stack(list(d_losses.values())))
                metrics.update(d_losses)

            balanced_losses: dict = {}
            other_losses: dict = {}

            # adversarial losses
            if self.cfg.losses.adv != 0 or self.cfg.losses.feat != 0:
                for adv_name, adversary in self.adv_losses.items():
                    adv_loss, feat_loss = adversary(y_wm, y)
                    balanced_losses[f"adv_{adv_name}"] = adv_loss
                    balanced_losses[f"feat_{adv_name}"] = feat_loss

            # auxiliary losses on quality/similarity
            for loss_name, criterion in self.aux_losses.items():
                loss = criterion(y_wm, y)
                balanced_losses[loss_name] = loss

            # apply augmentations
            mode = "all" if self.cfg.select_aug_mode == "all" else "weighted"
            selected_augs = select_audio_effects(
                self.augmentations,
                self.cfg.aug_weights,
                mode=mode,
                max_length=self.cfg.n_max_aug,
            )
            N_augs = len(selected_augs)
            for augmentation_name, augmentation_method in selected_augs.items():
                # concatenate to use the augmentation function only once
                y_y_wm = torch.cat([y, y_wm], dim=0)
                aug_cat, mask_aug = augmentation_method(y_y_wm, mask=mask)
                aug_y = aug_cat[: y.size(0)]
                aug_y_wm = aug_cat[y.size(0):]
                positive = self.model.detector(aug_y_wm)
                negative = self.model.detector(aug_y)
                wm_losses = self.wm_losses(positive, negative, mask_aug, message)

                for loss_name, loss in wm_losses.items():
                    balanced_losses[f"{loss_name}_{augmentation_name}"] = loss / N_augs

        if self.is_training:
            self.optimizer.zero_grad()
            if self.scaler is not None:
                total = sum(balanced_losses.values())
                self.scaler.scale(total).backward()
                self.scaler.unscale_(self.optimizer)
            else:
                other_grad_norm = self.balancer.backward(balanced_losses, y_wm)
                metrics["ratio2"] = other_grad_norm
            if self.cfg.optim.max_norm:
                if self.cfg.fsdp.use:
                    metrics["grad_norm"] = self.model.clip_grad_norm_(self.cfg.optim.max_norm)  # type: ignore
                else:
                    metrics["grad_norm"] = torch.nn.utils.clip_grad_norm_(
                        self.model.parameters(), self.cfg.optim.max_norm
                    )
            flashy.distrib.sync_model(self.model)
            if self.scaler is not None:
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                self.optimizer.step()

        # informative losses only
        metrics.update(balanced_losses)
        metrics.update(other_losses)
        return metrics

    def run_epoch(self):
        # reset random seed at the beginning of the epoch
        self.rng = torch.Generator()
        self.rng.manual_seed(1234 + self.epoch)
        # run epoch
        super().run_epoch()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def evaluate(self) -> dict:
        """Evaluate stage. Runs audio reconstruction evaluation."""
        self.model.eval()
        evaluate_stage_name = str(self.current_stage)

        loader = self.dataloaders["evaluate"]
        updates = len(loader)
        lp = self.log_progress(
            f"{evaluate_stage_name} inference", loader, total=updates, updates=self.log_updates
        )
        average = flashy.averager()

        pendings = []
        ctx = multiprocessing.get_context("spawn")
        with get_pool_executor(self.cfg.evaluate.num_workers, mp_context=ctx) as pool:
            for idx, batch in enumerate(lp):
                x = batch.to(self.device)
                with torch.no_grad():
                    message = torch.randint(0, 2, (x.shape[0], self.model.nbits), device=x.device).float()
                    y_wm = self.model(x, message=message)
                y_wm_cpu = y_wm.cpu()
                x_cpu = x.cpu()
                pendings.append(pool.submit(evaluate_audio_watermark, y_wm_cpu, x_cpu, self.cfg))

            metrics_lp = self.log_progress(f"{evaluate_stage_name} metrics", pendings, updates=self.log_updates)
            for pending in metrics_lp:
                metrics = pending.result()
                metrics = average(metrics)

        metrics = flashy.distrib.average_metrics(metrics, len(loader))
        return metrics

    def generate(self):
        """Generate stage."""
        self.model.eval()
        sample_manager = SampleManager(self.xp, map_reference_to_sample_id=True)
        generate_stage_name = str(self.current_stage)

        loader = self.dataloaders["generate"]
        updates = len(loader)
        lp = self.log_progress(generate_stage_name, loader, total=updates, updates=self.log_updates)
        path_dir = Path(self.path_specs) if self.path_specs else None

        for batch in lp:
            reference, _ = batch
            reference = reference.to(self.device)
            with torch.no_grad():
                message = torch.randint(0, 2, (reference.shape[0], self.model.nbits)).to(self.device)
                estimate = self.model(reference, message=message.float())

            reference = reference.cpu()
            estimate = estimate.cpu()
            sample_manager.add_samples(estimate, self.epoch, ground_truth_wavs=reference)
            if path_dir is not None:
                path_dir.mkdir(parents=True, exist_ok=True)

        flashy.distrib.barrier()


def evaluate_audio_watermark(
    y_pred: torch.Tensor,
    y: torch.Tensor,
    cfg: omegaconf.DictConfig,
) -> tp.Dict[str, torch.Tensor]:
    """Audio reconstruction evaluation method that can be conveniently pickled."""
    metrics = {}
    if cfg.evaluate.metrics.visqol:
        visqol = builders.get_visqol(cfg.metrics.visqol)
        metrics["visqol"] = visqol(y_pred, y, cfg.sample_rate)
    sisnr = builders.get_loss("sisnr", cfg)
    metrics["sisnr"] = sisnr(y_pred, y)
    if cfg.evaluate.metrics.pesq:
        pesq = PesqMetric(cfg.sample_rate)
        metrics["pesq"] = pesq(y_pred, y)
    return metrics


import multiprocessing  # noqa: E402  (kept at the bottom as upstream)
