"""
Temporal Fusion Transformer on the UCI electricity dataset
===========================================================

Probabilistic day-ahead forecasting of 370 household consumption series with
Darts' TFTModel, trained on GPU when one is available.

    python examples/tft_electricity.py --epochs 20 --n-series 50
"""

import argparse
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from pytorch_lightning.callbacks import EarlyStopping, LearningRateMonitor

from darts import concatenate
from darts.dataprocessing.transformers import Scaler
from darts.datasets import ElectricityDataset
from darts.metrics import mql, mape
from darts.models import TFTModel
from darts.utils.likelihood_models import QuantileRegression
from darts.utils.timeseries_generation import datetime_attribute_timeseries

warnings.filterwarnings("ignore")

QUANTILES = [0.01, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--n-series", type=int, default=50)
    p.add_argument("--input-chunk-length", type=int, default=168)
    p.add_argument("--output-chunk-length", type=int, default=24)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--num-samples", type=int, default=200)
    p.add_argument("--workers", type=int, default=4)
    return p.parse_args()


def load_series(n_series: int):
    # hourly resampling of the 15-minute dataset; darts keeps float64 values by default
    series = ElectricityDataset(multivariate=False).load()[:n_series]
    series = [s.resample("h") for s in series]
    train, val = zip(*[s.split_after(pd.Timestamp("2014-09-01")) for s in series])
    scaler = Scaler()
    train = scaler.fit_transform(list(train))
    val = scaler.transform(list(val))
    return list(series), train, val, scaler


def make_covariates(series):
    covs = []
    for s in series:
        cov = concatenate(
            [
                datetime_attribute_timeseries(s, attribute="hour", cyclic=True, add_length=48),
                datetime_attribute_timeseries(s, attribute="day_of_week", cyclic=True, add_length=48),
                datetime_attribute_timeseries(s, attribute="month", cyclic=True, add_length=48),
            ],
            axis="component",
        )
        covs.append(cov)
    return covs


def main():
    args = parse_args()
    torch.backends.cudnn.benchmark = True
    torch.set_float32_matmul_precision("medium")

    series, train, val, scaler = load_series(args.n_series)
    covariates = make_covariates(series)

    early_stopper = EarlyStopping(monitor="val_loss", patience=5, min_delta=1e-4, mode="min")
    callbacks = [early_stopper, LearningRateMonitor(logging_interval="epoch")]

    # use the GPU when there is one
    if torch.cuda.is_available():
        pl_trainer_kwargs = {
            "accelerator": "gpu",
            "devices": [0],
            "callbacks": callbacks,
        }
        num_workers = args.workers
    else:
        pl_trainer_kwargs = {"accelerator": "cpu", "callbacks": callbacks}
        num_workers = 0

    model = TFTModel(
        input_chunk_length=args.input_chunk_length,
        output_chunk_length=args.output_chunk_length,
        hidden_size=64,
        lstm_layers=1,
        num_attention_heads=4,
        dropout=0.1,
        batch_size=args.batch_size,
        n_epochs=args.epochs,
        add_relative_index=False,
        add_encoders=None,
        likelihood=QuantileRegression(quantiles=QUANTILES),
        random_state=42,
        model_name="tft_electricity",
        save_checkpoints=True,
        force_reset=True,
        pl_trainer_kwargs=pl_trainer_kwargs,
    )

    model.fit(
        series=train,
        future_covariates=covariates,
        val_series=val,
        val_future_covariates=covariates,
        num_loader_workers=num_workers,
        verbose=True,
    )

    best_model = TFTModel.load_from_checkpoint(model_name="tft_electricity", best=True, map_location="cuda:0")

    # backtest on the validation period
    preds = best_model.historical_forecasts(
        series=[concatenate([t, v]) for t, v in zip(train, val)],
        future_covariates=covariates,
        start=pd.Timestamp("2014-09-01"),
        forecast_horizon=args.output_chunk_length,
        stride=args.output_chunk_length,
        retrain=False,
        last_points_only=False,
        num_samples=args.num_samples,
        verbose=True,
    )
    preds = [scaler.inverse_transform(concatenate(p)) for p in preds]
    actual = scaler.inverse_transform(val)

    print(f"MAPE: {np.mean(mape(actual, preds)):.2f}%")
    print(f"MQL(0.5): {np.mean(mql(actual, preds, q=0.5)):.4f}")

    fig, ax = plt.subplots(figsize=(12, 4))
    actual[0][-7 * 24 :].plot(ax=ax, label="actual")
    preds[0][-7 * 24 :].plot(ax=ax, low_quantile=0.1, high_quantile=0.9, label="TFT p10-p90")
    fig.savefig("tft_electricity.png", dpi=120, bbox_inches="tight")

    if pl_trainer_kwargs["accelerator"] == "gpu":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
