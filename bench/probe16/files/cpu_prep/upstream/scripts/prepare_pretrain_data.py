#!/usr/bin/env python
"""Tokenize a JSONL corpus into fixed-size uint16/uint32 shards for pretraining.

This step is CPU-only on purpose: run it on the login node or a CPU partition, not on a GPU node.
The resulting `.bin` shards are memory-mapped by the training dataloader (see `data/memmap.py`),
which is what later moves batches to the CUDA device.

    python scripts/prepare_pretrain_data.py --input data/raw/*.jsonl --out data/tokens --workers 32
"""
import argparse
import glob
import hashlib
import json
import multiprocessing as mp
import os
import sys
from typing import Iterable, List

import numpy as np

try:
    from tokenizers import Tokenizer
except ImportError:  # pragma: no cover
    Tokenizer = None

EOS_ID_DEFAULT = 2
SHARD_TOKENS = 100_000_000


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", nargs="+", required=True, help="JSONL files (globs allowed)")
    ap.add_argument("--out", required=True, help="output directory for token shards")
    ap.add_argument("--tokenizer", default="assets/tokenizer.json")
    ap.add_argument("--text-key", default="text")
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--device", default="cpu", choices=["cpu"],
                    help="tokenization always runs on CPU; the GPU is only used at training time")
    ap.add_argument("--dedup", action="store_true", help="drop exact duplicate documents (md5)")
    return ap.parse_args()


def iter_docs(paths: List[str], key: str) -> Iterable[str]:
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)[key]
                except (json.JSONDecodeError, KeyError):
                    continue


_tok = None


def _init_worker(tokenizer_path):
    global _tok
    _tok = Tokenizer.from_file(tokenizer_path)


def _encode(text: str) -> np.ndarray:
    ids = _tok.encode(text).ids
    ids.append(EOS_ID_DEFAULT)
    return np.asarray(ids, dtype=np.uint32)


class ShardWriter:
    def __init__(self, out_dir: str, vocab_size: int):
        os.makedirs(out_dir, exist_ok=True)
        self.out_dir = out_dir
        self.dtype = np.uint16 if vocab_size < 2**16 else np.uint32
        self.buf = np.empty(SHARD_TOKENS, dtype=self.dtype)
        self.pos = 0
        self.shard = 0
        self.total = 0

    def add(self, ids: np.ndarray):
        while len(ids):
            take = min(len(ids), SHARD_TOKENS - self.pos)
            self.buf[self.pos : self.pos + take] = ids[:take]
            self.pos += take
            ids = ids[take:]
            if self.pos == SHARD_TOKENS:
                self.flush()

    def flush(self):
        if self.pos == 0:
            return
        path = os.path.join(self.out_dir, f"shard_{self.shard:05d}.bin")
        self.buf[: self.pos].tofile(path)
        self.total += self.pos
        print(f"wrote {path} ({self.pos:,} tokens)", file=sys.stderr)
        self.shard += 1
        self.pos = 0


def main():
    args = parse_args()
    if Tokenizer is None:
        sys.exit("pip install tokenizers")
    paths = sorted(p for pattern in args.input for p in glob.glob(pattern))
    if not paths:
        sys.exit(f"no input files match {args.input}")
    vocab_size = Tokenizer.from_file(args.tokenizer).get_vocab_size()
    writer = ShardWriter(args.out, vocab_size)

    seen = set()
    docs = iter_docs(paths, args.text_key)
    if args.dedup:
        def _unique(it):
            for d in it:
                h = hashlib.md5(d.encode("utf-8")).digest()
                if h not in seen:
                    seen.add(h)
                    yield d
        docs = _unique(docs)

    with mp.Pool(args.workers, initializer=_init_worker, initargs=(args.tokenizer,)) as pool:
        for ids in pool.imap(_encode, docs, chunksize=256):
            writer.add(ids)
    writer.flush()

    meta = {"vocab_size": vocab_size, "dtype": np.dtype(writer.dtype).name, "tokens": writer.total,
            "shards": writer.shard, "sources": paths, "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
    print(f"done: {writer.total:,} tokens in {writer.shard} shards", file=sys.stderr)


if __name__ == "__main__":
    main()
