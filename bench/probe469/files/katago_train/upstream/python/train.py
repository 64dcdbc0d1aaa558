#!/usr/bin/python3
import sys
import os
import argparse
import math
import time
import logging
import json
import datetime
import gc
import shutil
import glob
import atexit
import contextlib
from collections import defaultdict
from typing import Dict, List

import numpy as np

import torch
import torch.nn
import torch.optim
import torch.distributed
import torch.multiprocessing
from torch.nn.parallel import DistributedDataParallel
from torch.optim.swa_utils import AveragedModel
from torch.cuda.amp import GradScaler, autocast

from katago.train import modelconfigs
from katago.train.model_pytorch import Model, ExtraOutputs
from katago.train.metrics_pytorch import Metrics
from katago.train import load_model
from katago.train import data_processing_pytorch
from katago.train.metrics_logging import accumulate_metrics, log_metrics, clear_metric_nonfinite

# HANDLE COMMAND AND ARGS -------------------------------------------------------------------

if __name__ == "__main__":

    description = """
    Train neural net on Go positions from npz files of batches from selfplay.
    """

    parser = argparse.ArgumentParser(description=description, add_help=False)
    required_args = parser.add_argument_group('required arguments')
    optional_args = parser.add_argument_group('optional arguments')
    optional_args.add_argument('-h', '--help', action='help', default=argparse.SUPPRESS, help='show this help message and exit')

    required_args.add_argument('-traindir', help='Dir to write to for recording training results', required=True)
    required_args.add_argument('-datadir', help='Directory with a train and val subdir of npz data, output by shuffle.py', required=True)
    optional_args.add_argument('-exportdir', help='Directory to export models periodically', required=False)
    optional_args.add_argument('-exportprefix', help='Prefix to append to names of models', required=False)
    optional_args.add_argument('-initial-checkpoint', help='If no training checkpoint exists, initialize from this checkpoint', required=False)

    required_args.add_argument('-pos-len', help='Spatial edge length of expected training data, e.g. 19 for 19x19 Go', type=int, required=True)
    required_args.add_argument('-batch-size', help='Per-GPU batch size to use for training', type=int, required=True)
    optional_args.add_argument('-samples-per-epoch', help='Number of data samples to consider as one epoch', type=int, required=False)
    optional_args.add_argument('-model-kind', help='String name for what model config to use', required=False)
    optional_args.add_argument('-lr-scale', help='LR multiplier on the hardcoded schedule', type=float, required=False)
    optional_args.add_argument('-gnorm-clip-scale', help='Multiplier on gradient clipping threshold', type=float, required=False)
    optional_args.add_argument('-sub-epochs', help='Reload training data up to this many times per epoch', type=int, default=1, required=False)
    optional_args.add_argument('-swa-period-samples', help='How frequently to average an SWA sample, in samples', type=float, required=False)
    optional_args.add_argument('-swa-scale', help='Number of samples to average in expectation together for SWA', type=float, required=False)
    optional_args.add_argument('-max-train-bucket-per-new-data', help='When data added, add this many train rows per data row to bucket', type=float, required=False)
    optional_args.add_argument('-stop-when-train-bucket-limited', help='Terminate due to train bucket rather than waiting for more', required=False, action='store_true')
    optional_args.add_argument('-max-val-samples', help='Approx max of validation samples per epoch', type=int, required=False)
    optional_args.add_argument('-randomize-symmetries', help='Randomize symmetries of training data', type=bool, default=True, required=False)
    optional_args.add_argument('-multi-gpus', help='Use multiple gpus, comma-separated device ids', required=False)
    optional_args.add_argument('-use-fp16', help='Use fp16 training', required=False, action='store_true')
    optional_args.add_argument('-epochs-per-export', help='Export model once every this many epochs', type=int, required=False)
    optional_args.add_argument('-quit-if-no-data', help='If no data, quit instead of waiting for data', required=False, action='store_true')
    optional_args.add_argument('-main-loss-scale', help='Loss factor scale for main head', type=float, required=False)

    args = vars(parser.parse_args())


def make_dirs(args):
    traindir = args["traindir"]
    exportdir = args["exportdir"]

    if not os.path.exists(traindir):
        os.makedirs(traindir)
    if exportdir is not None and not os.path.exists(exportdir):
        os.makedirs(exportdir)


def multiprocessing_setup(rank: int, world_size: int):
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = '23456'
    logging.info("Running torch.distributed.init_process_group")
    torch.distributed.init_process_group("nccl", rank=rank, world_size=world_size)
    logging.info(f"Returned from init_process_group")


def multiprocessing_cleanup():
    torch.distributed.destroy_process_group()


def dump_and_flush_queue(q):
    while True:
        try:
            q.get_nowait()
        except Exception:
            break


def main(rank: int, world_size: int, args, multi_gpu_device_ids, readpipes, writepipes, barrier):
    traindir = args["traindir"]
    datadir = args["datadir"]
    exportdir = args["exportdir"]
    exportprefix = args["exportprefix"]
    initial_checkpoint = args["initial_checkpoint"]

    pos_len = args["pos_len"]
    batch_size = args["batch_size"]
    samples_per_epoch = args["samples_per_epoch"]
    model_kind = args["model_kind"]
    lr_scale = args["lr_scale"]
    gnorm_clip_scale = args["gnorm_clip_scale"]
    sub_epochs = args["sub_epochs"]
    swa_period_samples = args["swa_period_samples"]
    swa_scale = args["swa_scale"]

    max_train_bucket_per_new_data = args["max_train_bucket_per_new_data"]
    stop_when_train_bucket_limited = args["stop_when_train_bucket_limited"]
    max_val_samples = args["max_val_samples"]
    randomize_symmetries = args["randomize_symmetries"]
    use_fp16 = args["use_fp16"]
    epochs_per_export = args["epochs_per_export"]
    quit_if_no_data = args["quit_if_no_data"]
    main_loss_scale = args["main_loss_scale"]
    intermediate_loss_scale = None

    if samples_per_epoch is None:
        samples_per_epoch = 1000000
    if epochs_per_export is None:
        epochs_per_export = 1
    if swa_period_samples is None:
        swa_period_samples = max(1, 20000 // world_size)
    if swa_scale is None:
        swa_scale = 8

    assert (swa_period_samples is None) == (swa_scale is None)

    # SET UP LOGGING -------------------------------------------------------------

    logging.root.handlers = []
    logging.basicConfig(
        level=logging.INFO,
        format="%(message)s",
        handlers=[
            logging.FileHandler(os.path.join(traindir, f"train{rank}.log"), mode="a"),
            logging.StreamHandler()
        ],
    )
    np.set_printoptions(linewidth=150)

    logging.info(str(sys.argv))

    # FIGURE OUT MULTIGPU ------------------------------------------------------------
    if world_size > 1:
        multiprocessing_setup(rank, world_size)
        atexit.register(multiprocessing_cleanup)
        assert torch.cuda.is_available()

    if torch.cuda.is_available():
        my_gpu_id = multi_gpu_device_ids[rank]
        torch.cuda.set_device(my_gpu_id)
        logging.info("Using GPU device: " + torch.cuda.get_device_name())
        device = torch.device("cuda", my_gpu_id)
    else:
        logging.warning("WARNING: No GPU, using CPU")
        device = torch.device("cpu")

    seed = int.from_bytes(os.urandom(7), sys.byteorder)
    logging.info(f"Seeding torch with {seed}")
    torch.manual_seed(seed)

    # LOAD MODEL ---------------------------------------------------------------------

    def lr_scale_auto_factor(train_state):
        if train_state["global_step_samples"] < 200_000_000:
            return 1.0
        elif train_state["global_step_samples"] < 400_000_000:
            return 0.5
        return 0.25

    def get_checkpoint_path():
        return os.path.join(traindir, "checkpoint.ckpt")

    def save(ddp_model, swa_model, optimizer, metrics_obj, running_metrics, train_state, last_val_metrics, path=None):
        if rank != 0:
            return
        state_dict = {}
        state_dict["model"] = ddp_model.state_dict()
        state_dict["optimizer"] = optimizer.state_dict()
        state_dict["metrics"] = metrics_obj.state_dict()
        state_dict["running_metrics"] = running_metrics
        state_dict["train_state"] = train_state
        state_dict["last_val_metrics"] = last_val_metrics
        state_dict["config"] = model_config

        if swa_model is not None:
            state_dict["swa_model"] = swa_model.state_dict()

        path = path if path is not None else get_checkpoint_path()
        logging.info("Saving checkpoint: " + path)
        torch.save(state_dict, path + ".tmp")
        os.replace(path + ".tmp", path)

    def get_weight_decay(raw_model, lr_scale, warmup_scale, train_state, running_metrics, group_name):
        base = 0.000001 if group_name in ("normal", "normal_gamma", "output") else 0.00000001
        return base * world_size * batch_size / 256.0

    def get_param_groups(raw_model, train_state, running_metrics):
        reg_dict: Dict[str, List] = {}
        raw_model.add_reg_dict(reg_dict)
        param_groups = []
        for group_name in ("normal", "normal_gamma", "output", "noreg", "output_noreg"):
            param_groups.append({
                "params": reg_dict[group_name],
                "weight_decay": get_weight_decay(raw_model, lr_scale, 1.0, train_state, running_metrics, group_name),
                "group_name": group_name,
            })
        num_params = len(list(raw_model.parameters()))
        num_reg_dict_params = sum(len(reg_dict[name]) for name in reg_dict)
        assert num_params == num_reg_dict_params, "Reg dict does not have entries for all params in model"
        return param_groups

    def load():
        if not os.path.exists(get_checkpoint_path()):
            logging.info("No preexisting checkpoint found at: " + get_checkpoint_path())
            if initial_checkpoint is not None:
                if os.path.exists(initial_checkpoint):
                    logging.info("Using initial checkpoint: {initial_checkpoint}")
                    path_to_load_from = initial_checkpoint
                else:
                    raise Exception("No preexisting checkpoint found, initial checkpoint provided is invalid: {initial_checkpoint}")
            else:
                path_to_load_from = None
        else:
            path_to_load_from = get_checkpoint_path()

        if path_to_load_from is None:
            logging.info("Initializing new model!")
            assert model_kind is not None, "Model kind is none or unspecified but the model is being created fresh"
            model_config = modelconfigs.config_of_name[model_kind]
            logging.info(str(model_config))
            raw_model = Model(model_config, pos_len)
            raw_model.initialize()
            raw_model.to(device)

            swa_model = None
            if rank == 0 and swa_scale is not None:
                new_factor = 1.0 / swa_scale
                ema_avg = lambda avg_param, cur_param, num_averaged: avg_param + new_factor * (cur_param - avg_param)
                swa_model = AveragedModel(raw_model, avg_fn=ema_avg)

            metrics_obj = Metrics(batch_size, world_size, raw_model)
            running_metrics = {"sums": defaultdict(float), "weights": defaultdict(float)}
            train_state = {}
            last_val_metrics = {}
            train_state["global_step_samples"] = 0
            optimizer = torch.optim.SGD(get_param_groups(raw_model, train_state, running_metrics), lr=1.0, momentum=0.9)
            return (model_config, raw_model, swa_model, optimizer, metrics_obj, running_metrics, train_state, last_val_metrics)
        else:
            state_dict = torch.load(path_to_load_from, map_location=device)
            model_config = state_dict["config"] if "config" in state_dict else modelconfigs.config_of_name[model_kind]
            logging.info(str(model_config))
            raw_model = Model(model_config, pos_len)
            raw_model.initialize()

            train_state = state_dict.get("train_state", {})
            model_state_dict = load_model.load_model_state_dict(state_dict)
            raw_model.load_state_dict(model_state_dict)
            raw_model.to(device)

            swa_model = None
            if rank == 0 and swa_scale is not None:
                new_factor = 1.0 / swa_scale
                ema_avg = lambda avg_param, cur_param, num_averaged: avg_param + new_factor * (cur_param - avg_param)
                swa_model = AveragedModel(raw_model, avg_fn=ema_avg)
                if "swa_model" in state_dict:
                    swa_model.load_state_dict(state_dict["swa_model"])

            metrics_obj = Metrics(batch_size, world_size, raw_model)
            if "metrics" in state_dict:
                metrics_obj.load_state_dict(state_dict["metrics"])
            running_metrics = state_dict.get("running_metrics", {"sums": defaultdict(float), "weights": defaultdict(float)})
            last_val_metrics = state_dict.get("last_val_metrics", {})

            optimizer = torch.optim.SGD(get_param_groups(raw_model, train_state, running_metrics), lr=1.0, momentum=0.9)
            if "optimizer" in state_dict:
                optimizer.load_state_dict(state_dict["optimizer"])
            else:
                logging.info("WARNING: Optimizer not found in state dict, using fresh optimizer")

            return (model_config, raw_model, swa_model, optimizer, metrics_obj, running_metrics, train_state, last_val_metrics)

    (model_config, raw_model, swa_model, optimizer, metrics_obj, running_metrics, train_state, last_val_metrics) = load()

    if "global_step_samples" not in train_state:
        train_state["global_step_samples"] = 0
    if max_train_bucket_per_new_data is not None and "train_bucket_level" not in train_state:
        train_state["train_bucket_level"] = samples_per_epoch
    if "train_steps_since_last_reload" not in train_state:
        train_state["train_steps_since_last_reload"] = 0
    if "export_cycle_counter" not in train_state:
        train_state["export_cycle_counter"] = 0

    if world_size > 1:
        ddp_model = DistributedDataParallel(raw_model, device_ids=[device], find_unused_parameters=True)
    else:
        ddp_model = raw_model

    # FIND TRAIN FILES -------------------------------------------------------------------

    def find_train_files():
        train_files = []
        for dirpath, dirnames, filenames in os.walk(os.path.join(datadir, "train")):
            for filename in filenames:
                if filename.endswith(".npz"):
                    train_files.append(os.path.join(dirpath, filename))
        train_files.sort()
        return train_files

    val_files = []
    if os.path.exists(os.path.join(datadir, "val")):
        for filename in os.listdir(os.path.join(datadir, "val")):
            if filename.endswith(".npz"):
                val_files.append(os.path.join(datadir, "val", filename))
    val_files.sort()

    # EPOCHS AND LR ---------------------------------------------------------------------

    def update_and_return_lr_and_wd():
        per_sample_lr = 0.00003 * (1.0 if lr_scale is None else lr_scale) * lr_scale_auto_factor(train_state)
        warmup_scale = 1.0
        if train_state["global_step_samples"] < 5_000_000:
            warmup_scale = 1.0 / 5.0
        elif train_state["global_step_samples"] < 10_000_000:
            warmup_scale = 1.0 / 2.0
        normal_weight_decay = 0.0
        for param_group in optimizer.param_groups:
            group_name = param_group["group_name"]
            param_group["lr"] = per_sample_lr * warmup_scale * batch_size
            param_group["weight_decay"] = get_weight_decay(raw_model, lr_scale, warmup_scale, train_state, running_metrics, group_name)
            if group_name == "normal":
                normal_weight_decay = param_group["weight_decay"]
        return per_sample_lr * warmup_scale, normal_weight_decay

    num_epochs_this_instance = 0

    if use_fp16:
        logging.info("Training in FP16! Creating scaler")
        scaler = GradScaler()
    else:
        logging.info("Training in FP32.")
        scaler = None

    # TRAIN! -----------------------------------------------------------------------------------

    while True:
        if max_train_bucket_per_new_data is not None and train_state["train_bucket_level"] <= 0 and stop_when_train_bucket_limited:
            logging.info("Train bucket is empty, quitting")
            break

        logging.info("GC collect")
        gc.collect()

        lr_right_now, normal_weight_decay_right_now = update_and_return_lr_and_wd()
        logging.info("Beginning training subepoch!")
        logging.info("This subepoch, using lr %f, normal weight decay %f" % (lr_right_now, normal_weight_decay_right_now))

        train_files = find_train_files()
        if len(train_files) == 0:
            if quit_if_no_data:
                logging.info("No training files found, quitting")
                return
            logging.info("No training files found, waiting 60s")
            time.sleep(60)
            continue

        ddp_model.train()
        batch_count_this_epoch = 0
        last_train_stats_time = time.perf_counter()
        for batch in data_processing_pytorch.read_npz_training_data(
            train_files,
            batch_size,
            world_size,
            rank,
            pos_len=pos_len,
            device=device,
            randomize_symmetries=randomize_symmetries,
            model_config=model_config,
        ):
            optimizer.zero_grad(set_to_none=True)
            extra_outputs = None

            if use_fp16:
                with autocast():
                    model_outputs = ddp_model(batch["binaryInputNCHW"], batch["globalInputNC"])
                model_outputs = raw_model.float32ify_output(model_outputs)
            else:
                model_outputs = ddp_model(batch["binaryInputNCHW"], batch["globalInputNC"])

            postprocessed = raw_model.postprocess_output(model_outputs)
            metrics = metrics_obj.metrics_dict_batchwise(
                raw_model,
                postprocessed,
                extra_outputs,
                batch,
                is_training=True,
                main_loss_scale=main_loss_scale,
                intermediate_loss_scale=intermediate_loss_scale,
            )

            loss = metrics["loss_sum"]
            gnorm_cap = 2500.0 * (1.0 if gnorm_clip_scale is None else gnorm_clip_scale)

            if use_fp16:
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                gnorm = torch.nn.utils.clip_grad_norm_(ddp_model.parameters(), gnorm_cap).detach().cpu().item()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                gnorm = torch.nn.utils.clip_grad_norm_(ddp_model.parameters(), gnorm_cap).detach().cpu().item()
                optimizer.step()

            metrics["gnorm_batch"] = gnorm
            batch_count_this_epoch += 1
            train_state["train_steps_since_last_reload"] += batch_size * world_size
            train_state["global_step_samples"] += batch_size * world_size
            if max_train_bucket_per_new_data is not None:
                train_state["train_bucket_level"] -= batch_size * world_size

            metrics = clear_metric_nonfinite(metrics, running_metrics)
            accumulate_metrics(running_metrics["sums"], running_metrics["weights"], metrics, batch_size, decay=0.999, new_weight=1.0)
            if batch_count_this_epoch % 100 == 0:
                t1 = time.perf_counter()
                timediff = t1 - last_train_stats_time
                last_train_stats_time = t1
                metrics["pslr_batch"] = lr_right_now
                metrics["wdnormal_batch"] = normal_weight_decay_right_now
                metrics["time_since_last_print"] = timediff
                log_metrics(running_metrics["sums"], running_metrics["weights"], metrics, None)
                if rank == 0 and torch.cuda.is_available():
                    logging.info("Peak GPU memory %.1f MB" % (torch.cuda.max_memory_allocated() / 1048576.0))

            if swa_model is not None and swa_scale is not None:
                if train_state["global_step_samples"] % int(swa_period_samples) < batch_size * world_size:
                    swa_model.update_parameters(raw_model)

            if batch_count_this_epoch * batch_size * world_size >= samples_per_epoch / sub_epochs:
                break

        # END SUB EPOCH ----------------------------------------
        save(ddp_model, swa_model, optimizer, metrics_obj, running_metrics, train_state, last_val_metrics)
        num_epochs_this_instance += 1

        # VALIDATE ---------------------------------------------
        if rank == 0 and len(val_files) > 0:
            logging.info("Beginning validation after epoch!")
            val_metric_sums = defaultdict(float)
            val_metric_weights = defaultdict(float)
            val_samples = 0
            ddp_model.eval()
            with torch.no_grad():
                for batch in data_processing_pytorch.read_npz_training_data(
                    val_files,
                    batch_size,
                    world_size=1,
                    rank=0,
                    pos_len=pos_len,
                    device=device,
                    randomize_symmetries=True,
                    model_config=model_config,
                ):
                    model_outputs = ddp_model(batch["binaryInputNCHW"], batch["globalInputNC"])
                    postprocessed = raw_model.postprocess_output(model_outputs)
                    metrics = metrics_obj.metrics_dict_batchwise(
                        raw_model, postprocessed, None, batch, is_training=False,
                        main_loss_scale=main_loss_scale, intermediate_loss_scale=intermediate_loss_scale,
                    )
                    accumulate_metrics(val_metric_sums, val_metric_weights, metrics, batch_size, decay=1.0, new_weight=1.0)
                    val_samples += batch_size
                    if max_val_samples is not None and val_samples > max_val_samples:
                        break
            log_metrics(val_metric_sums, val_metric_weights, {}, None)
            last_val_metrics["sums"] = val_metric_sums
            last_val_metrics["weights"] = val_metric_weights
            ddp_model.train()
            torch.cuda.empty_cache()

        # EXPORT -----------------------------------------------
        if rank == 0 and exportdir is not None:
            train_state["export_cycle_counter"] += 1
            if train_state["export_cycle_counter"] >= epochs_per_export:
                modelname = "%s-s%d-d%d" % (exportprefix, train_state["global_step_samples"], 0)
                savepath = os.path.join(exportdir, modelname)
                if not os.path.exists(savepath):
                    os.mkdir(savepath)
                    save(ddp_model, swa_model, optimizer, metrics_obj, running_metrics, train_state, last_val_metrics,
                         path=os.path.join(savepath, "model.ckpt"))
                    logging.info("Exported model " + modelname)
                train_state["export_cycle_counter"] = 0

        if barrier is not None:
            barrier.wait()


if __name__ == "__main__":
    multi_gpus = args["multi_gpus"]
    num_gpus_used = 1
    multi_gpu_device_ids = []
    if multi_gpus is not None:
        for piece in multi_gpus.split(","):
            piece = piece.strip()
            multi_gpu_device_ids.append(int(piece))
        num_gpus_used = len(multi_gpu_device_ids)
    else:
        multi_gpu_device_ids = [0]

    make_dirs(args)

    readpipes = []
    writepipes = []

    if num_gpus_used > 1:
        torch.multiprocessing.set_start_method("spawn")
        world_size = num_gpus_used
        barrier = torch.multiprocessing.Barrier(num_gpus_used)
        for i in range(world_size - 1):
            rpipe, wpipe = torch.multiprocessing.Pipe()
            readpipes.append(rpipe)
            writepipes.append(wpipe)
        torch.multiprocessing.spawn(
            main,
            nprocs=num_gpus_used,
            args=(world_size, args, multi_gpu_device_ids, readpipes, writepipes, barrier)
        )
    else:
        rank = 0
        world_size = 1
        barrier = None
        main(rank, world_size, args, multi_gpu_device_ids, readpipes, writepipes, barrier)
