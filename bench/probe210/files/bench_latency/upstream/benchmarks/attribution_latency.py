"""Latency / memory benchmark of attribution methods on ImageNet backbones.

Compares Captum (Saliency, IntegratedGradients, NoiseTunnel, Occlusion,
LayerGradCam), pytorch-grad-cam (GradCAM, ScoreCAM) and SHAP's
GradientExplainer at several batch sizes. Results go to a CSV that
``benchmarks/plot_latency.py`` turns into the figure of the README.

    python benchmarks/attribution_latency.py --arch resnet50 --batch-sizes 1 8 32 --amp
"""
import argparse
import csv
import os
import platform
import time
from functools import partial

import numpy as np
import torch
import torchvision

from captum.attr import (IntegratedGradients, LayerGradCam, NoiseTunnel,
                         Occlusion, Saliency)
from pytorch_grad_cam import GradCAM, ScoreCAM
from pytorch_grad_cam.utils.model_targets import ClassifierOutputTarget

try:
    import shap
except ImportError:  # shap is optional
    shap = None

try:
    import pynvml
    pynvml.nvmlInit()
    _NVML = True
except Exception:  # no NVML (CPU box, container without the driver libs)
    _NVML = False


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--arch", default="resnet50")
    p.add_argument("--device", default="cuda")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 8, 32])
    p.add_argument("--methods", nargs="+",
                   default=["saliency", "ig", "nt_ig", "occlusion", "layer_gradcam",
                            "gradcam", "scorecam", "shap_gradient"])
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--amp", action="store_true", help="fp16 autocast for the forward passes")
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the backbone (hook-free methods only: saliency, ig, occlusion)")
    p.add_argument("--ig-steps", type=int, default=50)
    p.add_argument("--out", default="results/latency.csv")
    return p.parse_args()


def env_report(device):
    info = {
        "host": platform.node(),
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "gpu": torch.cuda.get_device_name(0),
    }
    if _NVML:
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        info["driver"] = pynvml.nvmlSystemGetDriverVersion()
        info["gpu_mem_total_mb"] = pynvml.nvmlDeviceGetMemoryInfo(handle).total // 2**20
    return info


def cuda_timer(fn, warmup=3, iters=10):
    """Median / std wall time of ``fn`` in milliseconds, measured with events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        start_evt.record()
        fn()
        end_evt.record()
        torch.cuda.synchronize()  # wait for end_evt before reading it
        times.append(start_evt.elapsed_time(end_evt))
    return float(np.median(times)), float(np.std(times))


class AmpWrapper(torch.nn.Module):
    """Runs the wrapped model under autocast and returns fp32 logits, so that
    the attribution libraries never see half tensors."""

    def __init__(self, model, enabled):
        super().__init__()
        self.model = model
        self.enabled = enabled

    def forward(self, x):
        with torch.cuda.amp.autocast(enabled=self.enabled):
            out = self.model(x)
        return out.float()


def build_model(arch, device, amp, channels_last, compile_model=False):
    model = getattr(torchvision.models, arch)(weights="DEFAULT").eval()
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    model = model.to(device)
    wrapped = AmpWrapper(model, amp)
    if compile_model:
        # max-autotune lets inductor benchmark Triton GEMM/conv templates;
        # the first call takes minutes, excluded by the warmup iterations.
        wrapped = torch.compile(wrapped, mode="max-autotune")
    return wrapped, model


def target_layer_of(model, arch):
    if arch.startswith("resnet"):
        return model.layer4[-1]
    if arch.startswith("vgg"):
        return model.features[-1]
    if arch.startswith("densenet"):
        return model.features[-1]
    raise ValueError(f"no default target layer for {arch}")


def make_method(name, wrapped, raw, arch, args, x, y):
    if name == "saliency":
        sal = Saliency(wrapped)
        return partial(sal.attribute, x, target=y)
    if name == "ig":
        ig = IntegratedGradients(wrapped)
        return partial(ig.attribute, x, target=y, n_steps=args.ig_steps,
                       internal_batch_size=max(1, 64 // x.shape[0]) * x.shape[0])
    if name == "nt_ig":
        nt = NoiseTunnel(IntegratedGradients(wrapped))
        return partial(nt.attribute, x, target=y, nt_type="smoothgrad", nt_samples=4,
                       nt_samples_batch_size=1, n_steps=args.ig_steps // 2)
    if name == "occlusion":
        occ = Occlusion(wrapped)
        return partial(occ.attribute, x, target=y, sliding_window_shapes=(3, 32, 32),
                       strides=(3, 16, 16), perturbations_per_eval=32)
    if name == "layer_gradcam":
        lgc = LayerGradCam(wrapped, target_layer_of(raw, arch))
        return partial(lgc.attribute, x, target=y)
    if name == "gradcam":
        cam = GradCAM(model=wrapped, target_layers=[target_layer_of(raw, arch)])
        targets = [ClassifierOutputTarget(int(t)) for t in y]
        return partial(cam, input_tensor=x, targets=targets)
    if name == "scorecam":
        cam = ScoreCAM(model=wrapped, target_layers=[target_layer_of(raw, arch)])
        cam.batch_size = 64
        targets = [ClassifierOutputTarget(int(t)) for t in y]
        return partial(cam, input_tensor=x, targets=targets)
    if name == "shap_gradient":
        if shap is None:
            return None
        background = torch.randn(16, *x.shape[1:], device=x.device)
        explainer = shap.GradientExplainer(wrapped, background)
        return partial(explainer.shap_values, x, nsamples=32)
    raise ValueError(name)


def main():
    args = parse_args()
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)

    env = env_report(device)
    for k, v in env.items():
        print(f"{k:>18}: {v}")

    wrapped, raw = build_model(args.arch, device, args.amp, args.channels_last, args.compile)
    if args.compile:
        hooked = {"layer_gradcam", "gradcam", "scorecam", "shap_gradient", "nt_ig"}
        args.methods = [m for m in args.methods if m not in hooked]

    rows = []
    for bs in args.batch_sizes:
        x = torch.randn(bs, 3, 224, 224, device=device)
        if args.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (bs,), device=device)
        for name in args.methods:
            fn = make_method(name, wrapped, raw, args.arch, args, x, y)
            if fn is None:
                print(f"skip {name}")
                continue
            torch.cuda.reset_peak_memory_stats()
            try:
                med, std = cuda_timer(fn, args.warmup, args.iters)
            except torch.cuda.OutOfMemoryError:
                print(f"{name} bs={bs}: OOM")
                torch.cuda.empty_cache()
                continue
            peak_mb = torch.cuda.max_memory_allocated() / 2**20
            rows.append({
                "arch": args.arch, "method": name, "batch_size": bs,
                "amp": args.amp, "channels_last": args.channels_last,
                "ms_median": round(med, 3), "ms_std": round(std, 3),
                "ms_per_image": round(med / bs, 3), "peak_mem_mb": round(peak_mb, 1),
                "gpu": env["gpu"],
            })
            print(f"{name:>14} bs={bs:<3} {med:9.2f} ms  ({med / bs:7.2f} ms/img)  peak {peak_mb:8.1f} MiB")

    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {args.out} ({time.strftime('%Y-%m-%d %H:%M')})")


if __name__ == "__main__":
    main()
