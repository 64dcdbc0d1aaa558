#!/usr/bin/env python3
"""Latency / throughput benchmark for SeamlessM4T v2 across tasks.

Measures per-utterance wall time with CUDA events (so queued kernels are
included), real-time factor for speech input, and peak device memory.

    python scripts/benchmark_m4t_latency.py --manifest fleurs_dev_100.tsv \
        --tasks s2tt s2st --tgt-lang fra --warmup 3 --out results/a100.json
"""
import argparse
import csv
import json
import logging
import os
import platform
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

import torch
import torchaudio

from seamless_communication.inference import SequenceGeneratorOptions, Translator

logger = logging.getLogger("m4t_bench")
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")


@dataclass
class TaskResult:
    task: str
    n: int = 0
    latencies_ms: List[float] = field(default_factory=list)
    audio_seconds: float = 0.0
    peak_mem_gb: float = 0.0

    def summary(self) -> Dict[str, float]:
        lat = sorted(self.latencies_ms)
        if not lat:
            return {"n": 0}
        total_s = sum(lat) / 1000.0
        return {
            "n": self.n,
            "mean_ms": statistics.fmean(lat),
            "p50_ms": lat[len(lat) // 2],
            "p90_ms": lat[min(len(lat) - 1, int(len(lat) * 0.9))],
            "rtf": total_s / self.audio_seconds if self.audio_seconds else float("nan"),
            "peak_mem_gb": self.peak_mem_gb,
        }


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--manifest", type=Path, required=True, help="TSV with columns: id, audio, src_text, src_lang")
    p.add_argument("--model-name", default="seamlessM4T_v2_large")
    p.add_argument("--vocoder-name", default="vocoder_v2")
    p.add_argument("--tasks", nargs="+", default=["s2tt", "s2st", "t2tt"], choices=["s2tt", "s2st", "t2tt", "t2st", "asr"])
    p.add_argument("--tgt-lang", default="fra")
    p.add_argument("--device", default="cuda:0", help="torch device")
    p.add_argument("--fp32", action="store_true", help="disable half precision")
    p.add_argument("--beam-size", type=int, default=5)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None)
    return p.parse_args()


def read_manifest(path: Path, limit: Optional[int]) -> List[Dict[str, str]]:
    rows: List[Dict[str, str]] = []
    with path.open() as f:
        for row in csv.DictReader(f, delimiter="\t"):
            rows.append(row)
            if limit is not None and len(rows) >= limit:
                break
    logger.info("Loaded %d rows from %s", len(rows), path)
    return rows


def load_audio(path: str) -> torch.Tensor:
    wav, sr = torchaudio.load(path)
    if sr != 16000:
        wav = torchaudio.functional.resample(wav, sr, 16000)
    return wav.mean(dim=0)


def environment_info(device: torch.device) -> Dict[str, str]:
    info = {
        "host": platform.node(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": str(torch.version.cuda),
        "cudnn": str(torch.backends.cudnn.version()),
        "device": str(device),
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info["gpu"] = torch.cuda.get_device_name(device)
        info["gpu_mem_gb"] = f"{props.total_memory / 2**30:.1f}"
        info["sm"] = f"{props.major}.{props.minor}"
    return info


def run_one(translator: Translator, row: Dict[str, str], task: str, tgt_lang: str,
            opts: SequenceGeneratorOptions, device: torch.device) -> float:
    if task in ("s2tt", "s2st", "asr"):
        inp = load_audio(row["audio"])
        src_lang = None
    else:
        inp = row["src_text"]
        src_lang = row["src_lang"]

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    translator.predict(
        inp,
        task,
        tgt_lang if task != "asr" else row["src_lang"],
        src_lang=src_lang,
        text_generation_opts=opts,
    )
    end.record()
    torch.cuda.synchronize(device)
    return start.elapsed_time(end)


def main() -> None:
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    device = torch.device(args.device)
    dtype = torch.float32 if args.fp32 else torch.float16
    env = environment_info(device)
    logger.info("Environment: %s", env)

    translator = Translator(args.model_name, args.vocoder_name, device=device, dtype=dtype)
    opts = SequenceGeneratorOptions(beam_size=args.beam_size, soft_max_seq_len=(1, 200))
    rows = read_manifest(args.manifest, args.limit)

    results: Dict[str, TaskResult] = {}
    for task in args.tasks:
        res = TaskResult(task=task)
        logger.info("== %s: warmup %d", task, args.warmup)
        for row in rows[: args.warmup]:
            run_one(translator, row, task, args.tgt_lang, opts, device)
        torch.cuda.reset_peak_memory_stats(device)

        for i, row in enumerate(rows):
            ms = run_one(translator, row, task, args.tgt_lang, opts, device)
            res.latencies_ms.append(ms)
            res.n += 1
            if task in ("s2tt", "s2st", "asr"):
                res.audio_seconds += torchaudio.info(row["audio"]).num_frames / 16000.0
            if (i + 1) % 20 == 0:
                logger.info("%s %d/%d mean=%.1fms", task, i + 1, len(rows), statistics.fmean(res.latencies_ms))
        res.peak_mem_gb = torch.cuda.max_memory_allocated(device) / 2**30
        results[task] = res
        logger.info("%s: %s", task, res.summary())

    report = {
        "env": env,
        "args": {k: str(v) for k, v in vars(args).items()},
        "results": {k: v.summary() for k, v in results.items()},
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2))
        logger.info("Wrote %s", args.out)
    else:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
