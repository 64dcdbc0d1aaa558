###########################################################################################
# Training script for MACE
# Authors: Ilyes Batatia, Gregor Simm, David Kovacs
# This program is distributed under the MIT License (see MIT.md)
###########################################################################################

import argparse
import ast
import glob
import json
import logging
import os
from copy import deepcopy
from pathlib import Path
from typing import List, Optional

import torch
import torch.distributed
from e3nn.util import jit
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim import LBFGS
from torch_ema import ExponentialMovingAverage
from torch_geometric.loader import DataLoader

import mace
from mace import data, tools
from mace.calculators.foundations_models import mace_mp, mace_off
from mace.cli.convert_cueq_e3nn import run as run_cueq_to_e3nn
from mace.cli.convert_e3nn_cueq import run as run_e3nn_to_cueq
from mace.tools import torch_geometric
from mace.tools.model_script_utils import configure_model
from mace.tools.multihead_tools import prepare_default_head
from mace.tools.scripts_utils import (
    LRScheduler,
    SubsetCollection,
    check_path_ase_read,
    dict_to_array,
    get_atomic_energies,
    get_config_type_weights,
    get_dataset_from_xyz,
    get_loss_fn,
    get_optimizer,
    get_params_options,
    get_swa,
    print_git_commit,
    remove_pt_head,
)
from mace.tools.slurm_distributed import DistributedEnvironment
from mace.tools.tables_utils import create_error_table
from mace.tools.utils import AtomicNumberTable


def main() -> None:
    """
    This script runs the training/fine tuning for mace
    """
    args = tools.build_default_arg_parser().parse_args()
    run(args)


def _setup_distributed(args: argparse.Namespace):
    if args.launcher == "torchrun":
        world_size = int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ["LOCAL_RANK"])
        rank = int(os.environ["RANK"])
    else:
        distr_env = DistributedEnvironment()
        world_size = distr_env.world_size
        local_rank = distr_env.local_rank
        rank = distr_env.rank
        if rank == 0:
            print(distr_env)
    torch.distributed.init_process_group(backend="nccl")
    return world_size, local_rank, rank


def run(args: argparse.Namespace) -> None:
    """
    This script runs the training/fine tuning for mace
    """
    tag = tools.get_tag(name=args.name, seed=args.seed)
    args, input_log_messages = tools.check_args(args)

    if args.device == "xpu":
        try:
            import intel_extension_for_pytorch as ipex  # noqa: F401
        except ImportError as e:
            raise ImportError(
                "Error: Intel extension for PyTorch not found, but XPU device was specified"
            ) from e
    if args.distributed:
        try:
            world_size, local_rank, rank = _setup_distributed(args)
        except Exception as e:  # pylint: disable=W0703
            logging.error(f"Failed to initialize distributed environment: {e}")
            return
    else:
        rank = int(0)
        world_size = 1
        local_rank = 0

    # Setup
    tools.set_seeds(args.seed)
    tools.setup_logger(level=args.log_level, tag=tag, directory=args.log_dir, rank=rank)
    logging.info("===========VERIFYING SETTINGS===========")
    for message, loglevel in input_log_messages:
        logging.log(level=loglevel, msg=message)

    if args.distributed:
        torch.cuda.set_device(local_rank)
        logging.info(f"Process group initialized: {torch.distributed.is_initialized()}")
        logging.info(f"Processes: {world_size}")

    try:
        logging.info(f"MACE version: {mace.__version__}")
    except AttributeError:
        logging.info("Cannot find MACE version, please install MACE via pip")
    logging.debug(f"Configuration: {args}")

    tools.set_default_dtype(args.default_dtype)
    device = tools.init_device(args.device)
    commit = print_git_commit()

    model_foundation: Optional[torch.nn.Module] = None
    if args.foundation_model is not None:
        if args.foundation_model in ["small", "medium", "large"]:
            logging.info(
                f"Using foundation model mace-mp-0 {args.foundation_model} as initial checkpoint."
            )
            calc = mace_mp(
                model=args.foundation_model,
                device=args.device,
                default_dtype=args.default_dtype,
            )
            model_foundation = calc.models[0]
        elif args.foundation_model in ["small_off", "medium_off", "large_off"]:
            model_type = args.foundation_model.split("_")[0]
            calc = mace_off(
                model=model_type,
                device=args.device,
                default_dtype=args.default_dtype,
            )
            model_foundation = calc.models[0]
        else:
            model_foundation = torch.load(
                args.foundation_model, map_location=args.device
            )
            logging.info(
                f"Using foundation model {args.foundation_model} as initial checkpoint."
            )
        args.r_max = model_foundation.r_max.item()
        if args.only_cueq:
            model_foundation = run_cueq_to_e3nn(deepcopy(model_foundation), device=device)

    # Data preparation
    if args.E0s is not None and args.E0s.endswith(".json"):
        with open(args.E0s, "r", encoding="utf-8") as f:
            atomic_energies_dict = json.load(f)
    else:
        atomic_energies_dict = None

    collections, atomic_energies_from_file = get_dataset_from_xyz(
        work_dir=args.work_dir,
        train_path=args.train_file,
        valid_path=args.valid_file,
        valid_fraction=args.valid_fraction,
        config_type_weights=get_config_type_weights(None),
        test_path=args.test_file,
        seed=args.seed,
    )
    z_table = tools.get_atomic_number_table_from_zs(
        z
        for configs in (collections.train, collections.valid)
        for config in configs
        for z in config.atomic_numbers
    )
    atomic_energies = get_atomic_energies(args.E0s, collections.train, z_table)
    atomic_energies = dict_to_array({"Default": atomic_energies}, ["Default"])

    train_set = [
        data.AtomicData.from_config(config, z_table=z_table, cutoff=args.r_max)
        for config in collections.train
    ]
    valid_set = [
        data.AtomicData.from_config(config, z_table=z_table, cutoff=args.r_max)
        for config in collections.valid
    ]

    train_sampler, valid_sampler = None, None
    if args.distributed:
        train_sampler = torch.utils.data.distributed.DistributedSampler(
            train_set,
            num_replicas=world_size,
            rank=rank,
            shuffle=True,
            drop_last=True,
            seed=args.seed,
        )
        valid_sampler = torch.utils.data.distributed.DistributedSampler(
            valid_set,
            num_replicas=world_size,
            rank=rank,
            shuffle=True,
            drop_last=True,
            seed=args.seed,
        )
    train_loader = torch_geometric.dataloader.DataLoader(
        dataset=train_set,
        batch_size=args.batch_size,
        sampler=train_sampler,
        shuffle=(train_sampler is None),
        drop_last=(train_sampler is None),
        pin_memory=args.pin_memory,
        num_workers=args.num_workers,
        generator=torch.Generator().manual_seed(args.seed),
    )
    valid_loader = torch_geometric.dataloader.DataLoader(
        dataset=valid_set,
        batch_size=args.valid_batch_size,
        sampler=valid_sampler,
        shuffle=False,
        drop_last=False,
        pin_memory=args.pin_memory,
        num_workers=args.num_workers,
    )

    loss_fn = get_loss_fn(args, dipole_only=False, compute_dipole=False)
    args.avg_num_neighbors = data.compute_avg_num_neighbors(train_loader)
    logging.info(f"Average number of neighbors: {args.avg_num_neighbors:.3f}")

    # Build model
    model, output_args = configure_model(
        args, train_loader, atomic_energies, model_foundation, ["Default"], z_table
    )
    model.to(device)

    if model_foundation is not None:
        del model_foundation
        torch.cuda.empty_cache()

    logging.debug(model)
    logging.info(f"Total number of parameters: {tools.count_parameters(model)}")

    if args.enable_cueq:
        logging.info("Converting model to CUEQ for accelerated training")
        assert model.__class__.__name__ in ["MACE", "ScaleShiftMACE"]
        model = run_e3nn_to_cueq(deepcopy(model), device=device)

    # Optimizer
    param_options = get_params_options(args, model)
    optimizer = get_optimizer(args, param_options)
    lr_scheduler = LRScheduler(optimizer, args)
    swa, swas = get_swa(args, model, optimizer, swas=[False], dipole_only=False)

    checkpoint_handler = tools.CheckpointHandler(
        directory=args.checkpoints_dir,
        tag=tag,
        keep=False,
        swa_start=None,
    )
    start_epoch = 0
    if args.restart_latest:
        try:
            opt_start_epoch = checkpoint_handler.load_latest(
                state=tools.CheckpointState(model, optimizer, lr_scheduler),
                swa=True,
                device=device,
            )
        except Exception:  # pylint: disable=W0703
            opt_start_epoch = checkpoint_handler.load_latest(
                state=tools.CheckpointState(model, optimizer, lr_scheduler),
                swa=False,
                device=device,
            )
        if opt_start_epoch is not None:
            start_epoch = opt_start_epoch

    ema: Optional[ExponentialMovingAverage] = None
    if args.ema:
        ema = ExponentialMovingAverage(model.parameters(), decay=args.ema_decay)

    if args.wandb:
        tools.init_wandb(
            project="mace", entity=None, name=args.name, config=vars(args), directory=args.log_dir
        )

    distributed_model = None
    if args.distributed:
        distributed_model = DDP(model, device_ids=[local_rank])

    tools.train(
        model=model,
        loss_fn=loss_fn,
        train_loader=train_loader,
        valid_loaders={"Default": valid_loader},
        optimizer=optimizer,
        lr_scheduler=lr_scheduler,
        checkpoint_handler=checkpoint_handler,
        eval_interval=args.eval_interval,
        start_epoch=start_epoch,
        max_num_epochs=args.max_num_epochs,
        logger=tools.MetricsLogger(directory=args.results_dir, tag=tag + "_train"),
        patience=args.patience,
        output_args=output_args,
        device=device,
        swa=swa,
        ema=ema,
        max_grad_norm=args.clip_grad,
        log_errors=args.error_table,
        log_wandb=args.wandb,
        distributed=args.distributed,
        distributed_model=distributed_model,
        train_sampler=train_sampler,
        rank=rank,
    )

    if device.type == "cuda":
        peak = torch.cuda.max_memory_allocated(device) / 1024**3
        logging.info(f"Peak GPU memory during training: {peak:.2f} GiB")

    logging.info("Computing metrics for training, validation, and test sets")
    epoch = checkpoint_handler.load_latest(
        state=tools.CheckpointState(model, optimizer, lr_scheduler),
        swa=False,
        device=device,
    )
    model.to(device)
    if args.distributed:
        torch.distributed.barrier()

    if rank == 0:
        model_path = Path(args.checkpoints_dir) / (tag + ".model")
        logging.info(f"Saving model to {model_path}")
        model_to_save = deepcopy(model)
        if args.enable_cueq:
            logging.info("Converting CUEQ model back to E3NN for saving")
            model_to_save = run_cueq_to_e3nn(model_to_save, device=device)
        if args.save_cpu:
            model_to_save = model_to_save.to("cpu")
        torch.save(model_to_save, model_path)
        table = create_error_table(
            table_type=args.error_table,
            all_data_loaders={"train": train_loader, "valid": valid_loader},
            model=model,
            loss_fn=loss_fn,
            output_args=output_args,
            log_wandb=args.wandb,
            device=device,
            distributed=args.distributed,
        )
        logging.info("Error-table on TRAIN and VALID:\n" + str(table))
        logging.info(f"Finished training at epoch {epoch} (commit {commit})")

    if args.distributed:
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    logging.info("Done")


if __name__ == "__main__":
    main()
