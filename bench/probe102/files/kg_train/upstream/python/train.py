#!/usr/bin/python3
import sys
import os
import argparse
import traceback
import random
import math
import time
import logging
import contextlib
import json
import datetime
from datetime import timezone
import gc
import shutil
import glob
import numpy as np
import itertools
import copy
import atexit
from collections import defaultdict
from typing import Dict, List

import torch
import torch.nn
import torch.optim
import torch.distributed
import torch.multiprocessing
from torch.nn.parallel import DistributedDataParallel
from torch.optim.swa_utils import AveragedModel
from torch.cuda.amp import GradScaler, autocast

import modelconfigs
from model_pytorch import Model, ExtraOutputs, MetadataEncoder
from metrics_pytorch import Metrics
import load_model
import data_processing_pytorch
from metrics_logging import accumulate_metrics, log_metrics, clear_metric_nonfinite

# HANDLE COMMAND AND ARGS -------------------------------------------------------------------

if __name__ == "__main__":

    description = """
    Train neural net on Go positions from npz files of batches from selfplay.
    """

    parser = argparse.ArgumentParser(description=description,add_help=False)
    required_args = parser.add_argument_group('required arguments')
    optional_args = parser.add_argument_group('optional arguments')
    optional_args.add_argument(
        '-h',
        '--help',
        action='help',
        default=argparse.SUPPRESS,
        help='show this help message and exit'
    )

    required_args.add_argument('-traindir', help='Dir to write to for recording training results', required=True)
    required_args.add_argument('-datadir', help='Directory with a train and val subdir of npz data, output by shuffle.py', required=False)
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
    optional_args.add_argument('-lookahead-k', help='Use lookahead optimizer', type=int, default=6, required=False)
    optional_args.add_argument('-lookahead-alpha', help='Use lookahead optimizer', type=float, default=0.5, required=False)

    optional_args.add_argument('-multi-gpus', help='Use multiple gpus, comma-separated device ids', required=False)
    optional_args.add_argument('-use-fp16', help='Use fp16 training', required=False, action='store_true')

    optional_args.add_argument('-epochs-per-export', help='Export model once every this many epochs', type=int, required=False)
    optional_args.add_argument('-export-prob', help='Export model with this probablity', type=float, required=False)
    optional_args.add_argument('-max-epochs-this-instance', help='Terminate training after this many more epochs', type=int, required=False)
    optional_args.add_argument('-max-training-samples', help='Terminate training after about this many training steps in samples', type=int, required=False)
    optional_args.add_argument('-sleep-seconds-per-epoch', help='Sleep this long between epochs', type=int, required=False)
    optional_args.add_argument('-max-train-bucket-per-new-data', help='When data added, add this many train rows per data row to bucket', type=float, required=False)
    optional_args.add_argument('-max-train-bucket-size', help='Approx total number of train rows allowed if data stops', type=float, required=False)
    optional_args.add_argument('-max-val-samples', help='Approx max of validation samples per epoch', type=int, required=False)
    optional_args.add_argument('-randomize-val', help='Randomize order of validation files', required=False, action='store_true')
    optional_args.add_argument('-no-export', help='Do not export models', required=False, action='store_true')
    optional_args.add_argument('-gnorm-stats-debug', required=False, action='store_true')

    args = vars(parser.parse_args())


def get_longterm_checkpoints_dir(traindir):
    return os.path.join(traindir,"longterm_checkpoints")

def make_dirs(args):
    traindir = args["traindir"]
    exportdir = args["exportdir"]

    if not os.path.exists(traindir):
        os.makedirs(traindir)
    if exportdir is not None and not os.path.exists(exportdir):
        os.makedirs(exportdir)

    longterm_checkpoints_dir = get_longterm_checkpoints_dir(traindir)
    if not os.path.exists(longterm_checkpoints_dir):
        os.makedirs(longterm_checkpoints_dir)

def multiprocessing_setup(rank: int, world_size: int):
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = '23456'
    logging.info("Running torch.distributed.init_process_group")
    torch.distributed.init_process_group("nccl", rank=rank, world_size=world_size)
    logging.info(f"Returned from init_process_group")

def multiprocessing_cleanup():
    torch.distributed.destroy_process_group()

def dump_and_flush_queue(q):
    try:
        while True:
            q.get_nowait()
    except Exception:
        pass


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
    lookahead_k = args["lookahead_k"]
    lookahead_alpha = args["lookahead_alpha"]

    use_fp16 = args["use_fp16"]

    epochs_per_export = args["epochs_per_export"]
    export_prob = args["export_prob"]
    max_epochs_this_instance = args["max_epochs_this_instance"]
    max_training_samples = args["max_training_samples"]
    sleep_seconds_per_epoch = args["sleep_seconds_per_epoch"]
    max_val_samples = args["max_val_samples"]
    randomize_val = args["randomize_val"]
    no_export = args["no_export"]
    gnorm_stats_debug = args["gnorm_stats_debug"]
    max_train_bucket_per_new_data = args["max_train_bucket_per_new_data"]
    max_train_bucket_size = args["max_train_bucket_size"]

    if samples_per_epoch is None:
        samples_per_epoch = 1000000
    if max_val_samples is None:
        max_val_samples = 250000
    if sub_epochs is None:
        sub_epochs = 1
    if lr_scale is None:
        lr_scale = 1.0
    if gnorm_clip_scale is None:
        gnorm_clip_scale = 1.0
    if epochs_per_export is None:
        epochs_per_export = 1

    num_batches_per_epoch = int(round(samples_per_epoch / batch_size))
    longterm_checkpoints_dir = get_longterm_checkpoints_dir(traindir)

    assert (swa_period_samples is None) == (swa_scale is None)
    assert (lookahead_k is None) == (lookahead_alpha is None)

    # SET UP LOGGING -------------------------------------------------------------

    logging.root.handlers = []
    logging.basicConfig(
        level=logging.INFO,
        format="%(message)s",
        handlers=[
            logging.FileHandler(os.path.join(traindir,f"train{rank}.log"), mode="a"),
            logging.StreamHandler()
        ],
    )
    np.set_printoptions(linewidth=150)

    if rank == 0:
        train_metrics_out = open(os.path.join(traindir,"metrics_train.json"),"a")
        val_metrics_out = open(os.path.join(traindir,"metrics_val.json"),"a")
    else:
        train_metrics_out = open(os.path.join(traindir,f"metrics_train_rank{rank}.json"),"a")
        val_metrics_out = open(os.path.join(traindir,f"metrics_val_rank{rank}.json"),"a")

    logging.info(str(sys.argv))

    # FIGURE OUT MULTIGPU ------------------------------------------------------------
    if world_size > 1:
        multiprocessing_setup(rank, world_size)
        atexit.register(multiprocessing_cleanup)
        assert torch.distributed.is_initialized()

    if gnorm_stats_debug:
        logging.warning("GNorm stats debug mode is enabled, training will be slower")

    if torch.cuda.is_available():
        my_gpu_id = multi_gpu_device_ids[rank]
        torch.cuda.set_device(my_gpu_id)
        logging.info("Using GPU device: " + torch.cuda.get_device_name())
        device = torch.device("cuda", my_gpu_id)
    elif torch.backends.mps.is_available():
        device = torch.device("mps")
        logging.info("Using MPS device")
    else:
        logging.warning("WARNING: No GPU, using CPU")
        device = torch.device("cpu")

    seed = int.from_bytes(os.urandom(7), sys.byteorder)
    logging.info(f"Seeding torch with {seed}")
    torch.manual_seed(seed)

    # LOAD MODEL ---------------------------------------------------------------------

    def lr_scale_auto_factor(train_state):
        return 1.0

    def get_checkpoint_path():
        return os.path.join(traindir,"checkpoint.ckpt")
    def get_checkpoint_prev_path(i):
        return os.path.join(traindir,f"checkpoint_prev{i}.ckpt")

    NUM_SHORTTERM_CHECKPOINTS_TO_KEEP = 4
    def save(ddp_model, swa_model, optimizer, metrics_obj, running_metrics, train_state, last_val_metrics, path=None):
        if gnorm_stats_debug:
            logging.warning("Skipping save since debugging gnorm stats")
            return
        if rank != 0:
            return
        assert not isinstance(ddp_model, torch.nn.DataParallel)
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

        if path is not None:
            logging.info("Saving checkpoint: " + path)
            torch.save(state_dict, path + ".tmp")
            time.sleep(1)
            os.replace(path + ".tmp", path)
        else:
            logging.info("Saving checkpoint: " + get_checkpoint_path())
            if os.path.exists(get_checkpoint_path()):
                shutil.copy(get_checkpoint_path(), get_checkpoint_prev_path(0))
            torch.save(state_dict, get_checkpoint_path() + ".tmp")
            os.replace(get_checkpoint_path() + ".tmp", get_checkpoint_path())

    def get_weight_decay(raw_model, lr_scale, warmup_scale, train_state, running_metrics, group_name):
        lr_scale_with_auto = lr_scale * lr_scale_auto_factor(train_state)
        if group_name in ("normal", "normal_gamma", "noreg"):
            return 0.000001 * world_size * batch_size / 256.0 / lr_scale_with_auto
        elif group_name == "output":
            return 0.000001 * world_size * batch_size / 256.0
        elif group_name == "output_noreg":
            return 0.00000001 * world_size * batch_size / 256.0
        else:
            assert False

    def get_param_groups(raw_model, train_state, running_metrics):
        reg_dict: Dict[str, List] = {}
        raw_model.add_reg_dict(reg_dict)
        param_groups = []
        for group_name in ["normal", "normal_gamma", "output", "noreg", "output_noreg"]:
            param_groups.append({
                "params": reg_dict[group_name],
                "weight_decay": get_weight_decay(raw_model, lr_scale, warmup_scale=1.0, train_state=train_state, running_metrics=running_metrics, group_name=group_name),
                "group_name": group_name,
            })
        num_params = sum(len(g["params"]) for g in param_groups)
        assert num_params == len(list(raw_model.parameters()))
        return param_groups

    def load():
        if not os.path.exists(get_checkpoint_path()):
            logging.info("No preexisting checkpoint found at: " + get_checkpoint_path())
            for i in range(NUM_SHORTTERM_CHECKPOINTS_TO_KEEP):
                if os.path.exists(get_checkpoint_prev_path(i)):
                    raise Exception(f"No preexisting checkpoint found, but {get_checkpoint_prev_path(i)} exists, something is wrong with the training dir")

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
            raw_model = Model(model_config,pos_len)
            raw_model.initialize()

            raw_model.to(device)
            if swa_scale is not None:
                new_factor = 1.0 / swa_scale
                ema_avg = lambda avg_param_model, cur_param_model, num_averaged: avg_param_model + new_factor * (cur_param_model - avg_param_model)
                swa_model = AveragedModel(raw_model, avg_fn=ema_avg)
            else:
                swa_model = None

            metrics_obj = Metrics(batch_size,world_size,raw_model)
            running_metrics = {}
            train_state = {}
            last_val_metrics = {}

            train_state["global_step_samples"] = 0

            with torch.no_grad():
                (modelnorm_normal, modelnorm_normal_gamma, modelnorm_output, modelnorm_noreg, modelnorm_output_noreg) = Metrics.get_model_norms(raw_model)
                modelnorm_normal_baseline = torch.sqrt(torch.sum(torch.square(modelnorm_normal)))
                train_state["modelnorm_normal_baseline"] = modelnorm_normal_baseline.detach().cpu().item()
                logging.info(f"Model norm normal baseline computed: {train_state['modelnorm_normal_baseline']}")

            optimizer = torch.optim.SGD(get_param_groups(raw_model,train_state,running_metrics), lr=1.0, momentum=0.9)

            return (model_config, raw_model, swa_model, optimizer, metrics_obj, running_metrics, train_state, last_val_metrics)
        else:
            state_dict = torch.load(path_to_load_from, map_location=device)
            model_config = state_dict["config"] if "config" in state_dict else modelconfigs.config_of_name[model_kind]
            logging.info(str(model_config))
            raw_model = Model(model_config,pos_len)
            raw_model.initialize()

            train_state = {}
            if "train_state" in state_dict:
                train_state = state_dict["train_state"]
            else:
                logging.info("WARNING: Train state not found in state dict, using fresh train state")
                train_state["global_step_samples"] = 0

            # Strip off any "module." from when the model was saved with DDP or other things
            model_state_dict = load_model.load_model_state_dict(state_dict)
            raw_model.load_state_dict(model_state_dict)

            raw_model.to(device)
            swa_model = None
            if swa_scale is not None:
                new_factor = 1.0 / swa_scale
                ema_avg = lambda avg_param_model, cur_param_model, num_averaged: avg_param_model + new_factor * (cur_param_model - avg_param_model)
                swa_model = AveragedModel(raw_model, avg_fn=ema_avg)
                if "swa_model" in state_dict:
                    swa_model.load_state_dict(state_dict["swa_model"])

            metrics_obj = Metrics(batch_size,world_size,raw_model)
            if "metrics" in state_dict:
                metrics_obj.load_state_dict(state_dict["metrics"])

            running_metrics = state_dict.get("running_metrics", {})
            last_val_metrics = state_dict.get("last_val_metrics", {})

            optimizer = torch.optim.SGD(get_param_groups(raw_model,train_state,running_metrics), lr=1.0, momentum=0.9)
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
    if "swa_sample_accum" not in train_state:
        train_state["swa_sample_accum"] = 0.0
    if "sums" not in running_metrics:
        running_metrics["sums"] = defaultdict(float)
    if "weights" not in running_metrics:
        running_metrics["weights"] = defaultdict(float)

    if world_size > 1:
        ddp_model = torch.nn.parallel.DistributedDataParallel(raw_model, device_ids=[device])
    else:
        ddp_model = raw_model

    # FP16 ---------------------------------------------------------------------------
    if use_fp16:
        logging.info("Training in FP16! Creating scaler")
        scaler = GradScaler()
    else:
        logging.info("Training in FP32.")

    # LR ----------------------------------------------------------------------------

    def update_and_return_lr_and_wd():
        per_sample_lr = (0.00003 if raw_model.get_norm_kind() in ("fixup", "fixscale") else 0.00004) * lr_scale * lr_scale_auto_factor(train_state)

        # Warmup for initial training
        warmup_scale = 1.0
        if train_state["global_step_samples"] < 250000:
            warmup_scale = 1.0 / 20.0
        elif train_state["global_step_samples"] < 2000000:
            warmup_scale = 1.0 / 5.0
        elif train_state["global_step_samples"] < 8000000:
            warmup_scale = 1.0 / 1.4

        normal_weight_decay = 0.0
        for param_group in optimizer.param_groups:
            group_name = param_group["group_name"]
            if group_name in ("normal", "normal_gamma", "noreg"):
                group_scale = 1.0
            elif group_name in ("output", "output_noreg"):
                group_scale = 0.5
            else:
                assert False

            # For lookahead optimizer, tell optimizer to take larger steps so as to maintain the same
            # effective learning rate after lookahead averaging.
            if lookahead_alpha is not None:
                param_group["lr"] = per_sample_lr * warmup_scale * group_scale / lookahead_alpha
            else:
                param_group["lr"] = per_sample_lr * warmup_scale * group_scale
            param_group["weight_decay"] = get_weight_decay(
                raw_model, lr_scale, warmup_scale=warmup_scale, train_state=train_state,
                running_metrics=running_metrics, group_name=group_name,
            )
            if group_name == "normal":
                normal_weight_decay = param_group["weight_decay"]

        return per_sample_lr * warmup_scale, normal_weight_decay

    last_brenorm_update_samples_this_instance = train_state["global_step_samples"]

    # DATA RELOADING GENERATOR ------------------------------------------------------------

    def maybe_reload_training_data():
        train_dir = os.path.join(datadir, "train")
        while True:
            curdatadir = os.path.realpath(datadir)
            if not os.path.exists(curdatadir):
                logging.info("Data dir does not exist, waiting: " + curdatadir)
                time.sleep(30)
                continue
            train_files = [os.path.join(train_dir, fname) for fname in os.listdir(train_dir) if fname.endswith(".npz")]
            if len(train_files) <= 0:
                logging.info("No training files, waiting")
                time.sleep(30)
                continue
            random.shuffle(train_files)
            return train_files

    # TRAIN! -----------------------------------------------------------------------------------

    num_epochs_this_instance = 0
    print_train_loss_every_batches = 100 if not gnorm_stats_debug else 1000

    while True:
        if max_epochs_this_instance is not None and max_epochs_this_instance >= 0 and num_epochs_this_instance >= max_epochs_this_instance:
            break
        if max_training_samples is not None and train_state["global_step_samples"] >= max_training_samples:
            break

        train_files_to_use = maybe_reload_training_data()
        logging.info("GC collect")
        gc.collect()

        ddp_model.train()
        batch_count_this_epoch = 0
        last_train_stats_time = time.perf_counter()
        for batch in data_processing_pytorch.read_npz_training_data(
            train_files_to_use,
            batch_size,
            world_size,
            rank,
            pos_len=pos_len,
            device=device,
            randomize_symmetries=True,
            include_meta=raw_model.get_has_metadata_encoder(),
            model_config=model_config,
        ):
            optimizer.zero_grad(set_to_none=True)
            (lr_right_now, normal_weight_decay_right_now) = update_and_return_lr_and_wd()

            if use_fp16:
                with autocast():
                    model_outputs = ddp_model(
                        batch["binaryInputNCHW"],
                        batch["globalInputNC"],
                    )
                model_outputs = raw_model.float32ify_output(model_outputs)
            else:
                model_outputs = ddp_model(
                    batch["binaryInputNCHW"],
                    batch["globalInputNC"],
                )

            postprocessed = raw_model.postprocess_output(model_outputs)
            metrics = metrics_obj.metrics_dict_batchwise(
                raw_model,
                postprocessed,
                extra_outputs=None,
                batch=batch,
                is_training=True,
                soft_policy_weight_scale=1.0,
                value_loss_scale=0.6,
                td_value_loss_scales=[0.6, 0.6, 0.6],
                seki_loss_scale=1.0,
                variance_time_loss_scale=1.0,
                main_loss_scale=1.0,
                intermediate_loss_scale=None,
            )

            # DDP averages loss across instances, so to preserve LR as per-sample lr, we scale by world size.
            loss = metrics["loss_sum"] * world_size

            # Reduce gradients across DDP
            if use_fp16:
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
            else:
                loss.backward()

            gnorm_cap = 2500.0 * gnorm_clip_scale
            # Loosen gradient clipping as we shift to smaller learning rates
            gnorm_cap = gnorm_cap / math.sqrt(max(0.0000001, lr_scale * lr_scale_auto_factor(train_state)))
            gnorm = torch.nn.utils.clip_grad_norm_(ddp_model.parameters(), gnorm_cap).detach().cpu().item()

            if use_fp16:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()

            batch_count_this_epoch += 1
            train_state["train_steps_since_last_reload"] += batch_size * world_size
            train_state["global_step_samples"] += batch_size * world_size

            metrics = clear_metric_nonfinite(metrics, metrics_obj)
            metrics["gnorm_batch"] = gnorm
            metrics["wdnormal_batch"] = normal_weight_decay_right_now
            accumulate_metrics(running_metrics["sums"], running_metrics["weights"], metrics, batch_size, decay=0.999, new_weight=1.0)
            if batch_count_this_epoch % print_train_loss_every_batches == 0:
                torch.cuda.synchronize()
                t1 = time.perf_counter()
                timediff = t1 - last_train_stats_time
                last_train_stats_time = t1
                metrics["time_since_last_print"] = timediff
                metrics["gpu_mem_gb"] = torch.cuda.max_memory_allocated() / 1e9
                log_metrics(running_metrics["sums"], running_metrics["weights"], metrics, train_metrics_out)

            # Update SWA model
            if swa_model is not None and swa_scale is not None:
                train_state["swa_sample_accum"] += batch_size * world_size
                # Only snap SWA when lr is large enough not to be in the fine-tuning phase
                if train_state["swa_sample_accum"] >= swa_period_samples:
                    train_state["swa_sample_accum"] = 0
                    logging.info("Accumulating SWA")
                    swa_model.update_parameters(raw_model)

        logging.info("Finished training subepoch!")
        num_epochs_this_instance += 1

        # Save model and export
        save(ddp_model, swa_model, optimizer, metrics_obj, running_metrics, train_state, last_val_metrics)

        if barrier is not None:
            barrier.wait()

        if sleep_seconds_per_epoch is None:
            time.sleep(1)
        else:
            time.sleep(sleep_seconds_per_epoch)

    if rank == 0:
        train_metrics_out.close()
        val_metrics_out.close()


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
