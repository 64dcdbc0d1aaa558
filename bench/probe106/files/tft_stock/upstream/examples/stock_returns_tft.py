"""
Multi-horizon stock return forecasting with the Temporal Fusion Transformer.

Data: daily OHLCV + a handful of alpha factors for the CSI 300 constituents, one
parquet file per year under ``data/cn_daily``.  The target is the 1-day log return,
predicted 5 trading days ahead from a 60-day encoder window.

    python examples/stock_returns_tft.py --data_dir data/cn_daily --epochs 30
    python examples/stock_returns_tft.py --tune        # optuna search first
"""
import argparse
import copy
import os
import warnings
from pathlib import Path

import lightning.pytorch as pl
import numpy as np
import pandas as pd
import torch
from lightning.pytorch.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.loggers import TensorBoardLogger
from lightning.pytorch.tuner import Tuner

from pytorch_forecasting import Baseline, TemporalFusionTransformer, TimeSeriesDataSet
from pytorch_forecasting.data import GroupNormalizer, NaNLabelEncoder
from pytorch_forecasting.metrics import MAE, RMSE, QuantileLoss
from pytorch_forecasting.models.temporal_fusion_transformer.tuning import optimize_hyperparameters

warnings.filterwarnings("ignore")  # avoid printing out absolute paths

# Ampere tensor cores: trade a little fp32 precision for much faster matmuls
torch.set_float32_matmul_precision("medium")

FACTORS = ["mom_20", "rev_5", "vol_20", "turnover_20", "amihud_20", "skew_60", "beta_60", "size"]


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", default="data/cn_daily")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--encoder_length", type=int, default=60)
    parser.add_argument("--horizon", type=int, default=5)
    parser.add_argument("--num_workers", type=int, default=8)
    parser.add_argument("--gpus", type=int, nargs="+", default=[0], help="CUDA device ids")
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--log_dir", default="lightning_logs")
    return parser.parse_args()


def load_panel(data_dir: str) -> pd.DataFrame:
    frames = [pd.read_parquet(p) for p in sorted(Path(data_dir).glob("*.parquet"))]
    df = pd.concat(frames, ignore_index=True)
    df["date"] = pd.to_datetime(df["date"])
    df = df.sort_values(["ticker", "date"])
    df["log_return"] = np.log(df.groupby("ticker")["close"].pct_change() + 1.0)
    df = df.dropna(subset=["log_return"])

    # integer time index shared by all tickers (trading-day calendar)
    calendar = {d: i for i, d in enumerate(sorted(df["date"].unique()))}
    df["time_idx"] = df["date"].map(calendar).astype(int)
    df["weekday"] = df["date"].dt.dayofweek.astype(str).astype("category")
    df["month"] = df["date"].dt.month.astype(str).astype("category")
    df["industry"] = df["industry"].astype(str).astype("category")
    df["ticker"] = df["ticker"].astype(str)
    for col in FACTORS:
        df[col] = df.groupby("date")[col].transform(lambda s: (s - s.mean()) / (s.std() + 1e-8)).clip(-5, 5)
    return df


def build_datasets(df: pd.DataFrame, encoder_length: int, horizon: int):
    training_cutoff = df["time_idx"].max() - 250  # last trading year for validation

    training = TimeSeriesDataSet(
        df[lambda x: x.time_idx <= training_cutoff],
        time_idx="time_idx",
        target="log_return",
        group_ids=["ticker"],
        min_encoder_length=encoder_length // 2,
        max_encoder_length=encoder_length,
        min_prediction_length=1,
        max_prediction_length=horizon,
        static_categoricals=["ticker", "industry"],
        time_varying_known_categoricals=["weekday", "month"],
        time_varying_known_reals=["time_idx"],
        time_varying_unknown_reals=["log_return", "volume"] + FACTORS,
        target_normalizer=GroupNormalizer(groups=["ticker"], transformation=None),
        categorical_encoders={"ticker": NaNLabelEncoder(add_nan=True), "industry": NaNLabelEncoder(add_nan=True)},
        add_relative_time_idx=True,
        add_target_scales=True,
        add_encoder_length=True,
        allow_missing_timesteps=True,
    )
    validation = TimeSeriesDataSet.from_dataset(
        training, df[lambda x: x.time_idx > training_cutoff - encoder_length], stop_randomization=True
    )
    return training, validation


def precision_flag() -> str:
    if not torch.cuda.is_available():
        return "32-true"
    return "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"


def main():
    args = parse_args()
    pl.seed_everything(42)

    df = load_panel(args.data_dir)
    training, validation = build_datasets(df, args.encoder_length, args.horizon)

    train_dataloader = training.to_dataloader(
        train=True, batch_size=args.batch_size, num_workers=args.num_workers, pin_memory=True
    )
    val_dataloader = validation.to_dataloader(
        train=False, batch_size=args.batch_size * 4, num_workers=args.num_workers, pin_memory=True
    )

    # naive baseline: repeat last observed value
    baseline_predictions = Baseline().predict(val_dataloader, return_y=True)
    print("baseline MAE:", MAE()(baseline_predictions.output, baseline_predictions.y).item())

    if args.tune:
        study = optimize_hyperparameters(
            train_dataloader,
            val_dataloader,
            model_path="optuna_tft",
            n_trials=40,
            max_epochs=10,
            gradient_clip_val_range=(0.01, 1.0),
            hidden_size_range=(16, 128),
            hidden_continuous_size_range=(8, 64),
            attention_head_size_range=(1, 4),
            learning_rate_range=(1e-4, 1e-2),
            dropout_range=(0.1, 0.3),
            trainer_kwargs=dict(limit_train_batches=100, accelerator="gpu", devices=1),
            reduce_on_plateau_patience=4,
            use_learning_rate_finder=False,
        )
        print("best trial params:", study.best_trial.params)
        hp = study.best_trial.params
    else:
        hp = dict(
            gradient_clip_val=0.1,
            hidden_size=64,
            hidden_continuous_size=32,
            attention_head_size=4,
            learning_rate=3e-3,
            dropout=0.15,
        )

    # find a sensible learning rate first
    lr_trainer = pl.Trainer(accelerator="gpu", devices=1, gradient_clip_val=hp["gradient_clip_val"])
    tft = TemporalFusionTransformer.from_dataset(
        training,
        learning_rate=hp["learning_rate"],
        hidden_size=hp["hidden_size"],
        attention_head_size=hp["attention_head_size"],
        dropout=hp["dropout"],
        hidden_continuous_size=hp["hidden_continuous_size"],
        loss=QuantileLoss(),
        optimizer="Ranger",
        reduce_on_plateau_patience=4,
    )
    print(f"Number of parameters in network: {tft.size() / 1e3:.1f}k")
    res = Tuner(lr_trainer).lr_find(
        tft, train_dataloaders=train_dataloader, val_dataloaders=val_dataloader, max_lr=1e-1, min_lr=1e-6
    )
    print(f"suggested learning rate: {res.suggestion()}")
    tft.hparams.learning_rate = res.suggestion()

    early_stop_callback = EarlyStopping(monitor="val_loss", min_delta=1e-5, patience=5, verbose=False, mode="min")
    lr_logger = LearningRateMonitor()
    checkpoint = ModelCheckpoint(monitor="val_loss", save_top_k=3, mode="min")
    logger = TensorBoardLogger(args.log_dir, name="tft_cn_daily")

    trainer = pl.Trainer(
        max_epochs=args.epochs,
        accelerator="gpu",
        devices=args.gpus,
        strategy="ddp" if len(args.gpus) > 1 else "auto",
        precision=precision_flag(),
        enable_model_summary=True,
        gradient_clip_val=hp["gradient_clip_val"],
        limit_train_batches=500,
        callbacks=[lr_logger, early_stop_callback, checkpoint],
        logger=logger,
    )
    trainer.fit(tft, train_dataloaders=train_dataloader, val_dataloaders=val_dataloader)

    best_model_path = trainer.checkpoint_callback.best_model_path
    print("best checkpoint:", best_model_path)
    best_tft = TemporalFusionTransformer.load_from_checkpoint(best_model_path)

    predictions = best_tft.predict(
        val_dataloader, return_y=True, trainer_kwargs=dict(accelerator="gpu", devices=1)
    )
    print("TFT MAE :", MAE()(predictions.output, predictions.y).item())
    print("TFT RMSE:", RMSE()(predictions.output, predictions.y).item())

    # variable importance from the attention / variable-selection weights
    raw_predictions = best_tft.predict(val_dataloader, mode="raw", return_x=True)
    interpretation = best_tft.interpret_output(raw_predictions.output, reduction="sum")
    importance = {
        name: float(w)
        for name, w in zip(best_tft.encoder_variables, interpretation["encoder_variables"].cpu().numpy())
    }
    pd.Series(importance).sort_values(ascending=False).to_csv(Path(logger.log_dir) / "encoder_importance.csv")

    if torch.cuda.is_available():
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
