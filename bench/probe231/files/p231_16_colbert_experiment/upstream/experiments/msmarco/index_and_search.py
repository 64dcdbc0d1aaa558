"""
End-to-end PLAID run on MS MARCO v1 passages: index the 8.8M passage collection with a
ColBERTv2 checkpoint (2-bit residuals), then retrieve for the dev queries and evaluate MRR@10.

Usage:
    python experiments/msmarco/index_and_search.py --nranks 4 --nbits 2 \
        --checkpoint /checkpoints/colbertv2.0 --root /expts

The script expects one GPU per rank; on an 8xA100 box we usually run with --nranks 8.
"""
import os
import argparse

import torch

from colbert import Indexer, Searcher
from colbert.infra import Run, RunConfig, ColBERTConfig
from colbert.data import Queries
from colbert.evaluation.metrics import compute_mrr


def parse_args():
    parser = argparse.ArgumentParser(description="Index + search MS MARCO with PLAID")
    parser.add_argument("--checkpoint", default="colbert-ir/colbertv2.0")
    parser.add_argument("--collection", default="/data/msmarco/collection.tsv")
    parser.add_argument("--queries", default="/data/msmarco/queries.dev.small.tsv")
    parser.add_argument("--qrels", default="/data/msmarco/qrels.dev.small.tsv")
    parser.add_argument("--root", default="/expts")
    parser.add_argument("--experiment", default="msmarco")
    parser.add_argument("--index_name", default="msmarco.nbits=2")
    parser.add_argument("--nranks", type=int, default=4)
    parser.add_argument("--nbits", type=int, default=2)
    parser.add_argument("--doc_maxlen", type=int, default=180)
    parser.add_argument("--kmeans_niters", type=int, default=4)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--gpus", type=str, default=None,
                        help="comma separated list of GPU ids (defaults to all visible)")
    parser.add_argument("--skip_indexing", action="store_true")
    parser.add_argument("--overwrite", action="store_true")
    return parser.parse_args()


def load_qrels(path):
    qrels = {}
    with open(path) as f:
        for line in f:
            qid, _, pid, rel = line.strip().split()
            if int(rel) > 0:
                qrels.setdefault(int(qid), set()).add(int(pid))
    return qrels


def main():
    args = parse_args()

    if args.gpus is not None:
        # Must be set before the Launcher spawns the per-rank workers.
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus

    print(f"#> torch {torch.__version__}, {args.nranks} ranks, checkpoint = {args.checkpoint}")

    with Run().context(RunConfig(nranks=args.nranks, root=args.root, experiment=args.experiment)):
        if not args.skip_indexing:
            config = ColBERTConfig(
                nbits=args.nbits,
                doc_maxlen=args.doc_maxlen,
                kmeans_niters=args.kmeans_niters,
            )
            indexer = Indexer(checkpoint=args.checkpoint, config=config)
            indexer.index(name=args.index_name, collection=args.collection,
                          overwrite=True if args.overwrite else "reuse")
            print(f"#> Index written to {indexer.get_index()}")

    with Run().context(RunConfig(nranks=1, root=args.root, experiment=args.experiment)):
        searcher = Searcher(index=args.index_name, collection=args.collection)
        queries = Queries(args.queries)
        ranking = searcher.search_all(queries, k=args.k)
        ranking_path = ranking.save(f"{args.index_name}.k={args.k}.ranking.tsv")

    qrels = load_qrels(args.qrels)
    run = {}
    for qid, pid, rank, score in ranking.flat_ranking:
        run.setdefault(qid, []).append(pid)

    mrr = compute_mrr(run, qrels, k=10)
    print(f"#> MRR@10 = {mrr:.4f}  ({len(run)} queries)  ranking saved to {ranking_path}")


if __name__ == "__main__":
    main()
