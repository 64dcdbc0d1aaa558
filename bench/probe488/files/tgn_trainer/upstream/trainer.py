import os
import time
from math import inf

import numpy as np
import torch
import wandb

from loss_meter import LossMap


class Trainer:
    def __init__(self, config=None, model=None, gen_set=None):
        self.gen_set = gen_set
        self.config = config
        self.model = model
        self.val_count = 0
        self.train_count = 0
        self.step_count = 0
        if config["wandb"]["wandb_on"]:
            wandb.init(
                entity=self.config["wandb"]["entity"],
                project=self.config["wandb"]["project"],
                notes=self.config["wandb"]["notes"],
                tags=self.config["wandb"]["tags"],
                name=self.config["wandb"]["name"],
                config=self.config,
            )
        self.best_val_loss = inf
        self.use_amp = self.config.get("use_amp", False)
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)

    def _to_gpu(self, batch_item):
        for key in ["feat", "gt_seg_label"]:
            batch_item[key] = batch_item[key].cuda(non_blocking=True)
        return batch_item

    def train(self, epoch, data_loader):
        total_loss_meter = LossMap()
        step_loss_meter = LossMap()
        pre_step = self.step_count
        for batch_idx, batch_item in enumerate(data_loader):
            batch_item = self._to_gpu(batch_item)
            with torch.cuda.amp.autocast(enabled=self.use_amp):
                loss = self.model.step(batch_idx, batch_item, "train")
            torch.cuda.empty_cache()
            total_loss_meter.aggr(loss.get_loss_map())
            step_loss_meter.aggr(loss.get_loss_map())

            if ((batch_idx+1) % self.config["tr_set"]["scheduler"]["schedueler_step"] == 0) or (self.step_count == pre_step and batch_idx == len(data_loader)-1):
                if self.config["wandb"]["wandb_on"]:
                    wandb.log(step_loss_meter.get_avg_map(), step=self.step_count)
                    wandb.log({"step_lr": self.model.scheduler.get_last_lr()[0]}, step=self.step_count)
                self.step_count += 1
                self.model.scheduler.step(self.step_count)
                step_loss_meter.init()

        if self.config["wandb"]["wandb_on"]:
            wandb.log(total_loss_meter.get_avg_map(), step=self.step_count)
        self.train_count += 1
        self.model.save("train")

    def test(self, epoch, data_loader, save_best_model):
        total_loss_meter = LossMap()
        for batch_idx, batch_item in enumerate(data_loader):
            batch_item = self._to_gpu(batch_item)
            with torch.no_grad():
                loss = self.model.step(batch_idx, batch_item, "test")
            total_loss_meter.aggr(loss.get_loss_map())

        avg_total_loss = total_loss_meter.get_avg_map()
        if self.config["wandb"]["wandb_on"]:
            wandb.log(avg_total_loss, step=self.step_count)
        self.val_count += 1

        if save_best_model:
            if self.best_val_loss > avg_total_loss["total"]:
                self.best_val_loss = avg_total_loss["total"]
                self.model.save("val")
        return avg_total_loss

    def train_depr(self):
        total_loss = 0
        step_loss = 0
        for batch_idx, batch_item in enumerate(self.gen_set[0][0]):
            loss = self.model.step(batch_idx, batch_item, "train")
            total_loss += loss
            step_loss += loss
            if (batch_idx+1) % self.config["tr_set"]["schedueler_step"] == 0:
                self.model.scheduler.step()
                step_loss /= self.config["tr_set"]["schedueler_step"]
                print(f"step loss {step_loss}")
                step_loss = 0
        total_loss /= len(self.gen_set[0][0])
        self.model.save("train")
        print(f"train loss {total_loss}")

    def run(self):
        train_data_loader = self.gen_set[0][0]
        val_data_loader = self.gen_set[0][1]
        for epoch in range(100000):
            t0 = time.time()
            self.train(epoch, train_data_loader)
            val_loss = self.test(epoch, val_data_loader, True)
            print(f"epoch {epoch} done in {time.time() - t0:.1f}s, val total {val_loss['total']:.4f}, "
                  f"peak gpu mem {torch.cuda.max_memory_allocated() / 1024**3:.2f} GB")
            if self.step_count >= self.config["tr_set"]["scheduler"]["full_steps"]:
                break
