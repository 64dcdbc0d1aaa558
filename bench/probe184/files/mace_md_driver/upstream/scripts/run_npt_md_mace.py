#!/usr/bin/env python
"""NPT molecular dynamics of a bulk system with a MACE potential (ASE driver).

Example:
    CUDA_VISIBLE_DEVICES=1 python run_npt_md_mace.py --structure LiPS.cif \
        --model MACE-MP-medium.model --temperature 600 --steps 200000 --supercell 3 3 3

The MACE calculator runs on the GPU in float64 by default because energy drift
over long NVE/NPT runs is noticeably worse in float32.
"""
import argparse
import logging
import os
import sys
import time

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:512")

import numpy as np
import torch
from ase import units
from ase.io import read, write
from ase.io.trajectory import Trajectory
from ase.md import MDLogger
from ase.md.npt import NPT
from ase.md.nptberendsen import NPTBerendsen
from ase.md.velocitydistribution import MaxwellBoltzmannDistribution, Stationary, ZeroRotation
from ase.optimize import FIRE

from mace.calculators import MACECalculator

log = logging.getLogger("md")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--structure", required=True)
    p.add_argument("--model", required=True, help="path to a .model file (or a glob for a committee)")
    p.add_argument("--supercell", type=int, nargs=3, default=[1, 1, 1])
    p.add_argument("--temperature", type=float, default=300.0)
    p.add_argument("--pressure", type=float, default=1.0, help="bar")
    p.add_argument("--timestep", type=float, default=1.0, help="fs")
    p.add_argument("--steps", type=int, default=100000)
    p.add_argument("--thermostat", choices=["nose-hoover", "berendsen"], default="nose-hoover")
    p.add_argument("--ttime", type=float, default=25.0, help="thermostat time constant (fs)")
    p.add_argument("--ptime", type=float, default=75.0, help="barostat time constant (fs)")
    p.add_argument("--bulk-modulus", type=float, default=30.0, help="GPa, Berendsen only")
    p.add_argument("--relax-first", action="store_true")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    p.add_argument("--compile", default=None, choices=[None, "default", "max-autotune"],
                   help="torch.compile mode for the MACE model")
    p.add_argument("--enable-cueq", action="store_true", help="use cuEquivariance kernels")
    p.add_argument("--traj-every", type=int, default=100)
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--out", default="md_out")
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args(argv)


def gpu_status() -> str:
    if not torch.cuda.is_available():
        return "no GPU"
    free, total = torch.cuda.mem_get_info()
    return (
        f"{torch.cuda.get_device_name()} | used {(total - free) / 2**30:.2f}/{total / 2**30:.1f} GB"
        f" | peak alloc {torch.cuda.max_memory_allocated() / 2**30:.2f} GB"
    )


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)

    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        log.error("This driver is meant to run on a GPU node (CUDA not available).")
        sys.exit(1)
    device = "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False  # keep forces accurate
    log.info("Visible GPUs: %s", os.environ.get("CUDA_VISIBLE_DEVICES"))

    atoms = read(args.structure)
    atoms = atoms.repeat(tuple(args.supercell))
    log.info("System: %s, %d atoms", atoms.get_chemical_formula(), len(atoms))

    calc = MACECalculator(
        model_paths=args.model,
        device=device,
        default_dtype=args.dtype,
        compile_mode=args.compile,
        enable_cueq=args.enable_cueq,
    )
    atoms.calc = calc

    if args.relax_first:
        log.info("Pre-relaxing positions with FIRE")
        opt = FIRE(atoms, logfile=os.path.join(args.out, "relax.log"))
        opt.run(fmax=0.05, steps=500)
        write(os.path.join(args.out, "relaxed.xyz"), atoms)

    MaxwellBoltzmannDistribution(atoms, temperature_K=args.temperature, rng=rng)
    Stationary(atoms)
    ZeroRotation(atoms)

    if args.thermostat == "nose-hoover":
        # ASE's NPT needs an upper-triangular cell
        atoms.set_cell(atoms.cell.cellpar(), scale_atoms=True)
        dyn = NPT(
            atoms,
            timestep=args.timestep * units.fs,
            temperature_K=args.temperature,
            externalstress=args.pressure * units.bar,
            ttime=args.ttime * units.fs,
            pfactor=(args.ptime * units.fs) ** 2 * 100.0 * units.GPa,
        )
    else:
        dyn = NPTBerendsen(
            atoms,
            timestep=args.timestep * units.fs,
            temperature_K=args.temperature,
            pressure_au=args.pressure * units.bar,
            taut=args.ttime * units.fs,
            taup=args.ptime * units.fs,
            compressibility_au=1.0 / (args.bulk_modulus * units.GPa),
        )

    traj = Trajectory(os.path.join(args.out, "md.traj"), "w", atoms)
    dyn.attach(traj.write, interval=args.traj_every)
    dyn.attach(
        MDLogger(dyn, atoms, os.path.join(args.out, "md.log"), header=True, stress=True, peratom=True),
        interval=args.log_every,
    )

    t0 = time.time()
    last = [t0]

    def report():
        now = time.time()
        rate = args.log_every / max(now - last[0], 1e-9)
        last[0] = now
        ns_day = rate * args.timestep * 86400 * 1e-6
        log.info(
            "step %8d  T=%7.1f K  V=%9.2f A^3  %.1f steps/s (%.2f ns/day)  %s",
            dyn.nsteps,
            atoms.get_temperature(),
            atoms.get_volume(),
            rate,
            ns_day,
            gpu_status(),
        )
        if dyn.nsteps % (50 * args.log_every) == 0:
            torch.cuda.empty_cache()

    dyn.attach(report, interval=args.log_every)
    dyn.run(args.steps)
    traj.close()
    log.info("Done in %.1f min", (time.time() - t0) / 60)


if __name__ == "__main__":
    main()
