"""Objective function evaluated by DeepHyper: train the downscaling UNet for a short budget
and return the negative validation RMSE (DeepHyper maximizes).

With the mpicomm evaluator every worker rank calls run() in its own process, so the GPU is
selected from the local MPI rank; with the ray evaluator Ray already sets CUDA_VISIBLE_DEVICES.
"""
import os
import time
import traceback

# Pin this worker to one GPU before torch initialises CUDA.
if "CUDA_VISIBLE_DEVICES" not in os.environ or os.environ.get("HPO_PIN_BY_RANK", "1") == "1":
    _local_rank = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK",
                                     os.environ.get("PMI_LOCAL_RANK",
                                                    os.environ.get("SLURM_LOCALID", "0"))))
    _gpus_per_node = int(os.environ.get("GPUS_PER_NODE", "4"))
    os.environ["CUDA_VISIBLE_DEVICES"] = str(_local_rank % _gpus_per_node)

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from deephyper.evaluator import profile, RunningJob

from downscale.data import get_loaders
from downscale.models import UNetSR

MAX_EPOCHS = int(os.environ.get("HPO_MAX_EPOCHS", "8"))
TIME_BUDGET = float(os.environ.get("HPO_TIME_BUDGET", "900"))  # seconds per trial
FAILURE = "F"


def _loss_fn(name):
    if name == "l1":
        return nn.L1Loss()
    if name == "huber":
        return nn.HuberLoss(delta=0.5)
    return nn.MSELoss()


def _optimizer(name, params, lr, weight_decay):
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=weight_decay, nesterov=True)
    return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)


@torch.no_grad()
def evaluate(model, loader, device, amp):
    model.eval()
    se, n = 0.0, 0
    for lr_fields, hr_fields in loader:
        lr_fields = lr_fields.to(device, non_blocking=True)
        hr_fields = hr_fields.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=amp):  # eval in half too
            pred = model(lr_fields)
        se += F.mse_loss(pred.float(), hr_fields, reduction="sum").item()
        n += hr_fields.numel()
    return float(np.sqrt(se / max(n, 1)))


@profile
def run(job: RunningJob) -> float:
    config = dict(job.parameters)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(job.id.__hash__() % 2**31 if hasattr(job, "id") else 0)
    try:
        train_loader, valid_loader, stats = get_loaders(batch_size=int(config["batch_size"]),
                                                        num_workers=4, pin_memory=True)
        model = UNetSR(in_channels=stats["n_in"], out_channels=stats["n_out"],
                       base_channels=int(config["base_channels"]), depth=int(config["depth"]),
                       dropout=float(config["dropout"])).to(device)
        criterion = _loss_fn(config["loss"])
        optimizer = _optimizer(config["optimizer"], model.parameters(), float(config["lr"]),
                               float(config["weight_decay"]))
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=MAX_EPOCHS)
        amp = bool(config["amp"]) and device.type == "cuda"
        scaler = torch.cuda.amp.GradScaler(enabled=amp)

        t_start = time.time()
        best_rmse = float("inf")
        for epoch in range(MAX_EPOCHS):
            model.train()
            for lr_fields, hr_fields in train_loader:
                lr_fields = lr_fields.to(device, non_blocking=True)
                hr_fields = hr_fields.to(device, non_blocking=True)
                optimizer.zero_grad(set_to_none=True)
                with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=amp):
                    pred = model(lr_fields)
                    loss = criterion(pred, hr_fields)
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
            scheduler.step()

            rmse = evaluate(model, valid_loader, device, amp)
            best_rmse = min(best_rmse, rmse)
            job.record(budget=epoch + 1, objective=-rmse)
            if job.stopped():
                break
            if time.time() - t_start > TIME_BUDGET:
                break

        objective = -best_rmse
        metadata = {"epochs": epoch + 1, "train_time": time.time() - t_start,
                    "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
                    "max_mem_gb": torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else 0.0}
    except torch.cuda.OutOfMemoryError:
        # too large a configuration for one GPU: report as a failure, DeepHyper will avoid the region
        objective, metadata = FAILURE, {"error": "oom"}
    except Exception:
        traceback.print_exc()
        objective, metadata = FAILURE, {"error": "exception"}
    finally:
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    return {"objective": objective, "metadata": metadata}
