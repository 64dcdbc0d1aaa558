"""Fine-tune a sentence-embedding model with MultipleNegativesRankingLoss on (anchor, positive) pairs,
then evaluate retrieval recall@k on a held-out corpus with a FAISS GPU index.

    python training/train_embedding_mnrl.py --model BAAI/bge-base-en-v1.5 --pairs data/pairs.jsonl
"""
import argparse
import json
import logging
import math
import os
import random
from datetime import datetime

import faiss
import numpy as np
import torch
from sentence_transformers import InputExample, LoggingHandler, SentenceTransformer, losses
from sentence_transformers.evaluation import InformationRetrievalEvaluator
from torch.utils.data import DataLoader

logging.basicConfig(format="%(asctime)s - %(message)s", datefmt="%Y-%m-%d %H:%M:%S",
                    level=logging.INFO, handlers=[LoggingHandler()])
logger = logging.getLogger(__name__)

device = "cuda" if torch.cuda.is_available() else "cpu"


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="BAAI/bge-base-en-v1.5")
    ap.add_argument("--pairs", required=True, help="jsonl with {'query':..., 'positive':...}")
    ap.add_argument("--corpus", default=None, help="optional jsonl corpus for retrieval eval")
    ap.add_argument("--output", default=None)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch_size", type=int, default=128)
    ap.add_argument("--max_seq_length", type=int, default=256)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--warmup_ratio", type=float, default=0.1)
    ap.add_argument("--eval_fraction", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=13)
    return ap.parse_args()


def load_pairs(path):
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [(r["query"], r["positive"]) for r in rows]


def build_ir_evaluator(dev_pairs, name):
    queries, corpus, relevant = {}, {}, {}
    for i, (q, p) in enumerate(dev_pairs):
        qid, did = f"q{i}", f"d{i}"
        queries[qid] = q
        corpus[did] = p
        relevant[qid] = {did}
    return InformationRetrievalEvaluator(queries, corpus, relevant, name=name, show_progress_bar=False,
                                         batch_size=256)


@torch.no_grad()
def faiss_recall(model, dev_pairs, k_values=(1, 5, 10)):
    queries = [q for q, _ in dev_pairs]
    docs = [d for _, d in dev_pairs]
    q_emb = model.encode(queries, batch_size=256, convert_to_tensor=True, device="cuda",
                         normalize_embeddings=True)
    d_emb = model.encode(docs, batch_size=256, convert_to_tensor=True, device=device, normalize_embeddings=True)
    q_np = q_emb.float().cpu().numpy()
    d_np = d_emb.float().cpu().numpy()

    dim = d_np.shape[1]
    index = faiss.IndexFlatIP(dim)
    res = faiss.StandardGpuResources()
    index = faiss.index_cpu_to_gpu(res, 0, index)
    index.add(d_np)
    _, ids = index.search(q_np, max(k_values))
    recalls = {}
    for k in k_values:
        hits = sum(1 for i, row in enumerate(ids) if i in row[:k])
        recalls[f"recall@{k}"] = hits / len(dev_pairs)
    return recalls


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    output = args.output or f"output/{os.path.basename(args.model)}-mnrl-{datetime.now():%Y%m%d-%H%M}"
    pairs = load_pairs(args.pairs)
    random.shuffle(pairs)
    n_dev = max(200, int(len(pairs) * args.eval_fraction))
    dev_pairs, train_pairs = pairs[:n_dev], pairs[n_dev:]
    logger.info("train pairs: %d, dev pairs: %d", len(train_pairs), len(dev_pairs))

    model = SentenceTransformer(args.model, device=device)
    model.max_seq_length = args.max_seq_length

    train_examples = [InputExample(texts=[q, p]) for q, p in train_pairs]
    train_loader = DataLoader(train_examples, shuffle=True, batch_size=args.batch_size, drop_last=True)
    train_loss = losses.MultipleNegativesRankingLoss(model, scale=20.0)
    evaluator = build_ir_evaluator(dev_pairs, name="dev")

    warmup_steps = math.ceil(len(train_loader) * args.epochs * args.warmup_ratio)
    logger.info("baseline: %s", faiss_recall(model, dev_pairs))

    model.fit(
        train_objectives=[(train_loader, train_loss)],
        evaluator=evaluator,
        epochs=args.epochs,
        evaluation_steps=max(1, len(train_loader) // 4),
        warmup_steps=warmup_steps,
        optimizer_params={"lr": args.lr},
        output_path=output,
        use_amp=True,
        checkpoint_path=os.path.join(output, "checkpoints"),
        checkpoint_save_steps=1000,
        show_progress_bar=True,
    )

    torch.cuda.empty_cache()
    model = SentenceTransformer(output, device=device)
    recalls = faiss_recall(model, dev_pairs)
    logger.info("after fine-tuning: %s", recalls)
    with open(os.path.join(output, "faiss_recall.json"), "w") as f:
        json.dump(recalls, f, indent=2)


if __name__ == "__main__":
    main()
