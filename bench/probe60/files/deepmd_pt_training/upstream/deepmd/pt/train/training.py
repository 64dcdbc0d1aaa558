# SPDX-License-Identifier: LGPL-3.0-or-later
import functools
import logging
import time
from copy import (
    deepcopy,
)
from pathlib import (
    Path,
)
from typing import (
    Any,
    Optional,
)

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import (
    DataLoader,
)

from deepmd.loggers.training import (
    format_training_message_per_task,
)
from deepmd.pt.loss import (
    EnergyStdLoss,
    TensorLoss,
)
from deepmd.pt.model.model import (
    get_model,
)
from deepmd.pt.optimizer import (
    LKFOptimizer,
)
from deepmd.pt.train.wrapper import (
    ModelWrapper,
)
from deepmd.pt.utils.dataloader import (
    BufferedIterator,
    get_weighted_sampler,
)
from deepmd.pt.utils.env import (
    DEVICE,
    JIT,
    LOCAL_RANK,
    NUM_WORKERS,
    SAMPLER_RECORD,
)
from deepmd.pt.utils.learning_rate import (
    LearningRateExp,
)

log = logging.getLogger(__name__)


def get_loss(loss_params, start_lr, _ntypes, _model):
    loss_type = loss_params.get("type", "ener")
    if loss_type == "ener":
        loss_params["starter_learning_rate"] = start_lr
        return EnergyStdLoss(**loss_params)
    elif loss_type == "tensor":
        model_output_type = _model.model_output_type()
        tensor_name = model_output_type[0]
        loss_params["tensor_size"] = _model.model_output_def()[tensor_name].output_size
        loss_params["label_name"] = tensor_name
        loss_params["tensor_name"] = tensor_name
        return TensorLoss(**loss_params)
    raise NotImplementedError(f"Unknown loss type {loss_type}")


class Trainer:
    def __init__(
        self,
        config: dict[str, Any],
        training_data,
        stat_file_path=None,
        validation_data=None,
        init_model=None,
        restart_model=None,
        finetune_model=None,
        force_load=False,
        shared_links=None,
        finetune_links=None,
        init_frz_model=None,
    ) -> None:
        """Construct a DeePMD trainer.

        Args:
        - config: The Dict-like configuration with training options.
        """
        resume_model = init_model if init_model is not None else restart_model
        self.restart_training = restart_model is not None
        model_params = config["model"]
        training_params = config["training"]
        self.multi_task = "model_dict" in model_params
        self.finetune_links = finetune_links
        self.finetune_update_stat = False
        self.model_keys = (
            list(model_params["model_dict"]) if self.multi_task else ["Default"]
        )
        self.rank = (
            dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
        )
        self.world_size = (
            dist.get_world_size()
            if dist.is_available() and dist.is_initialized()
            else 1
        )
        self.num_model = len(self.model_keys)

        # Iteration config
        self.num_steps = training_params["numb_steps"]
        self.disp_file = training_params.get("disp_file", "lcurve.out")
        self.disp_freq = training_params.get("disp_freq", 1000)
        self.save_ckpt = training_params.get("save_ckpt", "model.ckpt")
        self.save_freq = training_params.get("save_freq", 1000)
        self.max_ckpt_keep = training_params.get("max_ckpt_keep", 5)
        self.display_in_training = training_params.get("disp_training", True)
        self.timing_in_training = training_params.get("time_training", True)
        self.change_bias_after_training = training_params.get("change_bias_after_training", False)
        self.lcurve_should_print_header = True

        def get_opt_param(params):
            opt_type = params.get("opt_type", "Adam")
            opt_param = {
                "kf_blocksize": params.get("kf_blocksize", 5120),
                "kf_start_pref_e": params.get("kf_start_pref_e", 1),
                "kf_limit_pref_e": params.get("kf_limit_pref_e", 1),
                "kf_start_pref_f": params.get("kf_start_pref_f", 1),
                "kf_limit_pref_f": params.get("kf_limit_pref_f", 1),
            }
            return opt_type, opt_param

        def get_data_loader(_training_data, _validation_data, _training_params):
            def get_dataloader_and_buffer(_data, _params):
                _sampler = get_weighted_sampler(
                    _data,
                    _params["sys_probs"] if "sys_probs" in _params else "prob_sys_size",
                )
                _dataloader = DataLoader(
                    _data,
                    sampler=_sampler,
                    batch_size=None,
                    num_workers=NUM_WORKERS if dist.is_available() else 0,
                    drop_last=False,
                    collate_fn=lambda batch: batch,  # prevent extra conversion
                    pin_memory=True,
                )
                _data_buffered = BufferedIterator(iter(_dataloader))
                return _dataloader, _data_buffered

            training_dataloader, training_data_buffered = get_dataloader_and_buffer(
                _training_data, _training_params["training_data"]
            )
            if _validation_data is not None:
                validation_dataloader, validation_data_buffered = get_dataloader_and_buffer(
                    _validation_data, _training_params["validation_data"]
                )
                valid_numb_batch = _training_params["validation_data"].get("numb_btch", 1)
            else:
                validation_dataloader = None
                validation_data_buffered = None
                valid_numb_batch = 1
            return (
                training_dataloader,
                training_data_buffered,
                validation_dataloader,
                validation_data_buffered,
                valid_numb_batch,
            )

        self.opt_type, self.opt_param = get_opt_param(training_params)

        # Model
        self.model = get_model(deepcopy(model_params)).to(DEVICE)
        self.loss = get_loss(
            config["loss"], config["learning_rate"]["start_lr"], len(model_params["type_map"]), self.model
        )
        (
            self.training_dataloader,
            self.training_data,
            self.validation_dataloader,
            self.validation_data,
            self.valid_numb_batch,
        ) = get_data_loader(training_data, validation_data, training_params)

        # Learning rate
        self.warmup_steps = training_params.get("warmup_steps", 0)
        self.gradient_max_norm = training_params.get("gradient_max_norm", 0.0)
        lr_params = config["learning_rate"]
        lr_params["stop_steps"] = self.num_steps - self.warmup_steps
        self.lr_exp = LearningRateExp(**lr_params)

        # Model Wrapper
        self.wrapper = ModelWrapper(self.model, self.loss, model_params=model_params)
        self.start_step = 0

        # resuming and finetune
        if resume_model is not None:
            state_dict = torch.load(resume_model, map_location=DEVICE, weights_only=True)
            if "model" in state_dict:
                optimizer_state_dict = state_dict["optimizer"] if self.restart_training else None
                state_dict = state_dict["model"]
            self.start_step = state_dict["_extra_state"]["train_infos"]["step"] if self.restart_training else 0
            self.wrapper.load_state_dict(state_dict)
        else:
            optimizer_state_dict = None

        if JIT:
            self.model = torch.jit.script(self.model)

        # Multi-task share params
        if shared_links is not None:
            self.wrapper.share_params(shared_links, resume=resume_model is not None or self.rank != 0)

        if dist.is_available() and dist.is_initialized():
            torch.cuda.set_device(LOCAL_RANK)
            # DDP will guarantee the model parameters are identical across all processes
            self.wrapper = DDP(
                self.wrapper,
                device_ids=[LOCAL_RANK],
                find_unused_parameters=True,
                output_device=LOCAL_RANK,
            )

        def warm_up_linear(step, warmup_steps):
            if step < warmup_steps:
                return step / warmup_steps
            else:
                return self.lr_exp.value(step - warmup_steps) / self.lr_exp.start_lr

        if self.opt_type == "Adam":
            self.optimizer = torch.optim.Adam(
                self.wrapper.parameters(),
                lr=self.lr_exp.start_lr,
                fused=False if DEVICE.type == "cpu" else True,
            )
            if optimizer_state_dict is not None and self.restart_training:
                self.optimizer.load_state_dict(optimizer_state_dict)
            self.scheduler = torch.optim.lr_scheduler.LambdaLR(
                self.optimizer,
                lambda step: warm_up_linear(step + self.start_step, self.warmup_steps),
            )
        elif self.opt_type == "LKF":
            self.optimizer = LKFOptimizer(self.wrapper.parameters(), 0.98, 0.99870, self.opt_param["kf_blocksize"])
        else:
            raise ValueError(f"Not supported optimizer type '{self.opt_type}'")

        # Get model prob for multi-task
        self.enable_profiler = training_params.get("enable_profiler", False)
        self.profiling = training_params.get("profiling", False)
        self.profiling_file = training_params.get("profiling_file", "timeline.json")
        self.tensorboard = training_params.get("tensorboard", False)
        self.tensorboard_log_dir = training_params.get("tensorboard_log_dir", "log")
        self.tensorboard_freq = training_params.get("tensorboard_freq", 1)

    def run(self) -> None:
        fout = (
            open(self.disp_file, mode="w" if not self.restart_training else "a", buffering=1)
            if self.rank == 0
            else None
        )  # line buffered
        if SAMPLER_RECORD:
            record_file = f"Sample_rank_{self.rank}.txt"
            fout1 = open(record_file, mode="w", buffering=1)
        log.info("Start to train %d steps.", self.num_steps)
        if dist.is_available() and dist.is_initialized():
            log.info(f"Rank: {dist.get_rank()}/{dist.get_world_size()}")
        if self.enable_profiler or self.profiling:
            prof = torch.profiler.profile(
                activities=[
                    torch.profiler.ProfilerActivity.CPU,
                    torch.profiler.ProfilerActivity.CUDA,
                ],
                schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
                on_trace_ready=torch.profiler.tensorboard_trace_handler(self.tensorboard_log_dir)
                if self.enable_profiler
                else None,
                record_shapes=True,
                with_stack=True,
            )
            prof.start()

        def step(_step_id, task_key="Default") -> None:
            self.wrapper.train()
            if isinstance(self.lr_exp, dict):
                _lr = self.lr_exp[task_key]
            else:
                _lr = self.lr_exp
            cur_lr = _lr.value(_step_id)
            pref_lr = cur_lr
            self.optimizer.zero_grad(set_to_none=True)
            input_dict, label_dict, log_dict = self.get_data(is_train=True, task_key=task_key)
            if SAMPLER_RECORD:
                print_str = f"Step {_step_id}: sample system{log_dict['sid']}  frame{log_dict['fid']}\n"
                fout1.write(print_str)
                fout1.flush()
            if self.opt_type == "Adam":
                cur_lr = self.scheduler.get_last_lr()[0]
                if _step_id < self.warmup_steps:
                    pref_lr = _lr.start_lr
                else:
                    pref_lr = cur_lr
                model_pred, loss, more_loss = self.wrapper(
                    **input_dict, cur_lr=pref_lr, label=label_dict, task_key=task_key
                )
                loss.backward()
                if self.gradient_max_norm > 0.0:
                    torch.nn.utils.clip_grad_norm_(
                        self.wrapper.parameters(),
                        self.gradient_max_norm,
                        error_if_nonfinite=True,
                    )
                self.optimizer.step()
                self.scheduler.step()
            else:
                raise ValueError(f"Not supported optimizer type '{self.opt_type}'")

            # Log and persist
            display_step_id = _step_id + 1
            if self.display_in_training and (display_step_id % self.disp_freq == 0 or display_step_id == 1):
                self.wrapper.eval()
                train_results = {k: v for k, v in more_loss.items() if "l2_" not in k}
                if self.rank == 0:
                    log.info(
                        format_training_message_per_task(
                            batch=display_step_id,
                            task_name="trn",
                            rmse=train_results,
                            learning_rate=cur_lr,
                        )
                    )
                    log.info(f"peak device memory: {torch.cuda.max_memory_allocated() / 1024**2:.1f} MiB")
                self.wrapper.train()

            if (display_step_id % self.save_freq == 0 or display_step_id == self.num_steps) and self.rank == 0:
                self.save_model(self.save_ckpt, lr=cur_lr, step=_step_id)

        self.t0 = time.time()
        self.total_train_time = 0.0
        for step_id in range(self.num_steps):
            if step_id < self.start_step:
                continue
            step(step_id)
            if self.enable_profiler or self.profiling:
                prof.step()
        if self.enable_profiler or self.profiling:
            prof.stop()
            if self.profiling:
                prof.export_chrome_trace(self.profiling_file)
                log.info(f"The profiling trace have been saved to: {self.profiling_file}")
        if self.rank == 0 and fout is not None:
            fout.close()
        if SAMPLER_RECORD:
            fout1.close()

    def save_model(self, save_path, lr=0.0, step=0) -> None:
        module = self.wrapper.module if dist.is_available() and dist.is_initialized() else self.wrapper
        module.train_infos["lr"] = float(lr)
        module.train_infos["step"] = step
        optim_state_dict = deepcopy(self.optimizer.state_dict())
        for item in optim_state_dict["param_groups"]:
            item["lr"] = float(item["lr"])
        torch.save({"model": module.state_dict(), "optimizer": optim_state_dict}, save_path)
        checkpoint_dir = Path(save_path).parent
        checkpoint_files = [f for f in checkpoint_dir.glob("*.pt") if not f.is_symlink() and f.name.startswith(self.save_ckpt)]
        if len(checkpoint_files) > self.max_ckpt_keep:
            checkpoint_files.sort(key=lambda x: x.stat().st_mtime)
            checkpoint_files[0].unlink()

    def get_data(self, is_train=True, task_key="Default"):
        if is_train:
            batch_data = next(iter(self.training_data))
        else:
            if self.validation_data is None:
                return {}, {}, {}
            batch_data = next(iter(self.validation_data))
        for key in batch_data.keys():
            if key == "sid" or key == "fid" or key == "box" or "find_" in key:
                continue
            elif not isinstance(batch_data[key], list):
                if batch_data[key] is not None:
                    batch_data[key] = batch_data[key].to(DEVICE, non_blocking=True)
            else:
                batch_data[key] = [item.to(DEVICE, non_blocking=True) for item in batch_data[key]]
        input_dict = {"spin": None, "fparam": None, "aparam": None}
        label_dict = {}
        for item_key in batch_data:
            if item_key in ["coord", "atype", "box", "spin", "fparam", "aparam"]:
                input_dict[item_key] = batch_data[item_key]
            else:
                label_dict[item_key] = batch_data[item_key]
        log_dict = {}
        if "fid" in batch_data:
            log_dict["fid"] = batch_data["fid"]
        log_dict["sid"] = batch_data["sid"]
        return input_dict, label_dict, log_dict
