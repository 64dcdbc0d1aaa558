"""Batch inference for TAPEX / OmniTab table-QA checkpoints.

Reads WikiTableQuestions (or WikiSQL-weak) examples from a jsonl file where each line has
{"id", "question", "table": {"header": [...], "rows": [[...], ...]}, "answers": [...]}
and writes predictions plus denotation accuracy.

    python tapex_inference.py --model microsoft/tapex-large-finetuned-wtq \
        --input data/wtq/dev.jsonl --output preds/tapex_wtq_dev.jsonl --batch_size 16 --fp16
"""
import argparse
import json
import logging
import os
import re
from typing import Dict, List

import pandas as pd
import torch
from tqdm import tqdm
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, BartForConditionalGeneration, TapexTokenizer

logger = logging.getLogger("tapex_inference")

# TF32 matmuls are fine for generation and ~1.3x faster on A100
torch.backends.cuda.matmul.allow_tf32 = True


def load_model(name_or_path: str, fp16: bool):
    if "tapex" in name_or_path.lower():
        tokenizer = TapexTokenizer.from_pretrained(name_or_path)
        model = BartForConditionalGeneration.from_pretrained(name_or_path)
    else:
        # OmniTab and other BART-based table models ship a plain tokenizer config
        tokenizer = AutoTokenizer.from_pretrained(name_or_path)
        model = AutoModelForSeq2SeqLM.from_pretrained(name_or_path)
    if fp16:
        model = model.half()
    model = model.to("cuda")
    model.eval()
    return tokenizer, model


def to_dataframe(table: Dict) -> pd.DataFrame:
    header = [h if h else f"col{i}" for i, h in enumerate(table["header"])]
    rows = [[str(c) for c in row] for row in table["rows"]]
    return pd.DataFrame(rows, columns=header)


def normalize_answer(s: str) -> str:
    s = s.lower().strip()
    s = re.sub(r"[\s]+", " ", s)
    s = re.sub(r"^(the|a|an) ", "", s)
    s = s.rstrip(".")
    try:
        f = float(s.replace(",", ""))
        if f.is_integer():
            return str(int(f))
        return str(round(f, 4))
    except ValueError:
        return s


def denotation_match(prediction: str, answers: List[str]) -> bool:
    pred = sorted(normalize_answer(p) for p in prediction.split(", "))
    gold = sorted(normalize_answer(a) for a in answers)
    return pred == gold


@torch.inference_mode()
def predict_batch(tokenizer, model, tables, questions, num_beams, max_length):
    if isinstance(tokenizer, TapexTokenizer):
        encoding = tokenizer(
            table=tables, query=questions, padding=True, truncation=True, max_length=1024, return_tensors="pt"
        )
    else:
        linearized = [
            q + " " + " ".join(["col : " + " | ".join(t.columns)]
                               + [f"row {i + 1} : " + " | ".join(r) for i, r in enumerate(t.values.tolist())])
            for q, t in zip(questions, tables)
        ]
        encoding = tokenizer(linearized, padding=True, truncation=True, max_length=1024, return_tensors="pt")
    encoding = {k: v.to("cuda", non_blocking=True) for k, v in encoding.items()}
    outputs = model.generate(**encoding, num_beams=num_beams, max_length=max_length, early_stopping=True)
    return tokenizer.batch_decode(outputs, skip_special_tokens=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="microsoft/tapex-large-finetuned-wtq")
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--num_beams", type=int, default=5)
    parser.add_argument("--max_length", type=int, default=128)
    parser.add_argument("--fp16", action="store_true", help="run the model in half precision on the GPU")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    tokenizer, model = load_model(args.model, args.fp16)
    logger.info("loaded %s on %s (%s)", args.model, torch.cuda.get_device_name(0), model.dtype)

    with open(args.input) as f:
        examples = [json.loads(line) for line in f]

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()

    predictions, correct = [], 0
    for i in tqdm(range(0, len(examples), args.batch_size)):
        chunk = examples[i : i + args.batch_size]
        tables = [to_dataframe(ex["table"]) for ex in chunk]
        questions = [ex["question"] for ex in chunk]
        try:
            outs = predict_batch(tokenizer, model, tables, questions, args.num_beams, args.max_length)
        except torch.cuda.OutOfMemoryError:
            # very wide tables: retry one by one
            torch.cuda.empty_cache()
            outs = []
            for t, q in zip(tables, questions):
                outs += predict_batch(tokenizer, model, [t], [q], args.num_beams, args.max_length)
        for ex, out in zip(chunk, outs):
            ok = denotation_match(out, ex.get("answers", []))
            correct += int(ok)
            predictions.append({"id": ex["id"], "prediction": out, "answers": ex.get("answers", []), "correct": ok})

    end.record()
    torch.cuda.synchronize()
    elapsed = start.elapsed_time(end) / 1000.0

    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        for p in predictions:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")

    acc = correct / max(len(examples), 1)
    logger.info("denotation accuracy: %.4f (%d/%d)", acc, correct, len(examples))
    logger.info(
        "wall time %.1fs, %.2f ex/s, peak mem %.2f GB",
        elapsed,
        len(examples) / max(elapsed, 1e-6),
        torch.cuda.max_memory_allocated() / 1024**3,
    )


if __name__ == "__main__":
    main()
