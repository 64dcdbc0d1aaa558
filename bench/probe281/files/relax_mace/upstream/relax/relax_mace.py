#!/usr/bin/env python
"""Relax generated / substituted candidate structures with a universal MLIP.

GNoME-style filtering stage: every candidate coming out of the generator
(MatterGen / DiffCSP samples, or SAPS substitutions) is relaxed with MACE-MP-0,
its energy above the convex hull is estimated against a reference phase
diagram, and only the candidates below ``--ehull-max`` are passed on to DFT.

One worker process is started per GPU; each worker owns a single device and
relaxes a contiguous shard of the input file.

    python relax/relax_mace.py --input candidates.extxyz --out relaxed.extxyz \
        --gpu-ids 0 1 2 3 --fmax 0.02 --steps 500
"""
from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import os
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import torch
from ase import Atoms
from ase.constraints import FixSymmetry
from ase.filters import FrechetCellFilter
from ase.io import read, write
from ase.optimize import BFGS, FIRE
from pymatgen.analysis.phase_diagram import PDEntry, PhaseDiagram
from pymatgen.io.ase import AseAtomsAdaptor

logger = logging.getLogger("relax_mace")

OPTIMIZERS = {"FIRE": FIRE, "BFGS": BFGS}


def get_calculator(model: str, device: str, dtype: str, enable_cueq: bool = False):
    # imported lazily so that `--help` works without mace installed
    from mace.calculators import mace_mp

    return mace_mp(
        model=model,
        device=device,
        default_dtype=dtype,
        dispersion=False,
        enable_cueq=enable_cueq,
    )


def relax_one(
    atoms: Atoms,
    calc,
    fmax: float,
    steps: int,
    optimizer: str = "FIRE",
    fix_symmetry: bool = True,
    relax_cell: bool = True,
) -> tuple[Atoms, dict]:
    atoms = atoms.copy()
    atoms.calc = calc
    if fix_symmetry:
        atoms.set_constraint(FixSymmetry(atoms, symprec=1e-3))

    target = FrechetCellFilter(atoms) if relax_cell else atoms
    opt = OPTIMIZERS[optimizer](target, logfile=None)
    t0 = time.perf_counter()
    converged = opt.run(fmax=fmax, steps=steps)
    elapsed = time.perf_counter() - t0

    e = atoms.get_potential_energy()
    info = {
        "converged": bool(converged),
        "n_steps": int(opt.nsteps),
        "energy": float(e),
        "energy_per_atom": float(e / len(atoms)),
        "max_force": float(np.abs(atoms.get_forces()).max()),
        "volume": float(atoms.get_volume()),
        "wall_s": elapsed,
    }
    atoms.calc = None
    atoms.set_constraint()
    return atoms, info


def e_above_hull(atoms: Atoms, info: dict, phase_diagram: PhaseDiagram | None) -> float | None:
    if phase_diagram is None:
        return None
    comp = AseAtomsAdaptor.get_structure(atoms).composition
    entry = PDEntry(comp, info["energy"])
    try:
        return float(phase_diagram.get_e_above_hull(entry, allow_negative=True))
    except ValueError:
        # element not in reference phase diagram
        return None


def load_phase_diagram(path: str | None) -> PhaseDiagram | None:
    if path is None:
        return None
    with open(path) as f:
        raw = json.load(f)
    entries = [PDEntry.from_dict(d) for d in raw["entries"]]
    return PhaseDiagram(entries)


def shard(n_items: int, n_shards: int) -> list[tuple[int, int]]:
    bounds = np.linspace(0, n_items, n_shards + 1).astype(int)
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def worker(rank: int, start: int, stop: int, args: argparse.Namespace, queue: mp.Queue) -> None:
    # pin this worker to one device before torch initialises the runtime
    os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu_ids[rank])
    logging.basicConfig(
        level=logging.INFO, format=f"[worker {rank}] %(asctime)s %(message)s", stream=sys.stderr
    )
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.set_num_threads(args.threads_per_worker)

    calc = get_calculator(args.model, device=device, dtype=args.dtype, enable_cueq=args.cueq)
    pd = load_phase_diagram(args.phase_diagram)

    frames = read(args.input, index=f"{start}:{stop}")
    logger.info("relaxing %d structures on %s", len(frames), device)
    out_frames, records = [], []
    for i, atoms in enumerate(frames):
        idx = start + i
        try:
            relaxed, info = relax_one(
                atoms,
                calc,
                fmax=args.fmax,
                steps=args.steps,
                optimizer=args.optimizer,
                fix_symmetry=not args.no_symmetry,
            )
        except Exception:  # noqa: BLE001 - keep the shard going
            logger.warning("candidate %d failed:\n%s", idx, traceback.format_exc())
            records.append({"index": idx, "status": "failed"})
            continue
        info["e_above_hull"] = e_above_hull(relaxed, info, pd)
        info["index"] = idx
        info["status"] = "ok"
        relaxed.info.update({k: v for k, v in info.items() if v is not None})
        out_frames.append(relaxed)
        records.append(info)

        if (i + 1) % args.empty_cache_every == 0:
            # MACE keeps large intermediate buffers alive for big cells
            torch.cuda.empty_cache()
            logger.info("%d/%d done", i + 1, len(frames))

    shard_path = Path(args.out).with_suffix(f".shard{rank}.extxyz")
    write(shard_path, out_frames, format="extxyz")
    queue.put((rank, str(shard_path), records))


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input", required=True, help="extxyz with candidate structures")
    p.add_argument("--out", required=True, help="output extxyz with relaxed structures")
    p.add_argument("--model", default="medium", help="MACE-MP model size or path to a .model file")
    p.add_argument("--gpu-ids", type=int, nargs="+", default=list(range(torch.cuda.device_count())),
                   help="GPUs to use, one worker per GPU (default: all visible)")
    p.add_argument("--dtype", default="float64", choices=["float32", "float64"],
                   help="float64 is recommended for geometry optimisation")
    p.add_argument("--cueq", action="store_true",
                   help="use NVIDIA cuEquivariance kernels (needs cuequivariance-ops-torch-cu12)")
    p.add_argument("--fmax", type=float, default=0.02)
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--optimizer", default="FIRE", choices=sorted(OPTIMIZERS))
    p.add_argument("--no-symmetry", action="store_true")
    p.add_argument("--phase-diagram", default=None, help="json with reference PDEntries")
    p.add_argument("--ehull-max", type=float, default=0.1, help="eV/atom, keep candidates below")
    p.add_argument("--threads-per-worker", type=int, default=4)
    p.add_argument("--empty-cache-every", type=int, default=50)
    return p.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    warnings.filterwarnings("ignore", category=UserWarning, module="pymatgen")

    n_total = len(read(args.input, index=":"))
    n_workers = len(args.gpu_ids)
    if n_workers == 0:
        raise SystemExit("no GPUs visible; pass --gpu-ids explicitly")
    logger.info("%d candidates, %d workers (%s)", n_total, n_workers, args.gpu_ids)

    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = []
    for rank, (start, stop) in enumerate(shard(n_total, n_workers)):
        p = ctx.Process(target=worker, args=(rank, start, stop, args, queue))
        p.start()
        procs.append(p)

    results = {}
    for _ in procs:
        rank, path, records = queue.get()
        results[rank] = (path, records)
    for p in procs:
        p.join()

    # merge shards in rank order and apply the hull filter
    kept, all_records = [], []
    for rank in sorted(results):
        path, records = results[rank]
        all_records.extend(records)
        for atoms in read(path, index=":"):
            ehull = atoms.info.get("e_above_hull")
            if ehull is None or ehull <= args.ehull_max:
                kept.append(atoms)
        os.remove(path)

    write(args.out, kept, format="extxyz")
    summary = {
        "n_input": n_total,
        "n_relaxed": sum(r.get("status") == "ok" for r in all_records),
        "n_failed": sum(r.get("status") == "failed" for r in all_records),
        "n_kept": len(kept),
        "ehull_max": args.ehull_max,
    }
    Path(args.out).with_suffix(".summary.json").write_text(json.dumps(summary, indent=2))
    with open(Path(args.out).with_suffix(".records.jsonl"), "w") as f:
        for r in all_records:
            f.write(json.dumps(r) + "\n")
    logger.info("done: %s", summary)


if __name__ == "__main__":
    main()
