# -*- coding: utf-8 -*-

# Copyright 2024 Wen-Chin Huang
#  MIT License (https://opensource.org/licenses/MIT)

"""Base trainer for speech quality assessment models (adapted from ParallelWaveGAN)."""

import logging
import os
import time
from collections import defaultdict

import matplotlib
import numpy as np
import torch
from sheet.evaluation.metrics import calculate
from tensorboardX import SummaryWriter
from tqdm import tqdm

# set to avoid matplotlib error in CLI environment
matplotlib.use("Agg")


class Trainer(object):
    """Customized trainer module for SSQA training."""

    def __init__(
        self,
        steps,
        epochs,
        data_loader,
        sampler,
        model,
        criterion,
        optimizer,
        scheduler,
        config,
        device=torch.device("cpu"),
    ):
        """Initialize trainer.

        Args:
            steps (int): Initial global steps.
            epochs (int): Initial global epochs.
            data_loader (dict): Dict of data loaders. It must contrain "train" and "dev" loaders.
            model (dict): Dict of models. It must contrain "generator" and "discriminator" models.
            criterion (dict): Dict of criterions. It must contrain "stft" and "mse" criterions.
            optimizer (object): Optimizer.
            scheduler (object): Scheduler.
            config (dict): Config dict loaded from yaml format configuration file.
            device (torch.deive): Pytorch device instance.

        """
        self.steps = steps
        self.epochs = epochs
        self.data_loader = data_loader
        self.sampler = sampler
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.config = config
        self.device = device
        self.writer = SummaryWriter(config["outdir"])
        self.finish_train = False
        self.total_train_loss = defaultdict(float)
        self.total_eval_loss = defaultdict(float)
        self.reporter = []  # each element is [steps: int, results: dict]
        self.original_patience = config.get("patience", None)
        self.current_patience = config.get("patience", None)

    def run(self):
        """Run training."""
        self.tqdm = tqdm(initial=self.steps, total=self.config["train_max_steps"], desc="[train]")
        while True:
            # train one epoch
            self._train_epoch()

            # check whether training is finished
            if self.finish_train:
                break

        self.tqdm.close()
        logging.info("Finished training.")

    def save_checkpoint(self, checkpoint_path):
        """Save checkpoint.

        Args:
            checkpoint_path (str): Checkpoint path to be saved.

        """
        state_dict = {
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "steps": self.steps,
            "epochs": self.epochs,
        }
        if self.config["distributed"]:
            state_dict["model"] = self.model.module.state_dict()
        else:
            state_dict["model"] = self.model.state_dict()

        if not os.path.exists(os.path.dirname(checkpoint_path)):
            os.makedirs(os.path.dirname(checkpoint_path))
        torch.save(state_dict, checkpoint_path)

    def load_checkpoint(self, checkpoint_path, load_only_params=False):
        """Load checkpoint.

        Args:
            checkpoint_path (str): Checkpoint path to be loaded.
            load_only_params (bool): Whether to load only model parameters.

        """
        state_dict = torch.load(checkpoint_path, map_location="cpu")
        if self.config["distributed"]:
            self.model.module.load_state_dict(state_dict["model"])
        else:
            self.model.load_state_dict(state_dict["model"])
        if not load_only_params:
            self.steps = state_dict["steps"]
            self.epochs = state_dict["epochs"]
            self.optimizer.load_state_dict(state_dict["optimizer"])
            self.scheduler.load_state_dict(state_dict["scheduler"])

    def _train_step(self, batch):
        """Train model one step."""
        raise NotImplementedError

    def _train_epoch(self):
        """Train model one epoch."""
        for train_steps_per_epoch, batch in enumerate(self.data_loader["train"], 1):
            # train one step
            self._train_step(batch)

            # check interval
            if self.config["rank"] == 0:
                self._check_log_interval()
                self._check_eval_interval()
                self._check_save_interval()

            # check whether training is finished
            if self.finish_train:
                return

        # update
        self.epochs += 1
        self.train_steps_per_epoch = train_steps_per_epoch
        logging.info(
            f"(Steps: {self.steps}) Finished {self.epochs} epoch training "
            f"({self.train_steps_per_epoch} steps per epoch)."
        )

        # needed for shuffle in distributed training
        if self.config["distributed"]:
            self.sampler["train"].set_epoch(self.epochs)

    @torch.no_grad()
    def _eval_step(self, batch):
        """Evaluate model one step."""
        raise NotImplementedError

    def _eval_epoch(self):
        """Evaluate model one epoch."""
        logging.info(f"(Steps: {self.steps}) Start dev data's evaluation.")
        # change mode
        self.model.eval()

        # calculate loss for each batch
        eval_results = defaultdict(list)
        start_time = time.time()
        for eval_steps_per_epoch, batch in enumerate(tqdm(self.data_loader["dev"], desc="[eval]"), 1):
            # eval one step
            self._eval_step(batch, eval_results)
        eval_time = time.time() - start_time

        # calculate metrics
        results = calculate(
            np.array(eval_results["true_mean_scores"]),
            np.array(eval_results["predict_mean_scores"]),
            eval_results["system_ids"],
        )
        logging.info(
            f"(Steps: {self.steps}) Finished dev data's evaluation "
            f"({eval_steps_per_epoch} steps, {eval_time:.1f} sec)."
        )
        logging.info(
            f"[UTT][ MSE = {results['utt_MSE']:.3f} | LCC = {results['utt_LCC']:.3f} | SRCC = {results['utt_SRCC']:.3f} ] "
            f"[SYS][ MSE = {results['sys_MSE']:.3f} | LCC = {results['sys_LCC']:.4f} | SRCC = {results['sys_SRCC']:.4f} ]"
        )
        self._write_to_tensorboard({f"dev/{k}": v for k, v in results.items()})
        self.reporter.append([self.steps, results])

        # early stopping on system-level SRCC
        if self.current_patience is not None:
            best = max(r["sys_SRCC"] for _, r in self.reporter)
            if results["sys_SRCC"] < best:
                self.current_patience -= 1
                if self.current_patience <= 0:
                    logging.info("Early stopping: patience exhausted.")
                    self.finish_train = True
            else:
                self.current_patience = self.original_patience

        # restore mode
        self.model.train()

    def _write_to_tensorboard(self, loss):
        """Write to tensorboard."""
        for key, value in loss.items():
            self.writer.add_scalar(key, value, self.steps)

    def _check_save_interval(self):
        if self.steps % self.config["save_interval_steps"] == 0:
            self.save_checkpoint(os.path.join(self.config["outdir"], f"checkpoint-{self.steps}steps.pkl"))
            logging.info(f"Successfully saved checkpoint @ {self.steps} steps.")

    def _check_eval_interval(self):
        if self.steps % self.config["eval_and_save_steps"] == 0:
            self._eval_epoch()

    def _check_log_interval(self):
        if self.steps % self.config["log_interval_steps"] == 0:
            for key in self.total_train_loss.keys():
                self.total_train_loss[key] /= self.config["log_interval_steps"]
                logging.info(f"(Steps: {self.steps}) {key} = {self.total_train_loss[key]:.4f}.")
            self.total_train_loss["train/max_memory_gb"] = torch.cuda.max_memory_allocated() / 2**30
            self._write_to_tensorboard(self.total_train_loss)

            # reset
            self.total_train_loss = defaultdict(float)

    def _check_train_finish(self):
        if self.steps >= self.config["train_max_steps"]:
            self.finish_train = True


class NonIntrusiveEstimatorTrainer(Trainer):
    """Trainer for MOS predictors that take only the degraded signal (LDNet, SSL-MOS, UTMOS-style)."""

    def _train_step(self, batch):
        # set inputs
        gen_loss = 0.0
        inputs = {
            self.config["model_input"]: batch[self.config["model_input"]].to(self.device),
            self.config["model_input"] + "_lengths": batch[self.config["model_input"] + "_lengths"].to(self.device),
        }
        if "listener_idxs" in batch:
            inputs["listener_idxs"] = batch["listener_idxs"].to(self.device)
        if "domain_idxs" in batch:
            inputs["domain_idxs"] = batch["domain_idxs"].to(self.device)

        # model forward
        outputs = self.model(inputs)

        # get frame lengths if exist
        if "frame_lengths" in outputs:
            output_frame_lengths = outputs["frame_lengths"]
        else:
            output_frame_lengths = None

        # main loss: mean score and (optionally) listener score
        for criterion_type, criterion in self.criterion.items():
            if criterion_type.startswith("Mean"):
                loss = criterion(outputs["mean_scores"], batch["avg_scores"].to(self.device), self.device, lens=output_frame_lengths)
            else:
                loss = criterion(outputs["ld_scores"], batch["scores"].to(self.device), self.device, lens=output_frame_lengths)
            gen_loss += loss * self.config["criterions"][criterion_type].get("weight", 1.0)
            self.total_train_loss["train/" + criterion_type] += loss.item()
        self.total_train_loss["train/loss"] += gen_loss.item()

        # update model
        self.optimizer.zero_grad()
        gen_loss.backward()
        if self.config["grad_norm"] > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config["grad_norm"])
        self.optimizer.step()
        self.scheduler.step()

        # update counts
        self.steps += 1
        self.tqdm.update(1)
        self._check_train_finish()

    @torch.no_grad()
    def _eval_step(self, batch, eval_results):
        inputs = {
            self.config["model_input"]: batch[self.config["model_input"]].to(self.device),
            self.config["model_input"] + "_lengths": batch[self.config["model_input"] + "_lengths"].to(self.device),
        }
        if "domain_idxs" in batch:
            inputs["domain_idxs"] = batch["domain_idxs"].to(self.device)
        if self.config["inference_mode"] == "mean_listener":
            outputs = self.model.mean_listener_inference(inputs)
        else:
            outputs = self.model.mean_net_inference(inputs)
        eval_results["predict_mean_scores"].append(outputs["scores"].cpu().detach().numpy()[0])
        eval_results["true_mean_scores"].append(batch["avg_scores"].numpy()[0])
        eval_results["system_ids"].append(batch["system_ids"][0])
