"""Benchmark MD throughput of universal interatomic potentials on one GPU.

Compares CHGNet, MACE-MP-0 and M3GNet (MatGL) on the same supercells and
reports steps/s, atom-steps/s and peak GPU memory. Results go to a CSV that
the plotting notebook picks up.

    python benchmarks/md_throughput.py --sizes 64 216 512 1000 --steps 200
"""

from __future__ import annotations

import argparse
import csv
import platform
import subprocess
import time

import numpy as np
import torch
from ase.build import bulk
from ase.md.velocitydistribution import MaxwellBoltzmannDistribution
from ase.md.verlet import VelocityVerlet
from ase import units


def gpu_info() -> dict:
    props = torch.cuda.get_device_properties(0)
    try:
        driver = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            text=True,
        ).strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError):
        driver = "unknown"
    return {
        "gpu": props.name,
        "gpu_mem_gb": round(props.total_memory / 1024**3, 1),
        "sm": f"{props.major}.{props.minor}",
        "driver": driver,
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "host": platform.node(),
    }


def make_calculator(name: str, device: str, compile_model: bool):
    if name == "chgnet":
        from chgnet.model.dynamics import CHGNetCalculator

        return CHGNetCalculator(use_device=device)
    if name == "mace":
        from mace.calculators import mace_mp

        return mace_mp(
            model="medium",
            device=device,
            default_dtype="float32",
            compile_mode="reduce-overhead" if compile_model else None,
        )
    if name == "m3gnet":
        import matgl
        from matgl.ext.ase import PESCalculator

        torch.set_default_device(device)
        pot = matgl.load_model("M3GNet-MP-2021.2.8-PES")
        return PESCalculator(pot)
    raise ValueError(name)


def supercell(n_target: int):
    atoms = bulk("Si", "diamond", a=5.43, cubic=True)
    reps = max(1, round((n_target / len(atoms)) ** (1 / 3)))
    return atoms.repeat((reps, reps, reps))


def time_md(calc, atoms, steps: int, warmup: int) -> tuple[float, float]:
    atoms = atoms.copy()
    atoms.calc = calc
    MaxwellBoltzmannDistribution(atoms, temperature_K=600)
    dyn = VelocityVerlet(atoms, timestep=1.0 * units.fs)
    dyn.run(warmup)

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.reset_peak_memory_stats()
    start.record()
    for _ in range(steps):
        torch.cuda.nvtx.range_push("md_step")
        dyn.run(1)
        torch.cuda.nvtx.range_pop()
    end.record()
    torch.cuda.synchronize()
    seconds = start.elapsed_time(end) / 1000.0
    peak = torch.cuda.max_memory_allocated() / 1024**3
    return seconds, peak


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--models", nargs="+", default=["chgnet", "mace", "m3gnet"])
    p.add_argument("--sizes", nargs="+", type=int, default=[64, 216, 512, 1000])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--tf32", action="store_true", help="allow TF32 matmuls (Ampere+)")
    p.add_argument("--compile", action="store_true", help="torch.compile MACE")
    p.add_argument("--out", default="md_throughput.csv")
    args = p.parse_args()

    if not torch.cuda.is_available():
        raise SystemExit("this benchmark needs a CUDA GPU")
    device = "cuda"
    torch.backends.cudnn.benchmark = True
    if torch.cuda.get_device_capability(0)[0] >= 8:
        torch.backends.cuda.matmul.allow_tf32 = args.tf32

    info = gpu_info()
    print(info)
    rows = []
    for name in args.models:
        calc = make_calculator(name, device, args.compile)
        for n in args.sizes:
            atoms = supercell(n)
            try:
                seconds, peak = time_md(calc, atoms, args.steps, args.warmup)
            except torch.cuda.OutOfMemoryError:
                print(f"{name:8s} {len(atoms):6d} atoms: OOM")
                torch.cuda.empty_cache()
                continue
            steps_per_s = args.steps / seconds
            row = {
                "model": name,
                "natoms": len(atoms),
                "steps_per_s": round(steps_per_s, 3),
                "atom_steps_per_s": round(steps_per_s * len(atoms), 1),
                "peak_mem_gb": round(peak, 3),
                **info,
            }
            rows.append(row)
            print(f"{name:8s} {len(atoms):6d} atoms: {steps_per_s:8.2f} steps/s, {peak:.2f} GB")
        del calc
        torch.cuda.empty_cache()  # free the previous model before loading the next

    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {args.out}")


if __name__ == "__main__":
    main()
