#!/usr/bin/env python3
"""Score candidate/reference files with a PyTorch BLEURT checkpoint.

    python -m bleurt_pytorch.score_files \
        --candidate_file cands.txt --reference_file refs.txt \
        --checkpoint lucadiliello/BLEURT-20-D12 --batch_size 64 --fp16

Mirrors the command line of google-research/bleurt's ``bleurt.score_files``.
"""
import argparse
import itertools
import logging
import time

import torch
from tqdm import tqdm

from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
logger = logging.getLogger(__name__)

DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def batched(iterable, n):
    it = iter(iterable)
    while True:
        chunk = list(itertools.islice(it, n))
        if not chunk:
            return
        yield chunk


class BleurtScorer:
    """Thin wrapper that keeps the model resident on the accelerator."""

    def __init__(self, checkpoint, max_length=512, fp16=False, compile_model=False):
        self.tokenizer = BleurtTokenizer.from_pretrained(checkpoint)
        self.model = BleurtForSequenceClassification.from_pretrained(checkpoint)
        self.model.eval()
        self.max_length = max_length
        self.fp16 = fp16

        if fp16:
            self.model.half()
        self.model.to(DEVICE)

        if compile_model:
            # torch.compile gives ~1.3x on A100 for long batches
            self.model = torch.compile(self.model, mode="reduce-overhead")

    @torch.inference_mode()
    def score(self, references, candidates, batch_size=32):
        assert len(references) == len(candidates), "references and candidates differ in length"
        scores = []
        pairs = list(zip(references, candidates))
        for chunk in tqdm(list(batched(pairs, batch_size)), desc="BLEURT", disable=len(pairs) < batch_size):
            refs, cands = zip(*chunk)
            inputs = self.tokenizer(
                list(refs),
                list(cands),
                padding="longest",
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            )
            inputs = {k: v.to(DEVICE, non_blocking=True) for k, v in inputs.items()}
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.fp16):
                logits = self.model(**inputs).logits
            scores.extend(logits.flatten().float().cpu().tolist())
        return scores


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidate_file", required=True)
    parser.add_argument("--reference_file", required=True)
    parser.add_argument("--scores_file", default=None, help="Write one score per line here (default: stdout).")
    parser.add_argument("--checkpoint", default="lucadiliello/BLEURT-20-D12")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_length", type=int, default=512)
    parser.add_argument("--fp16", action="store_true", help="Run the encoder in half precision on GPU.")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch >= 2.0).")
    parser.add_argument("--benchmark", action="store_true", help="Report throughput and peak GPU memory.")
    args = parser.parse_args()

    references = read_lines(args.reference_file)
    candidates = read_lines(args.candidate_file)
    logger.info("Loaded %d reference / candidate pairs", len(references))

    if DEVICE.type == "cuda":
        logger.info("Scoring on %s", torch.cuda.get_device_name(DEVICE))
    else:
        logger.warning("CUDA not available, scoring on CPU will be slow.")
        args.fp16 = False

    scorer = BleurtScorer(args.checkpoint, max_length=args.max_length, fp16=args.fp16, compile_model=args.compile)

    if args.benchmark:
        torch.cuda.reset_peak_memory_stats(DEVICE)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()

    t0 = time.time()
    scores = scorer.score(references, candidates, batch_size=args.batch_size)
    elapsed = time.time() - t0

    if args.benchmark:
        end.record()
        torch.cuda.synchronize()
        gpu_ms = start.elapsed_time(end)
        peak = torch.cuda.max_memory_allocated(DEVICE) / 2 ** 20
        logger.info("device time %.1f ms, peak memory %.0f MiB", gpu_ms, peak)
    logger.info("%.1f sentence pairs / second", len(scores) / max(elapsed, 1e-6))

    if args.scores_file:
        with open(args.scores_file, "w", encoding="utf-8") as f:
            for s in scores:
                f.write(f"{s}\n")
    else:
        for s in scores:
            print(s)


if __name__ == "__main__":
    main()
