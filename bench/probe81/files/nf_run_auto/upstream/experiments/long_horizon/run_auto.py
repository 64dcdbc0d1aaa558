"""Long-horizon benchmark: AutoNHITS / AutoTFT / AutoPatchTST on ETTm2, Weather, ECL, ...

Reproduces the long-horizon table of the NHITS paper with NeuralForecast's
automatic hyperparameter search (ray tune backend).

    python run_auto.py --dataset ETTm2 --horizon 96 --num_samples 20 --gpus 0,1
"""

import argparse
import os
import time

import numpy as np
import pandas as pd
import ray
import torch
from datasetsforecast.long_horizon import LongHorizon
from ray import tune

from neuralforecast.auto import AutoNHITS, AutoPatchTST, AutoTFT
from neuralforecast.core import NeuralForecast
from neuralforecast.losses.numpy import mae, mse
from neuralforecast.losses.pytorch import MAE, HuberLoss

DATASET_FREQ = {
    "ETTh1": "H",
    "ETTh2": "H",
    "ETTm1": "15min",
    "ETTm2": "15min",
    "ECL": "15min",
    "Exchange": "D",
    "TrafficL": "H",
    "Weather": "10M",
    "ILI": "W",
}


def get_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=str, default="ETTm2", choices=list(DATASET_FREQ))
    parser.add_argument("--horizon", type=int, default=96)
    parser.add_argument("--num_samples", type=int, default=20)
    parser.add_argument("--models", nargs="+", default=["nhits", "tft", "patchtst"])
    parser.add_argument("--gpus", type=str, default="0", help="comma separated GPU ids")
    parser.add_argument("--cpus_per_trial", type=int, default=4)
    parser.add_argument("--results_dir", type=str, default="./results")
    return parser.parse_args()


def build_models(horizon: int, num_samples: int, gpus_per_trial: int):
    nhits_config = {
        "learning_rate": tune.choice([1e-3]),
        "max_steps": tune.choice([1000]),
        "input_size": tune.choice([5 * horizon]),
        "batch_size": tune.choice([7]),
        "windows_batch_size": tune.choice([256]),
        "n_pool_kernel_size": tune.choice([[2, 2, 2], [16, 8, 1]]),
        "n_freq_downsample": tune.choice([[168, 24, 1], [24, 12, 1], [1, 1, 1]]),
        "activation": tune.choice(["ReLU"]),
        "n_blocks": tune.choice([[1, 1, 1]]),
        "mlp_units": tune.choice([[[512, 512], [512, 512], [512, 512]]]),
        "interpolation_mode": tune.choice(["linear"]),
        "val_check_steps": tune.choice([100]),
        "random_seed": tune.randint(1, 10),
        "scaler_type": tune.choice(["robust"]),
    }
    tft_config = {
        "input_size": tune.choice([horizon, 2 * horizon, 3 * horizon]),
        "hidden_size": tune.choice([64, 128, 256]),
        "n_head": tune.choice([4, 8]),
        "learning_rate": tune.loguniform(1e-4, 1e-2),
        "scaler_type": tune.choice(["robust", "standard"]),
        "max_steps": tune.choice([500, 1000, 2000]),
        "batch_size": tune.choice([32, 64, 128]),
        "windows_batch_size": tune.choice([128, 256, 512]),
        "random_seed": tune.randint(1, 20),
        # bf16 autocast inside Lightning: halves TFT memory on A100s
        "precision": tune.choice(["bf16-mixed"]),
    }
    patchtst_config = {
        "input_size": tune.choice([512]),
        "patch_len": tune.choice([16, 24]),
        "stride": tune.choice([8]),
        "hidden_size": tune.choice([128]),
        "n_heads": tune.choice([16]),
        "learning_rate": tune.choice([1e-4]),
        "max_steps": tune.choice([2000]),
        "batch_size": tune.choice([32]),
        "random_seed": tune.randint(1, 20),
    }
    return {
        "nhits": AutoNHITS(h=horizon, loss=HuberLoss(delta=0.5), valid_loss=MAE(),
                           config=nhits_config, num_samples=num_samples, gpus=gpus_per_trial),
        "tft": AutoTFT(h=horizon, loss=MAE(), config=tft_config,
                       num_samples=num_samples, gpus=gpus_per_trial),
        "patchtst": AutoPatchTST(h=horizon, loss=MAE(), config=patchtst_config,
                                 num_samples=num_samples, gpus=gpus_per_trial),
    }


def main():
    args = get_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
    os.makedirs(args.results_dir, exist_ok=True)

    # Ray must see the GPUs, otherwise trials requesting {"gpu": 1} never start
    ray.init(
        num_cpus=os.cpu_count(),
        num_gpus=torch.cuda.device_count(),
        include_dashboard=False,
        ignore_reinit_error=True,
    )
    print(f"ray resources: {ray.cluster_resources()}")

    # Load data
    Y_df, _, _ = LongHorizon.load(directory="./data", group=args.dataset)
    Y_df["ds"] = pd.to_datetime(Y_df["ds"])
    n_time = len(Y_df.ds.unique())
    val_size = int(0.2 * n_time)
    test_size = int(0.2 * n_time)
    freq = DATASET_FREQ[args.dataset]

    all_models = build_models(args.horizon, args.num_samples, gpus_per_trial=1)
    models = [all_models[name] for name in args.models]

    start = time.time()
    nf = NeuralForecast(models=models, freq=freq)
    Y_hat_df = nf.cross_validation(df=Y_df, val_size=val_size, test_size=test_size, n_windows=None)
    elapsed = time.time() - start

    y_true = Y_hat_df["y"].values
    rows = []
    for name in args.models:
        col = repr(all_models[name])
        y_hat = Y_hat_df[col].values
        rows.append({
            "dataset": args.dataset,
            "horizon": args.horizon,
            "model": col,
            "mae": mae(y_true, y_hat),
            "mse": mse(y_true, y_hat),
            "seconds": elapsed,
        })
    results = pd.DataFrame(rows)
    print(results)
    out = os.path.join(args.results_dir, f"{args.dataset}_{args.horizon}.csv")
    results.to_csv(out, index=False)
    np.save(out.replace(".csv", "_yhat.npy"), Y_hat_df.drop(columns=["unique_id", "ds", "cutoff"]).values)
    ray.shutdown()


if __name__ == "__main__":
    main()
