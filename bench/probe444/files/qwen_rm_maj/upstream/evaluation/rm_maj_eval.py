"""
Best-of-N (RM@k) and self-consistency (maj@k) evaluation on sampled solutions.

Input: the *.jsonl written by math_eval.py with --n_sampling k --save_outputs, i.e. every
sample carries k candidate `code` strings and k extracted `pred`s.
The outcome reward model (Qwen2.5-Math-RM-72B style) scores each (question, solution) pair;
RM@k keeps the highest-scored candidate, maj@k takes the most frequent normalised answer.
"""
import argparse
import json
import os
import random
from collections import Counter, defaultdict

import numpy as np
import torch
from tqdm import tqdm
from transformers import AutoModel, AutoTokenizer

from grader import math_equal
from utils import load_jsonl, save_jsonl

SYSTEM_PROMPT = "Please reason step by step, and put your final answer within \\boxed{}."


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rm_name_or_path", type=str, default="Qwen/Qwen2.5-Math-RM-72B")
    parser.add_argument("--input_file", type=str, required=True)
    parser.add_argument("--output_file", type=str, default=None)
    parser.add_argument("--ks", type=str, default="1,2,4,8,16,32,64")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--max_length", type=int, default=4096)
    parser.add_argument("--num_bootstrap", type=int, default=10)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--flash_attn", action="store_true", help="use flash_attention_2 for the RM")
    return parser.parse_args()


def load_reward_model(args):
    tokenizer = AutoTokenizer.from_pretrained(args.rm_name_or_path, trust_remote_code=True)
    tokenizer.padding_side = "right"
    kwargs = dict(
        device_map="auto",
        torch_dtype=torch.bfloat16,
        trust_remote_code=True,
    )
    if args.flash_attn:
        kwargs["attn_implementation"] = "flash_attention_2"
    model = AutoModel.from_pretrained(args.rm_name_or_path, **kwargs).eval()
    return model, tokenizer


def build_chat(tokenizer, question, solution):
    chat = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": question},
        {"role": "assistant", "content": solution},
    ]
    return tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=False)


@torch.no_grad()
def score_samples(model, tokenizer, samples, batch_size, max_length):
    flat = []
    for si, sample in enumerate(samples):
        for ci, code in enumerate(sample["code"]):
            flat.append((si, ci, build_chat(tokenizer, sample["question"], code)))

    scores = defaultdict(dict)
    first_device = next(model.parameters()).device
    for start in tqdm(range(0, len(flat), batch_size), desc="RM scoring"):
        chunk = flat[start : start + batch_size]
        enc = tokenizer(
            [c[2] for c in chunk],
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=max_length,
        ).to(first_device)
        outputs = model(**enc)
        rewards = outputs[0].float().view(-1).tolist()
        for (si, ci, _), r in zip(chunk, rewards):
            scores[si][ci] = r
        del enc, outputs
        if start % (batch_size * 50) == 0:
            torch.cuda.empty_cache()
    for si, sample in enumerate(samples):
        sample["rm_scores"] = [scores[si][ci] for ci in range(len(sample["code"]))]
    return samples


def majority_vote(preds, gt):
    counter = Counter([p for p in preds if p != ""])
    if not counter:
        return False
    top = counter.most_common(1)[0][0]
    return math_equal(top, gt)


def rm_best(preds, scores, gt):
    best = int(np.argmax(scores))
    return math_equal(preds[best], gt)


def evaluate_at_k(samples, k, num_bootstrap, rng):
    maj, rm = [], []
    for sample in samples:
        n = len(sample["pred"])
        if n < k:
            continue
        for _ in range(num_bootstrap):
            idx = rng.sample(range(n), k)
            preds = [sample["pred"][i] for i in idx]
            scores = [sample["rm_scores"][i] for i in idx]
            maj.append(majority_vote(preds, sample["gt"]))
            rm.append(rm_best(preds, scores, sample["gt"]))
    if not maj:
        return None
    return {"maj@k": 100.0 * np.mean(maj), "rm@k": 100.0 * np.mean(rm)}


def main():
    args = parse_args()
    rng = random.Random(args.seed)
    samples = list(load_jsonl(args.input_file))
    print(f"loaded {len(samples)} questions from {args.input_file}")

    model, tokenizer = load_reward_model(args)
    print(f"RM loaded on {torch.cuda.device_count()} GPU(s)")
    samples = score_samples(model, tokenizer, samples, args.batch_size, args.max_length)

    report = {}
    for k in [int(x) for x in args.ks.split(",")]:
        res = evaluate_at_k(samples, k, args.num_bootstrap, rng)
        if res is None:
            continue
        report[k] = res
        print(f"k={k:<4d} maj@k={res['maj@k']:.1f}  rm@k={res['rm@k']:.1f}")

    output_file = args.output_file or args.input_file.replace(".jsonl", "_rm.jsonl")
    save_jsonl(samples, output_file)
    with open(output_file.replace(".jsonl", "_metrics.json"), "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
