"""Train a Temporal Fusion Transformer on the Stallion demand data set.

Follows the pytorch-forecasting tutorial layout: TimeSeriesDataSet ->
dataloaders -> lr finder -> Trainer.fit -> evaluation on the validation set.
"""
import argparse
import os
import warnings

import lightning.pytorch as pl
import numpy as np
import pandas as pd
import torch
from lightning.pytorch.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.loggers import TensorBoardLogger
from lightning.pytorch.tuner import Tuner

from pytorch_forecasting import Baseline, TemporalFusionTransformer, TimeSeriesDataSet
from pytorch_forecasting.data import GroupNormalizer
from pytorch_forecasting.data.examples import get_stallion_data
from pytorch_forecasting.metrics import MAE, SMAPE, QuantileLoss

warnings.filterwarnings("ignore")


def build_datasets(max_prediction_length=6, max_encoder_length=24):
    data = get_stallion_data()
    data["time_idx"] = data["date"].dt.year * 12 + data["date"].dt.month
    data["time_idx"] -= data["time_idx"].min()
    data["month"] = data.date.dt.month.astype(str).astype("category")
    data["log_volume"] = np.log(data.volume + 1e-8)
    data["avg_volume_by_sku"] = data.groupby(["time_idx", "sku"], observed=True).volume.transform("mean")
    data["avg_volume_by_agency"] = data.groupby(["time_idx", "agency"], observed=True).volume.transform("mean")

    training_cutoff = data["time_idx"].max() - max_prediction_length
    training = TimeSeriesDataSet(
        data[lambda x: x.time_idx <= training_cutoff],
        time_idx="time_idx",
        target="volume",
        group_ids=["agency", "sku"],
        min_encoder_length=max_encoder_length // 2,
        max_encoder_length=max_encoder_length,
        min_prediction_length=1,
        max_prediction_length=max_prediction_length,
        static_categoricals=["agency", "sku"],
        static_reals=["avg_population_2017", "avg_yearly_household_income_2017"],
        time_varying_known_categoricals=["month"],
        time_varying_known_reals=["time_idx", "price_regular", "discount_in_percent"],
        time_varying_unknown_categoricals=[],
        time_varying_unknown_reals=["volume", "log_volume", "avg_volume_by_agency", "avg_volume_by_sku"],
        target_normalizer=GroupNormalizer(groups=["agency", "sku"], transformation="softplus"),
        add_relative_time_idx=True,
        add_target_scales=True,
        add_encoder_length=True,
    )
    validation = TimeSeriesDataSet.from_dataset(training, data, predict=True, stop_randomization=True)
    return training, validation


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--max-epochs", type=int, default=30)
    parser.add_argument("--gpus", type=int, default=1, help="number of GPUs (0 = CPU)")
    parser.add_argument("--precision", default="16-mixed")
    parser.add_argument("--find-lr", action="store_true")
    parser.add_argument("--num-workers", type=int, default=4)
    args = parser.parse_args()

    pl.seed_everything(42)
    torch.set_float32_matmul_precision("medium")

    training, validation = build_datasets()
    train_dataloader = training.to_dataloader(train=True, batch_size=args.batch_size,
                                              num_workers=args.num_workers, pin_memory=True)
    val_dataloader = validation.to_dataloader(train=False, batch_size=args.batch_size * 10,
                                              num_workers=args.num_workers)

    # baseline error
    baseline_predictions = Baseline().predict(val_dataloader, return_y=True)
    print("baseline MAE", MAE()(baseline_predictions.output, baseline_predictions.y))

    accelerator = "gpu" if args.gpus > 0 and torch.cuda.is_available() else "cpu"
    devices = args.gpus if accelerator == "gpu" else 1
    strategy = "ddp" if devices > 1 else "auto"

    tft = TemporalFusionTransformer.from_dataset(
        training,
        learning_rate=0.03,
        hidden_size=16,
        attention_head_size=2,
        dropout=0.1,
        hidden_continuous_size=8,
        loss=QuantileLoss(),
        log_interval=10,
        optimizer="Ranger",
        reduce_on_plateau_patience=4,
    )
    print(f"Number of parameters in network: {tft.size() / 1e3:.1f}k")

    if args.find_lr:
        lr_trainer = pl.Trainer(accelerator=accelerator, devices=1, gradient_clip_val=0.1)
        res = Tuner(lr_trainer).lr_find(tft, train_dataloaders=train_dataloader,
                                        val_dataloaders=val_dataloader, max_lr=10.0, min_lr=1e-6)
        print(f"suggested learning rate: {res.suggestion()}")
        tft.hparams.learning_rate = res.suggestion()

    early_stop_callback = EarlyStopping(monitor="val_loss", min_delta=1e-4, patience=10, verbose=False, mode="min")
    lr_logger = LearningRateMonitor()
    checkpoint = ModelCheckpoint(monitor="val_loss", save_top_k=1)
    logger = TensorBoardLogger("lightning_logs")

    trainer = pl.Trainer(
        max_epochs=args.max_epochs,
        accelerator=accelerator,
        devices=devices,
        strategy=strategy,
        precision=args.precision,
        enable_model_summary=True,
        gradient_clip_val=0.1,
        limit_train_batches=50,
        callbacks=[lr_logger, early_stop_callback, checkpoint],
        logger=logger,
    )
    trainer.fit(tft, train_dataloaders=train_dataloader, val_dataloaders=val_dataloader)

    best_model_path = trainer.checkpoint_callback.best_model_path
    best_tft = TemporalFusionTransformer.load_from_checkpoint(best_model_path)

    predictions = best_tft.predict(val_dataloader, return_y=True,
                                   trainer_kwargs=dict(accelerator="gpu", devices=1))
    print("validation MAE", MAE()(predictions.output, predictions.y))
    print("validation SMAPE", SMAPE()(predictions.output, predictions.y))

    raw = best_tft.predict(val_dataloader, mode="raw", return_x=True)
    interpretation = best_tft.interpret_output(raw.output, reduction="sum")
    os.makedirs("figures", exist_ok=True)
    for name, fig in best_tft.plot_interpretation(interpretation).items():
        fig.savefig(os.path.join("figures", f"tft_{name}.png"))
    if torch.cuda.is_available():
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
