"""
Math-Shepherd automatic process annotation, stage 2: turn rollouts into step labels.

Hard estimation (HE): a step is good ("+") if ANY rollout from its prefix reaches the gold answer.
Soft estimation (SE): the label is the fraction of rollouts that reach the gold answer.

Output format follows the released math-shepherd dataset: the `input` field has every step
followed by the step tag "ки", and `label` has the same text with the tag replaced by "+" or "-".
"""
import argparse
import json
import re
from collections import defaultdict

from tqdm import tqdm

from eval.grader import math_equal
from eval.parser import extract_answer

STEP_TAG = "ки"
GOOD, BAD = "+", "-"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--rollouts", type=str, required=True, help="output of sample_completions.py")
    p.add_argument("--solutions", type=str, required=True, help="the generator solutions (same order)")
    p.add_argument("--output", type=str, required=True)
    p.add_argument("--mode", choices=["hard", "soft"], default="hard")
    p.add_argument("--soft_threshold", type=float, default=0.5,
                   help="only used to binarise SE labels for the +/- label string")
    p.add_argument("--dataset", choices=["gsm8k", "math"], default="gsm8k")
    return p.parse_args()


def normalise_answer(text, dataset):
    ans = extract_answer(text, dataset)
    if ans is None:
        return ""
    ans = ans.strip().rstrip(".")
    ans = re.sub(r"\\text\{\s*([^}]*)\}", r"\1", ans)
    return ans


def step_score(completions, gold, dataset):
    hits = 0
    for c in completions:
        pred = normalise_answer(c, dataset)
        if pred and math_equal(pred, gold):
            hits += 1
    return hits, len(completions)


def build_label_string(steps, labels):
    inp, lab = [], []
    for step, y in zip(steps, labels):
        inp.append(f"{step} {STEP_TAG}")
        lab.append(f"{step} {y}")
    return "\n".join(inp), "\n".join(lab)


def main():
    args = parse_args()

    with open(args.solutions) as f:
        solutions = [json.loads(line) for line in f]

    per_solution = defaultdict(dict)
    with open(args.rollouts) as f:
        for line in tqdm(f, desc="scoring rollouts"):
            item = json.loads(line)
            hits, n = step_score(item["completions"], item["gold"], args.dataset)
            per_solution[item["rid"]][item["step"]] = (hits, n)

    n_written, n_skipped = 0, 0
    pos, neg = 0, 0
    with open(args.output, "w") as fout:
        for rid, rec in enumerate(solutions):
            steps = [s.strip() for s in rec["solution"].split(STEP_TAG) if s.strip()]
            scores = per_solution.get(rid)
            if not scores or len(scores) != len(steps):
                n_skipped += 1
                continue
            soft = [scores[k][0] / max(scores[k][1], 1) for k in range(len(steps))]
            if args.mode == "hard":
                labels = [GOOD if scores[k][0] > 0 else BAD for k in range(len(steps))]
            else:
                labels = [GOOD if s >= args.soft_threshold else BAD for s in soft]
            # once a step is wrong every later step is wrong as well
            seen_bad = False
            for k, y in enumerate(labels):
                if seen_bad:
                    labels[k] = BAD
                elif y == BAD:
                    seen_bad = True
            pos += labels.count(GOOD)
            neg += labels.count(BAD)
            inp, lab = build_label_string(steps, labels)
            out = {
                "input": rec["question"] + " " + inp,
                "label": rec["question"] + " " + lab,
                "task": args.dataset.upper(),
                "soft_labels": soft,
            }
            fout.write(json.dumps(out, ensure_ascii=False) + "\n")
            n_written += 1

    total = max(pos + neg, 1)
    print(f"written={n_written} skipped={n_skipped} steps={total} positive={pos / total:.3f}")


if __name__ == "__main__":
    main()
