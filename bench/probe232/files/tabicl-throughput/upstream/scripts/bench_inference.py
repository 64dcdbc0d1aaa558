"""Inference throughput of TabICL vs. TabPFN v2 on synthetic tables.

Measures wall-clock and GPU kernel time for predict_proba at several table sizes.
GPU time comes from CUDA events so that host-side preprocessing is excluded.

    python scripts/bench_inference.py --sizes 1000 10000 50000 --features 100 --compile
"""
import argparse
import gc
import json
import time
from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import make_classification

from tabicl import TabICLClassifier

try:
    from tabpfn import TabPFNClassifier
except ImportError:  # optional baseline
    TabPFNClassifier = None


def cuda_timer():
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    return start, end


def bench_one(clf, X_train, y_train, X_test, n_repeats: int) -> dict:
    clf.fit(X_train, y_train)
    clf.predict_proba(X_test[:256])  # warm-up: kernel autotuning / compilation
    torch.cuda.synchronize()  # finish warm-up before timing

    wall, gpu = [], []
    for _ in range(n_repeats):
        start, end = cuda_timer()
        t0 = time.perf_counter()
        start.record()
        proba = clf.predict_proba(X_test)
        end.record()
        torch.cuda.synchronize()
        wall.append(time.perf_counter() - t0)
        gpu.append(start.elapsed_time(end) / 1e3)
    return {
        "wall_s": float(np.median(wall)),
        "gpu_s": float(np.median(gpu)),
        "rows_per_s": len(X_test) / float(np.median(wall)),
        "peak_mem_gb": torch.cuda.max_memory_allocated() / 1e9,
        "proba_sum_ok": bool(np.allclose(proba.sum(1), 1.0, atol=1e-3)),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--classes", type=int, default=5)
    ap.add_argument("--n-estimators", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--compile", action="store_true", help="torch.compile the ICL transformer")
    ap.add_argument("--no-amp", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("results/inference_throughput.json"))
    args = ap.parse_args()

    assert torch.cuda.is_available(), "this benchmark needs a CUDA GPU"
    device = torch.device("cuda:0")
    gpu_name = torch.cuda.get_device_name(device)
    major, minor = torch.cuda.get_device_capability(device)
    use_amp = not args.no_amp and major >= 7  # tensor cores from Volta on
    torch.backends.cuda.matmul.allow_tf32 = True

    results = {"gpu": gpu_name, "capability": f"{major}.{minor}", "torch": torch.__version__, "runs": []}
    for n in args.sizes:
        X, y = make_classification(
            n_samples=2 * n, n_features=args.features, n_informative=args.features // 2,
            n_classes=args.classes, random_state=0,
        )
        X = X.astype(np.float32)
        X_train, y_train, X_test = X[:n], y[:n], X[n:]

        models = {
            "tabicl": TabICLClassifier(
                n_estimators=args.n_estimators, device=device, use_amp=use_amp, batch_size=8, random_state=0,
            ),
        }
        if TabPFNClassifier is not None and n <= 10000:
            models["tabpfn_v2"] = TabPFNClassifier(
                n_estimators=min(args.n_estimators, 8), device="cuda", fit_mode="fit_with_cache",
                inference_precision="autocast" if use_amp else torch.float32,
            )

        for name, clf in models.items():
            if args.compile and name == "tabicl":
                clf._build_model()
                clf.model_ = torch.compile(clf.model_, mode="max-autotune", dynamic=True)
            torch.cuda.reset_peak_memory_stats(device)
            res = bench_one(clf, X_train, y_train, X_test, args.repeats)
            res.update({"model": name, "n_train": n, "n_features": args.features, "amp": use_amp})
            results["runs"].append(res)
            print(json.dumps(res))
            del clf
            gc.collect()
            torch.cuda.empty_cache()

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
