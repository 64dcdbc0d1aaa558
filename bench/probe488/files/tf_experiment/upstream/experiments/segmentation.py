import logging
import os
from time import perf_counter

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torchio as tio
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm

from dataloader.AugFactory import AugFactory
from dataloader.Maxillo import Maxillo
from eval import Eval as Evaluator
from losses.LossFactory import LossFactory
from models.ModelFactory import ModelFactory
from optimizers.OptimizerFactory import OptimizerFactory
from schedulers.SchedulerFactory import SchedulerFactory


class Segmentation:
    def __init__(self, config, device, debug=False):
        self.config = config
        self.device = device
        self.debug = debug
        self.epoch = 0
        self.metrics = {}
        self.best_metric = 0.0

        num_classes = len(self.config.data_loader.labels)
        if "Jaccard" in self.config.loss.name or num_classes == 2:
            num_classes = 1

        # load model
        model_name = self.config.model.name
        in_ch = 2 if self.config.experiment.name == "Generation" else 1
        emb_shape = [dim // 8 for dim in self.config.data_loader.patch_shape]

        self.model = ModelFactory(model_name, num_classes, in_ch, emb_shape).get().to(self.device)
        if self.config.distributed and self.config.trainer.get("sync_bn", False):
            self.model = nn.SyncBatchNorm.convert_sync_batchnorm(self.model)
        if self.config.distributed:
            self.model = DDP(self.model, device_ids=[self.config.local_rank], output_device=self.config.local_rank,
                             find_unused_parameters=False)
        else:
            self.model = nn.DataParallel(self.model)

        wandb_watch = not self.config.distributed or self.config.rank == 0
        if wandb_watch:
            import wandb
            wandb.watch(self.model, log_freq=10)

        # load optimizer
        optim_name = self.config.optimizer.name
        train_params = self.model.parameters()
        lr = self.config.optimizer.learning_rate
        self.optimizer = OptimizerFactory(optim_name, train_params, lr).get()

        # load scheduler
        sched_name = self.config.lr_scheduler.name
        sched_milestones = self.config.lr_scheduler.get("milestones", None)
        sched_gamma = self.config.lr_scheduler.get("factor", None)
        self.scheduler = SchedulerFactory(sched_name, self.optimizer, milestones=sched_milestones, gamma=sched_gamma,
                                          mode="max", verbose=True, patience=15).get()

        # load loss
        self.loss = LossFactory(self.config.loss.name, self.config.data_loader.labels)

        # mixed precision
        self.use_amp = bool(self.config.trainer.get("amp", False))
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)

        # load evaluator
        self.evaluator = Evaluator(self.config, skip_dump=True)

        self.train_dataset = Maxillo(root=self.config.data_loader.dataset, filename="splits.json", splits="train",
                                     transform=tio.Compose([
                                         tio.CropOrPad(self.config.data_loader.resize_shape, padding_mode=0),
                                         self.config.data_loader.preprocessing,
                                         self.config.data_loader.augmentations,
                                     ]), dist_map=["sparse", "dense"])
        self.val_dataset = Maxillo(root=self.config.data_loader.dataset, filename="splits.json", splits="val",
                                   transform=self.config.data_loader.preprocessing, dist_map=["sparse", "dense"])
        self.test_dataset = Maxillo(root=self.config.data_loader.dataset, filename="splits.json", splits="test",
                                    transform=self.config.data_loader.preprocessing, dist_map=["sparse", "dense"])

        # queue of random patches from the training volumes
        sampler = tio.data.UniformSampler(self.config.data_loader.patch_shape)
        self.patch_loader = tio.Queue(
            subjects_dataset=self.train_dataset,
            max_length=300,
            samples_per_volume=10,
            sampler=sampler,
            num_workers=self.config.data_loader.num_workers,
            shuffle_subjects=True,
            shuffle_patches=True,
            start_background=False,
            subject_sampler=DistributedSampler(self.train_dataset, shuffle=True) if self.config.distributed else None,
        )
        self.train_loader = DataLoader(self.patch_loader, batch_size=self.config.data_loader.batch_size,
                                       num_workers=0, pin_memory=self.config.data_loader.pin_memory)

        if self.config.trainer.reload:
            self.load()

    def save(self, name):
        if "/" in name:
            raise ValueError("name must be a file name, not a path")
        path = os.path.join(self.config.project_dir, "checkpoints", name)
        state = {
            "epoch": self.epoch,
            "state_dict": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scaler": self.scaler.state_dict(),
            "metrics": self.metrics,
            "best_metric": self.best_metric,
        }
        if self.scheduler is not None:
            state["scheduler"] = self.scheduler.state_dict()
        torch.save(state, path)

    def load(self):
        path = self.config.trainer.checkpoint
        logging.info(f"RELOAD - loading checkpoint from {path}")
        state = torch.load(path, map_location=self.device)
        self.model.load_state_dict(state["state_dict"])
        self.optimizer.load_state_dict(state["optimizer"])
        if "scaler" in state:
            self.scaler.load_state_dict(state["scaler"])
        self.epoch = state["epoch"] + 1
        self.best_metric = state.get("best_metric", 0.0)
        if self.scheduler is not None and "scheduler" in state:
            self.scheduler.load_state_dict(state["scheduler"])

    def extract_data_from_patch(self, patch):
        volume = patch["data"][tio.DATA].float().to(self.device, non_blocking=True)
        gt = patch["dense"][tio.DATA].float().to(self.device, non_blocking=True)

        if self.config.experiment.name == "Generation":
            sparse = patch["sparse"][tio.DATA].float().to(self.device, non_blocking=True)
            images = torch.cat([volume, sparse], dim=1)
        else:
            images = volume

        emb_codes = torch.cat((
            patch[tio.LOCATION][:, :3],
            patch[tio.LOCATION][:, :3] + torch.as_tensor(images.shape[-3:])
        ), dim=1).float().to(self.device)

        return images, gt, emb_codes

    def train(self):
        self.model.train()
        self.evaluator.reset_eval()

        losses = []
        t0 = perf_counter()
        show = not self.config.distributed or self.config.rank == 0
        for i, d in tqdm(enumerate(self.train_loader), total=len(self.train_loader), desc=f"Train epoch {str(self.epoch)}",
                         disable=not show):
            images, gt, emb_codes = self.extract_data_from_patch(d)

            partition_weights = 1
            gt_count = torch.sum(gt == 1, dim=list(range(1, gt.ndim)))
            if torch.sum(gt_count) == 0:
                continue
            partition_weights = (1 - 1 / (1 + gt_count)).to(self.device)

            self.optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.use_amp):
                preds = self.model(images, emb_codes)
                assert preds.ndim == gt.ndim, f"Gt and output dimensions are not the same before loss. {preds.ndim} vs {gt.ndim}"
                loss = self.loss(preds, gt, partition_weights)

            losses.append(loss.item())
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()

            preds = (preds > 0.5).squeeze().detach()
            gt = gt.squeeze()
            self.evaluator.compute_metrics(preds, gt)

        epoch_train_loss = sum(losses) / max(len(losses), 1)
        epoch_iou, epoch_dice = self.evaluator.mean_metric(phase="Train")
        if self.config.distributed:
            t = torch.tensor([epoch_train_loss, epoch_iou, epoch_dice], device=self.device)
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
            t /= self.config.world_size
            epoch_train_loss, epoch_iou, epoch_dice = t.tolist()

        self.metrics["Train"] = {"iou": epoch_iou, "dice": epoch_dice}
        logging.info(f"train epoch {self.epoch} took {perf_counter() - t0:.1f}s")
        return epoch_train_loss, epoch_iou, epoch_dice

    def test(self, phase):
        self.model.eval()

        # with torch.inference_mode():
        with torch.no_grad():
            self.evaluator.reset_eval()
            losses = []

            if phase == "Test":
                dataset = self.test_dataset
            elif phase == "Validation":
                dataset = self.val_dataset
            else:
                raise ValueError(phase)

            for i, subject in tqdm(enumerate(dataset), total=len(dataset), desc=f"{phase} epoch {str(self.epoch)}"):
                sampler = tio.inference.GridSampler(
                    subject,
                    self.config.data_loader.patch_shape,
                    0
                )
                loader = DataLoader(sampler, batch_size=self.config.data_loader.batch_size)
                aggregator = tio.inference.GridAggregator(sampler)
                gt_aggregator = tio.inference.GridAggregator(sampler)

                for j, patch in enumerate(loader):
                    images, gt, emb_codes = self.extract_data_from_patch(patch)

                    with torch.autocast("cuda", dtype=torch.float16, enabled=self.use_amp):
                        preds = self.model(images, emb_codes)
                    aggregator.add_batch(preds.float(), patch[tio.LOCATION])
                    gt_aggregator.add_batch(gt, patch[tio.LOCATION])

                output = aggregator.get_output_tensor()
                gt = gt_aggregator.get_output_tensor()
                partition_weights = 1

                gt_count = torch.sum(gt == 1, dim=list(range(1, gt.ndim)))
                if torch.sum(gt_count) != 0:
                    partition_weights = (1 - 1 / (1 + gt_count)).to(self.device)

                loss = self.loss(output.unsqueeze(0).to(self.device), gt.unsqueeze(0).to(self.device), partition_weights)
                losses.append(loss.item())

                output = output.squeeze(0)
                output = (output > 0.5)

                self.evaluator.compute_metrics(output, gt)

            epoch_loss = sum(losses) / len(losses)
            epoch_iou, epoch_dice = self.evaluator.mean_metric(phase=phase)

            self.metrics[phase] = {
                "iou": epoch_iou,
                "dice": epoch_dice,
            }
            logging.info(f"{phase} loss {epoch_loss:.4f}")

        torch.cuda.empty_cache()
        return epoch_iou, epoch_dice
