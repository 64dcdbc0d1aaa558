#!/usr/bin/env python
"""Embed a chunked corpus and build an IVF-PQ FAISS index for the RAG server.

Input is the JSONL written by ``indexing/chunk_corpus.py`` (one {"id", "text", "source"} per line).
For a few million chunks the GPU k-means makes training ~20x faster than on CPU.

    python indexing/build_index.py --chunks data/chunks.jsonl --out data/ivfpq --nlist 4096 --m 64
"""
import argparse
import json
import logging
import math
import os
import time

import faiss
import numpy as np
import torch
from sentence_transformers import SentenceTransformer
from tqdm import tqdm

log = logging.getLogger("build_index")


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", required=True)
    ap.add_argument("--out", required=True, help="output prefix (writes .index, .ids.npy, .meta.jsonl)")
    ap.add_argument("--model", default="intfloat/e5-base-v2")
    ap.add_argument("--prefix", default="passage: ", help="e5 wants 'passage: ' on documents")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--max-seq-length", type=int, default=384)
    ap.add_argument("--nlist", type=int, default=0, help="IVF lists (0 = 4*sqrt(N))")
    ap.add_argument("--m", type=int, default=64, help="PQ sub-quantizers")
    ap.add_argument("--nbits", type=int, default=8)
    ap.add_argument("--train-size", type=int, default=500_000)
    ap.add_argument("--cpu", action="store_true", help="never use the GPU for FAISS")
    ap.add_argument("--fp16-embed", action="store_true", help="encode with the embedder in fp16")
    return ap.parse_args()


def load_chunks(path):
    ids, texts, meta = [], [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            ids.append(int(r["id"]))
            texts.append(r["text"])
            meta.append({"id": r["id"], "source": r.get("source")})
    return np.asarray(ids, dtype=np.int64), texts, meta


def embed_corpus(texts, args, device):
    model = SentenceTransformer(args.model, device=device)
    model.max_seq_length = args.max_seq_length
    if args.fp16_embed:
        model.half()
    out = np.zeros((len(texts), model.get_sentence_embedding_dimension()), dtype=np.float32)
    bs = args.batch_size
    for start in tqdm(range(0, len(texts), bs), desc="embedding", unit_scale=bs):
        batch = [args.prefix + t for t in texts[start:start + bs]]
        emb = model.encode(batch, batch_size=bs, convert_to_numpy=True, normalize_embeddings=True)
        out[start:start + len(batch)] = emb
    del model
    if device == "cuda":
        torch.cuda.empty_cache()
    return out


def build_ivfpq(xb, args):
    n, d = xb.shape
    nlist = args.nlist or int(4 * math.sqrt(n))
    nlist = max(16, min(nlist, n // 39))
    log.info("IVF%d,PQ%dx%d on %d vectors of dim %d", nlist, args.m, args.nbits, n, d)
    quantizer = faiss.IndexFlatIP(d)
    index = faiss.IndexIVFPQ(quantizer, d, nlist, args.m, args.nbits, faiss.METRIC_INNER_PRODUCT)

    ngpu = 0 if args.cpu else faiss.get_num_gpus()
    rng = np.random.default_rng(0)
    train = xb[rng.choice(n, size=min(args.train_size, n), replace=False)]

    t0 = time.time()
    if ngpu > 0:
        log.info("training on %d GPU(s)", ngpu)
        res = [faiss.StandardGpuResources() for _ in range(ngpu)]
        co = faiss.GpuMultipleClonerOptions()
        co.useFloat16 = True
        co.shard = False
        vres, vdev = faiss.GpuResourcesVector(), faiss.Int32Vector()
        for i, r in enumerate(res):
            vdev.push_back(i)
            vres.push_back(r)
        gpu_index = faiss.index_cpu_to_gpu_multiple(vres, vdev, index, co)
        gpu_index.train(train)
        index = faiss.index_gpu_to_cpu(gpu_index)
    else:
        log.info("training on CPU (%d threads)", faiss.omp_get_max_threads())
        index.train(train)
    log.info("trained in %.1fs", time.time() - t0)

    t0 = time.time()
    ids = np.arange(n, dtype=np.int64)
    for start in range(0, n, 100_000):
        index.add_with_ids(xb[start:start + 100_000], ids[start:start + 100_000])
    log.info("added %d vectors in %.1fs", index.ntotal, time.time() - t0)
    index.nprobe = min(64, nlist)
    return index


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    args = parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        log.warning("no CUDA device: embedding on CPU will be slow")

    ids, texts, meta = load_chunks(args.chunks)
    log.info("%d chunks loaded from %s", len(texts), args.chunks)
    t0 = time.time()
    xb = embed_corpus(texts, args, device)
    log.info("embedded in %.1fs (%.0f chunks/s)", time.time() - t0, len(texts) / (time.time() - t0))

    index = build_ivfpq(xb, args)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    faiss.write_index(index, args.out + ".index")
    np.save(args.out + ".ids.npy", ids)
    with open(args.out + ".meta.jsonl", "w", encoding="utf-8") as f:
        for m in meta:
            f.write(json.dumps(m) + "\n")
    log.info("wrote %s.{index,ids.npy,meta.jsonl}", args.out)


if __name__ == "__main__":
    main()
