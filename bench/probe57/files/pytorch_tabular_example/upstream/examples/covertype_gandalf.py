"""pytorch-tabular on the Forest Covertype benchmark: GANDALF vs FT-Transformer on the GPU.

    python examples/covertype_gandalf.py --model gandalf --epochs 50
"""
import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
import torch
from pytorch_lightning.callbacks import Callback
from sklearn.datasets import fetch_covtype
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import train_test_split

from pytorch_tabular import TabularModel
from pytorch_tabular.config import DataConfig, ExperimentConfig, OptimizerConfig, TrainerConfig
from pytorch_tabular.models import FTTransformerConfig, GANDALFConfig
from pytorch_tabular.utils import get_balanced_sampler

warnings.filterwarnings("ignore", category=UserWarning)
torch.set_float32_matmul_precision("medium")

NUM_COLS = [
    "Elevation", "Aspect", "Slope", "Horizontal_Distance_To_Hydrology",
    "Vertical_Distance_To_Hydrology", "Horizontal_Distance_To_Roadways",
    "Hillshade_9am", "Hillshade_Noon", "Hillshade_3pm", "Horizontal_Distance_To_Fire_Points",
]
TARGET = "Cover_Type"


class GpuMemoryCallback(Callback):
    """Logs peak device memory after every training epoch; epochs show up as NVTX ranges in nsys."""

    def on_train_epoch_start(self, trainer, pl_module):
        torch.cuda.nvtx.range_push(f"epoch{trainer.current_epoch}")

    def on_train_epoch_end(self, trainer, pl_module):
        torch.cuda.nvtx.range_pop()
        peak = torch.cuda.max_memory_allocated() / 2 ** 30
        pl_module.log("gpu_peak_mem_gb", peak, prog_bar=True)
        torch.cuda.reset_peak_memory_stats()


def load_covertype():
    data = fetch_covtype(as_frame=True)
    df = data.frame
    wild = [c for c in df.columns if c.startswith("Wilderness_Area")]
    soil = [c for c in df.columns if c.startswith("Soil_Type")]
    df["Wilderness"] = df[wild].values.argmax(1).astype(str)
    df["Soil"] = df[soil].values.argmax(1).astype(str)
    df = df.drop(columns=wild + soil)
    df[TARGET] = df[TARGET].astype(int) - 1
    return df


def model_config(name):
    if name == "gandalf":
        return GANDALFConfig(
            task="classification",
            gflu_stages=6,
            gflu_feature_init_sparsity=0.3,
            gflu_dropout=0.0,
            learning_rate=1e-3,
            metrics=["accuracy", "f1_score"],
            metrics_params=[{}, {"average": "macro"}],
        )
    if name == "ft":
        return FTTransformerConfig(
            task="classification",
            num_attn_blocks=3,
            num_heads=8,
            input_embed_dim=32,
            attn_dropout=0.1,
            ff_dropout=0.1,
            learning_rate=1e-4,
            metrics=["accuracy"],
        )
    raise ValueError(name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["gandalf", "ft"], default="gandalf")
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--balanced", action="store_true")
    ap.add_argument("--out", default="saved_models")
    args = ap.parse_args()

    df = load_covertype()
    train, test = train_test_split(df, test_size=0.2, random_state=42, stratify=df[TARGET])
    train, valid = train_test_split(train, test_size=0.1, random_state=42, stratify=train[TARGET])
    print(f"train={train.shape} valid={valid.shape} test={test.shape}")

    data_config = DataConfig(
        target=[TARGET],
        continuous_cols=NUM_COLS,
        categorical_cols=["Wilderness", "Soil"],
        normalize_continuous_features=True,
        num_workers=8,
        pin_memory=True,
    )
    trainer_config = TrainerConfig(
        batch_size=args.batch_size,
        max_epochs=args.epochs,
        early_stopping="valid_loss",
        early_stopping_patience=5,
        checkpoints="valid_loss",
        load_best=True,
        accelerator="gpu",
        devices=1,
        precision="16-mixed",
        progress_bar="rich",
    )
    optimizer_config = OptimizerConfig(optimizer="AdamW", lr_scheduler="CosineAnnealingLR",
                                       lr_scheduler_params={"T_max": args.epochs})
    experiment_config = ExperimentConfig(project_name="covertype", run_name=args.model, log_target="tensorboard")

    tabular_model = TabularModel(
        data_config=data_config,
        model_config=model_config(args.model),
        optimizer_config=optimizer_config,
        trainer_config=trainer_config,
        experiment_config=experiment_config,
        verbose=True,
    )
    sampler = get_balanced_sampler(train[TARGET].values.ravel()) if args.balanced else None

    t0 = time.time()
    tabular_model.fit(train=train, validation=valid, train_sampler=sampler, callbacks=[GpuMemoryCallback()])
    print(f"fit took {time.time() - t0:.0f}s")

    result = tabular_model.evaluate(test)
    print(result)
    pred = tabular_model.predict(test)
    y_hat = pred[f"{TARGET}_prediction"].values
    print(f"accuracy={accuracy_score(test[TARGET], y_hat):.4f} "
          f"macro-F1={f1_score(test[TARGET], y_hat, average='macro'):.4f}")

    path = os.path.join(args.out, f"covertype_{args.model}")
    tabular_model.save_model(path)

    # reload for the inference benchmark below
    loaded = TabularModel.load_model(path, map_location=torch.device("cuda"))
    batch = test.sample(n=min(50000, len(test)), random_state=0)
    torch.cuda.synchronize()
    t0 = time.time()
    _ = loaded.predict(batch)
    torch.cuda.synchronize()
    dt = time.time() - t0
    print(f"inference: {len(batch) / dt:,.0f} rows/s")

    emb = loaded.predict(batch, ret_logits=True)
    logits = emb[[c for c in emb.columns if c.endswith("_logit")]].values
    np.save(os.path.join(path, "test_logits.npy"), logits)


if __name__ == "__main__":
    main()
