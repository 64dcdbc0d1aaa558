"""Batch transcription of a folder of audio files with faster-whisper (CTranslate2 backend).

Example:
    python transcribe_batch.py --audio-dir data/wavs --model large-v3 --compute-type float16
"""
import argparse
import json
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import ctranslate2
from faster_whisper import BatchedInferencePipeline, WhisperModel
from faster_whisper.vad import VadOptions

logger = logging.getLogger("transcribe_batch")

AUDIO_EXTS = {".wav", ".flac", ".mp3", ".m4a", ".ogg"}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--audio-dir", required=True)
    parser.add_argument("--out", default="transcripts.jsonl")
    parser.add_argument("--model", default="large-v3")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu", "auto"])
    parser.add_argument("--device-index", type=int, nargs="+", default=[0])
    parser.add_argument("--compute-type", default="float16", help="float16 on GPU, int8 on CPU")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--language", default=None)
    parser.add_argument("--workers", type=int, default=2, help="parallel files (one per GPU)")
    return parser.parse_args()


def pick_device(requested: str):
    if requested == "auto":
        return "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
    return requested


def list_audio(root: str):
    return sorted(p for p in Path(root).rglob("*") if p.suffix.lower() in AUDIO_EXTS)


def load_model(args):
    device = pick_device(args.device)
    compute_type = args.compute_type
    if device == "cpu" and compute_type == "float16":
        logger.warning("float16 is not efficient on CPU, switching to int8")
        compute_type = "int8"
    supported = ctranslate2.get_supported_compute_types(device)
    if compute_type not in supported:
        raise ValueError(f"compute type {compute_type} not supported on {device}: {sorted(supported)}")
    logger.info("loading %s on %s (%s)", args.model, device, compute_type)
    model = WhisperModel(
        args.model,
        device=device,
        device_index=args.device_index,
        compute_type=compute_type,
        cpu_threads=os.cpu_count() // 2,
        num_workers=args.workers,
    )
    return model


def transcribe_one(pipeline, path: Path, args):
    t0 = time.time()
    segments, info = pipeline.transcribe(
        str(path),
        batch_size=args.batch_size,
        beam_size=args.beam_size,
        language=args.language,
        vad_filter=True,
        vad_parameters=VadOptions(min_silence_duration_ms=500),
        word_timestamps=False,
    )
    text = " ".join(s.text.strip() for s in segments)
    return {
        "audio": str(path),
        "language": info.language,
        "language_probability": round(info.language_probability, 3),
        "duration": info.duration,
        "text": text,
        "rtf": (time.time() - t0) / max(info.duration, 1e-3),
    }


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = parse_args()
    files = list_audio(args.audio_dir)
    logger.info("found %d files", len(files))

    model = load_model(args)
    pipeline = BatchedInferencePipeline(model=model)

    with open(args.out, "w", encoding="utf-8") as fout, ThreadPoolExecutor(max_workers=args.workers) as pool:
        for result in pool.map(lambda p: transcribe_one(pipeline, p, args), files):
            fout.write(json.dumps(result, ensure_ascii=False) + "\n")
            logger.info("%s: rtf=%.3f", result["audio"], result["rtf"])


if __name__ == "__main__":
    main()
