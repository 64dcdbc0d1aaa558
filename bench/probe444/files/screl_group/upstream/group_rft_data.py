# RFT step 2: keep the correct reasoning paths and de-duplicate them by their list of equations,
# so that "distinct reasoning paths" (not just distinct strings) are kept for fine-tuning.
import argparse
import glob
import json
import random
import re
from collections import defaultdict

EQ_RE = re.compile(r"<<([^>]*)>>")


def get_equations(gen):
    """GSM8K style calculator annotations: 'She has 16-3=<<16-3=13>>13 eggs'."""
    eqs = EQ_RE.findall(gen)
    if eqs:
        return tuple(e.replace(" ", "") for e in eqs)
    # models trained without calculator annotations: fall back to "a op b = c" spans
    spans = re.findall(r"([\d\.\,]+\s*[\+\-\*/x]\s*[\d\.\,]+\s*=\s*[\d\.\,]+)", gen)
    return tuple(s.replace(" ", "").replace(",", "") for s in spans)


def clean(gen):
    gen = gen.strip()
    # drop anything after the final answer line
    if "####" in gen:
        head, tail = gen.split("####", 1)
        tail = tail.strip().split("\n")[0]
        gen = head.rstrip() + "\n#### " + tail.strip()
    return gen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", type=str, required=True, help="glob of single_inference outputs")
    parser.add_argument("--out", type=str, required=True)
    parser.add_argument("--max_paths", type=int, default=100, help="max distinct paths per question")
    parser.add_argument("--include_gold", action="store_true", help="also keep the original GSM8K solution")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    random.seed(args.seed)

    by_q = defaultdict(dict)
    gold = {}
    n_read, n_correct = 0, 0
    for path in sorted(glob.glob(args.inputs)):
        with open(path) as f:
            for line in f:
                ex = json.loads(line)
                n_read += 1
                gold[ex["question"]] = ex["answer"]
                if not ex["correct"]:
                    continue
                n_correct += 1
                gen = clean(ex["gen"])
                key = get_equations(gen)
                # keep the first path seen for every equation list
                if key not in by_q[ex["question"]]:
                    by_q[ex["question"]][key] = gen

    out = []
    n_paths = []
    for q, paths in by_q.items():
        items = list(paths.values())
        random.shuffle(items)
        items = items[: args.max_paths]
        n_paths.append(len(items))
        for g in items:
            out.append({"query": q, "response": g})
    if args.include_gold:
        for q, a in gold.items():
            out.append({"query": q, "response": a})

    random.shuffle(out)
    with open(args.out, "w") as f:
        for ex in out:
            f.write(json.dumps(ex) + "\n")

    avg = sum(n_paths) / max(len(n_paths), 1)
    print(f"read {n_read} samples, {n_correct} correct, {len(by_q)} questions covered")
    print(f"distinct reasoning paths per question: {avg:.2f}; wrote {len(out)} training examples to {args.out}")


if __name__ == "__main__":
    main()
