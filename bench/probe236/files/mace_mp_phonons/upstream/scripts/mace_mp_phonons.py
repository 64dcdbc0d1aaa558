"""Relax a crystal with MACE-MP-0 and compute its phonon band structure with phonopy.

    python scripts/mace_mp_phonons.py Si.cif --model medium --supercell 3 3 3

Geometry optimisation and finite displacements are done in float64, as
recommended for MACE-MP (float32 forces are too noisy for 0.01 A displacements).
"""

import argparse
import time

import numpy as np
import torch
from ase.filters import FrechetCellFilter
from ase.io import read
from ase.optimize import BFGS
from phonopy import Phonopy
from phonopy.structure.atoms import PhonopyAtoms

from mace.calculators import mace_mp


def get_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("structure")
    p.add_argument("--model", default="medium", help="small | medium | large | path")
    p.add_argument("--device", default="cuda")
    p.add_argument("--supercell", type=int, nargs=3, default=[2, 2, 2])
    p.add_argument("--displacement", type=float, default=0.01)
    p.add_argument("--fmax", type=float, default=1e-3)
    p.add_argument("--out", default="phonon_bands.yaml")
    return p.parse_args()


def to_phonopy(atoms):
    return PhonopyAtoms(
        symbols=atoms.get_chemical_symbols(),
        cell=atoms.cell.array,
        scaled_positions=atoms.get_scaled_positions(),
    )


def main():
    args = get_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("CUDA requested but not available")
    if args.device.startswith("cuda"):
        print(f"running on {torch.cuda.get_device_name()}")

    calc = mace_mp(
        model=args.model,
        device=args.device,
        default_dtype="float64",
    )

    atoms = read(args.structure)
    atoms.calc = calc
    t0 = time.perf_counter()
    opt = BFGS(FrechetCellFilter(atoms), logfile="relax.log")
    opt.run(fmax=args.fmax, steps=500)
    print(f"relaxed in {opt.nsteps} steps ({time.perf_counter() - t0:.1f} s), "
          f"E = {atoms.get_potential_energy() / len(atoms):.5f} eV/atom")

    phonon = Phonopy(to_phonopy(atoms), supercell_matrix=np.diag(args.supercell))
    phonon.generate_displacements(distance=args.displacement)
    forces = []
    t0 = time.perf_counter()
    for sc in phonon.supercells_with_displacements:
        sc_atoms = atoms.__class__(
            symbols=sc.symbols, cell=sc.cell, scaled_positions=sc.scaled_positions, pbc=True
        )
        sc_atoms.calc = calc
        f = sc_atoms.get_forces()
        forces.append(f - f.mean(axis=0))
    torch.cuda.synchronize()
    print(f"{len(forces)} displaced supercells in {time.perf_counter() - t0:.1f} s")

    phonon.forces = forces
    phonon.produce_force_constants()
    phonon.auto_band_structure(write_yaml=True, filename=args.out)
    freqs = phonon.get_band_structure_dict()["frequencies"]
    fmin = min(np.min(f) for f in freqs)
    print(f"lowest frequency: {fmin:.3f} THz" + ("  (imaginary modes!)" if fmin < -0.05 else ""))


if __name__ == "__main__":
    main()
