#!/usr/bin/env python
"""Speaker diarization of a directory of recordings with pyannote.audio 3.x.

Writes one RTTM per input file.

    HF_TOKEN=... python diarize.py --input calls/ --output rttm/ --num-speakers 2
"""
import argparse
import logging
import os
from pathlib import Path

import torch
import torchaudio
from pyannote.audio import Pipeline
from pyannote.audio.pipelines.utils.hook import ProgressHook

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

logger = logging.getLogger("diarize")


def parse_args():
    p = argparse.ArgumentParser(description="pyannote diarization (GPU recommended)")
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--pipeline", default="pyannote/speaker-diarization-3.1")
    p.add_argument("--num-speakers", type=int, default=None)
    p.add_argument("--min-speakers", type=int, default=None)
    p.add_argument("--max-speakers", type=int, default=None)
    p.add_argument("--embedding-batch-size", type=int, default=32)
    p.add_argument("--segmentation-batch-size", type=int, default=32)
    p.add_argument("--cpu", action="store_true", help="force CPU even if a CUDA device is present")
    return p.parse_args()


def load_pipeline(args) -> Pipeline:
    pipeline = Pipeline.from_pretrained(args.pipeline, use_auth_token=os.environ.get("HF_TOKEN"))
    if pipeline is None:
        raise RuntimeError("could not load pipeline (did you accept the model conditions on the Hub?)")
    pipeline.embedding_batch_size = args.embedding_batch_size
    pipeline.segmentation_batch_size = args.segmentation_batch_size
    if not args.cpu and torch.cuda.is_available():
        pipeline.to(torch.device("cuda"))
        logger.info("running on %s", torch.cuda.get_device_name(0))
    else:
        logger.warning("running on CPU, this will be slow")
    return pipeline


def main():
    logging.basicConfig(level=logging.INFO)
    args = parse_args()
    in_dir, out_dir = Path(args.input), Path(args.output)
    out_dir.mkdir(parents=True, exist_ok=True)

    pipeline = load_pipeline(args)
    kwargs = {}
    if args.num_speakers is not None:
        kwargs["num_speakers"] = args.num_speakers
    else:
        if args.min_speakers is not None:
            kwargs["min_speakers"] = args.min_speakers
        if args.max_speakers is not None:
            kwargs["max_speakers"] = args.max_speakers

    files = sorted(p for p in in_dir.iterdir() if p.suffix.lower() in {".wav", ".flac"})
    for path in files:
        # load in memory: faster than letting pyannote re-read the file for each model
        waveform, sample_rate = torchaudio.load(str(path))
        with ProgressHook() as hook:
            diarization = pipeline({"waveform": waveform, "sample_rate": sample_rate}, hook=hook, **kwargs)
        with open(out_dir / f"{path.stem}.rttm", "w") as rttm:
            diarization.write_rttm(rttm)
        n_spk = len(diarization.labels())
        logger.info("%s: %d speakers, %.1fs speech", path.name, n_spk, diarization.get_timeline().support().duration())
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
