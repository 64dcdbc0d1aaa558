# Copyright 2024 Arjun Ashok
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

import argparse
import gc
import json
import os
import warnings
from hashlib import sha1

import lightning.pytorch as pl
import numpy as np
import pandas as pd
import torch
from gluonts.evaluation import Evaluator, make_evaluation_predictions
from lightning.pytorch.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger, WandbLogger

from data.data_utils import (
    CombinedDataset,
    create_test_dataset,
    create_train_and_val_datasets_with_dates,
)
from lag_llama.gluon.estimator import LagLlamaEstimator
from utils.utils import plot_forecasts, set_seed

warnings.simplefilter(action="ignore", category=FutureWarning)


def search_batch_size(estimator, train_data, val_data, start_batch_size, args):
    """Halve the batch size until one optimisation step fits in GPU memory."""
    batch_size = start_batch_size
    while batch_size >= 1:
        estimator.batch_size = batch_size
        estimator.trainer_kwargs["max_steps"] = 1
        try:
            estimator.train(
                training_data=train_data,
                validation_data=val_data,
                shuffle_buffer_length=args.shuffle_buffer_length,
            )
            print(f"Batch size {batch_size} fits in memory")
            return batch_size
        except RuntimeError as e:
            if "CUDA out of memory" not in str(e):
                raise
            print(f"Batch size {batch_size} is too large, halving")
            batch_size //= 2
            gc.collect()
            torch.cuda.empty_cache()  # release the failed allocation
        finally:
            estimator.trainer_kwargs.pop("max_steps", None)
    raise RuntimeError("Could not find a batch size that fits in memory")


def train(args):
    # Set seed
    set_seed(args.seed)
    pl.seed_everything(args.seed)

    # # Print GPU stats
    print(
        "Using device:",
        torch.cuda.get_device_name(args.gpu),
        f"({torch.cuda.get_device_properties(args.gpu).total_memory / 2**30:.1f} GiB)",
    )
    device = torch.device(f"cuda:{args.gpu}")

    # Create a directory to store the results in
    experiment_name = args.experiment_name
    fulldir_experiments = os.path.join(args.results_dir, experiment_name, str(args.seed))
    if os.path.exists(fulldir_experiments):
        print(fulldir_experiments, "already exists.")
    os.makedirs(fulldir_experiments, exist_ok=True)

    # Create directory for checkpoints
    checkpoint_dir = os.path.join(fulldir_experiments, "checkpoints")
    os.makedirs(checkpoint_dir, exist_ok=True)

    # Code to retrieve the version with the highest #epoch stored and restore it incl directory and its checkpoint
    if args.ckpt_path:
        ckpt_path = args.ckpt_path
    elif args.get_ckpt_path_from_experiment_name:
        fulldir_experiments_for_ckpt_path = os.path.join(
            args.results_dir, args.get_ckpt_path_from_experiment_name, str(args.seed)
        )
        full_experiment_name_original = args.get_ckpt_path_from_experiment_name + "-seed-" + str(args.seed)
        experiment_id_original = sha1(full_experiment_name_original.encode("utf-8")).hexdigest()[:8]
        checkpoint_dir_wandb = os.path.join(
            fulldir_experiments_for_ckpt_path, "lag-llama", experiment_id_original, "checkpoints"
        )
        file = os.listdir(checkpoint_dir_wandb)[-1]
        ckpt_path = os.path.join(checkpoint_dir_wandb, file)
    else:
        ckpt_path = None

    # W&B logging
    full_experiment_name = experiment_name + "-seed-" + str(args.seed)
    experiment_id = sha1(full_experiment_name.encode("utf-8")).hexdigest()[:8]
    logger = WandbLogger(
        name=full_experiment_name,
        save_dir=fulldir_experiments,
        group=experiment_name,
        tags=args.wandb_tags,
        entity=args.wandb_entity,
        project=args.wandb_project,
        allow_val_change=True,
        config=vars(args),
        id=experiment_id,
        mode=args.wandb_mode,
        settings={"code_dir": "."},
    )

    # Callbacks
    early_stop_callback = EarlyStopping(
        monitor="val_loss",
        min_delta=0.00,
        patience=args.early_stopping_patience,
        verbose=True,
        mode="min",
    )
    model_checkpointing = ModelCheckpoint(
        dirpath=checkpoint_dir,
        save_last=True,
        save_top_k=1,
        filename="best-{epoch}-{val_loss:.2f}",
    )
    callbacks = [early_stop_callback, LearningRateMonitor(logging_interval="epoch"), model_checkpointing]

    # Create train and test datasets
    if not args.single_dataset:
        train_dataset_names = args.all_datasets
        for test_dataset in args.test_datasets:
            train_dataset_names.remove(test_dataset)
        print("Training datasets:", train_dataset_names)
        print("Test datasets:", args.test_datasets)
        data_id_to_name_map = {}
        name_to_data_id_map = {}
        for data_id, name in enumerate(train_dataset_names):
            data_id_to_name_map[data_id] = name
            name_to_data_id_map[name] = data_id
        test_data_id = -1
        for name in args.test_datasets:
            data_id_to_name_map[test_data_id] = name
            name_to_data_id_map[name] = test_data_id
            test_data_id -= 1
    else:
        print("Training and test on", args.single_dataset)
        data_id_to_name_map = {0: args.single_dataset}
        name_to_data_id_map = {args.single_dataset: 0}

    # Get prediction length and set it if we are in the single dataset
    if args.single_dataset and args.use_dataset_prediction_length:
        _, prediction_length, _ = create_test_dataset(args.single_dataset, args.dataset_path, 0)
        args.prediction_length = prediction_length

    # Cosine Annealing LR
    if args.use_cosine_annealing_lr:
        cosine_annealing_lr_args = {"T_max": args.cosine_annealing_lr_t_max, "eta_min": args.cosine_annealing_lr_eta_min}
    else:
        cosine_annealing_lr_args = {}

    # Create the estimator
    estimator = LagLlamaEstimator(
        prediction_length=args.prediction_length,
        context_length=args.context_length,
        input_size=1,
        batch_size=args.batch_size,
        n_layer=args.n_layer,
        n_embd_per_head=args.n_embd_per_head,
        n_head=args.n_head,
        max_context_length=2048,
        rope_scaling=None,
        scaling=args.data_normalization,
        lr=args.lr,
        weight_decay=args.weight_decay,
        distr_output=args.distr_output,
        num_batches_per_epoch=args.num_batches_per_epoch,
        num_parallel_samples=args.num_parallel_samples,
        time_feat=args.time_feat,
        dropout=args.dropout,
        lags_seq=args.lags_seq,
        data_id_to_name_map=data_id_to_name_map,
        use_cosine_annealing_lr=args.use_cosine_annealing_lr,
        cosine_annealing_lr_args=cosine_annealing_lr_args,
        track_loss_per_series=args.single_dataset is not None,
        ckpt_path=ckpt_path,
        device=device,
        trainer_kwargs=dict(
            max_epochs=args.max_epochs,
            accelerator="gpu",
            devices=[args.gpu],
            limit_val_batches=args.limit_val_batches,
            logger=logger,
            callbacks=callbacks,
            default_root_dir=fulldir_experiments,
        ),
    )

    # Save the args as config to the directory
    config_filepath = fulldir_experiments + "/args.json"
    with open(config_filepath, "w") as config_savefile:
        json.dump(vars(args), config_savefile, indent=4)

    # Create samplers
    window_sampler = None
    if args.single_dataset:
        train_data, val_data, total_train_points, total_val_points, total_val_windows, max_train_end_date, total_points = (
            create_train_and_val_datasets_with_dates(
                args.single_dataset, args.dataset_path, 0, None, None,
                prediction_length=args.prediction_length, num_val_windows=args.num_validation_windows, last_k_percentage=args.single_dataset_last_k_percentage,
            )
        )
    else:
        raw_datasets = [
            create_train_and_val_datasets_with_dates(
                name, args.dataset_path, data_id, None, None,
                prediction_length=args.prediction_length, num_val_windows=args.num_validation_windows,
            )
            for data_id, name in enumerate(train_dataset_names)
        ]
        train_data = CombinedDataset([d[0] for d in raw_datasets], weights=None if not args.use_dataset_weights else [d[2] for d in raw_datasets])
        val_data = CombinedDataset([d[1] for d in raw_datasets])

    if args.search_batch_size:
        estimator.batch_size = search_batch_size(estimator, train_data, val_data, args.batch_size, args)

    # Train
    if not args.evaluate_only:
        train_output = estimator.train_model(
            training_data=train_data,
            validation_data=val_data,
            shuffle_buffer_length=args.shuffle_buffer_length,
            ckpt_path=ckpt_path,
        )
        ckpt_path = train_output.trainer.checkpoint_callback.best_model_path

    # Evaluate on the held-out test datasets
    evaluation_results = {}
    for name in args.test_datasets:
        lightning_module = estimator.create_lightning_module(use_kv_cache=True)
        transformation = estimator.create_transformation()
        predictor = estimator.create_predictor(transformation, lightning_module)
        test_data, prediction_length, _ = create_test_dataset(name, args.dataset_path, name_to_data_id_map[name])
        predictor.prediction_length = prediction_length

        forecast_it, ts_it = make_evaluation_predictions(
            dataset=test_data, predictor=predictor, num_samples=args.num_samples
        )
        forecasts = list(forecast_it)
        tss = list(ts_it)
        evaluator = Evaluator(num_workers=1, aggregation_strategy=lambda x: np.nanmean(x))
        agg_metrics, _ = evaluator(iter(tss), iter(forecasts), num_series=len(test_data))
        evaluation_results[name] = agg_metrics
        plot_forecasts(forecasts, tss, prediction_length, fulldir_experiments, name)

        del predictor, lightning_module
        gc.collect()
        torch.cuda.empty_cache()

    with open(os.path.join(fulldir_experiments, "results.json"), "w") as f:
        json.dump(evaluation_results, f, indent=4)
    logger.log_metrics({f"test/{k}/CRPS": v["mean_wQuantileLoss"] for k, v in evaluation_results.items()})
    print(pd.DataFrame(evaluation_results).T)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    # Experiment args
    parser.add_argument("-e", "--experiment_name", type=str, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("-d", "--dataset_path", type=str, default="datasets")
    parser.add_argument("-r", "--results_dir", type=str, required=True)
    parser.add_argument("--all_datasets", type=str, nargs="+", default=[])
    parser.add_argument("--test_datasets", type=str, nargs="+", default=[])
    parser.add_argument("--single_dataset", type=str, default=None)
    parser.add_argument("--use_dataset_prediction_length", action="store_true", default=False)
    parser.add_argument("--single_dataset_last_k_percentage", type=float, default=None)
    parser.add_argument("--use_dataset_weights", action="store_true", default=False)
    # Model args
    parser.add_argument("--context_length", type=int, default=256)
    parser.add_argument("--prediction_length", type=int, default=1)
    parser.add_argument("--n_layer", type=int, default=4)
    parser.add_argument("--n_embd_per_head", type=int, default=64)
    parser.add_argument("--n_head", type=int, default=4)
    parser.add_argument("--lags_seq", type=str, nargs="+", default=["Q", "M", "W", "D", "H", "T", "S"])
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--time_feat", action="store_true", default=False)
    parser.add_argument("--data_normalization", default=None, choices=["mean", "std", "robust", "none"])
    parser.add_argument("--distr_output", type=str, default="studentT", choices=["studentT"])
    # Training args
    parser.add_argument("--batch_size", type=int, default=100)
    parser.add_argument("--search_batch_size", action="store_true", default=False)
    parser.add_argument("--num_batches_per_epoch", type=int, default=100)
    parser.add_argument("--limit_val_batches", type=int)
    parser.add_argument("-m", "--max_epochs", type=int, default=1000)
    parser.add_argument("--early_stopping_patience", default=50)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--weight_decay", type=float, default=1e-8)
    parser.add_argument("--use_cosine_annealing_lr", action="store_true", default=False)
    parser.add_argument("--cosine_annealing_lr_t_max", type=int, default=10000)
    parser.add_argument("--cosine_annealing_lr_eta_min", type=float, default=1e-2)
    parser.add_argument("--shuffle_buffer_length", type=int, default=1000)
    parser.add_argument("--num_validation_windows", type=int, default=14)
    parser.add_argument("--num_parallel_samples", type=int, default=100)
    parser.add_argument("-n", "--num_samples", type=int, default=100)
    parser.add_argument("--num_workers", type=int, default=0)
    parser.add_argument("--ckpt_path", type=str, default=None)
    parser.add_argument("--get_ckpt_path_from_experiment_name", type=str, default=None)
    parser.add_argument("--evaluate_only", action="store_true", default=False)
    # Logging / hardware
    parser.add_argument("--wandb_entity", type=str, default=None)
    parser.add_argument("--wandb_project", type=str, default="lag-llama")
    parser.add_argument("--wandb_tags", nargs="+", default=[])
    parser.add_argument("--wandb_mode", type=str, default="online", choices=["offline", "online"])
    parser.add_argument("--gpu", type=int, default=0, help="index of the GPU to train on")
    parser.add_argument("--args_from_dict_path", type=str, default=None)

    args = parser.parse_args()

    if args.args_from_dict_path:
        with open(args.args_from_dict_path, "r") as read_file:
            loaded_args = json.load(read_file)
        for key, value in loaded_args.items():
            setattr(args, key, value)

    # print args for logging
    for arg in vars(args):
        print(arg, ":", getattr(args, arg))

    train(args)
