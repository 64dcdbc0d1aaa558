#!/usr/bin/env python
"""Pre-screen candidates with CHGNet before the (more expensive) MACE relaxation.

Two passes:
  1. static single-point prediction on every candidate (batched on the GPU),
     dropping anything with a predicted formation energy far above the hull;
  2. a short FIRE relaxation of the survivors with CHGNet's StructOptimizer.

Magnetic moments predicted by CHGNet are stored with the relaxed structures
so that the DFT stage can initialise MAGMOM from them.
"""
from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import time
from pathlib import Path

import numpy as np
import torch
from monty.serialization import dumpfn, loadfn
from pymatgen.core import Structure
from tqdm import tqdm

from chgnet.model import CHGNet, StructOptimizer

logger = logging.getLogger("chgnet_relax")

# CHGNet reads this when no explicit device is passed (e.g. from notebooks)
os.environ.setdefault("CHGNET_DEVICE", "cuda")


def chunks(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


def load_structures(path: Path) -> list[Structure]:
    if path.suffix == ".gz":
        with gzip.open(path, "rt") as f:
            raw = json.load(f)
    else:
        raw = loadfn(path)
    if isinstance(raw, dict) and "structures" in raw:
        raw = raw["structures"]
    return [s if isinstance(s, Structure) else Structure.from_dict(s) for s in raw]


def gpu_mem_gb() -> float:
    return torch.cuda.max_memory_allocated() / 1024**3


def static_screen(model: CHGNet, structures: list[Structure], batch_size: int, e_cut: float):
    keep, dropped = [], 0
    energies = []
    for i, chunk in enumerate(tqdm(list(chunks(structures, batch_size)), desc="single-point")):
        preds = model.predict_structure(chunk, task="em", batch_size=batch_size)
        for s, p in zip(chunk, preds):
            e = float(p["e"])
            energies.append(e)
            if e <= e_cut:
                keep.append((s, p))
            else:
                dropped += 1
        if i % 50 == 0:
            logger.info("chunk %d: peak GPU mem %.2f GB", i, gpu_mem_gb())
            torch.cuda.reset_peak_memory_stats()
    logger.info("static screen kept %d / %d (dropped %d)", len(keep), len(structures), dropped)
    return keep, np.array(energies)


def relax_survivors(relaxer: StructOptimizer, survivors, fmax: float, steps: int, relax_cell: bool):
    out = []
    t0 = time.time()
    for s, _ in tqdm(survivors, desc="relax"):
        try:
            result = relaxer.relax(
                s,
                fmax=fmax,
                steps=steps,
                relax_cell=relax_cell,
                verbose=False,
            )
        except RuntimeError as err:
            # e.g. CUDA OOM on very large supercells; skip, these go straight to DFT
            logger.warning("relaxation failed for %s: %s", s.composition.reduced_formula, err)
            continue
        final = result["final_structure"]
        traj = result["trajectory"]
        magmoms = traj.magmoms[-1] if len(traj.magmoms) else None
        out.append(
            {
                "structure": final.as_dict(),
                "energy_per_atom": float(traj.energies[-1]) / len(final),
                "magmoms": None if magmoms is None else np.asarray(magmoms).tolist(),
                "n_steps": len(traj.energies),
            }
        )
    logger.info("relaxed %d structures in %.1f min", len(out), (time.time() - t0) / 60)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model-version", default="0.3.0")
    parser.add_argument("--device", default="cuda", help="torch device for CHGNet (cuda, cuda:1, cpu, mps)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--e-cut", type=float, default=0.0,
                        help="max predicted energy (eV/atom) to keep after the static screen")
    parser.add_argument("--fmax", type=float, default=0.05)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--fixed-cell", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    structures = load_structures(args.input)
    logger.info("loaded %d candidates from %s", len(structures), args.input)

    model = CHGNet.load(model_name=args.model_version, use_device=args.device, verbose=False)
    model.eval()
    relaxer = StructOptimizer(model=model, optimizer_class="FIRE", use_device=args.device)

    with torch.no_grad():
        survivors, energies = static_screen(model, structures, args.batch_size, args.e_cut)

    relaxed = relax_survivors(
        relaxer, survivors, fmax=args.fmax, steps=args.steps, relax_cell=not args.fixed_cell
    )

    args.out.parent.mkdir(parents=True, exist_ok=True)
    dumpfn(
        {
            "model": f"CHGNet-{args.model_version}",
            "device": args.device,
            "e_cut": args.e_cut,
            "static_energy_hist": np.histogram(energies, bins=50)[0].tolist(),
            "relaxed": relaxed,
        },
        args.out,
    )
    logger.info("wrote %s (peak GPU mem %.2f GB)", args.out, gpu_mem_gb())


if __name__ == "__main__":
    main()
