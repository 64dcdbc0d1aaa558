#!/usr/bin/env python
# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
"""Transcribe audio with MMS-1B-all (1162 languages) via transformers.

Each language has a small adapter (~2M params) on top of the shared 1B
wav2vec2 encoder; switching language only swaps the adapter and the
tokenizer vocabulary, so we group inputs by language.

    python examples/mms/asr/infer/mms_infer_hf.py \
        --audio a.wav b.flac --lang fra --batch-size 8
    python examples/mms/asr/infer/mms_infer_hf.py --tsv manifest.tsv --out hyps.jsonl
"""
import argparse
import json
import logging
import os
import sys
from collections import defaultdict
from typing import Dict, Iterator, List, Tuple

import numpy as np
import soundfile as sf
import torch
import torchaudio
from transformers import AutoProcessor, Wav2Vec2ForCTC

logger = logging.getLogger("mms_infer")

MODEL_ID = "facebook/mms-1b-all"
TARGET_SR = 16_000
# Samples longer than this are chunked; the 1B encoder goes OOM on a 16GB
# card at ~60s with batch 8.
MAX_SECONDS = 30.0


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--audio", nargs="+", help="audio files")
    src.add_argument("--tsv", help="TSV manifest: path<TAB>lang (ISO 639-3)")
    p.add_argument("--lang", default="eng", help="ISO 639-3 code used with --audio")
    p.add_argument("--model", default=MODEL_ID)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--out", default="-")
    return p.parse_args()


def load_audio(path: str) -> np.ndarray:
    wav, sr = sf.read(path, dtype="float32", always_2d=True)
    wav = wav.mean(axis=1)
    if sr != TARGET_SR:
        wav = torchaudio.functional.resample(torch.from_numpy(wav), sr, TARGET_SR).numpy()
    return wav


def chunk(wav: np.ndarray) -> List[np.ndarray]:
    max_len = int(MAX_SECONDS * TARGET_SR)
    if len(wav) <= max_len:
        return [wav]
    return [wav[i:i + max_len] for i in range(0, len(wav), max_len)]


def read_inputs(args: argparse.Namespace) -> Dict[str, List[str]]:
    by_lang: Dict[str, List[str]] = defaultdict(list)
    if args.audio:
        by_lang[args.lang].extend(args.audio)
    else:
        with open(args.tsv, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                path, lang = line.split("\t")[:2]
                by_lang[lang].append(path)
    return by_lang


def batches(items: List[str], n: int) -> Iterator[List[str]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


class MMSTranscriber:
    def __init__(self, model_id: str, fp16: bool):
        if not torch.cuda.is_available():
            raise RuntimeError("MMS-1B-all inference needs a CUDA GPU (the CPU path takes minutes per file).")
        self.processor = AutoProcessor.from_pretrained(model_id)
        self.model = Wav2Vec2ForCTC.from_pretrained(model_id, torch_dtype=torch.float16 if fp16 else torch.float32)
        self.model.to("cuda")
        self.model.eval()
        self.current_lang = None
        self.dtype = torch.float16 if fp16 else torch.float32

    def set_lang(self, lang: str) -> None:
        if lang == self.current_lang:
            return
        logger.info("Switching adapter to %s", lang)
        self.processor.tokenizer.set_target_lang(lang)
        self.model.load_adapter(lang)
        self.current_lang = lang

    @torch.no_grad()
    def transcribe(self, waves: List[np.ndarray]) -> List[str]:
        inputs = self.processor(waves, sampling_rate=TARGET_SR, return_tensors="pt", padding=True)
        input_values = inputs.input_values.to("cuda", dtype=self.dtype)
        attention_mask = inputs.get("attention_mask")
        if attention_mask is not None:
            attention_mask = attention_mask.cuda()
        logits = self.model(input_values, attention_mask=attention_mask).logits
        ids = torch.argmax(logits, dim=-1)
        return self.processor.batch_decode(ids)


def main() -> None:
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.backends.cuda.matmul.allow_tf32 = True

    asr = MMSTranscriber(args.model, args.fp16)
    out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")
    try:
        for lang, paths in read_inputs(args).items():
            asr.set_lang(lang)
            for group in batches(paths, args.batch_size):
                pieces: List[Tuple[str, np.ndarray]] = []
                for p in group:
                    for c in chunk(load_audio(p)):
                        pieces.append((p, c))
                texts = asr.transcribe([c for _, c in pieces])
                merged: Dict[str, List[str]] = defaultdict(list)
                for (p, _), t in zip(pieces, texts):
                    merged[p].append(t)
                for p in group:
                    out.write(json.dumps({"audio": os.path.basename(p), "lang": lang, "text": " ".join(merged[p])}, ensure_ascii=False) + "\n")
                out.flush()
    finally:
        if out is not sys.stdout:
            out.close()


if __name__ == "__main__":
    main()
