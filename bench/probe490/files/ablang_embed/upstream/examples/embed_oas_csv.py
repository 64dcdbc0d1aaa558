#!/usr/bin/env python
"""Embed a CSV of OAS-style heavy/light chains with AbLang / AbLang2.

Example
-------
    python examples/embed_oas_csv.py --input oas_unpaired.csv --column sequence_alignment_aa \
        --model ablang2-paired --mode seqcoding --batch-size 256 --out embeddings.npy

Large files are processed in chunks so the GPU never holds more than one batch.
"""
import argparse
import logging
import os
import sys
import time

import numpy as np
import pandas as pd
import torch

import ablang2

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("embed_oas")

VALID_AA = set("MRHKDESTNQCGPAVIFYWL*")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input", required=True, help="CSV/TSV with one chain (or a heavy|light pair) per row")
    p.add_argument("--column", default="sequence_alignment_aa")
    p.add_argument("--light-column", default=None, help="if given, sequences are embedded as heavy|light pairs")
    p.add_argument("--model", default="ablang2-paired",
                   choices=["ablang1-heavy", "ablang1-light", "ablang2-paired", "tcrlang-paired"])
    p.add_argument("--mode", default="seqcoding", choices=["seqcoding", "rescoding", "pseudo_log_likelihood"])
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--chunk-rows", type=int, default=100_000)
    p.add_argument("--out", required=True)
    p.add_argument("--cpu", action="store_true", help="force CPU even when a GPU is present")
    return p.parse_args()


def clean(seq):
    if not isinstance(seq, str):
        return None
    seq = seq.strip().upper()
    if not seq or any(c not in VALID_AA for c in seq):
        return None
    return seq


def load_sequences(args):
    sep = "\t" if args.input.endswith((".tsv", ".tsv.gz")) else ","
    df = pd.read_csv(args.input, sep=sep, low_memory=False)
    heavy = df[args.column].map(clean)
    if args.light_column:
        light = df[args.light_column].map(clean)
        keep = heavy.notna() & light.notna()
        seqs = [f"{h}|{l}" for h, l in zip(heavy[keep], light[keep])]
    else:
        keep = heavy.notna()
        if args.model == "ablang2-paired":
            # unpaired input to the paired model: heavy chain followed by an empty light chain
            seqs = [f"{h}|" for h in heavy[keep]]
        else:
            seqs = list(heavy[keep])
    log.info("kept %d / %d rows after filtering", len(seqs), len(df))
    return seqs


def pick_device(args):
    if args.cpu or not torch.cuda.is_available():
        return "cpu"
    torch.backends.cudnn.benchmark = True
    log.info("using GPU %s (%d visible)", torch.cuda.get_device_name(0), torch.cuda.device_count())
    return "cuda"


def main():
    args = parse_args()
    device = pick_device(args)

    model = ablang2.pretrained(model_to_use=args.model, random_init=False, ncpu=os.cpu_count() or 1, device=device)
    model.freeze()

    seqs = load_sequences(args)
    if not seqs:
        log.error("no valid sequences in %s", args.input)
        return 1

    outputs = []
    t0 = time.time()
    for start in range(0, len(seqs), args.chunk_rows):
        chunk = seqs[start:start + args.chunk_rows]
        with torch.no_grad():
            emb = model(chunk, mode=args.mode, batch_size=args.batch_size)
        if args.mode == "rescoding":
            outputs.extend(emb)
        else:
            outputs.append(np.asarray(emb))
        if device == "cuda":
            peak = torch.cuda.max_memory_allocated() / 2 ** 30
            log.info("rows %d-%d done, peak GPU memory %.2f GiB", start, start + len(chunk), peak)
            torch.cuda.reset_peak_memory_stats()
        else:
            log.info("rows %d-%d done", start, start + len(chunk))

    elapsed = time.time() - t0
    log.info("embedded %d sequences in %.1fs (%.0f seq/s)", len(seqs), elapsed, len(seqs) / max(elapsed, 1e-6))

    if args.mode == "rescoding":
        np.save(args.out, np.array(outputs, dtype=object), allow_pickle=True)
    else:
        np.save(args.out, np.concatenate(outputs))
    log.info("wrote %s", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
