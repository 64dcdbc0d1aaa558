"""Relax a structure with CHGNet and then run a short NVT/NPT MD on the GPU.

Usage:
    python examples/relax_and_md.py LiMnO2.cif --temperature 1000 --steps 5000

The pretrained CHGNet (0.3.0) is small enough that a single GPU handles
supercells of ~1000 atoms comfortably; for larger cells pass --check-cuda-mem
on shared nodes so the least-loaded GPU is picked.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch
from pymatgen.core import Structure

from chgnet.model import CHGNet, StructOptimizer
from chgnet.model.dynamics import CHGNetCalculator, MolecularDynamics

warnings.filterwarnings("ignore", module="pymatgen")
warnings.filterwarnings("ignore", module="ase")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("structure", help="CIF/POSCAR file to relax and simulate")
    parser.add_argument("--supercell", type=int, nargs=3, default=[2, 2, 2])
    parser.add_argument("--ensemble", default="nvt", choices=["nve", "nvt", "npt"])
    parser.add_argument("--temperature", type=float, default=1000)
    parser.add_argument("--timestep", type=float, default=2.0, help="fs")
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--fmax", type=float, default=0.05)
    parser.add_argument("--check-cuda-mem", action="store_true")
    parser.add_argument("--out-prefix", default="chgnet_md")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    torch.manual_seed(0)
    np.random.seed(0)

    structure = Structure.from_file(args.structure)
    structure.make_supercell(args.supercell)
    print(f"{structure.composition.reduced_formula}: {len(structure)} atoms")

    chgnet = CHGNet.load(use_device="cuda", check_cuda_mem=args.check_cuda_mem)
    print(f"CHGNet {chgnet.version} with {chgnet.n_params:,} parameters")

    # ---- relaxation -------------------------------------------------------
    relaxer = StructOptimizer(model=chgnet, use_device="cuda")
    t0 = time.perf_counter()
    result = relaxer.relax(structure, fmax=args.fmax, steps=1000, verbose=False)
    torch.cuda.synchronize()  # make sure all kernels finished before timing
    t_relax = time.perf_counter() - t0
    final = result["final_structure"]
    traj = result["trajectory"]
    e_final = traj.energies[-1] / len(final)
    print(f"relaxed in {len(traj)} steps, {t_relax:.1f} s, E = {e_final:.4f} eV/atom")
    final.to(filename=f"{args.out_prefix}_relaxed.cif")

    # ---- molecular dynamics ---------------------------------------------
    calc = CHGNetCalculator(model=chgnet, use_device="cuda")
    md = MolecularDynamics(
        atoms=final,
        model=calc,
        ensemble=args.ensemble,
        temperature=args.temperature,
        timestep=args.timestep,
        trajectory=f"{args.out_prefix}.traj",
        logfile=f"{args.out_prefix}.log",
        loginterval=100,
    )
    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    md.run(args.steps)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    peak_gb = torch.cuda.max_memory_allocated() / 1024**3
    ns_per_day = args.steps * args.timestep * 1e-6 / (elapsed / 86400)
    print(
        f"MD: {args.steps} steps in {elapsed:.1f} s -> {ns_per_day:.3f} ns/day, "
        f"peak GPU memory {peak_gb:.2f} GB"
    )


if __name__ == "__main__":
    main()
