# Benchmark script for LightGlue on real images
import argparse
import time
from collections import defaultdict
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch._dynamo

from lightglue import LightGlue, SuperPoint
from lightglue.utils import load_image

torch.set_grad_enabled(False)


def measure(matcher, data, device, r=100):
    timings = np.zeros((r, 1))
    use_events = device.type == "cuda"  # CUDA events give accurate device-side timings
    if use_events:
        starter = torch.cuda.Event(enable_timing=True)
        ender = torch.cuda.Event(enable_timing=True)
    # warmup
    for _ in range(10):
        _ = matcher(data)
    # measurements
    with torch.no_grad():
        for rep in range(r):
            if use_events:
                starter.record()
                _ = matcher(data)
                ender.record()
                # sync gpu
                torch.cuda.synchronize()
                curr_time = starter.elapsed_time(ender)
            else:
                start = time.perf_counter()
                _ = matcher(data)
                curr_time = (time.perf_counter() - start) * 1e3
            timings[rep] = curr_time
    mean_syn = np.sum(timings) / r
    std_syn = np.std(timings)
    return {"mean": mean_syn, "std": std_syn}


def print_as_table(d, title, cnames):
    print()
    header = f"{title:30} " + " ".join([f"{x:>7}" for x in cnames])
    print(header)
    print("-" * len(header))
    for k, l in d.items():
        print(f"{k:30}", " ".join([f"{x:>7.1f}" for x in l]))


def make_configs(args):
    return {
        "LightGlue-full": {
            "depth_confidence": -1,
            "width_confidence": -1,
        },
        "LightGlue-adaptive": {},
        "LightGlue-flash-only": {
            "depth_confidence": -1,
            "width_confidence": -1,
            "flash": True,
        },
        "LightGlue-compiled": {
            "depth_confidence": -1,
            "width_confidence": -1,
        } if args.compile else None,
    }


def get_args():
    parser = argparse.ArgumentParser(description="Benchmark script for LightGlue")
    parser.add_argument(
        "--device",
        choices=["auto", "cuda", "cpu", "mps"],
        default="auto",
        help="device to benchmark on",
    )
    parser.add_argument("--compile", action="store_true", help="Compile LightGlue runs")
    parser.add_argument(
        "--no_flash", action="store_true", help="disable FlashAttention"
    )
    parser.add_argument(
        "--no_prune_thresholds",
        action="store_true",
        help="disable pruning thresholds (i.e. always do pruning)",
    )
    parser.add_argument(
        "--add_superglue",
        action="store_true",
        help="add SuperGlue to the benchmark (requires hloc)",
    )
    parser.add_argument(
        "--measure", default="time", choices=["time", "log-time", "throughput"]
    )
    parser.add_argument(
        "--repeat", "--r", type=int, default=100, help="repetitions of measurements"
    )
    parser.add_argument(
        "--num_keypoints",
        nargs="+",
        type=int,
        default=[256, 512, 1024, 2048, 4096],
        help="number of keypoints (list separated by spaces)",
    )
    parser.add_argument(
        "--matmul_precision", default="highest", choices=["highest", "high", "medium"]
    )
    parser.add_argument(
        "--save", default=None, type=str, help="path where figure should be saved"
    )
    return parser.parse_intermixed_args()


if __name__ == "__main__":
    args = get_args()

    device = torch.device(args.device)
    if args.device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if torch.backends.mps.is_available():
            device = torch.device("mps")

    torch.set_float32_matmul_precision(args.matmul_precision)
    torch.backends.cudnn.benchmark = True
    torch._dynamo.config.cache_size_limit = 64

    images = Path("assets")
    inputs = {
        "easy": (
            load_image(images / "DSC_0411.JPG"),
            load_image(images / "DSC_0410.JPG"),
        ),
        "difficult": (
            load_image(images / "sacre_coeur1.jpg"),
            load_image(images / "sacre_coeur2.jpg"),
        ),
    }

    configs = {k: v for k, v in make_configs(args).items() if v is not None}

    if device.type == "cuda":
        gpu_name = torch.cuda.get_device_name(device)
        print(f"Benchmarking on {gpu_name} ({torch.cuda.get_device_properties(device).total_memory / 2**30:.0f} GiB)")
    else:
        gpu_name = device.type.upper()

    models = {k: LightGlue(features="superpoint", **v).eval() for k, v in configs.items()}
    if args.add_superglue:
        from hloc.matchers.superglue import SuperGlue

        models["SuperGlue"] = SuperGlue({"weights": "outdoor"}).eval()
        models["SuperGlue-fast"] = SuperGlue({"weights": "outdoor", "sinkhorn_iterations": 5}).eval()

    models = {k: v.to(device) for k, v in models.items()}
    if args.compile and "LightGlue-compiled" in models:
        models["LightGlue-compiled"].compile(mode="reduce-overhead")

    if args.no_prune_thresholds:
        for m in models.values():
            if hasattr(m, "pruning_keypoint_thresholds"):
                m.pruning_keypoint_thresholds = {
                    k: -1 for k in m.pruning_keypoint_thresholds
                }

    extractor = SuperPoint(
        max_num_keypoints=None, detection_threshold=-1
    ).eval().to(device)

    results = {k: defaultdict(list) for k, v in inputs.items()}
    for th, n_kpts in enumerate(args.num_keypoints):
        for name, (img0, img1) in inputs.items():
            data = {"image0": None, "image1": None}
            extractor.conf.max_num_keypoints = n_kpts
            feats0 = extractor.extract(img0.to(device))
            feats1 = extractor.extract(img1.to(device))
            data["image0"], data["image1"] = feats0, feats1
            for mname, model in models.items():
                if mname.startswith("SuperGlue"):
                    continue  # SuperGlue wants the hloc input layout, skipped here
                runtime = measure(model, data, device=device, r=args.repeat)["mean"]
                results[name][mname].append(
                    1000 / runtime if args.measure == "throughput" else runtime
                )
            # release cached blocks between keypoint budgets
            torch.cuda.empty_cache()

    # plotting
    fig, axes = plt.subplots(1, len(inputs), sharey=True, figsize=[8 * len(inputs), 4])
    axes = np.atleast_1d(axes)
    fig.suptitle(f"LightGlue on {gpu_name}")
    for ax, (name, runtimes) in zip(axes, results.items()):
        for mname, values in runtimes.items():
            ax.plot(args.num_keypoints, values, label=mname, marker="o")
        ax.set_title(name)
        ax.set_xlabel("# keypoints")
        ax.set_xscale("log", base=2)
        if args.measure == "log-time":
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("time (ms)" if args.measure != "throughput" else "pairs/s")
    axes[0].legend()

    for name, runtimes in results.items():
        print_as_table(runtimes, name, args.num_keypoints)

    if args.save is not None:
        plt.savefig(args.save, bbox_inches="tight")
    else:
        plt.show()
