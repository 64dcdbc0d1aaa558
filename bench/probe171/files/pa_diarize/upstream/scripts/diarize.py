#!/usr/bin/env python
"""Batch speaker diarization with pyannote/speaker-diarization-3.1.

Runs one worker process per GPU; every worker pulls files from a shared queue,
writes one RTTM per input file and reports the real-time factor.

    HF_TOKEN=hf_xxx python scripts/diarize.py --wav-list wavs.txt --out-dir rttm/ --gpus 0,1,2,3

Long meetings (> 2h) can run out of GPU memory in the embedding step; the worker
halves the embedding batch size and retries when that happens.
"""

import argparse
import json
import logging
import os
import queue
import sys
import time
from pathlib import Path

import torch
import torch.multiprocessing as mp
import torchaudio
from pyannote.audio import Pipeline
from pyannote.audio.pipelines.utils.hook import ProgressHook

logger = logging.getLogger("diarize")

PIPELINE_NAME = "pyannote/speaker-diarization-3.1"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wav-list", required=True, help="text file with one audio path per line")
    parser.add_argument("--out-dir", required=True, help="where to write <uri>.rttm files")
    parser.add_argument("--gpus", default="0", help="comma separated gpu ids, '-1' for cpu")
    parser.add_argument("--num-speakers", type=int, default=None)
    parser.add_argument("--min-speakers", type=int, default=None)
    parser.add_argument("--max-speakers", type=int, default=None)
    parser.add_argument("--embedding-batch-size", type=int, default=32)
    parser.add_argument("--segmentation-batch-size", type=int, default=32)
    parser.add_argument("--allow-tf32", action="store_true",
                        help="re-enable TF32 matmuls (pyannote disables them for reproducibility)")
    parser.add_argument("--progress", action="store_true", help="show pyannote progress hook")
    parser.add_argument("--summary", default=None, help="optional json file with per-file timings")
    return parser.parse_args(argv)


def load_pipeline(args, device):
    pipeline = Pipeline.from_pretrained(PIPELINE_NAME, use_auth_token=os.environ.get("HF_TOKEN"))
    if pipeline is None:
        raise RuntimeError(f"could not load {PIPELINE_NAME}, did you accept the user conditions on hf.co?")
    pipeline.embedding_batch_size = args.embedding_batch_size
    pipeline.segmentation_batch_size = args.segmentation_batch_size
    pipeline.to(device)
    return pipeline


def run_pipeline(pipeline, file, args):
    kwargs = {}
    if args.num_speakers is not None:
        kwargs["num_speakers"] = args.num_speakers
    if args.min_speakers is not None:
        kwargs["min_speakers"] = args.min_speakers
    if args.max_speakers is not None:
        kwargs["max_speakers"] = args.max_speakers
    if args.progress:
        with ProgressHook() as hook:
            return pipeline(file, hook=hook, **kwargs)
    return pipeline(file, **kwargs)


def diarize_file(pipeline, path, args, device):
    waveform, sample_rate = torchaudio.load(path)
    if waveform.shape[0] > 1:
        waveform = waveform.mean(dim=0, keepdim=True)
    uri = Path(path).stem
    file = {"waveform": waveform, "sample_rate": sample_rate, "uri": uri}
    duration = waveform.shape[1] / sample_rate

    start = time.perf_counter()
    while True:
        try:
            diarization = run_pipeline(pipeline, file, args)
            break
        except torch.cuda.OutOfMemoryError:
            if pipeline.embedding_batch_size <= 1:
                raise
            torch.cuda.empty_cache()
            pipeline.embedding_batch_size //= 2
            logger.warning("%s: out of memory, retrying with embedding_batch_size=%d",
                           uri, pipeline.embedding_batch_size)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elapsed = time.perf_counter() - start

    out_path = Path(args.out_dir) / f"{uri}.rttm"
    with open(out_path, "w") as rttm:
        diarization.write_rttm(rttm)
    return {"uri": uri, "duration": duration, "elapsed": elapsed, "rtf": elapsed / max(duration, 1e-6)}


def worker(rank, gpu_ids, jobs, results, args):
    logging.basicConfig(level=logging.INFO, format=f"[worker {rank}] %(asctime)s %(message)s")
    gpu = gpu_ids[rank]
    if gpu >= 0:
        torch.cuda.set_device(gpu)
        device = torch.device(f"cuda:{gpu}")
    else:
        device = torch.device("cpu")

    if args.allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    pipeline = load_pipeline(args, device)
    logger.info("pipeline loaded on %s", device)

    while True:
        try:
            path = jobs.get_nowait()
        except queue.Empty:
            break
        try:
            stats = diarize_file(pipeline, path, args, device)
            logger.info("%s: %.1fs audio, rtf %.3f", stats["uri"], stats["duration"], stats["rtf"])
            results.put(stats)
        except Exception as exc:  # keep the other files going
            logger.exception("failed on %s: %s", path, exc)
            results.put({"uri": Path(path).stem, "error": str(exc)})

    if device.type == "cuda":  # memory stats are only tracked on gpu
        peak = torch.cuda.max_memory_allocated(device) / 2 ** 30
        logger.info("peak gpu memory %.2f GiB", peak)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    os.makedirs(args.out_dir, exist_ok=True)

    with open(args.wav_list) as f:
        paths = [line.strip() for line in f if line.strip()]
    if not paths:
        logger.error("empty wav list")
        return 1

    gpu_ids = [int(g) for g in args.gpus.split(",")]
    if gpu_ids != [-1] and not torch.cuda.is_available():
        logger.warning("CUDA not available, falling back to a single cpu worker")
        gpu_ids = [-1]
    n_gpu = torch.cuda.device_count()
    for g in gpu_ids:
        if g >= n_gpu:
            raise ValueError(f"gpu {g} requested but only {n_gpu} visible "
                             f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')})")

    ctx = mp.get_context("spawn")
    jobs, results = ctx.Queue(), ctx.Queue()
    for p in paths:
        jobs.put(p)

    procs = []
    for rank in range(len(gpu_ids)):
        p = ctx.Process(target=worker, args=(rank, gpu_ids, jobs, results, args))
        p.start()
        procs.append(p)
    for p in procs:
        p.join()

    stats = []
    while not results.empty():
        stats.append(results.get())
    ok = [s for s in stats if "error" not in s]
    total_audio = sum(s["duration"] for s in ok)
    total_time = sum(s["elapsed"] for s in ok)
    logger.info("%d/%d files done, %.1f h audio, overall rtf %.4f",
                len(ok), len(paths), total_audio / 3600, total_time / max(total_audio, 1e-6))
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(stats, f, indent=2)
    return 0 if len(ok) == len(paths) else 2


if __name__ == "__main__":
    sys.exit(main())
