import csv
import json
import logging
import os
import os.path as osp
import pickle as pkl
import shutil
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Optional

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import tqdm
import yaml
from torch.profiler import ProfilerActivity, profile, record_function
from torch.utils.tensorboard import SummaryWriter

from mlpf.model.logger import _configLogger, _logger
from mlpf.pyg.mlpf import MLPF, set_save_attention
from mlpf.pyg.PFDataset import Collater, PFDataset, get_interleaved_dataloaders
from mlpf.pyg.utils import (
    X_FEATURES,
    ELEM_TYPES_NONZERO,
    count_parameters,
    get_lr_schedule,
    get_model_state_dict,
    load_checkpoint,
    save_checkpoint,
    unpack_predictions,
    unpack_target,
)
from mlpf.pyg.inference import make_plots, run_predictions

# Ignore divide by 0 errors
np.seterr(divide="ignore", invalid="ignore")


def sliced_wasserstein_loss(y_pred, y_true, num_projections=200):
    # create normalized random basis vectors
    theta = torch.randn(num_projections, y_true.shape[-1]).to(device=y_true.device)
    theta = theta / torch.sqrt(torch.sum(theta**2, axis=1, keepdims=True))

    # project the features with the random basis
    A = torch.matmul(y_true, torch.transpose(theta, -1, -2))
    B = torch.matmul(y_pred, torch.transpose(theta, -1, -2))

    A_sorted = torch.sort(A, axis=-2).values
    B_sorted = torch.sort(B, axis=-2).values

    ret = torch.sqrt(torch.sum(torch.pow(A_sorted - B_sorted, 2), axis=[-1, -2]))
    return ret


def mlpf_loss(y, ypred, batch):
    """
    Args
        y [dict]: relevant keys are "cls_id, momentum, charge"
        ypred [dict]: relevant keys are "cls_id_onehot, momentum, charge"
        batch [PFBatch]: the MLPF inputs
    """
    loss = {}
    loss_obj_id = FocalLoss(gamma=2.0, reduction="none")

    msk_pred_particle = torch.unsqueeze((ypred["cls_id"] != 0).to(dtype=torch.float32), axis=-1)
    msk_true_particle = torch.unsqueeze((y["cls_id"] != 0).to(dtype=torch.float32), axis=-1)
    nelem = torch.sum(batch.mask)
    npart = torch.sum(y["cls_id"] != 0)

    ypred["momentum"] = ypred["momentum"] * msk_true_particle
    y["momentum"] = y["momentum"] * msk_true_particle

    # in case of the 3D-padded mode, pytorch expects (batch, num_classes, ...)
    ypred["cls_binary"] = ypred["cls_binary"].permute((0, 2, 1))
    ypred["cls_id_onehot"] = ypred["cls_id_onehot"].permute((0, 2, 1))

    # binary loss for particle / no-particle classification
    loss_binary_classification = 10 * torch.nn.functional.cross_entropy(ypred["cls_binary"], (y["cls_id"] != 0).long(), reduction="none")

    # compare the particle type, only for cases where there was a true particle
    loss_pid_classification = loss_obj_id(ypred["cls_id_onehot"], y["cls_id"]).reshape(y["cls_id"].shape)
    loss_pid_classification[y["cls_id"] == 0] *= 0

    # compare particle momentum, only for cases where there was a true particle
    loss_regression_pt = torch.nn.functional.mse_loss(ypred["pt"], y["pt"], reduction="none")
    loss_regression_eta = 1e-2 * torch.nn.functional.mse_loss(ypred["eta"], y["eta"], reduction="none")
    loss_regression_sin_phi = 1e-2 * torch.nn.functional.mse_loss(ypred["sin_phi"], y["sin_phi"], reduction="none")
    loss_regression_cos_phi = 1e-2 * torch.nn.functional.mse_loss(ypred["cos_phi"], y["cos_phi"], reduction="none")
    loss_regression_energy = torch.nn.functional.mse_loss(ypred["energy"], y["energy"], reduction="none")

    loss_regression_pt[y["cls_id"] == 0] *= 0
    loss_regression_eta[y["cls_id"] == 0] *= 0
    loss_regression_sin_phi[y["cls_id"] == 0] *= 0
    loss_regression_cos_phi[y["cls_id"] == 0] *= 0
    loss_regression_energy[y["cls_id"] == 0] *= 0

    # set the loss to 0 on padded elements in the batch
    loss_binary_classification[batch.mask == 0] *= 0
    loss_pid_classification[batch.mask == 0] *= 0
    loss_regression_pt[batch.mask == 0] *= 0
    loss_regression_eta[batch.mask == 0] *= 0
    loss_regression_sin_phi[batch.mask == 0] *= 0
    loss_regression_cos_phi[batch.mask == 0] *= 0
    loss_regression_energy[batch.mask == 0] *= 0

    # add weight based on target pt
    sqrt_target_pt = torch.sqrt(torch.exp(y["pt"]) * batch.X[:, :, 1])
    loss_regression_pt *= sqrt_target_pt
    loss_regression_energy *= sqrt_target_pt

    # average over all target particles
    loss["Regression_pt"] = loss_regression_pt.sum() / npart
    loss["Regression_eta"] = loss_regression_eta.sum() / npart
    loss["Regression_sin_phi"] = loss_regression_sin_phi.sum() / npart
    loss["Regression_cos_phi"] = loss_regression_cos_phi.sum() / npart
    loss["Regression_energy"] = loss_regression_energy.sum() / npart

    # average over all elements that were not padded
    loss["Classification_binary"] = loss_binary_classification.sum() / nelem
    loss["Classification"] = loss_pid_classification.sum() / nelem

    # compute predicted pt from model output
    pred_pt = torch.unsqueeze(torch.exp(ypred["pt"]) * batch.X[..., 1], axis=-1) * msk_pred_particle
    pred_px = pred_pt * torch.unsqueeze(ypred["cos_phi"].detach(), axis=-1) * msk_pred_particle
    pred_py = pred_pt * torch.unsqueeze(ypred["sin_phi"].detach(), axis=-1) * msk_pred_particle
    # compute MET, sum across particle axis in event
    pred_met = torch.sqrt(torch.sum(pred_px, axis=-2) ** 2 + torch.sum(pred_py, axis=-2) ** 2).detach()
    loss["MET"] = torch.nn.functional.huber_loss(pred_met.squeeze(dim=-1), batch.genmet).mean()

    loss["Total"] = (
        loss["Classification_binary"]
        + loss["Classification"]
        + loss["Regression_pt"]
        + loss["Regression_eta"]
        + loss["Regression_sin_phi"]
        + loss["Regression_cos_phi"]
        + loss["Regression_energy"]
    )
    loss_opt = loss["Total"]
    loss["Total"] = loss["Total"].detach()
    for k in loss.keys():
        loss[k] = loss[k].detach()
    return loss_opt, loss


class FocalLoss(torch.nn.Module):
    """Focal Loss, as described in https://arxiv.org/abs/1708.02002.
    It is essentially an enhancement to cross entropy loss and is
    useful for classification tasks when there is a large class imbalance.
    """

    def __init__(self, alpha: Optional[torch.Tensor] = None, gamma: float = 0.0, reduction: str = "mean", ignore_index: int = -100):
        if reduction not in ("mean", "sum", "none"):
            raise ValueError('Reduction must be one of: "mean", "sum", "none".')
        super().__init__()
        self.alpha = alpha
        self.gamma = gamma
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.nll_loss = torch.nn.NLLLoss(weight=alpha, reduction="none")

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if x.ndim > 2:
            # (N, C, d1, d2, ..., dK) --> (N * d1 * ... * dK, C)
            c = x.shape[1]
            x = x.permute(0, *range(2, x.ndim), 1).reshape(-1, c)
            # (N, d1, d2, ..., dK) --> (N * d1 * ... * dK,)
            y = y.view(-1)

        # compute weighted cross entropy term: -alpha * log(pt)
        # (alpha is already part of self.nll_loss)
        log_p = torch.nn.functional.log_softmax(x, dim=-1)
        ce = self.nll_loss(log_p, y)

        # get true class column from each row
        all_rows = torch.arange(len(x))
        log_pt = log_p[all_rows, y]

        # compute focal term: (1 - pt)^gamma
        pt = log_pt.exp()
        focal_term = (1 - pt) ** self.gamma

        # the full loss: -alpha * ((1 - pt)^gamma) * log(pt)
        loss = focal_term * ce

        if self.reduction == "mean":
            loss = loss.mean()
        elif self.reduction == "sum":
            loss = loss.sum()

        return loss


def train_and_valid(rank, world_size, outdir, model, optimizer, data_loader, is_train, lr_schedule=None, comet_experiment=None, comet_step_freq=None, epoch=None, dtype=torch.float32):
    """
    Performs training over a given epoch. Will run a validation step every N_STEPS and after the last training batch.
    """

    train_or_valid = "train" if is_train else "valid"
    _logger.info(f"Initiating epoch #{epoch} {train_or_valid} run on device rank={rank}", color="red")

    # this one will keep accumulating `train_loss` and then return the average
    epoch_loss = {}

    if is_train:
        model.train()
    else:
        model.eval()

    # only show progress bar on rank 0
    if (world_size > 1) and (rank != 0):
        iterator = enumerate(data_loader)
    else:
        iterator = tqdm.tqdm(enumerate(data_loader), total=len(data_loader), desc=f"Epoch {epoch} {train_or_valid} loop on rank={rank}")

    device_type = "cuda" if isinstance(rank, int) else "cpu"

    loss_accum = 0.0
    for itrain, batch in iterator:
        batch = batch.to(rank, non_blocking=True)

        ygen = unpack_target(batch.ygen)

        num_elems = batch.X[batch.mask].shape[0]
        num_batch = batch.X.shape[0]

        with torch.autocast(device_type=device_type, dtype=dtype, enabled=device_type == "cuda"):
            if is_train:
                ypred = model(batch.X, batch.mask)
            else:
                with torch.no_grad():
                    ypred = model(batch.X, batch.mask)

        ypred = unpack_predictions(ypred)

        with torch.autocast(device_type=device_type, dtype=dtype, enabled=(device_type == "cuda")):
            if is_train:
                loss_opt, loss = mlpf_loss(ygen, ypred, batch)
                for param in model.parameters():
                    param.grad = None
            else:
                with torch.no_grad():
                    loss_opt, loss = mlpf_loss(ygen, ypred, batch)

        if is_train:
            loss_opt.backward()
            optimizer.step()
            if lr_schedule:
                lr_schedule.step()

        for loss_ in loss.keys():
            if loss_ not in epoch_loss:
                epoch_loss[loss_] = 0.0
            epoch_loss[loss_] += loss[loss_]

        if is_train:
            step = (epoch - 1) * len(data_loader) + itrain
            if not (comet_experiment is None) and (itrain % comet_step_freq == 0):
                # this loss is not normalized to batch size
                comet_experiment.log_metrics(loss, prefix=f"{train_or_valid}", step=step)
                comet_experiment.log_metric("learning_rate", lr_schedule.get_last_lr(), step=step)

        loss_accum += loss["Total"].detach().cpu().item()
        if itrain % 100 == 0 and itrain > 0 and (rank == 0 or rank == "cpu"):
            _logger.info(f"step {itrain} loss={loss_accum/100:.4f} num_elems={num_elems} num_batch={num_batch} " f"max_mem={torch.cuda.max_memory_allocated()/1000.0**3:.2f}GB")
            loss_accum = 0.0

    num_data = torch.tensor(len(data_loader), device=rank)
    # sum up the number of steps from all workers
    if world_size > 1:
        torch.distributed.all_reduce(num_data)

    for loss_ in epoch_loss:
        # sum up the losses from all workers
        if world_size > 1:
            torch.distributed.all_reduce(epoch_loss[loss_])
        epoch_loss[loss_] = epoch_loss[loss_].cpu().item() / num_data.cpu().item()

    if world_size > 1:
        dist.barrier()

    return epoch_loss


def train_mlpf(rank, world_size, model, optimizer, train_loader, valid_loader, num_epochs, patience, outdir, config, start_epoch=1, lr_schedule=None, use_ray=False, checkpoint_freq=None, comet_experiment=None, comet_step_freq=None, dtype=torch.float32, val_freq=None):
    """
    Will run a full training by calling train().

    Args:
        rank: 'cpu' or int representing the gpu device id
        model: a pytorch model (may be wrapped by DistributedDataParallel)
        train_loader: a pytorch geometric Dataloader that loads the training data in the form ~ DataBatch(X, ygen, ycands)
        valid_loader: a pytorch geometric Dataloader that loads the validation data in the form ~ DataBatch(X, ygen, ycands)
        patience: number of stale epochs before stopping the training
        outdir: path to store the model weights and training/validation losses
    """

    if (rank == 0) or (rank == "cpu"):
        tensorboard_writer_train = SummaryWriter(f"{outdir}/runs/train")
        tensorboard_writer_valid = SummaryWriter(f"{outdir}/runs/valid")
    else:
        tensorboard_writer_train = None
        tensorboard_writer_valid = None

    t0_initial = time.time()

    losses_of_interest = ["Total", "Classification", "Regression"]

    losses = {}
    losses["train"], losses["valid"] = {}, {}
    for loss in losses_of_interest:
        losses["train"][loss], losses["valid"][loss] = [], []

    stale_epochs, best_val_loss = torch.tensor(0, device=rank), 99999.9

    for epoch in range(start_epoch, num_epochs + 1):
        t0 = time.time()

        if (rank == 0) or (rank == "cpu"):
            if config["profile"] and epoch == start_epoch:
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True, profile_memory=True) as prof:
                    with record_function("model_train"):
                        losses_train = train_and_valid(rank, world_size, outdir, model, optimizer, train_loader, True, lr_schedule, comet_experiment, comet_step_freq, epoch, dtype)
                prof.export_chrome_trace(f"{outdir}/trace_epoch{epoch}.json")
                _logger.info(prof.key_averages().table(sort_by="cuda_time_total", row_limit=30))
            else:
                losses_train = train_and_valid(rank, world_size, outdir, model, optimizer, train_loader, True, lr_schedule, comet_experiment, comet_step_freq, epoch, dtype)
        else:
            losses_train = train_and_valid(rank, world_size, outdir, model, optimizer, train_loader, True, lr_schedule, comet_experiment, comet_step_freq, epoch, dtype)

        losses_valid = train_and_valid(rank, world_size, outdir, model, optimizer, valid_loader, False, None, comet_experiment, comet_step_freq, epoch, dtype)

        if comet_experiment:
            comet_experiment.log_metrics(losses_train, prefix="epoch_train_loss", epoch=epoch)
            comet_experiment.log_metrics(losses_valid, prefix="epoch_valid_loss", epoch=epoch)
            comet_experiment.log_metric("learning_rate", lr_schedule.get_last_lr(), epoch=epoch)
            comet_experiment.log_epoch_end(epoch)

        if (rank == 0) or (rank == "cpu"):
            extra_state = {"epoch": epoch, "lr_schedule_state_dict": lr_schedule.state_dict()}
            if losses_valid["Total"] < best_val_loss:
                best_val_loss = losses_valid["Total"]
                stale_epochs = 0
                torch.save(
                    {"model_state_dict": get_model_state_dict(model), "optimizer_state_dict": optimizer.state_dict()},
                    f"{outdir}/best_weights.pth",
                )
                save_checkpoint(f"{outdir}/best_weights.pth", model, optimizer, extra_state)
            else:
                stale_epochs += 1

            if checkpoint_freq and (epoch != 0) and (epoch % checkpoint_freq == 0):
                checkpoint_dir = Path(outdir) / "checkpoints"
                checkpoint_dir.mkdir(parents=True, exist_ok=True)
                checkpoint_path = "{}/checkpoint-{:02d}-{:.6f}.pth".format(checkpoint_dir, epoch, losses_valid["Total"])
                save_checkpoint(checkpoint_path, model, optimizer, extra_state)

        if use_ray:
            import ray

            # save model, optimizer and epoch number for HPO-supported checkpointing
            # Ray automatically syncs the checkpoint to persistent storage
            metrics = dict(
                loss=losses_train["Total"],
                val_loss=losses_valid["Total"],
                epoch=epoch,
                **{f"train_{k}": v for k, v in losses_train.items()},
                **{f"val_{k}": v for k, v in losses_valid.items()},
            )
            if (rank == 0) or (rank == "cpu"):
                # only save checkpoint on first worker
                with TemporaryDirectory() as temp_checkpoint_dir:
                    temp_checkpoint_dir = Path(temp_checkpoint_dir)
                    save_checkpoint(temp_checkpoint_dir / "checkpoint.pth", model, optimizer, extra_state)
                    ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(temp_checkpoint_dir))
            else:
                ray.train.report(metrics)

        if world_size > 1:
            dist.all_reduce(stale_epochs)

        if stale_epochs > patience:
            _logger.info("breaking due to stale epochs")
            break

        if (rank == 0) or (rank == "cpu"):
            for k, v in losses_train.items():
                tensorboard_writer_train.add_scalar("epoch/loss_" + k, v, epoch)
            for loss in losses_of_interest:
                losses["train"][loss].append(losses_train[loss])
                losses["valid"][loss].append(losses_valid[loss])
            for k, v in losses_valid.items():
                tensorboard_writer_valid.add_scalar("epoch/loss_" + k, v, epoch)

            t1 = time.time()

            epochs_remaining = num_epochs - epoch
            time_per_epoch = (t1 - t0_initial) / epoch
            eta = epochs_remaining * time_per_epoch / 60

            _logger.info(
                f"Rank {rank}: epoch={epoch} / {num_epochs} "
                + f"train_loss={losses_train['Total']:.4f} "
                + f"valid_loss={losses_valid['Total']:.4f} "
                + f"stale={stale_epochs} "
                + f"time={round((t1-t0)/60, 2)}m "
                + f"eta={round(eta, 1)}m",
                color="bold",
            )

            with open(f"{outdir}/mlpf_losses.pkl", "wb") as f:
                pkl.dump(losses, f)

            if tensorboard_writer_train:
                tensorboard_writer_train.flush()
            if tensorboard_writer_valid:
                tensorboard_writer_valid.flush()

    if world_size > 1:
        dist.barrier()

    _logger.info(f"Done with training. Total training time on device {rank} is {round((time.time() - t0_initial)/60,3)}min")


def run(rank, world_size, config, args, outdir, logfile):
    if (rank == 0) or (rank == "cpu"):  # keep writing the logs
        _configLogger("mlpf", filename=logfile)

    use_cuda = rank != "cpu"

    dtype = getattr(torch, config["dtype"])
    _logger.info("using dtype={}".format(dtype))

    if world_size > 1:
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = "12355"
        dist.init_process_group("nccl", rank=rank, world_size=world_size)  # (nccl should be faster than gloo)

    start_epoch = 1
    checkpoint_dir = Path(outdir) / "checkpoints"
    checkpoint_dir.mkdir(parents=True, exist_ok=True)

    model_kwargs = {
        "input_dim": len(X_FEATURES[config["dataset"]]),
        "num_classes": len(ELEM_TYPES_NONZERO[config["dataset"]]),
        "input_encoding": config["model"]["input_encoding"],
        "pt_mode": config["model"]["pt_mode"],
        "eta_mode": config["model"]["eta_mode"],
        "sin_phi_mode": config["model"]["sin_phi_mode"],
        "cos_phi_mode": config["model"]["cos_phi_mode"],
        "energy_mode": config["model"]["energy_mode"],
        "elemtypes_nonzero": ELEM_TYPES_NONZERO[config["dataset"]],
        "learned_representation_mode": config["model"]["learned_representation_mode"],
        **config["model"][config["conv_type"]],
    }
    model = MLPF(**model_kwargs)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])

    if config["load"]:  # load a pre-trained model
        with open(f"{outdir}/model_kwargs.pkl", "rb") as f:
            model_kwargs = pkl.load(f)
        _logger.info("model_kwargs: {}".format(model_kwargs))
        if config["conv_type"] == "attention":
            model_kwargs["attention_type"] = config["model"]["attention"]["attention_type"]

        model = MLPF(**model_kwargs).to(torch.device(rank))
        optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])

        checkpoint = torch.load(config["load"], map_location=torch.device(rank))

        if config["start_epoch"] is None:
            start_epoch = int(os.path.basename(config["load"]).split("-")[1]) + 1
        else:
            start_epoch = config["start_epoch"]

        if (rank == 0) or (rank == "cpu"):
            _logger.info("Loaded model weights from {}".format(config["load"]))

        model, optimizer = load_checkpoint(checkpoint, model, optimizer)

    model.to(rank)
    model.train()

    if world_size > 1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])

    trainable_params, nontrainable_params, table = count_parameters(model)
    if (rank == 0) or (rank == "cpu"):
        _logger.info(model)
        _logger.info(f"Trainable parameters: {trainable_params}")
        _logger.info(f"Non-trainable parameters: {nontrainable_params}")
        _logger.info(f"Total parameters: {trainable_params + nontrainable_params}")
        _logger.info(table.to_string(index=False))

    if config["train"]:
        if (rank == 0) or (rank == "cpu"):
            save_HPs(config, model, model_kwargs, outdir)  # save model_kwargs and hyperparameters
            _logger.info("Creating experiment dir {}".format(outdir))
            _logger.info(f"Model directory {outdir}", color="bold")

        comet_experiment = None

        loaders = get_interleaved_dataloaders(
            world_size,
            rank,
            config,
            use_cuda,
            use_ray=False,
        )
        steps_per_epoch = len(loaders["train"])
        last_epoch = -1 if start_epoch == 1 else start_epoch - 1
        lr_schedule = get_lr_schedule(config, optimizer, config["num_epochs"], steps_per_epoch, last_epoch)

        train_mlpf(
            rank,
            world_size,
            model,
            optimizer,
            loaders["train"],
            loaders["valid"],
            config["num_epochs"],
            config["patience"],
            outdir,
            config,
            start_epoch=start_epoch,
            lr_schedule=lr_schedule,
            use_ray=False,
            checkpoint_freq=config["checkpoint_freq"],
            comet_experiment=comet_experiment,
            comet_step_freq=config["comet_step_freq"],
            dtype=dtype,
            val_freq=config["val_freq"],
        )

        checkpoint = torch.load(f"{outdir}/best_weights.pth", map_location=torch.device(rank))
        model, optimizer = load_checkpoint(checkpoint, model, optimizer)

    if not (config["load"] is None):
        testdir_name = "_" + Path(config["load"]).stem
    else:
        testdir_name = "_best_weights"

    if config["test"]:
        for sample in args.test_datasets:
            os.system(f"mkdir -p {outdir}/preds{testdir_name}/{sample}")
            run_predictions(world_size, rank, model, loaders["test"][sample], sample, outdir, dtype=dtype)

    if (rank == 0) or (rank == "cpu"):  # make plots only on a single machine
        if config["make_plots"]:
            for sample in args.test_datasets:
                _logger.info(f"Plotting distributions for {sample}")
                make_plots(outdir, sample, config["dataset"], testdir_name, config["ntest"])

    if world_size > 1:
        dist.destroy_process_group()


def override_config(config, args):
    """override config with values from argparse Namespace"""
    for arg in vars(args):
        arg_value = getattr(args, arg)
        if arg_value is not None:
            config[arg] = arg_value

    if not (args.attention_type is None):
        config["model"]["attention"]["attention_type"] = args.attention_type

    if not (args.num_convs is None):
        for model in ["gnn_lsh", "gravnet", "attention", "mamba"]:
            config["model"][model]["num_convs"] = args.num_convs

    if len(args.test_datasets) == 0:
        args.test_datasets = config["test_dataset"]

    return config


def device_agnostic_run(config, args, world_size, outdir):
    if args.train:
        logfile = f"{outdir}/train.log"
    else:
        logfile = f"{outdir}/test.log"
    _configLogger("mlpf", filename=logfile)

    if config["gpus"]:
        assert (
            world_size <= torch.cuda.device_count()
        ), f"--gpus is too high (specified {world_size} gpus but only {torch.cuda.device_count()} gpus are available)"

        torch.cuda.empty_cache()
        if world_size > 1:
            _logger.info(f"Will use torch.nn.parallel.DistributedDataParallel() and {world_size} gpus", color="purple")
            for rank in range(world_size):
                _logger.info(torch.cuda.get_device_name(rank), color="purple")

            mp.spawn(
                run,
                args=(world_size, config, args, outdir, logfile),
                nprocs=world_size,
                join=True,
            )
        elif world_size == 1:
            rank = 0
            _logger.info(f"Will use single-gpu: {torch.cuda.get_device_name(rank)}", color="purple")
            run(rank, world_size, config, args, outdir, logfile)

    else:
        rank = "cpu"
        _logger.info("Will use cpu", color="purple")
        run(rank, world_size, config, args, outdir, logfile)


def run_ray_training(config, args, outdir):
    import ray
    from ray import train
    from ray.train import CheckpointConfig, FailureConfig, RunConfig, ScalingConfig
    from ray.train.torch import TorchConfig, TorchTrainer

    if not args.local:
        ray.init(address="auto")

    _configLogger("mlpf", filename=f"{outdir}/train.log")

    num_workers = args.gpus
    scaling_config = ScalingConfig(
        num_workers=num_workers,
        use_gpu=True,
        resources_per_worker={"CPU": max(1, args.ray_cpus // num_workers - 1), "GPU": 1},  # -1 to avoid blocking
    )
    storage_path = Path(args.experiments_dir if args.experiments_dir else "experiments").resolve()
    run_config = RunConfig(
        name=Path(outdir).name,
        storage_path=storage_path,
        log_to_file=False,
        failure_config=FailureConfig(max_failures=2),
        checkpoint_config=CheckpointConfig(num_to_keep=1),  # keep only latest checkpoint
        sync_config=train.SyncConfig(sync_artifacts=True),
    )
    trainable = lambda cfg: train_ray_trial(cfg, args, outdir)  # noqa: E731
    trainer = TorchTrainer(
        train_loop_per_worker=trainable,
        train_loop_config=config,
        scaling_config=scaling_config,
        run_config=run_config,
        torch_config=TorchConfig(backend="nccl"),
    )
    result = trainer.fit()

    _logger.info("Final loss: {}".format(result.metrics["loss"]), color="bold")
    _logger.info("Final cls_loss: {}".format(result.metrics["train_Classification"]), color="bold")
    _logger.info("Final reg_loss: {}".format(result.metrics["train_Regression"]), color="bold")


def train_ray_trial(config, args, outdir=None):
    import ray

    if outdir is None:
        outdir = ray.train.get_context().get_trial_dir()

    use_cuda = True

    rank = ray.train.get_context().get_local_rank()
    world_rank = ray.train.get_context().get_world_rank()
    world_size = ray.train.get_context().get_world_size()

    model_kwargs = {
        "input_dim": len(X_FEATURES[config["dataset"]]),
        "num_classes": len(ELEM_TYPES_NONZERO[config["dataset"]]),
        **config["model"][config["conv_type"]],
    }
    model = MLPF(**model_kwargs)

    # optimizer should be created after distributing the model to devices with ray.train.torch.prepare_model(model)
    model = ray.train.torch.prepare_model(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])

    trainable_params, nontrainable_params, table = count_parameters(model)

    loaders = get_interleaved_dataloaders(world_size, world_rank, config, use_cuda, use_ray=True)
    steps_per_epoch = len(loaders["train"])
    lr_schedule = get_lr_schedule(config, optimizer, config["num_epochs"], steps_per_epoch, last_epoch=-1)

    train_mlpf(
        rank,
        world_size,
        model,
        optimizer,
        loaders["train"],
        loaders["valid"],
        config["num_epochs"],
        config["patience"],
        outdir,
        config,
        lr_schedule=lr_schedule,
        use_ray=True,
        checkpoint_freq=config["checkpoint_freq"],
        dtype=getattr(torch, config["dtype"]),
    )


def save_HPs(config, model, model_kwargs, outdir):
    """Simple function to store the model parameters and training hyperparameters."""

    with open(f"{outdir}/model_kwargs.pkl", "wb") as f:  # dump model architecture
        pkl.dump(model_kwargs, f, protocol=pkl.HIGHEST_PROTOCOL)

    num_mlpf_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)

    with open(f"{outdir}/hyperparameters.json", "w") as fp:  # dump hyperparameters
        json.dump({"Num of mlpf parameters": num_mlpf_parameters, **config}, fp)
