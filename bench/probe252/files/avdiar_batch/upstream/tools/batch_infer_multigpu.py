#!/usr/bin/env python
"""Run the full ASD + AV-diarization pipeline over a folder of videos on all GPUs.

One worker process per GPU. Each worker pins itself to its card, builds the face
detector / ASD model once and then pulls video paths from a shared queue.

    python tools/batch_infer_multigpu.py --videos /data/episodes --out /data/work --gpus 0,1,2,3

The per-video work (face detection, ASD scoring, diarization) is in avdiar.*;
this script only does the scheduling, retries and bookkeeping.
"""

import os
import sys
import glob
import json
import time
import argparse
import logging
import traceback

import torch
import torch.multiprocessing as mp

logger = logging.getLogger("avdiar.batch")


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--videos", required=True, help="folder with *.mp4 / *.mkv")
    p.add_argument("--out", required=True)
    p.add_argument("--gpus", default=None, help="comma separated GPU ids, default: all visible")
    p.add_argument("--workers-per-gpu", type=int, default=1)
    p.add_argument("--detector", default="retinaface", choices=["retinaface", "scrfd"])
    p.add_argument("--asd", default="lightasd", choices=["talknet", "lightasd"])
    p.add_argument("--asd-weights", default="weight/pretrain_AVA_CVPR.model")
    p.add_argument("--det-batch", type=int, default=32)
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--diarize", action="store_true")
    p.add_argument("--retries", type=int, default=1)
    p.add_argument("--skip-done", action="store_true")
    return p.parse_args(argv)


def list_videos(folder):
    vids = []
    for ext in ("*.mp4", "*.mkv", "*.avi", "*.mov"):
        vids.extend(glob.glob(os.path.join(folder, ext)))
    return sorted(vids)


def build_models(args, device):
    from avdiar.face.detector import build_detector
    from avdiar.asd import load_asd_model

    detector = build_detector(args.detector, device=str(device))
    asd = load_asd_model(args.asd, args.asd_weights, device=device)
    asd.eval()
    if args.fp16:
        asd.half()
    return detector, asd


def process_one(video, args, device, detector, asd):
    from avdiar.pipeline.preprocess import extract_frames_and_audio, scene_detect, track_faces, crop_tracks
    from avdiar.asd import score_tracks

    name = os.path.splitext(os.path.basename(video))[0]
    work = os.path.join(args.out, name)
    os.makedirs(work, exist_ok=True)

    t0 = time.time()
    frames_dir, wav = extract_frames_and_audio(video, work)
    scenes = scene_detect(video)
    faces = []
    frame_files = sorted(glob.glob(os.path.join(frames_dir, "*.jpg")))
    for i in range(0, len(frame_files), args.det_batch):
        import cv2
        batch = [cv2.imread(f) for f in frame_files[i:i + args.det_batch]]
        faces.extend(detector.detect(batch))
    tracks = track_faces(faces, scenes)
    crops = crop_tracks(tracks, frames_dir, wav, work)

    with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.fp16):
        scores = score_tracks(asd, crops, device=device)

    result = {"video": video, "tracks": len(tracks), "seconds": time.time() - t0}
    if args.diarize:
        from avdiar.pipeline import diarize
        diarize.main(["--video", video, "--work", work, "--gpu", str(device.index)])
    with open(os.path.join(work, "done.json"), "w") as f:
        json.dump(result, f)
    return result


def worker(rank, gpu_id, queue, results, args):
    logging.basicConfig(level=logging.INFO, format="[gpu%d] %(asctime)s %(message)s" % gpu_id)
    torch.cuda.set_device(gpu_id)
    device = torch.device("cuda", gpu_id)
    torch.backends.cudnn.benchmark = True

    detector, asd = build_models(args, device)
    logger.info("worker %d ready on %s (%s)", rank, device, torch.cuda.get_device_name(gpu_id))

    while True:
        video = queue.get()
        if video is None:
            break
        for attempt in range(args.retries + 1):
            try:
                res = process_one(video, args, device, detector, asd)
                results.put(("ok", video, res))
                break
            except torch.cuda.OutOfMemoryError:
                logger.warning("OOM on %s (attempt %d), halving det batch", video, attempt)
                torch.cuda.empty_cache()
                args.det_batch = max(1, args.det_batch // 2)
            except Exception:
                logger.error("failed %s\n%s", video, traceback.format_exc())
                results.put(("err", video, None))
                break
        torch.cuda.empty_cache()  # long episodes fragment the allocator


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    if args.gpus:
        gpu_ids = [int(g) for g in args.gpus.split(",")]
    else:
        gpu_ids = list(range(torch.cuda.device_count()))
    if not gpu_ids:
        logger.error("no CUDA device found")
        return 1

    videos = list_videos(args.videos)
    if args.skip_done:
        videos = [v for v in videos if not os.path.exists(os.path.join(args.out, os.path.splitext(os.path.basename(v))[0], "done.json"))]
    logger.info("%d videos, GPUs %s, %d worker(s) per GPU", len(videos), gpu_ids, args.workers_per_gpu)

    ctx = mp.get_context("spawn")   # CUDA cannot be re-initialised in a forked child
    queue, results = ctx.Queue(), ctx.Queue()
    for v in videos:
        queue.put(v)
    procs = []
    for rank, gpu_id in enumerate([g for g in gpu_ids for _ in range(args.workers_per_gpu)]):
        queue.put(None)
        p = ctx.Process(target=worker, args=(rank, gpu_id, queue, results, args), daemon=False)
        p.start()
        procs.append(p)

    done, failed = 0, []
    for _ in range(len(videos)):
        status, video, res = results.get()
        if status == "ok":
            done += 1
            logger.info("[%d/%d] %s: %d tracks in %.0fs", done, len(videos), video, res["tracks"], res["seconds"])
        else:
            failed.append(video)
    for p in procs:
        p.join()

    logger.info("finished: %d ok, %d failed", done, len(failed))
    if failed:
        with open(os.path.join(args.out, "failed.txt"), "w") as f:
            f.write("\n".join(failed) + "\n")
    return 0 if not failed else 2


if __name__ == "__main__":
    sys.exit(main())
