"""Benchmark darts' torch forecasting models (TFT, N-BEATS, GRU) on ETTh1 / electricity.

Usage:
    python benchmarks/run_darts_models.py --data ETTh1 --models tft nbeats gru --gpus 1
    python benchmarks/run_darts_models.py --data electricity --models nbeats --gpus 4   # DDP

Results are appended to results/darts_benchmark.csv.
"""
import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
import torch
from pytorch_lightning.callbacks import EarlyStopping

from darts import TimeSeries, concatenate
from darts.dataprocessing.transformers import Scaler
from darts.metrics import mae, mse, smape
from darts.models import NBEATSModel, RNNModel, TFTModel
from darts.utils.likelihood_models import QuantileRegression
from darts.utils.timeseries_generation import datetime_attribute_timeseries

warnings.filterwarnings("ignore", category=UserWarning)

QUANTILES = [0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99]


def get_trainer_kwargs(gpus, patience=5):
    """pytorch-lightning kwargs shared by every darts torch model."""
    early_stopper = EarlyStopping(monitor="val_loss", patience=patience, min_delta=1e-4, mode="min")
    if gpus > 0 and torch.cuda.is_available():
        return {
            "accelerator": "gpu",
            "devices": list(range(gpus)),
            "strategy": "ddp" if gpus > 1 else "auto",
            "callbacks": [early_stopper],
            "enable_progress_bar": False,
        }
    return {"accelerator": "cpu", "callbacks": [early_stopper], "enable_progress_bar": False}


def load_series(name, root="./dataset"):
    if name == "ETTh1":
        df = pd.read_csv(os.path.join(root, "ETT-small", "ETTh1.csv"), parse_dates=["date"])
        value_cols = ["HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT"]
        time_col = "date"
    elif name == "electricity":
        df = pd.read_csv(os.path.join(root, "electricity", "electricity.csv"), parse_dates=["date"])
        value_cols = [c for c in df.columns if c != "date"][:64]
        time_col = "date"
    else:
        raise ValueError(name)
    series = TimeSeries.from_dataframe(df, time_col=time_col, value_cols=value_cols, freq="h")
    return series


def make_covariates(series):
    hour = datetime_attribute_timeseries(series, attribute="hour", one_hot=False)
    dow = datetime_attribute_timeseries(series, attribute="day_of_week", one_hot=False)
    month = datetime_attribute_timeseries(series, attribute="month", one_hot=False)
    covs = concatenate([hour, dow, month], axis=1)
    return Scaler().fit_transform(covs)


def build_model(name, args, trainer_kwargs):
    common = dict(
        input_chunk_length=args.input_len,
        output_chunk_length=args.pred_len,
        batch_size=args.batch_size,
        n_epochs=args.epochs,
        optimizer_kwargs={"lr": args.lr},
        random_state=args.seed,
        pl_trainer_kwargs=trainer_kwargs,
        model_name=f"{name}_{args.data}",
        work_dir=args.work_dir,
        save_checkpoints=True,
        force_reset=True,
    )
    if name == "tft":
        return TFTModel(
            hidden_size=64,
            lstm_layers=1,
            num_attention_heads=4,
            dropout=0.1,
            add_relative_index=False,
            likelihood=QuantileRegression(quantiles=QUANTILES),
            **common,
        )
    if name == "nbeats":
        return NBEATSModel(
            generic_architecture=True,
            num_stacks=10,
            num_blocks=1,
            num_layers=4,
            layer_widths=512,
            **common,
        )
    if name == "gru":
        common.pop("output_chunk_length")
        return RNNModel(
            model="GRU",
            hidden_dim=64,
            n_rnn_layers=2,
            dropout=args.rnn_dropout,
            training_length=args.input_len + args.pred_len,
            **common,
        )
    raise ValueError(name)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="ETTh1")
    p.add_argument("--models", nargs="+", default=["tft", "nbeats", "gru"])
    p.add_argument("--input-len", type=int, default=168)
    p.add_argument("--pred-len", type=int, default=24)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--rnn-dropout", type=float, default=0.1)
    p.add_argument("--gpus", type=int, default=1)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--work-dir", default="./darts_logs")
    p.add_argument("--out", default="results/darts_benchmark.csv")
    args = p.parse_args()

    torch.set_float32_matmul_precision("high")

    series = load_series(args.data)
    train, rest = series.split_after(0.7)
    val, test = rest.split_after(0.33)

    scaler = Scaler()
    train_s = scaler.fit_transform(train)
    val_s = scaler.transform(val)
    test_s = scaler.transform(test)
    covs = make_covariates(series)

    rows = []
    for name in args.models:
        trainer_kwargs = get_trainer_kwargs(args.gpus)
        model = build_model(name, args, trainer_kwargs)
        t0 = time.time()
        fit_kwargs = dict(series=train_s, val_series=val_s, verbose=False)
        if name == "tft":
            fit_kwargs.update(future_covariates=covs, val_future_covariates=covs)
        elif name == "gru":
            fit_kwargs.update(future_covariates=covs, val_future_covariates=covs)
        model.fit(**fit_kwargs)
        fit_time = time.time() - t0

        best = type(model).load_from_checkpoint(model.model_name, work_dir=args.work_dir, best=True,
                                                map_location="cuda:0")
        hist_kwargs = dict(series=concatenate([val_s, test_s]), start=test_s.start_time(),
                           forecast_horizon=args.pred_len, stride=args.pred_len, retrain=False,
                           last_points_only=False, verbose=False)
        if name in ("tft", "gru"):
            hist_kwargs.update(future_covariates=covs)
        if name == "tft":
            hist_kwargs.update(num_samples=100)
        forecasts = best.historical_forecasts(**hist_kwargs)
        forecast = concatenate(forecasts, axis=0)
        forecast = scaler.inverse_transform(forecast)
        target = test.slice_intersect(forecast)
        rows.append({
            "data": args.data, "model": name,
            "mae": float(np.mean(mae(target, forecast))),
            "mse": float(np.mean(mse(target, forecast))),
            "smape": float(np.mean(smape(target, forecast))),
            "fit_s": round(fit_time, 1),
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
        })
        print(rows[-1])

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    pd.DataFrame(rows).to_csv(args.out, mode="a", header=not os.path.exists(args.out), index=False)


if __name__ == "__main__":
    main()
