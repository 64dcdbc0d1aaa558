#!/usr/bin/env python3
"""Host<->device and device<->device copy bandwidth, in the spirit of CUDA's bandwidthTest / nvbandwidth.

    python bench/memcpy_bw.py --sizes 1M 16M 256M 1G --iters 20 [--pageable]

Each measurement is timed with device events around `iters` back-to-back copies, after a spin kernel
has been queued so that the host-side launch overhead is hidden behind it.
"""
import argparse
import json
import sys

import torch

UNITS = {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30}


def parse_size(s: str) -> int:
    s = s.strip().upper()
    if s[-1] in UNITS:
        return int(float(s[:-1]) * UNITS[s[-1]])
    return int(s)


def timed_copies(dst: torch.Tensor, src: torch.Tensor, iters: int, non_blocking: bool = True) -> float:
    """Return seconds per copy."""
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    # queue ~10 ms of device work so the copies are launched back to back
    torch.cuda._sleep(10_000_000)
    start.record()
    for _ in range(iters):
        dst.copy_(src, non_blocking=non_blocking)
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / 1e3 / iters


def h2d(nbytes: int, iters: int, pinned: bool, dev: torch.device) -> float:
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned)
    devbuf = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    return nbytes / timed_copies(devbuf, host, iters, non_blocking=pinned)


def d2h(nbytes: int, iters: int, pinned: bool, dev: torch.device) -> float:
    host = torch.empty(nbytes, dtype=torch.uint8).pin_memory() if pinned else torch.empty(nbytes, dtype=torch.uint8)
    devbuf = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    return nbytes / timed_copies(host, devbuf, iters, non_blocking=pinned)


def d2d(nbytes: int, iters: int, dev: torch.device) -> float:
    a = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    b = torch.empty_like(a)
    # read + write
    return 2 * nbytes / timed_copies(b, a, iters)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", nargs="+", default=["1M", "16M", "256M", "1G"])
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--pageable", action="store_true", help="also measure pageable host memory")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)

    if not torch.cuda.is_available():
        print("CUDA is required", file=sys.stderr)
        return 1
    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    props = torch.cuda.get_device_properties(dev)
    print(f"# {props.name}, {props.total_memory / 2**30:.0f} GiB, {props.multi_processor_count} SMs, "
          f"torch {torch.__version__}, CUDA {torch.version.cuda}")

    results = {"device": props.name, "h2d": {}, "d2h": {}, "d2d": {}}
    header = f"{'size':>8} {'H2D pinned':>12} {'D2H pinned':>12} {'D2D':>12}"
    if args.pageable:
        header += f" {'H2D page':>12} {'D2H page':>12}"
    print(header + "   (GB/s)")
    for s in args.sizes:
        n = parse_size(s)
        row = {"h2d_pinned": h2d(n, args.iters, True, dev) / 1e9,
               "d2h_pinned": d2h(n, args.iters, True, dev) / 1e9,
               "d2d": d2d(n, args.iters, dev) / 1e9}
        line = f"{s:>8} {row['h2d_pinned']:12.2f} {row['d2h_pinned']:12.2f} {row['d2d']:12.2f}"
        if args.pageable:
            row["h2d_pageable"] = h2d(n, args.iters, False, dev) / 1e9
            row["d2h_pageable"] = d2h(n, args.iters, False, dev) / 1e9
            line += f" {row['h2d_pageable']:12.2f} {row['d2h_pageable']:12.2f}"
        print(line)
        results["h2d"][s] = row["h2d_pinned"]
        results["d2h"][s] = row["d2h_pinned"]
        results["d2d"][s] = row["d2d"]
        torch.cuda.empty_cache()

    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
