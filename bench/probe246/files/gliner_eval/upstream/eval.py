"""Zero-shot evaluation of a GLiNER checkpoint on the OOD NER benchmark (CrossNER + MIT).

    python eval.py --model urchade/gliner_multi-v2.1 --data NER_datasets --log_dir logs/eval

Also reports throughput (sentences / second) so different encoders can be compared on the
same card.
"""
import argparse
import glob
import json
import os
import time

import torch
from tqdm import tqdm

from gliner import GLiNER
from gliner.evaluation import Evaluator

ZERO_SHOT_BENCHMARKS = [
    "mit-movie",
    "mit-restaurant",
    "CrossNER_AI",
    "CrossNER_literature",
    "CrossNER_music",
    "CrossNER_politics",
    "CrossNER_science",
]


def create_parser():
    parser = argparse.ArgumentParser(description="Span-based NER")
    parser.add_argument("--model", type=str, default="logs/model_12000", help="Path to model folder")
    parser.add_argument("--log_dir", type=str, default="logs", help="Path to model folder")
    parser.add_argument("--data", type=str, default="data/ie_data/NER/", help="Path to the NER data folder")
    parser.add_argument("--device", type=str, default="cuda:0")
    parser.add_argument("--batch_size", type=int, default=12)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--flat_ner", action="store_true")
    parser.add_argument("--half", action="store_true", help="Evaluate in fp16")
    return parser


def open_content(path):
    paths = glob.glob(os.path.join(path, "*.json"))
    train, dev, test, labels = None, None, None, None
    for p in paths:
        if "train" in p:
            with open(p, "r") as f:
                train = json.load(f)
        elif "dev" in p:
            with open(p, "r") as f:
                dev = json.load(f)
        elif "test" in p:
            with open(p, "r") as f:
                test = json.load(f)
        elif "labels" in p:
            with open(p, "r") as f:
                labels = json.load(f)
    return train, dev, test, labels


def process(data):
    words = data["sentence"].split()
    entities = []
    start_token_idx_to_text_idx = []
    end_token_idx_to_text_idx = []
    text_cursor = 0
    for w in words:
        start = data["sentence"].find(w, text_cursor)
        start_token_idx_to_text_idx.append(start)
        end_token_idx_to_text_idx.append(start + len(w))
        text_cursor = start + len(w)
    for entity in data["entities"]:
        start_char, end_char = entity["pos"]
        start_word = start_token_idx_to_text_idx.index(start_char) if start_char in start_token_idx_to_text_idx else None
        end_word = end_token_idx_to_text_idx.index(end_char) if end_char in end_token_idx_to_text_idx else None
        if start_word is not None and end_word is not None:
            entities.append((start_word, end_word, entity["type"].lower()))
    return {"tokenized_text": words, "ner": entities}


def create_dataset(path):
    train, dev, test, labels = open_content(path)
    train_dataset = [process(d) for d in train] if train is not None else []
    dev_dataset = [process(d) for d in dev] if dev is not None else []
    test_dataset = [process(d) for d in test] if test is not None else []
    labels = [label.lower() for label in labels]
    return train_dataset, dev_dataset, test_dataset, labels


@torch.no_grad()
def get_for_one_path(path, model, args):
    _, _, test_dataset, entity_types = create_dataset(path)
    data_name = os.path.basename(path.rstrip("/"))

    flat_ner = args.flat_ner or not any(k in data_name for k in ["ACE", "GENIA", "Corpus"])

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    results, f1 = model.evaluate(
        test_dataset,
        flat_ner=flat_ner,
        threshold=args.threshold,
        batch_size=args.batch_size,
        entity_types=entity_types,
    )
    torch.cuda.synchronize()  # wait for the last batch before stopping the clock
    elapsed = time.perf_counter() - t0
    throughput = len(test_dataset) / max(elapsed, 1e-6)
    return data_name, results, f1, throughput


def get_for_all_path(model, log_dir, data_paths, args):
    all_paths = sorted(glob.glob(f"{data_paths}/*"))
    device = next(model.parameters()).device

    os.makedirs(log_dir, exist_ok=True)
    all_results = {}
    zero_shot = {}
    for p in tqdm(all_paths):
        if "sample_" in p:
            continue
        data_name, results, f1, throughput = get_for_one_path(p, model, args)
        all_results[data_name] = f1
        if data_name in ZERO_SHOT_BENCHMARKS:
            zero_shot[data_name] = f1
        with open(os.path.join(log_dir, "results.txt"), "a") as f:
            f.write(f"{data_name}\n{results}\nthroughput: {throughput:.1f} sent/s on {device}\n\n")
        torch.cuda.empty_cache()

    avg_all = sum(all_results.values()) / max(len(all_results), 1)
    avg_zs = sum(zero_shot.values()) / max(len(zero_shot), 1)

    table = ["| Dataset | F1 |", "|---|---|"]
    for k, v in sorted(zero_shot.items()):
        table.append(f"| {k} | {v:.1%} |")
    table.append(f"| Average | {avg_zs:.1%} |")
    with open(os.path.join(log_dir, "tables.txt"), "a") as f:
        f.write("\n".join(table) + "\n")
        f.write(f"Average over all datasets: {avg_all:.1%}\n")
    return avg_zs


if __name__ == "__main__":
    parser = create_parser()
    args = parser.parse_args()

    model = GLiNER.from_pretrained(args.model, load_tokenizer=True)
    model = model.to(args.device)
    if args.half:
        model = model.half()

    print(f"evaluating {args.model} on {torch.cuda.get_device_name(torch.device(args.device))}")
    avg = get_for_all_path(model, args.log_dir, args.data, args)
    print(f"zero-shot average F1: {avg:.4f}")
