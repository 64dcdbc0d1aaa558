"""Tokenise and pack multi-turn SFT conversations into fixed-length training shards (CPU only).

Runs on the data-prep nodes, which have no accelerators. The shards are later memory-mapped by the
GPU training job, so everything here stays on CPU and uses numpy / torch CPU tensors.

    python tools/preprocess_sft_data.py --tokenizer Qwen/Qwen1.5-7B --input data/*.jsonl \
        --output shards/ --seq-len 4096 --workers 32
"""
import argparse
import glob
import json
import multiprocessing as mp
import os
import random
from functools import partial

import numpy as np
import torch
from tqdm import tqdm
from transformers import AutoTokenizer

os.environ["TOKENIZERS_PARALLELISM"] = "false"
IGNORE_INDEX = -100
SYSTEM = "You are a helpful assistant."


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--input", nargs="+", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--seq-len", type=int, default=4096)
    p.add_argument("--workers", type=int, default=max(1, mp.cpu_count() // 2))
    p.add_argument("--shard-size", type=int, default=50000, help="sequences per shard")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--device", default="cpu",
                   help="kept for CLI compatibility with the old cuda tokeniser path; only 'cpu' is supported")
    return p.parse_args()


_tok = None


def _init_worker(name):
    global _tok
    torch.set_num_threads(1)
    _tok = AutoTokenizer.from_pretrained(name, trust_remote_code=True)


def encode_conversation(line):
    """Return (input_ids, labels) with loss only on assistant turns, or None for malformed rows."""
    try:
        item = json.loads(line)
    except json.JSONDecodeError:
        return None
    messages = item.get("messages") or item.get("conversations")
    if not messages:
        return None
    input_ids, labels = [], []
    sys_ids = _tok.apply_chat_template([{"role": "system", "content": SYSTEM}], tokenize=True)
    input_ids += sys_ids
    labels += [IGNORE_INDEX] * len(sys_ids)
    for m in messages:
        role = m.get("role") or {"human": "user", "gpt": "assistant"}.get(m.get("from"), "user")
        content = m.get("content") or m.get("value") or ""
        ids = _tok.apply_chat_template([{"role": role, "content": content}], tokenize=True)
        input_ids += ids
        labels += ids if role == "assistant" else [IGNORE_INDEX] * len(ids)
    return input_ids, labels


def pack(samples, seq_len, pad_id):
    """Greedy first-fit packing; also records per-sequence boundaries (cu_seqlens) for varlen attention."""
    bins = []
    for ids, lab in sorted(samples, key=lambda s: -len(s[0])):
        ids, lab = ids[:seq_len], lab[:seq_len]
        for b in bins:
            if len(b["ids"]) + len(ids) <= seq_len:
                b["ids"] += ids
                b["labels"] += lab
                b["cu"].append(len(b["ids"]))
                break
        else:
            bins.append({"ids": list(ids), "labels": list(lab), "cu": [0, len(ids)]})
    for b in bins:
        pad = seq_len - len(b["ids"])
        b["ids"] += [pad_id] * pad
        b["labels"] += [IGNORE_INDEX] * pad
    return bins


def write_shard(bins, path):
    ids = torch.tensor(np.array([b["ids"] for b in bins], dtype=np.int32))
    labels = torch.tensor(np.array([b["labels"] for b in bins], dtype=np.int32))
    cu = [torch.tensor(b["cu"], dtype=torch.int32) for b in bins]
    torch.save({"input_ids": ids, "labels": labels, "cu_seqlens": cu}, path)


def main():
    args = parse_args()
    if args.device != "cpu":
        raise SystemExit("the GPU tokenisation path was removed; run on CPU")
    random.seed(args.seed)
    os.makedirs(args.output, exist_ok=True)
    files = sorted(f for pattern in args.input for f in glob.glob(pattern))
    lines = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            lines.extend(fh.readlines())
    random.shuffle(lines)
    print(f"{len(lines)} conversations from {len(files)} files")

    tok = AutoTokenizer.from_pretrained(args.tokenizer, trust_remote_code=True)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id

    with mp.Pool(args.workers, initializer=_init_worker, initargs=(args.tokenizer,)) as pool:
        encoded = [r for r in tqdm(pool.imap(encode_conversation, lines, chunksize=256), total=len(lines)) if r]

    n_tokens = sum(len(ids) for ids, _ in encoded)
    print(f"{len(encoded)} valid samples, {n_tokens / 1e6:.1f}M tokens")
    bins = pack(encoded, args.seq_len, pad_id)
    eff = n_tokens / (len(bins) * args.seq_len)
    print(f"{len(bins)} packed sequences, packing efficiency {eff:.1%}")
    for i in range(0, len(bins), args.shard_size):
        write_shard(bins[i:i + args.shard_size], os.path.join(args.output, f"shard_{i // args.shard_size:05d}.pt"))
    with open(os.path.join(args.output, "meta.json"), "w") as f:
        json.dump({"seq_len": args.seq_len, "n_sequences": len(bins), "n_tokens": n_tokens,
                   "tokenizer": args.tokenizer}, f, indent=2)


if __name__ == "__main__":
    main()
