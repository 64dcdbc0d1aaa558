#!/usr/bin/env python
"""
Encode a JSONL corpus with a HF bi-encoder (CLS or mean pooling) and build a FAISS IVF-PQ index.

    python scripts/encode_and_build_ivfpq.py \
        --encoder BAAI/bge-base-en-v1.5 --corpus collections/msmarco/corpus.jsonl \
        --output indexes/msmarco-bge-ivfpq --nlist 65536 --m 96 --fp16

Training the coarse quantizer is the slow part; it runs on the GPUs when faiss was built
with GPU support and falls back to the CPU implementation otherwise.
"""
import argparse
import json
import logging
import os
import time

import faiss
import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm
from transformers import AutoModel, AutoTokenizer

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
logger = logging.getLogger("build_ivfpq")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--encoder", required=True)
    p.add_argument("--corpus", required=True, help="jsonl with id / title / text fields")
    p.add_argument("--output", required=True)
    p.add_argument("--pooling", choices=["cls", "mean"], default="cls")
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=256, help="encode batch size per GPU")
    p.add_argument("--fp16", action="store_true", help="encode with CUDA autocast (fp16)")
    p.add_argument("--nlist", type=int, default=65536)
    p.add_argument("--m", type=int, default=96, help="number of PQ sub-quantizers")
    p.add_argument("--nbits", type=int, default=8)
    p.add_argument("--train-size", type=int, default=1_000_000)
    p.add_argument("--gpu", action="store_true", help="train the coarse quantizer on the GPU(s) if available")
    p.add_argument("--threads", type=int, default=32)
    return p.parse_args()


def read_corpus(path):
    ids, texts = [], []
    with open(path) as f:
        for line in f:
            doc = json.loads(line)
            ids.append(doc["id"])
            title = doc.get("title", "")
            texts.append(f"{title} {doc['text']}".strip())
    return ids, texts


def pool(last_hidden, attention_mask, how):
    if how == "cls":
        return last_hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(last_hidden.dtype)
    return (last_hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


@torch.no_grad()
def encode(args, texts):
    tokenizer = AutoTokenizer.from_pretrained(args.encoder)
    model = AutoModel.from_pretrained(args.encoder).cuda().eval()

    out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
    for start in tqdm(range(0, len(texts), args.batch_size), desc="encode"):
        batch = texts[start : start + args.batch_size]
        inputs = tokenizer(batch, padding=True, truncation=True, max_length=args.max_length, return_tensors="pt")
        inputs = {k: v.cuda(non_blocking=True) for k, v in inputs.items()}
        with torch.cuda.amp.autocast(enabled=args.fp16):
            hidden = model(**inputs).last_hidden_state
        emb = pool(hidden, inputs["attention_mask"], args.pooling)
        emb = F.normalize(emb.float(), dim=-1)
        out[start : start + len(batch)] = emb.cpu().numpy()

    del model
    torch.cuda.empty_cache()
    return out


def train_ivfpq(args, xb):
    d = xb.shape[1]
    quantizer = faiss.IndexFlatIP(d)
    index = faiss.IndexIVFPQ(quantizer, d, args.nlist, args.m, args.nbits, faiss.METRIC_INNER_PRODUCT)

    rs = np.random.RandomState(123)
    sample = xb[rs.choice(len(xb), min(args.train_size, len(xb)), replace=False)]

    ngpu = faiss.get_num_gpus() if args.gpu else 0
    t0 = time.time()
    if ngpu > 0:
        logger.info("training IVF%d,PQ%d on %d GPU(s)", args.nlist, args.m, ngpu)
        # train the coarse quantizer with GPU k-means, then plug it into the CPU index
        clus = faiss.Clustering(d, args.nlist)
        clus.max_points_per_centroid = 256
        clus.niter = 20
        gpu_index = faiss.index_cpu_to_all_gpus(faiss.IndexFlatIP(d), ngpu=ngpu)
        clus.train(sample, gpu_index)
        centroids = faiss.vector_float_to_array(clus.centroids).reshape(args.nlist, d)
        quantizer.add(centroids)
        index.quantizer_trains_alone = 0
        index.train(sample)
    else:
        logger.info("no GPU faiss available - training IVF%d,PQ%d on CPU", args.nlist, args.m)
        index.train(sample)
    logger.info("training done in %.1fs", time.time() - t0)
    return index


def main():
    args = parse_args()
    faiss.omp_set_num_threads(args.threads)
    os.makedirs(args.output, exist_ok=True)

    ids, texts = read_corpus(args.corpus)
    logger.info("read %d passages", len(ids))

    emb_path = os.path.join(args.output, "embeddings.npy")
    if os.path.exists(emb_path):
        xb = np.load(emb_path)
    else:
        xb = encode(args, texts)
        np.save(emb_path, xb)

    index = train_ivfpq(args, xb)
    for start in range(0, len(xb), 1_000_000):
        index.add(xb[start : start + 1_000_000])
    logger.info("index has %d vectors", index.ntotal)

    faiss.write_index(index, os.path.join(args.output, "index.faiss"))
    with open(os.path.join(args.output, "docids.txt"), "w") as f:
        f.write("\n".join(ids))


if __name__ == "__main__":
    main()
