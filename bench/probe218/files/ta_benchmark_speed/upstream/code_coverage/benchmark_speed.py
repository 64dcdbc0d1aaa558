"""Speed / memory benchmark for torchattacks.

Measures, for every attack, the wall-clock time per batch, the GPU time measured with
CUDA events and the peak GPU memory. Results are appended to a CSV so that runs on
different GPUs can be compared (see docs/benchmark.md).

    python benchmark_speed.py --batch-size 128 --n-batches 5 --out speed.csv
"""
import argparse
import csv
import os
import platform
import subprocess
import sys
import time
from datetime import datetime

import torch

sys.path.insert(0, '..')
import torchattacks  # noqa: E402
from robustbench.data import load_cifar10  # noqa: E402
from robustbench.utils import load_model  # noqa: E402


ATTACKS = {
    "FGSM": lambda m: torchattacks.FGSM(m, eps=8/255),
    "BIM": lambda m: torchattacks.BIM(m, eps=8/255, alpha=2/255, steps=10),
    "PGD": lambda m: torchattacks.PGD(m, eps=8/255, alpha=2/255, steps=10, random_start=True),
    "PGDL2": lambda m: torchattacks.PGDL2(m, eps=0.5, alpha=0.1, steps=10),
    "TPGD": lambda m: torchattacks.TPGD(m, eps=8/255, alpha=2/255, steps=10),
    "MIFGSM": lambda m: torchattacks.MIFGSM(m, eps=8/255, alpha=2/255, steps=10, decay=1.0),
    "CW": lambda m: torchattacks.CW(m, c=1, kappa=0, steps=50, lr=0.01),
    "APGD-CE": lambda m: torchattacks.APGD(m, eps=8/255, steps=10, loss='ce'),
    "APGD-DLR": lambda m: torchattacks.APGD(m, eps=8/255, steps=10, loss='dlr'),
    "FAB": lambda m: torchattacks.FAB(m, eps=8/255, steps=10, n_classes=10),
    "Square": lambda m: torchattacks.Square(m, eps=8/255, n_queries=100),
    "DeepFool": lambda m: torchattacks.DeepFool(m, steps=10),
}


def get_gpu_info():
    """Return (name, total memory in MiB, driver version) using nvidia-smi when available."""
    try:
        out = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
             "--format=csv,noheader,nounits"], universal_newlines=True)
        name, mem, driver = [x.strip() for x in out.strip().splitlines()[0].split(",")]
        return name, int(mem), driver
    except (OSError, subprocess.CalledProcessError):
        props = torch.cuda.get_device_properties(0)
        return props.name, props.total_memory // 2**20, "unknown"


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--n-batches", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--model", type=str, default="Standard")
    parser.add_argument("--attacks", type=str, default="all",
                        help="comma separated subset of %s" % ",".join(ATTACKS))
    parser.add_argument("--out", type=str, default="speed.csv")
    parser.add_argument("--cudnn-benchmark", action="store_true")
    return parser.parse_args()


def time_attack(atk, images, labels, n_batches, warmup):
    for _ in range(warmup):
        atk(images, labels)
    torch.cuda.synchronize()

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    torch.cuda.reset_peak_memory_stats()

    wall_start = time.perf_counter()
    start_evt.record()
    for _ in range(n_batches):
        adv = atk(images, labels)
    end_evt.record()
    torch.cuda.synchronize()  # end_evt must have completed before elapsed_time()
    wall = (time.perf_counter() - wall_start) / n_batches

    gpu_ms = start_evt.elapsed_time(end_evt) / n_batches
    peak_mb = torch.cuda.max_memory_allocated() / 2**20
    return adv, wall, gpu_ms, peak_mb


def main():
    args = parse_args()

    if not torch.cuda.is_available():
        print("This benchmark needs a CUDA device.")
        sys.exit(1)

    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    device = torch.device("cuda:0")

    gpu_name, gpu_mem, driver = get_gpu_info()
    print("GPU: %s (%d MiB), driver %s, torch %s, CUDA %s, cuDNN %s" % (
        gpu_name, gpu_mem, driver, torch.__version__, torch.version.cuda,
        torch.backends.cudnn.version()))

    model = load_model(args.model, norm='Linf').to(device).eval()
    images, labels = load_cifar10(n_examples=args.batch_size)
    images = images.to(device, non_blocking=True)
    labels = labels.to(device, non_blocking=True)

    names = list(ATTACKS) if args.attacks == "all" else args.attacks.split(",")

    write_header = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as f:
        writer = csv.writer(f)
        if write_header:
            writer.writerow(["date", "host", "gpu", "torch", "attack", "batch_size",
                             "wall_s", "gpu_ms", "peak_mb", "robust_acc"])
        for name in names:
            atk = ATTACKS[name](model)
            adv, wall, gpu_ms, peak_mb = time_attack(atk, images, labels, args.n_batches, args.warmup)
            with torch.no_grad():
                rob = (model(adv).argmax(1) == labels).float().mean().item()
            print("%-10s wall %.3fs | gpu %.1fms | peak %.0f MiB | rob %.2f%%"
                  % (name, wall, gpu_ms, peak_mb, 100 * rob))
            writer.writerow([datetime.now().isoformat(timespec="seconds"), platform.node(), gpu_name,
                             torch.__version__, name, args.batch_size,
                             "%.4f" % wall, "%.2f" % gpu_ms, "%.1f" % peak_mb, "%.4f" % rob])
            del atk, adv
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
