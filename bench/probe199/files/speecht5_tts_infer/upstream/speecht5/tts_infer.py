#!/usr/bin/env python3
"""SpeechT5 text-to-speech with x-vector speaker conditioning.

The speaker embedding comes either from the CMU ARCTIC x-vector set (by index)
or is computed from a reference recording with SpeechBrain's x-vector model,
which is what you want for cloning a new voice.

    python speecht5/tts_infer.py --text "Hello there" --speaker-wav ref.wav --out hello.wav
    python speecht5/tts_infer.py --text-file lines.txt --xvector-index 7306 --out-dir out/
"""
import argparse
import logging
import os
import time
from pathlib import Path
from typing import List, Optional

import numpy as np
import soundfile as sf
import torch
import torchaudio
from datasets import load_dataset
from speechbrain.pretrained import EncoderClassifier
from transformers import SpeechT5ForTextToSpeech, SpeechT5HifiGan, SpeechT5Processor

logger = logging.getLogger("speecht5_tts")

SPK_MODEL = "speechbrain/spkrec-xvect-voxceleb"
SR = 16000


def get_device() -> str:
    if torch.cuda.is_available():
        return "cuda"
    return "cpu"


class SpeakerEmbedder:
    """x-vector (512-d) embeddings, L2-normalised the way SpeechT5 was trained."""

    def __init__(self, device: str):
        self.model = EncoderClassifier.from_hparams(
            source=SPK_MODEL,
            run_opts={"device": device},
            savedir=os.path.join("/tmp", SPK_MODEL),
        )
        self.device = device

    @torch.no_grad()
    def __call__(self, waveform: np.ndarray) -> torch.Tensor:
        emb = self.model.encode_batch(torch.tensor(waveform).unsqueeze(0))
        emb = torch.nn.functional.normalize(emb, dim=2)
        return emb.squeeze(1)  # (1, 512)


def load_wav(path: str) -> np.ndarray:
    wav, sr = torchaudio.load(path)
    wav = wav.mean(dim=0)
    if sr != SR:
        wav = torchaudio.functional.resample(wav, sr, SR)
    return wav.numpy()


def xvector_from_arctic(index: int) -> torch.Tensor:
    ds = load_dataset("Matthijs/cmu-arctic-xvectors", split="validation")
    return torch.tensor(ds[index]["xvector"]).unsqueeze(0)


def split_sentences(text: str, max_chars: int = 400) -> List[str]:
    # SpeechT5 was trained on short utterances; long inputs derail the attention.
    out, cur = [], ""
    for piece in text.replace("\n", " ").split(". "):
        piece = piece.strip()
        if not piece:
            continue
        if len(cur) + len(piece) + 2 > max_chars and cur:
            out.append(cur)
            cur = piece
        else:
            cur = f"{cur}. {piece}" if cur else piece
    if cur:
        out.append(cur)
    return out


class SpeechT5TTS:
    def __init__(self, checkpoint: str, vocoder: str, device: str, half: bool):
        self.device = device
        self.processor = SpeechT5Processor.from_pretrained(checkpoint)
        self.model = SpeechT5ForTextToSpeech.from_pretrained(checkpoint).to(device).eval()
        self.vocoder = SpeechT5HifiGan.from_pretrained(vocoder).to(device).eval()
        if half:
            self.model.half()
            self.vocoder.half()
        self.dtype = torch.float16 if half else torch.float32

    @torch.inference_mode()
    def __call__(self, text: str, speaker_embeddings: torch.Tensor) -> np.ndarray:
        inputs = self.processor(text=text, return_tensors="pt")
        speech = self.model.generate_speech(
            inputs["input_ids"].to(self.device),
            speaker_embeddings.to(self.device, dtype=self.dtype),
            vocoder=self.vocoder,
        )
        return speech.float().cpu().numpy()


def main() -> None:
    p = argparse.ArgumentParser()
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--text")
    g.add_argument("--text-file")
    s = p.add_mutually_exclusive_group()
    s.add_argument("--speaker-wav")
    s.add_argument("--xvector-index", type=int, default=7306)
    p.add_argument("--checkpoint", default="microsoft/speecht5_tts")
    p.add_argument("--vocoder", default="microsoft/speecht5_hifigan")
    p.add_argument("--half", action="store_true", help="fp16 weights (GPU only)")
    p.add_argument("--out", default="speech.wav")
    p.add_argument("--out-dir", default=None)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    device = get_device()
    if args.half and device == "cpu":
        logger.warning("--half ignored on CPU")
        args.half = False

    if args.speaker_wav:
        embedder = SpeakerEmbedder(device)
        spk = embedder(load_wav(args.speaker_wav))
    else:
        spk = xvector_from_arctic(args.xvector_index)

    tts = SpeechT5TTS(args.checkpoint, args.vocoder, device, args.half)

    if args.text_file:
        with open(args.text_file, encoding="utf-8") as f:
            lines = [l.strip() for l in f if l.strip()]
    else:
        lines = split_sentences(args.text)

    outs: List[np.ndarray] = []
    total_audio = 0.0
    t0 = time.perf_counter()
    for i, line in enumerate(lines):
        wav = tts(line, spk)
        outs.append(wav)
        total_audio += len(wav) / SR
        if args.out_dir:
            Path(args.out_dir).mkdir(parents=True, exist_ok=True)
            sf.write(os.path.join(args.out_dir, f"{i:04d}.wav"), wav, SR)
    if device == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    logger.info("synthesised %.1fs of audio in %.1fs (RTF %.3f)", total_audio, elapsed, elapsed / max(total_audio, 1e-6))

    if not args.out_dir:
        silence = np.zeros(int(0.25 * SR), dtype=np.float32)
        joined = np.concatenate([np.concatenate([w, silence]) for w in outs]) if outs else silence
        sf.write(args.out, joined, SR)
        logger.info("wrote %s", args.out)


if __name__ == "__main__":
    main()
