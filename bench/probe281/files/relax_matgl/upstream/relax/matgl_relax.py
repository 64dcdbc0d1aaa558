#!/usr/bin/env python
"""Cross-check MACE relaxations with M3GNet (matgl) as a second universal potential.

Structures for which the two potentials disagree by more than ``--de-tol``
eV/atom after relaxation are flagged for priority DFT; the disagreement is a
cheap uncertainty proxy used in the active-learning loop.
"""
from __future__ import annotations

import argparse
import logging
import os
import warnings

os.environ.setdefault("DGLBACKEND", "pytorch")

import numpy as np
import pandas as pd
import torch
from ase.io import read
from pymatgen.io.ase import AseAtomsAdaptor
from tqdm import tqdm

import matgl
from matgl.ext.ase import PESCalculator, Relaxer

logger = logging.getLogger("matgl_relax")
warnings.filterwarnings("ignore", category=UserWarning, module="matgl")

DEFAULT_MODEL = "M3GNet-MP-2021.2.8-PES"


def setup_device(device: str) -> None:
    """matgl builds its DGL graphs on torch's default device, so the model,
    the graph and the state attributes all follow this setting."""
    if device.startswith("cuda"):
        torch.set_default_device(device)
    else:
        torch.set_default_device("cpu")


def relax_all(pot, atoms_list, fmax: float, steps: int, relax_cell: bool):
    relaxer = Relaxer(potential=pot, optimizer="FIRE", relax_cell=relax_cell)
    rows = []
    for atoms in tqdm(atoms_list, desc="m3gnet relax"):
        struct = AseAtomsAdaptor.get_structure(atoms)
        try:
            res = relaxer.relax(struct, fmax=fmax, steps=steps, verbose=False)
        except Exception as err:  # noqa: BLE001
            logger.warning("failed on %s: %s", struct.composition.reduced_formula, err)
            rows.append({"id": atoms.info.get("index"), "m3gnet_e_per_atom": np.nan})
            continue
        final = res["final_structure"]
        e = float(res["trajectory"].energies[-1]) / len(final)
        rows.append(
            {
                "id": atoms.info.get("index"),
                "formula": final.composition.reduced_formula,
                "m3gnet_e_per_atom": e,
                "mace_e_per_atom": atoms.info.get("energy_per_atom", np.nan),
                "m3gnet_volume": final.volume,
                "mace_volume": atoms.get_volume(),
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--input", required=True, help="extxyz written by relax_mace.py")
    p.add_argument("--out", required=True, help="csv with per-structure comparison")
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--device", default="cuda")
    p.add_argument("--fmax", type=float, default=0.05)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--de-tol", type=float, default=0.05)
    p.add_argument("--limit", type=int, default=None)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    setup_device(args.device)
    # M3GNet was trained in fp32; keep it that way for relaxations
    matgl.float_th = torch.float32

    pot = matgl.load_model(args.model)
    atoms_list = read(args.input, index=":" if args.limit is None else f":{args.limit}")
    logger.info("comparing %d structures with %s on %s", len(atoms_list), args.model, args.device)

    df = relax_all(pot, atoms_list, args.fmax, args.steps, relax_cell=True)
    df["abs_de"] = (df["m3gnet_e_per_atom"] - df["mace_e_per_atom"]).abs()
    df["dv_rel"] = (df["m3gnet_volume"] - df["mace_volume"]).abs() / df["mace_volume"]
    df["flag_dft_priority"] = df["abs_de"] > args.de_tol
    df.to_csv(args.out, index=False)

    n_flag = int(df["flag_dft_priority"].sum())
    logger.info(
        "flagged %d / %d structures (|dE| > %.3f eV/atom); median |dE| = %.4f",
        n_flag,
        len(df),
        args.de_tol,
        float(df["abs_de"].median()),
    )


if __name__ == "__main__":
    main()
