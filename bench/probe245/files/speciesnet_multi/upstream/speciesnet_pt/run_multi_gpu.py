"""Run the SpeciesNet-style ensemble over a large image folder on every local GPU.

One worker process per GPU; each worker loads its own detector + classifier and
handles every N-th shard of the image list. Results are merged into a single
predictions JSON in the SpeciesNet output format.

    python -m speciesnet_pt.run_multi_gpu \
        --folders /data/camtraps/season7 \
        --predictions_json season7_preds.json \
        --country KEN --gpus 0,1,2,3
"""

from __future__ import annotations

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

from speciesnet_pt.classifier import SpeciesNetClassifier, rollup_to_rank
from speciesnet_pt.detector import MegaDetectorV5
from speciesnet_pt.geofence import Geofence
from speciesnet_pt.utils import find_images, load_partial_predictions, save_predictions

logging.basicConfig(level=logging.INFO, format="%(asctime)s [%(processName)s] %(message)s")
logger = logging.getLogger("run_multi_gpu")

DETECTION_THRESHOLD = 0.1
SHARD_SIZE = 512


def shard(items, size):
    for i in range(0, len(items), size):
        yield i // size, items[i:i + size]


def worker(rank: int, gpu_ids: list[int], args, shards, result_q):
    """Runs in a spawned process, one per GPU."""
    gpu = gpu_ids[rank]
    torch.cuda.set_device(gpu)
    device = f"cuda:{gpu}"
    torch.set_num_threads(max(1, os.cpu_count() // (2 * len(gpu_ids))))

    detector = MegaDetectorV5(args.detector_weights, device=device)
    classifier = SpeciesNetClassifier(args.model_dir, device=device)
    geofence = Geofence(args.model_dir) if args.country else None
    logger.info("worker %d ready on %s (%s)", rank, device, torch.cuda.get_device_name(gpu))

    n_done = 0
    t0 = time.time()
    for shard_id, paths in shards:
        if shard_id % len(gpu_ids) != rank:
            continue
        dets = detector.detect(paths, threshold=DETECTION_THRESHOLD)
        items = []
        for p in paths:
            d = dets.get(p, [])
            animals = [x for x in d if x["category"] == "1"]
            bbox = max(animals, key=lambda x: x["conf"])["bbox"] if animals else None
            items.append((p, bbox))
        cls = classifier.predict(items)
        preds = []
        for (p, bbox), c in zip(items, cls):
            entry = {"filepath": p, "detections": dets.get(p, [])}
            if "classifications" in c:
                label, score = rollup_to_rank(c["classifications"]["classes"],
                                              c["classifications"]["scores"])
                if geofence is not None:
                    label, score = geofence.apply(label, score, country=args.country, admin1=args.admin1_region)
                entry.update(classifications=c["classifications"], prediction=label, prediction_score=score)
            else:
                entry["failures"] = c.get("failures", [])
            preds.append(entry)
        result_q.put(preds)
        n_done += len(paths)
        if n_done % (10 * SHARD_SIZE) < SHARD_SIZE:
            rate = n_done / (time.time() - t0)
            logger.info("worker %d: %d images (%.1f img/s, %.1f GiB peak)", rank, n_done, rate,
                        torch.cuda.max_memory_allocated(gpu) / 2 ** 30)
    result_q.put(None)


def parse_gpus(spec: str | None) -> list[int]:
    if spec:
        return [int(x) for x in spec.split(",") if x.strip()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        return list(range(len(visible.split(","))))
    return list(range(torch.cuda.device_count()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folders", nargs="+", required=True)
    ap.add_argument("--predictions_json", required=True)
    ap.add_argument("--model_dir", default="models/speciesnet-v4.0.0a")
    ap.add_argument("--detector_weights", default="models/md_v5a.0.0.pt")
    ap.add_argument("--country", default=None, help="ISO 3166-1 alpha-3 code for geofencing")
    ap.add_argument("--admin1_region", default=None)
    ap.add_argument("--gpus", default=None, help="comma separated GPU ids (default: all visible)")
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args(argv)

    images = []
    for folder in args.folders:
        images.extend(find_images(folder))
    images = sorted(set(images))

    done = {}
    if args.resume and Path(args.predictions_json).exists():
        done = load_partial_predictions(args.predictions_json)
        images = [p for p in images if p not in done]
    logger.info("%d images to process (%d already done)", len(images), len(done))

    gpu_ids = parse_gpus(args.gpus)
    if not gpu_ids:
        logger.error("no CUDA devices visible; use the single-process CPU runner instead")
        sys.exit(1)
    logger.info("using GPUs %s", gpu_ids)

    shards = list(shard(images, SHARD_SIZE))
    ctx = mp.get_context("spawn")
    result_q = ctx.Queue(maxsize=4 * len(gpu_ids))
    procs = [ctx.Process(target=worker, args=(r, gpu_ids, args, shards, result_q), name=f"gpu{g}")
             for r, g in enumerate(gpu_ids)]
    for p in procs:
        p.start()

    predictions = list(done.values())
    finished = 0
    last_save = time.time()
    while finished < len(procs):
        try:
            batch = result_q.get(timeout=60)
        except queue.Empty:
            if not any(p.is_alive() for p in procs):
                logger.error("all workers died")
                break
            continue
        if batch is None:
            finished += 1
            continue
        predictions.extend(batch)
        if time.time() - last_save > 300:
            save_predictions(predictions, args.predictions_json)
            last_save = time.time()

    for p in procs:
        p.join()
    save_predictions(predictions, args.predictions_json)
    logger.info("wrote %d predictions to %s", len(predictions), args.predictions_json)


if __name__ == "__main__":
    main()
