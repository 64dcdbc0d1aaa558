#!/usr/bin/env python
"""
Fold many antibodies with IgFold, one worker process per GPU.

    python scripts/batch_fold.py --fasta_dir data/sabdab_fv --out_dir preds --gpus 0,1,2,3

Each worker pins itself to one card through CUDA_VISIBLE_DEVICES before torch is imported,
so inside the worker the card is always cuda:0.
"""
import argparse
import multiprocessing as mp
import os
import sys
import time
from glob import glob


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fasta_dir", required=True)
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--gpus", default="0", help="comma-separated GPU ids, one worker per id")
    parser.add_argument("--num_models", type=int, default=4)
    parser.add_argument("--refine", action="store_true")
    parser.add_argument("--use_openmm", action="store_true")
    parser.add_argument("--renum", action="store_true")
    parser.add_argument("--overwrite", action="store_true")
    return parser.parse_args()


def read_fasta(path):
    seqs, name = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.startswith(">"):
                name = line[1:].split()[0].split(":")[-1]
                seqs[name] = ""
            else:
                seqs[name] += line
    return seqs


def worker(gpu_id, fasta_files, args, results):
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_id)

    import torch
    from igfold import IgFoldRunner

    torch.backends.cuda.matmul.allow_tf32 = True
    runner = IgFoldRunner(num_models=args.num_models)

    n_done, t_model = 0, 0.0
    for fasta in fasta_files:
        name = os.path.splitext(os.path.basename(fasta))[0]
        pdb_out = os.path.join(args.out_dir, f"{name}.pdb")
        if os.path.exists(pdb_out) and not args.overwrite:
            continue

        sequences = read_fasta(fasta)
        torch.cuda.synchronize()
        t0 = time.time()
        try:
            out = runner.fold(
                pdb_out,
                sequences=sequences,
                do_refine=args.refine,
                use_openmm=args.use_openmm,
                do_renum=args.renum,
            )
        except RuntimeError as e:
            if "out of memory" in str(e):
                print(f"[gpu {gpu_id}] OOM on {name} ({sum(len(s) for s in sequences.values())} res), skipping")
                torch.cuda.empty_cache()
                continue
            raise
        torch.cuda.synchronize()  # make the timing honest
        t_model += time.time() - t0
        n_done += 1

        prmsd = out.prmsd.mean().item()
        results.put((name, prmsd))

    mem = torch.cuda.max_memory_allocated() / 1024 ** 3
    print(f"[gpu {gpu_id}] folded {n_done} structures, {t_model / max(n_done, 1):.2f}s each, peak {mem:.2f} GiB")


def main():
    args = parse_args()
    os.makedirs(args.out_dir, exist_ok=True)

    fasta_files = sorted(glob(os.path.join(args.fasta_dir, "*.fasta")))
    if not fasta_files:
        print(f"no .fasta files in {args.fasta_dir}")
        return 1

    gpu_ids = [g.strip() for g in args.gpus.split(",") if g.strip()]
    shards = [fasta_files[i::len(gpu_ids)] for i in range(len(gpu_ids))]

    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs = []
    for gpu_id, shard in zip(gpu_ids, shards):
        p = ctx.Process(target=worker, args=(gpu_id, shard, args, results))
        p.start()
        procs.append(p)

    for p in procs:
        p.join()

    rows = []
    while not results.empty():
        rows.append(results.get())
    rows.sort()
    with open(os.path.join(args.out_dir, "prmsd.tsv"), "w") as f:
        f.write("name\tmean_prmsd\n")
        for name, prmsd in rows:
            f.write(f"{name}\t{prmsd:.3f}\n")

    print(f"wrote {len(rows)} predictions to {args.out_dir}")
    return 0 if all(p.exitcode == 0 for p in procs) else 1


if __name__ == "__main__":
    sys.exit(main())
