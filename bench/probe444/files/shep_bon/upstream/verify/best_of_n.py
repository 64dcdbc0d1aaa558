"""
Verification with a PRM: best-of-N reranking vs. self-consistency on GSM8K / MATH.

Strategies reported (Math-Shepherd Table 1 style):
  * self-consistency      majority vote over the N final answers
  * ORM-like / PRM-min    pick the solution whose *minimum* step score is highest
  * PRM-prod              ... whose product of step scores is highest
  * SC + PRM              weighted majority vote, each answer weighted by its PRM-min score
"""
import argparse
import json
import random
import time
from collections import defaultdict

import numpy as np
import torch

from eval.grader import math_equal
from eval.parser import extract_answer
from prm.score_steps import PRMScorer

STEP_TAG = "ки"


def aggregate(step_scores, how):
    if not step_scores:
        return 0.0
    if how == "min":
        return float(min(step_scores))
    if how == "prod":
        return float(np.prod(step_scores))
    if how == "last":
        return float(step_scores[-1])
    raise ValueError(how)


def majority(answers, weights=None):
    votes = defaultdict(float)
    for i, a in enumerate(answers):
        if a is None or a == "":
            continue
        votes[a] += 1.0 if weights is None else weights[i]
    if not votes:
        return None
    return max(votes.items(), key=lambda kv: kv[1])[0]


def evaluate_question(ex, n, rng, dataset):
    idx = list(range(len(ex["candidates"])))
    if n < len(idx):
        idx = rng.sample(idx, n)
    answers = [extract_answer(ex["candidates"][i], dataset) for i in idx]
    scores_min = [aggregate(ex["step_scores"][i], "min") for i in idx]
    scores_prod = [aggregate(ex["step_scores"][i], "prod") for i in idx]
    gold = ex["gold"]
    res = {}
    res["self_consistency"] = math_equal(majority(answers), gold)
    res["prm_min"] = math_equal(answers[int(np.argmax(scores_min))], gold)
    res["prm_prod"] = math_equal(answers[int(np.argmax(scores_prod))], gold)
    res["sc_prm"] = math_equal(majority(answers, scores_min), gold)
    return res


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--prm", type=str, default="peiyi9979/math-shepherd-mistral-7b-prm")
    p.add_argument("--input", type=str, required=True, help="generator samples: question, gold, candidates[]")
    p.add_argument("--dataset", choices=["gsm8k", "math"], default="gsm8k")
    p.add_argument("--ns", type=str, default="1,4,16,64,256")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--scored_cache", type=str, default=None)
    args = p.parse_args()
    rng = random.Random(0)

    with open(args.input) as f:
        data = [json.loads(line) for line in f]

    if args.scored_cache:
        with open(args.scored_cache) as f:
            data = [json.loads(line) for line in f]
    else:
        scorer = PRMScorer(args.prm)
        t_score = 0.0
        for ex in data:
            tagged = [c if STEP_TAG in c else c.replace("\n", f" {STEP_TAG}\n") + f" {STEP_TAG}" for c in ex["candidates"]]
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            ex["step_scores"] = scorer.score_batch([ex["question"]] * len(tagged), tagged, args.batch_size)
            torch.cuda.synchronize()  # wait for the scoring kernels before reading the clock
            t_score += time.perf_counter() - t0
        print(f"PRM scoring: {t_score:.1f}s for {sum(len(e['candidates']) for e in data)} solutions")

    for n in [int(x) for x in args.ns.split(",")]:
        agg = defaultdict(list)
        for _ in range(args.repeats):
            for ex in data:
                for k, v in evaluate_question(ex, n, rng, args.dataset).items():
                    agg[k].append(v)
        line = "  ".join(f"{k}={100 * np.mean(v):.1f}" for k, v in agg.items())
        print(f"N={n:<4d} {line}")


if __name__ == "__main__":
    main()
