#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Batch translation with NLLB-200 through Hugging Face transformers.

Reads one sentence per line, writes one translation per line, in the same order.
Sentences are sorted by length before batching to cut padding, which matters a
lot for the 3.3B model on a single 40GB GPU.

Example:
    python translate_hf.py --model facebook/nllb-200-distilled-1.3B \
        --src-lang eng_Latn --tgt-lang zul_Latn \
        --input flores200/devtest/eng_Latn.devtest --output hyp.zul_Latn --fp16
"""
import argparse
import logging
import math
import sys
import time
from typing import Iterable, Iterator, List, Sequence, Tuple

import torch
from tqdm import tqdm
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, pipeline

logger = logging.getLogger("nllb.translate")

FLORES_CODES_WITH_SCRIPT_VARIANTS = {"zho_Hans", "zho_Hant", "arb_Arab", "arb_Latn", "kas_Arab", "kas_Deva"}


def get_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="facebook/nllb-200-distilled-600M")
    p.add_argument("--src-lang", required=True, help="FLORES-200 code, e.g. eng_Latn")
    p.add_argument("--tgt-lang", required=True, help="FLORES-200 code, e.g. fra_Latn")
    p.add_argument("--input", default="-", help="input file (default: stdin)")
    p.add_argument("--output", default="-", help="output file (default: stdout)")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--max-input-tokens", type=int, default=256)
    p.add_argument("--num-beams", type=int, default=4)
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument("--fp16", action="store_true", help="load weights in float16 and run under autocast")
    p.add_argument("--bf16", action="store_true", help="load weights in bfloat16 (A100/H100)")
    p.add_argument("--use-pipeline", action="store_true",
                   help="use transformers.pipeline('translation') instead of the manual loop (slower, simpler)")
    p.add_argument("--verbose", action="store_true")
    return p.parse_args()


def read_lines(path: str) -> List[str]:
    fh = sys.stdin if path == "-" else open(path, encoding="utf-8")
    try:
        return [line.rstrip("\n") for line in fh]
    finally:
        if fh is not sys.stdin:
            fh.close()


def write_lines(path: str, lines: Iterable[str]) -> None:
    fh = sys.stdout if path == "-" else open(path, "w", encoding="utf-8")
    try:
        for line in lines:
            fh.write(line + "\n")
    finally:
        if fh is not sys.stdout:
            fh.close()


def batched_by_length(sentences: Sequence[str], batch_size: int) -> Iterator[Tuple[List[int], List[str]]]:
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]), reverse=True)
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        yield idx, [sentences[i] for i in idx]


def pick_dtype(args: argparse.Namespace) -> torch.dtype:
    if args.bf16:
        if not torch.cuda.is_bf16_supported():
            logger.warning("bf16 requested but this GPU has no bf16 support, using fp16")
            return torch.float16
        return torch.bfloat16
    if args.fp16:
        return torch.float16
    return torch.float32


def load_model(name: str, src_lang: str, dtype: torch.dtype, device: str):
    tokenizer = AutoTokenizer.from_pretrained(name, src_lang=src_lang)
    model = AutoModelForSeq2SeqLM.from_pretrained(name, torch_dtype=dtype, low_cpu_mem_usage=True)
    model = model.to(device).eval()
    n_params = sum(p.numel() for p in model.parameters()) / 1e6
    logger.info("Loaded %s (%.0fM params, %s) on %s", name, n_params, dtype, device)
    return tokenizer, model


@torch.inference_mode()
def translate_loop(args: argparse.Namespace, sentences: List[str], device: str) -> List[str]:
    dtype = pick_dtype(args)
    tokenizer, model = load_model(args.model, args.src_lang, dtype, device)
    forced_bos = tokenizer.convert_tokens_to_ids(args.tgt_lang)
    outputs: List[str] = [""] * len(sentences)

    n_batches = math.ceil(len(sentences) / args.batch_size)
    t0 = time.time()
    for idx, batch in tqdm(batched_by_length(sentences, args.batch_size), total=n_batches, disable=not args.verbose):
        inputs = tokenizer(
            batch,
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=args.max_input_tokens,
        ).to(device)
        with torch.cuda.amp.autocast(enabled=args.fp16):
            generated = model.generate(
                **inputs,
                forced_bos_token_id=forced_bos,
                num_beams=args.num_beams,
                max_new_tokens=args.max_new_tokens,
            )
        decoded = tokenizer.batch_decode(generated, skip_special_tokens=True)
        for i, hyp in zip(idx, decoded):
            outputs[i] = hyp
    elapsed = time.time() - t0
    logger.info("Translated %d sentences in %.1fs (%.1f sent/s)", len(sentences), elapsed, len(sentences) / max(elapsed, 1e-6))
    return outputs


def translate_pipeline(args: argparse.Namespace, sentences: List[str]) -> List[str]:
    translator = pipeline(
        "translation",
        model=args.model,
        src_lang=args.src_lang,
        tgt_lang=args.tgt_lang,
        max_length=args.max_new_tokens,
        device=0 if torch.cuda.is_available() else -1,
        torch_dtype=torch.float16 if args.fp16 else None,
    )
    results = translator(sentences, batch_size=args.batch_size, num_beams=args.num_beams)
    return [r["translation_text"] for r in results]


def main() -> None:
    args = get_args()
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.tgt_lang in FLORES_CODES_WITH_SCRIPT_VARIANTS:
        logger.info("Note: %s has script variants in FLORES-200; make sure the reference matches", args.tgt_lang)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu" and (args.fp16 or args.bf16):
        logger.warning("Half precision on CPU is slow and may not be supported; falling back to fp32")
        args.fp16 = args.bf16 = False

    sentences = read_lines(args.input)
    if args.use_pipeline:
        hyps = translate_pipeline(args, sentences)
    else:
        hyps = translate_loop(args, sentences, device)
    write_lines(args.output, hyps)


if __name__ == "__main__":
    main()
