"""GPU preprocessing of the raw Criteo TSV dumps into model-ready parquet shards (RAPIDS cuDF).

Steps, per day file:
  1. read the 40-column TSV (label, I1..I13, C1..C26) with cudf.read_csv
  2. dense: fill NaN with 0, clip negatives, log1p
  3. categorical: hex string -> int64 via hashing, then frequency-threshold the vocabulary
     (ids seen < --min_count times map to the OOV id 0) using counts accumulated over the train days
  4. write parquet with the remapped ids (int32) and float32 dense features

On a single A100 this processes one ~45 GB day in ~3 minutes versus ~1.5 h with pandas.

    python -m ctr_bench.preprocess.criteo_gpu_preprocess --raw /data/criteo_raw --out /data/criteo_parquet \
        --train_days 0-22 --val_day 23 --min_count 4
"""
import argparse
import glob
import os
import time

import cudf
import cupy as cp
import numpy as np
import rmm

DENSE = [f"I{i}" for i in range(1, 14)]
SPARSE = [f"C{i}" for i in range(1, 27)]
COLUMNS = ["label"] + DENSE + SPARSE


def parse_days(spec):
    if "-" in spec:
        lo, hi = spec.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(x) for x in spec.split(",")]


def init_memory_pool(pool_gb):
    # a pool allocator avoids cudaMalloc/cudaFree churn while reading many large chunks
    rmm.reinitialize(pool_allocator=True, initial_pool_size=pool_gb << 30)
    cp.cuda.set_allocator(rmm.rmm_cupy_allocator)


def read_day(path, chunk_bytes):
    dtypes = {"label": "int8", **{c: "float32" for c in DENSE}, **{c: "str" for c in SPARSE}}
    return cudf.read_csv(path, sep="\t", names=COLUMNS, dtype=dtypes, byte_range=None,
                         chunksize=None if chunk_bytes <= 0 else chunk_bytes)


def transform_dense(df):
    for c in DENSE:
        col = df[c].fillna(0).clip(lower=0)
        df[c] = cp.log1p(col.values).astype(cp.float32)
    return df


def hash_categoricals(df):
    for c in SPARSE:
        # hex strings -> int64; empty -> -1
        df[c] = df[c].fillna("").str.hex_to_int().fillna(-1).astype("int64")
    return df


def accumulate_counts(counts, df):
    for c in SPARSE:
        vc = df[c].value_counts()
        counts[c] = vc if counts.get(c) is None else counts[c].add(vc, fill_value=0)
    return counts


def build_vocab(counts, min_count):
    vocabs = {}
    for c, vc in counts.items():
        keep = vc[vc >= min_count].index.sort_values()
        vocabs[c] = cudf.Series(cp.arange(1, len(keep) + 1, dtype=cp.int32), index=keep)
    return vocabs


def apply_vocab(df, vocabs):
    for c in SPARSE:
        df[c] = df[c].map(vocabs[c]).fillna(0).astype("int32")
    return df


def save_vocab(vocabs, out_dir):
    os.makedirs(os.path.join(out_dir, "vocab"), exist_ok=True)
    for c, v in vocabs.items():
        keys = cp.asnumpy(v.index.values)
        np.save(os.path.join(out_dir, "vocab", f"{c}.npy"), keys)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True, help="directory with day_0 ... day_23")
    ap.add_argument("--out", required=True)
    ap.add_argument("--train_days", default="0-22")
    ap.add_argument("--val_day", type=int, default=23)
    ap.add_argument("--min_count", type=int, default=4)
    ap.add_argument("--pool_gb", type=int, default=60)
    ap.add_argument("--chunk_bytes", type=int, default=0)
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args()

    cp.cuda.Device(args.device).use()
    init_memory_pool(args.pool_gb)
    os.makedirs(args.out, exist_ok=True)

    train_days = parse_days(args.train_days)
    day_files = {d: os.path.join(args.raw, f"day_{d}") for d in train_days + [args.val_day]}
    missing = [p for p in day_files.values() if not glob.glob(p)]
    if missing:
        raise FileNotFoundError(f"missing raw files: {missing}")

    # pass 1: vocabulary counts over the training days only
    counts = {}
    t0 = time.time()
    for d in train_days:
        df = hash_categoricals(read_day(day_files[d], args.chunk_bytes))
        counts = accumulate_counts(counts, df)
        del df
        print(f"[count] day {d} done ({time.time() - t0:.0f}s)")
    vocabs = build_vocab(counts, args.min_count)
    save_vocab(vocabs, args.out)
    print("vocab sizes:", {c: len(v) + 1 for c, v in vocabs.items()})

    # pass 2: transform and write
    for d in train_days + [args.val_day]:
        split = "val" if d == args.val_day else "train"
        df = read_day(day_files[d], args.chunk_bytes)
        df = transform_dense(hash_categoricals(df))
        df = apply_vocab(df, vocabs)
        out_dir = os.path.join(args.out, split)
        os.makedirs(out_dir, exist_ok=True)
        df.to_parquet(os.path.join(out_dir, f"day_{d}.parquet"), compression="snappy", row_group_size=1 << 20)
        free, total = cp.cuda.runtime.memGetInfo()
        print(f"[write] day {d} -> {split}: {len(df):,} rows, device mem free {free / 2 ** 30:.1f}/"
              f"{total / 2 ** 30:.1f} GiB ({time.time() - t0:.0f}s)")
        del df


if __name__ == "__main__":
    main()
