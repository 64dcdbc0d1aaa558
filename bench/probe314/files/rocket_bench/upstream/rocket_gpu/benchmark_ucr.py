"""Accuracy + timing benchmark of the GPU ROCKET transform on the UCR archive.

Mirrors reproduce_experiments_ucr.py from angus924/rocket, but times the transform on the GPU with
explicit synchronisation so that the numbers are comparable with the numba (CPU) timings reported in
the paper.

    python -m rocket_gpu.benchmark_ucr --input_path ./Univariate_arff --dataset_names bakeoff.txt \
        --output_path ./results --num_runs 10 --num_kernels 10000
"""
import argparse
import os
import time

import numpy as np
import pandas as pd
import torch
from sklearn.linear_model import RidgeClassifierCV

from .rocket_torch import RocketGPU

parser = argparse.ArgumentParser()
parser.add_argument("-d", "--dataset_names", required=True)
parser.add_argument("-i", "--input_path", required=True)
parser.add_argument("-o", "--output_path", required=True)
parser.add_argument("-n", "--num_runs", type=int, default=10)
parser.add_argument("-k", "--num_kernels", type=int, default=10_000)
parser.add_argument("--batch_size", type=int, default=256)
parser.add_argument("--device", type=str, default="cuda:0")
parser.add_argument("--no_warmup", action="store_true")
arguments = parser.parse_args()

torch.backends.cudnn.benchmark = True


def gpu_timer():
    "Wall clock that waits for all queued GPU work first"
    torch.cuda.synchronize()
    return time.perf_counter()


def run(training_data, test_data, num_runs=10, num_kernels=10_000, batch_size=256, device="cuda:0"):
    results = np.zeros(num_runs)
    timings = np.zeros([4, num_runs])  # trans. tr., trans. te., training, test

    Y_training, X_training = training_data[:, 0].astype(np.int64), training_data[:, 1:]
    Y_test, X_test = test_data[:, 0].astype(np.int64), test_data[:, 1:]

    for i in range(num_runs):
        input_length = X_training.shape[-1]
        rocket = RocketGPU(input_length, num_kernels, seed=i).to(device)

        # -- transform training ------------------------------------------------------------
        time_a = gpu_timer()
        X_training_transform = rocket.transform(X_training, batch_size=batch_size)
        time_b = gpu_timer()
        timings[0, i] = time_b - time_a

        # -- transform test ----------------------------------------------------------------
        time_a = gpu_timer()
        X_test_transform = rocket.transform(X_test, batch_size=batch_size)
        time_b = gpu_timer()
        timings[1, i] = time_b - time_a

        # -- training ------------------------------------------------------------------------
        time_a = time.perf_counter()
        classifier = RidgeClassifierCV(alphas=np.logspace(-3, 3, 10))
        classifier.fit(X_training_transform, Y_training)
        time_b = time.perf_counter()
        timings[2, i] = time_b - time_a

        # -- test ----------------------------------------------------------------------------
        time_a = time.perf_counter()
        results[i] = classifier.score(X_test_transform, Y_test)
        time_b = time.perf_counter()
        timings[3, i] = time_b - time_a

        del rocket
        torch.cuda.empty_cache()

    return results, timings


def load_ucr_txt(path):
    return np.loadtxt(path, delimiter=",")


if __name__ == "__main__":
    dataset_names = np.loadtxt(arguments.dataset_names, "str")

    results_ucr = pd.DataFrame(index=dataset_names,
                               columns=["accuracy_mean", "accuracy_standard_deviation",
                                        "time_training_seconds", "time_test_seconds"],
                               data=0)
    results_ucr.index.name = "dataset"

    print(f"RUNNING".center(80, "="))
    print(f"device: {arguments.device} ({torch.cuda.get_device_name(arguments.device)})")

    # compile / autotune the conv kernels once before timing anything
    if not arguments.no_warmup:
        warm = RocketGPU(500, 1_000, seed=0).to(arguments.device)
        warm.transform(np.random.randn(512, 500).astype(np.float32))
        torch.cuda.synchronize(arguments.device)
        del warm

    for dataset_name in dataset_names:
        print(f"{dataset_name}".center(80, "-"))

        # -- read data -------------------------------------------------------------------------
        print(f"Loading data".ljust(80 - 5, "."), end="", flush=True)
        training_data = load_ucr_txt(f"{arguments.input_path}/{dataset_name}/{dataset_name}_TRAIN.txt")
        test_data = load_ucr_txt(f"{arguments.input_path}/{dataset_name}/{dataset_name}_TEST.txt")
        print("Done.")

        # -- run -------------------------------------------------------------------------------
        print(f"Performing runs".ljust(80 - 5, "."), end="", flush=True)
        results, timings = run(training_data, test_data,
                               num_runs=arguments.num_runs,
                               num_kernels=arguments.num_kernels,
                               batch_size=arguments.batch_size,
                               device=arguments.device)
        timings_mean = timings.mean(1)
        print("Done.")

        # -- store results ---------------------------------------------------------------------
        results_ucr.loc[dataset_name, "accuracy_mean"] = results.mean()
        results_ucr.loc[dataset_name, "accuracy_standard_deviation"] = results.std()
        results_ucr.loc[dataset_name, "time_training_seconds"] = timings_mean[[0, 2]].sum()
        results_ucr.loc[dataset_name, "time_test_seconds"] = timings_mean[[1, 3]].sum()
        peak = torch.cuda.max_memory_allocated(arguments.device) / 2**20
        print(f"  acc {results.mean():.4f}  transform {timings_mean[0]:.2f}s/{timings_mean[1]:.2f}s  "
              f"peak GPU mem {peak:.0f} MB")
        torch.cuda.reset_peak_memory_stats(arguments.device)

    print(f"FINISHED".center(80, "="))

    os.makedirs(arguments.output_path, exist_ok=True)
    results_ucr.to_csv(f"{arguments.output_path}/results_ucr_gpu.csv")
