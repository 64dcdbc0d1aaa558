#!/usr/bin/env python3
"""Batch-transcribe a directory of audio files with faster-whisper (CTranslate2).

Typical use on a multi-GPU box:

    python tools/fw_batch_transcribe.py --input-dir /data/podcasts --output-dir out/ \
        --model large-v3 --device-index 0 1 2 3 --batch-size 16

Each worker process pins one GPU via CUDA_VISIBLE_DEVICES and runs the batched
pipeline (BatchedInferencePipeline) with Silero VAD chunking.
"""
import argparse
import json
import logging
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path
from typing import Iterable, List

from tqdm import tqdm

logger = logging.getLogger("fw_batch")

AUDIO_EXTS = {".wav", ".mp3", ".flac", ".m4a", ".ogg", ".opus", ".webm"}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input-dir", required=True, type=Path)
    p.add_argument("--output-dir", required=True, type=Path)
    p.add_argument("--model", default="large-v3", help="faster-whisper model size or path to a converted CT2 model")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu", "auto"])
    p.add_argument("--device-index", type=int, nargs="+", default=[0], help="GPU ids, one worker per id")
    p.add_argument("--compute-type", default="float16", help="float16 | int8_float16 | int8 | float32")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--beam-size", type=int, default=5)
    p.add_argument("--language", default=None)
    p.add_argument("--word-timestamps", action="store_true")
    p.add_argument("--cpu-threads", type=int, default=4)
    p.add_argument("--num-workers", type=int, default=1, help="CT2 inter-op workers per process")
    p.add_argument("--overwrite", action="store_true")
    p.add_argument("--log-level", default="INFO")
    return p.parse_args(argv)


def list_audio(root: Path) -> List[Path]:
    files = [p for p in sorted(root.rglob("*")) if p.suffix.lower() in AUDIO_EXTS]
    logger.info("found %d audio files under %s", len(files), root)
    return files


def shard(items: List[Path], n: int) -> List[List[Path]]:
    return [items[i::n] for i in range(n)]


def output_path_for(audio: Path, input_dir: Path, output_dir: Path) -> Path:
    rel = audio.relative_to(input_dir)
    return (output_dir / rel).with_suffix(".json")


def segment_to_dict(seg, with_words: bool) -> dict:
    d = {
        "id": seg.id,
        "start": round(seg.start, 3),
        "end": round(seg.end, 3),
        "text": seg.text.strip(),
        "avg_logprob": seg.avg_logprob,
        "no_speech_prob": seg.no_speech_prob,
    }
    if with_words and seg.words:
        d["words"] = [
            {"word": w.word, "start": round(w.start, 3), "end": round(w.end, 3), "probability": w.probability}
            for w in seg.words
        ]
    return d


def worker(rank: int, gpu_id: int, files: List[Path], args, queue: "mp.Queue"):
    # Pin this process to a single GPU before CTranslate2 initialises CUDA.
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_id)
    logging.basicConfig(level=args.log_level, format=f"[worker{rank}] %(asctime)s %(levelname)s %(message)s")

    from faster_whisper import BatchedInferencePipeline, WhisperModel

    t0 = time.time()
    model = WhisperModel(
        args.model,
        device=args.device,
        device_index=0,  # after CUDA_VISIBLE_DEVICES remapping the pinned GPU is always 0
        compute_type=args.compute_type,
        cpu_threads=args.cpu_threads,
        num_workers=args.num_workers,
    )
    pipeline = BatchedInferencePipeline(model=model)
    logger.info("loaded %s on gpu %d in %.1fs", args.model, gpu_id, time.time() - t0)

    done = 0
    for audio in files:
        out = output_path_for(audio, args.input_dir, args.output_dir)
        if out.exists() and not args.overwrite:
            queue.put(("skip", str(audio)))
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            t = time.time()
            segments, info = pipeline.transcribe(
                str(audio),
                batch_size=args.batch_size,
                beam_size=args.beam_size,
                language=args.language,
                word_timestamps=args.word_timestamps,
                vad_filter=True,
            )
            segs = [segment_to_dict(s, args.word_timestamps) for s in segments]
            elapsed = time.time() - t
            payload = {
                "audio": str(audio),
                "language": info.language,
                "language_probability": info.language_probability,
                "duration": info.duration,
                "rtf": elapsed / max(info.duration, 1e-6),
                "segments": segs,
            }
            with open(out, "w", encoding="utf-8") as f:
                json.dump(payload, f, ensure_ascii=False, indent=1)
            done += 1
            queue.put(("ok", str(audio)))
        except Exception as e:  # keep the worker alive on corrupt files
            logger.exception("failed on %s", audio)
            queue.put(("fail", f"{audio}: {e}"))

    queue.put(("exit", rank))
    logger.info("worker %d finished %d files", rank, done)


def run_single_process(files: List[Path], args):
    """Fallback used for --device cpu or a single GPU: no subprocesses."""
    from faster_whisper import BatchedInferencePipeline, WhisperModel

    model = WhisperModel(
        args.model,
        device=args.device,
        device_index=args.device_index[0],
        compute_type=args.compute_type if args.device != "cpu" else "int8",
        cpu_threads=args.cpu_threads,
    )
    pipeline = BatchedInferencePipeline(model=model)
    for audio in tqdm(files, desc="transcribing"):
        out = output_path_for(audio, args.input_dir, args.output_dir)
        if out.exists() and not args.overwrite:
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        segments, info = pipeline.transcribe(
            str(audio), batch_size=args.batch_size, beam_size=args.beam_size,
            language=args.language, word_timestamps=args.word_timestamps,
        )
        segs = [segment_to_dict(s, args.word_timestamps) for s in segments]
        with open(out, "w", encoding="utf-8") as f:
            json.dump({"audio": str(audio), "language": info.language, "segments": segs}, f, ensure_ascii=False)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(message)s")
    args.output_dir.mkdir(parents=True, exist_ok=True)
    files = list_audio(args.input_dir)
    if not files:
        logger.warning("nothing to do")
        return 0

    if args.device == "cpu" or len(args.device_index) == 1:
        run_single_process(files, args)
        return 0

    ctx = mp.get_context("spawn")  # CUDA does not survive fork()
    queue = ctx.Queue()
    shards = shard(files, len(args.device_index))
    procs = []
    for rank, (gpu_id, part) in enumerate(zip(args.device_index, shards)):
        p = ctx.Process(target=worker, args=(rank, gpu_id, part, args, queue), daemon=False)
        p.start()
        procs.append(p)

    n_exit, n_ok, n_fail, n_skip = 0, 0, 0, 0
    with tqdm(total=len(files), desc=f"{len(procs)} GPUs") as bar:
        while n_exit < len(procs):
            kind, msg = queue.get()
            if kind == "exit":
                n_exit += 1
                continue
            if kind == "ok":
                n_ok += 1
            elif kind == "skip":
                n_skip += 1
            else:
                n_fail += 1
                logger.error(msg)
            bar.update(1)

    for p in procs:
        p.join()
    logger.info("done: ok=%d skipped=%d failed=%d", n_ok, n_skip, n_fail)
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
