"""High-throughput relaxation of candidate structures with a MatGL universal potential.

One worker process per GPU. Each worker pins itself to its GPU *before* importing
torch/matgl, so DGL and MatGL allocate everything on that device.

    python scripts/screen_relax.py candidates/ --out relaxed/ --model M3GNet-MP-2021.2.8-PES
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import time
import traceback
from pathlib import Path


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("input_dir", type=Path)
    p.add_argument("--out", type=Path, default=Path("relaxed"))
    p.add_argument("--model", default="M3GNet-MP-2021.2.8-PES")
    p.add_argument("--fmax", type=float, default=0.05)
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--fix-cell", action="store_true")
    p.add_argument("--ngpus", type=int, default=None, help="default: all visible GPUs")
    p.add_argument("--pattern", default="*.cif")
    return p.parse_args()


def worker(rank, n_workers, files, out_dir, model_name, fmax, steps, relax_cell, queue):
    # restrict this process to a single GPU; inside the worker it is always cuda:0
    os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)
    os.environ.setdefault("DGLBACKEND", "pytorch")

    import torch
    import matgl
    from matgl.ext.ase import Relaxer
    from pymatgen.core import Structure

    torch.set_default_device("cuda")
    # TF32 changes forces at the 1e-3 eV/A level, keep full fp32 for relaxations
    torch.backends.cuda.matmul.allow_tf32 = False

    pot = matgl.load_model(model_name)
    relaxer = Relaxer(potential=pot, relax_cell=relax_cell)

    for i, path in enumerate(files):
        if i % n_workers != rank:
            continue
        path = Path(path)
        record = {"file": path.name, "worker": rank}
        t0 = time.perf_counter()
        try:
            structure = Structure.from_file(path)
            record["natoms"] = len(structure)
            result = relaxer.relax(structure, fmax=fmax, steps=steps)
            final = result["final_structure"]
            traj = result["trajectory"]
            record.update(
                energy=float(traj.energies[-1]),
                energy_per_atom=float(traj.energies[-1]) / len(final),
                nsteps=len(traj.energies),
                volume=final.volume,
            )
            final.to(filename=str(out_dir / f"{path.stem}_relaxed.cif"))
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            record["error"] = "out of GPU memory"
        except Exception:  # noqa: BLE001
            record["error"] = traceback.format_exc(limit=2)
        record["seconds"] = time.perf_counter() - t0
        queue.put(record)
    queue.put(None)


def main():
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    files = sorted(str(p) for p in args.input_dir.glob(args.pattern))
    if not files:
        raise SystemExit(f"no files matching {args.pattern} in {args.input_dir}")

    import torch  # only needed for the device count

    n_gpus = args.ngpus or torch.cuda.device_count()
    if n_gpus == 0:
        raise SystemExit("no CUDA device found")
    print(f"{len(files)} structures, {n_gpus} GPU workers")

    # CUDA cannot be re-initialised in a forked child: use spawn
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [
        ctx.Process(
            target=worker,
            args=(rank, n_gpus, files, args.out, args.model, args.fmax, args.steps,
                  not args.fix_cell, queue),
        )
        for rank in range(n_gpus)
    ]
    for p in procs:
        p.start()

    results, finished = [], 0
    with open(args.out / "summary.jsonl", "w") as fh:
        while finished < n_gpus:
            rec = queue.get()
            if rec is None:
                finished += 1
                continue
            results.append(rec)
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            status = rec.get("error", "ok").splitlines()[0]
            print(f"[gpu{rec['worker']}] {rec['file']}: {status} ({rec['seconds']:.1f} s)")

    for p in procs:
        p.join()
    n_ok = sum("error" not in r for r in results)
    print(f"done: {n_ok}/{len(results)} relaxed successfully")


if __name__ == "__main__":
    main()
