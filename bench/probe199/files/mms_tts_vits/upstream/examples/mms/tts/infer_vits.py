#!/usr/bin/env python
# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
"""MMS-TTS (VITS) synthesis for 1100+ languages.

Checkpoints are published per language as facebook/mms-tts-<iso>. Languages
written in non-Latin scripts need uroman romanization first (the tokenizer
config tells us via `is_uroman`).

    python examples/mms/tts/infer_vits.py --lang hau --txt sentences.txt --out-dir wavs/
"""
import argparse
import logging
import os
import re
import subprocess
import tempfile
from typing import List, Optional

import numpy as np
import scipy.io.wavfile
import torch
from transformers import AutoTokenizer, VitsModel, set_seed

logger = logging.getLogger("mms_tts")

UROMAN_DIR = os.environ.get("UROMAN_DIR", os.path.expanduser("~/uroman"))


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--lang", required=True, help="ISO 639-3 code, e.g. hau, yor, kor")
    p.add_argument("--txt", required=True, help="one sentence per line")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--seed", type=int, default=555)
    p.add_argument("--noise-scale", type=float, default=0.667)
    p.add_argument("--noise-scale-duration", type=float, default=0.8)
    p.add_argument("--speaking-rate", type=float, default=1.0)
    p.add_argument("--batch-size", type=int, default=4)
    return p.parse_args()


def uromanize(lines: List[str], uroman_dir: str = UROMAN_DIR) -> List[str]:
    """Runs uroman.pl on the lines (VITS vocab for those languages is Latin)."""
    script = os.path.join(uroman_dir, "bin", "uroman.pl")
    if not os.path.exists(script):
        raise FileNotFoundError(f"uroman not found at {script}; git clone https://github.com/isi-nlp/uroman")
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as tf:
        tf.write("\n".join(lines) + "\n")
        tmp_in = tf.name
    try:
        res = subprocess.run(["perl", script], stdin=open(tmp_in, encoding="utf-8"),
                             capture_output=True, text=True, check=True)
    finally:
        os.unlink(tmp_in)
    return res.stdout.rstrip("\n").split("\n")


def normalize(text: str, vocab: set) -> str:
    text = text.lower()
    text = re.sub(r"\s+", " ", text).strip()
    return "".join(ch for ch in text if ch in vocab or ch == " ")


def load(lang: str, device: torch.device):
    name = f"facebook/mms-tts-{lang}"
    tok = AutoTokenizer.from_pretrained(name)
    model = VitsModel.from_pretrained(name).to(device).eval()
    logger.info("loaded %s on %s (sr=%d)", name, device, model.config.sampling_rate)
    return tok, model


def synthesize(tok, model, texts: List[str], device: torch.device, batch_size: int) -> List[np.ndarray]:
    wavs: List[np.ndarray] = []
    for i in range(0, len(texts), batch_size):
        chunk = texts[i:i + batch_size]
        inputs = tok(chunk, return_tensors="pt", padding=True)
        inputs = {k: v.to(device) for k, v in inputs.items()}
        with torch.no_grad():
            out = model(**inputs)
        lengths: Optional[torch.Tensor] = getattr(out, "sequence_lengths", None)
        waveform = out.waveform.float().cpu().numpy()
        for j in range(len(chunk)):
            w = waveform[j]
            if lengths is not None:
                w = w[: int(lengths[j])]
            wavs.append(w)
    return wavs


def main() -> None:
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    os.makedirs(args.out_dir, exist_ok=True)

    # VITS samples noise for durations and the flow; fix it for reproducible audio.
    set_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)

    device = torch.device(args.device)
    tok, model = load(args.lang, device)
    model.noise_scale = args.noise_scale
    model.noise_scale_duration = args.noise_scale_duration
    model.speaking_rate = args.speaking_rate

    with open(args.txt, encoding="utf-8") as f:
        lines = [l.strip() for l in f if l.strip()]
    if getattr(tok, "is_uroman", False):
        logger.info("romanizing %d lines with uroman", len(lines))
        lines = uromanize(lines)
    vocab = set(tok.get_vocab().keys())
    texts = [normalize(l, vocab) for l in lines]

    wavs = synthesize(tok, model, texts, device, args.batch_size)
    sr = model.config.sampling_rate
    for idx, w in enumerate(wavs):
        path = os.path.join(args.out_dir, f"{args.lang}_{idx:05d}.wav")
        scipy.io.wavfile.write(path, rate=sr, data=(w * 32767).clip(-32768, 32767).astype(np.int16))
    logger.info("wrote %d files to %s", len(wavs), args.out_dir)


if __name__ == "__main__":
    main()
