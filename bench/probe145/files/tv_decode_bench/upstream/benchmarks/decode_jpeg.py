"""Benchmark JPEG decoding: libjpeg-turbo on CPU vs nvjpeg on the GPU.

Usage::

    python benchmarks/decode_jpeg.py --images /data/imagenet/val --num-images 512 --batch-sizes 1 8 32 128
    CUDA_VISIBLE_DEVICES=1 python benchmarks/decode_jpeg.py --device cuda:0 --threads 8

The GPU path (``decode_jpeg(..., device="cuda")``) batches the encoded bytes and decodes them
with nvjpeg; the decoded tensors stay on the GPU so they can go straight into
``torchvision.transforms.v2`` and the model without a host round trip.
"""
import argparse
import os
import statistics
from pathlib import Path

import torch
import torch.utils.benchmark as benchmark
import torchvision
from torchvision.io import decode_jpeg, ImageReadMode, read_file
from torchvision.transforms import v2


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=str, default="~/data/coco/val2017", help="folder with .jpg files")
    parser.add_argument("--num-images", type=int, default=256)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--device", type=str, default="cuda", help="GPU used for nvjpeg decoding")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads for the CPU baseline")
    parser.add_argument("--min-run-time", type=float, default=2.0)
    parser.add_argument("--with-transforms", action="store_true", help="also time resize+normalize on device")
    parser.add_argument("--skip-cpu", action="store_true")
    return parser.parse_args()


def load_encoded(folder, num_images):
    folder = Path(os.path.expanduser(folder))
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".jpg", ".jpeg"))[:num_images]
    if not files:
        raise SystemExit(f"no jpeg found in {folder}")
    # read_file gives a 1D uint8 CPU tensor with the raw bytes; decode_jpeg wants the bytes on CPU
    # even when decoding on the GPU.
    return [read_file(str(f)) for f in files]


def decode_cpu(encoded):
    return [decode_jpeg(data, mode=ImageReadMode.RGB) for data in encoded]


def decode_gpu(encoded, device):
    # batched nvjpeg decode; returns a list of CHW uint8 tensors on `device`
    return decode_jpeg(encoded, mode=ImageReadMode.RGB, device=device)


def gpu_transforms(device):
    return v2.Compose(
        [
            v2.Resize((224, 224), antialias=True),
            v2.ToDtype(torch.float32, scale=True),
            v2.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ]
    )


def warmup(encoded, device):
    # The first nvjpeg call creates the decoder handle and allocates pinned buffers;
    # keep it out of the measurements.
    for _ in range(3):
        decode_gpu(encoded[:8], device)
    torch.cuda.synchronize(device)


def time_cpu(encoded, batch_size, min_run_time, threads):
    batches = [encoded[i : i + batch_size] for i in range(0, len(encoded), batch_size)]
    t = benchmark.Timer(
        stmt="for b in batches: decode_cpu(b)",
        globals={"batches": batches, "decode_cpu": decode_cpu},
        num_threads=threads,
        label="decode_jpeg",
        sub_label=f"bs={batch_size}",
        description="cpu (libjpeg-turbo)",
    )
    return t.blocked_autorange(min_run_time=min_run_time)


def time_gpu(encoded, batch_size, min_run_time, device, transforms=None):
    batches = [encoded[i : i + batch_size] for i in range(0, len(encoded), batch_size)]

    def run():
        for b in batches:
            out = decode_gpu(b, device)
            if transforms is not None:
                out = [transforms(img) for img in out]
        torch.cuda.synchronize()

    t = benchmark.Timer(
        stmt="run()",
        globals={"run": run},
        label="decode_jpeg",
        sub_label=f"bs={batch_size}",
        description=f"{device} (nvjpeg)" + (" + transforms" if transforms is not None else ""),
    )
    return t.blocked_autorange(min_run_time=min_run_time)


def check_outputs(encoded, device):
    # nvjpeg and libjpeg-turbo use different IDCT implementations, so a few LSBs differ
    cpu = decode_cpu(encoded[:16])
    gpu = decode_gpu(encoded[:16], device)
    diffs = []
    for a, b in zip(cpu, gpu):
        assert a.shape == b.shape, (a.shape, b.shape)
        diffs.append((a.float() - b.cpu().float()).abs().mean().item())
    print(f"mean abs diff cpu vs {device}: {statistics.mean(diffs):.3f} (max {max(diffs):.3f})")


def main():
    args = parse_args()
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, cuda {torch.version.cuda}")
    if not torch.cuda.is_available():
        raise SystemExit("this benchmark needs a CUDA device")

    device = torch.device(args.device)
    print(f"device: {torch.cuda.get_device_name(device)}")
    torch.backends.cudnn.benchmark = True

    encoded = load_encoded(args.images, args.num_images)
    total_bytes = sum(e.numel() for e in encoded)
    print(f"{len(encoded)} images, {total_bytes / 2**20:.1f} MiB encoded")

    warmup(encoded, device)
    check_outputs(encoded, device)

    results = []
    transforms = gpu_transforms(device) if args.with_transforms else None
    for bs in args.batch_sizes:
        if not args.skip_cpu:
            results.append(time_cpu(encoded, bs, args.min_run_time, args.threads))
        results.append(time_gpu(encoded, bs, args.min_run_time, device))
        if transforms is not None:
            results.append(time_gpu(encoded, bs, args.min_run_time, device, transforms))

    compare = benchmark.Compare(results)
    compare.trim_significant_figures()
    compare.colorize()
    compare.print()

    peak = torch.cuda.max_memory_allocated(device) / 2**20
    print(f"peak GPU memory: {peak:.1f} MiB")


if __name__ == "__main__":
    main()
