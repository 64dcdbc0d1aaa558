"""Analyze audio files with a BirdNET-style PyTorch model.

Splits each recording into 3 s chunks (with optional overlap), computes mel
spectrograms on the device, runs the classifier and writes Raven selection
tables / CSV / audacity labels, like the original BirdNET-Analyzer.

    python -m birdnet_pt.analyze --i recordings/ --o results/ \
        --lat 42.5 --lon -76.45 --week 20 --min_conf 0.25 --device cuda --batchsize 64
"""

import argparse
import csv
import datetime
import logging
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import soundfile as sf
import torch
import torchaudio

from birdnet_pt import config as cfg
from birdnet_pt.audio import MelFrontend, open_audio_file, split_signal
from birdnet_pt.model import BirdNetClassifier
from birdnet_pt.species import SpeciesFilter

try:
    import pynvml
    pynvml.nvmlInit()
    _NVML = True
except Exception:
    _NVML = False

logger = logging.getLogger("birdnet_pt.analyze")


def pick_batch_size(device: torch.device, requested: int) -> int:
    """Shrink the batch if the GPU is shared with other jobs (our recorder box runs 3 analyzers)."""
    if device.type != "cuda" or not _NVML:
        return requested
    handle = pynvml.nvmlDeviceGetHandleByIndex(device.index or 0)
    info = pynvml.nvmlDeviceGetMemoryInfo(handle)
    free_gb = info.free / 2 ** 30
    # ~45 MB per 3 s chunk for the medium model in fp16 incl. the mel frontend
    fit = int(free_gb * 0.7 / 0.045)
    bs = max(1, min(requested, fit))
    if bs < requested:
        logger.warning("GPU has only %.1f GB free, reducing batch size %d -> %d", free_gb, requested, bs)
    return bs


def load_model(args, device):
    model = BirdNetClassifier.from_checkpoint(cfg.MODEL_PATH, num_classes=len(cfg.LABELS))
    model.eval().to(device)
    if args.fp16 and device.type == "cuda":
        model.half()
    frontend = MelFrontend(sample_rate=cfg.SAMPLE_RATE, n_fft=cfg.N_FFT, hop_length=cfg.HOP_LENGTH,
                           n_mels=cfg.N_MELS, fmin=cfg.SIG_FMIN, fmax=cfg.SIG_FMAX).to(device)
    return model, frontend


@torch.no_grad()
def predict_chunks(model, frontend, chunks: np.ndarray, device, batch_size, fp16):
    """chunks: [N, samples] float32 numpy -> [N, C] sigmoid scores (numpy)."""
    out = []
    for i in range(0, len(chunks), batch_size):
        x = torch.from_numpy(chunks[i:i + batch_size]).pin_memory().to(device, non_blocking=True)
        spec = frontend(x)
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=fp16):
            logits = model(spec)
        out.append(torch.sigmoid(logits.float() * cfg.SIGMOID_SENSITIVITY).cpu())
    return torch.cat(out).numpy()


def write_raven(path, detections):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(["Selection", "View", "Channel", "Begin Time (s)", "End Time (s)",
                    "Low Freq (Hz)", "High Freq (Hz)", "Common Name", "Species Code", "Confidence"])
        for n, d in enumerate(detections, 1):
            w.writerow([n, "Spectrogram 1", 1, f"{d['start']:.1f}", f"{d['end']:.1f}",
                        cfg.SIG_FMIN, cfg.SIG_FMAX, d["common"], d["code"], f"{d['conf']:.4f}"])


def write_csv(path, detections):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Start (s)", "End (s)", "Scientific name", "Common name", "Confidence"])
        for d in detections:
            w.writerow([f"{d['start']:.1f}", f"{d['end']:.1f}", d["sci"], d["common"], f"{d['conf']:.4f}"])


def analyze_file(fpath, args, model, frontend, device, species_filter, batch_size):
    start = time.time()
    try:
        sig, rate = open_audio_file(fpath, cfg.SAMPLE_RATE, offset=0, duration=None)
    except Exception as e:  # noqa: BLE001
        logger.error("cannot open %s: %s", fpath, e)
        return None

    chunks, starts = split_signal(sig, rate, cfg.SIG_LENGTH, args.overlap, cfg.SIG_MINLEN)
    if len(chunks) == 0:
        return []
    scores = predict_chunks(model, frontend, np.stack(chunks), device, batch_size, args.fp16)

    detections = []
    allowed = species_filter.allowed if species_filter is not None else None
    for t0, row in zip(starts, scores):
        idx = np.argsort(row)[::-1][:args.top_n]
        for j in idx:
            if row[j] < args.min_conf:
                break
            if allowed is not None and j not in allowed:
                continue
            sci, common = cfg.LABELS[j].split("_", 1)
            detections.append({"start": t0, "end": t0 + cfg.SIG_LENGTH, "sci": sci, "common": common,
                               "code": cfg.CODES.get(cfg.LABELS[j], "NA"), "conf": float(row[j])})

    rel = os.path.relpath(fpath, args.i) if os.path.isdir(args.i) else os.path.basename(fpath)
    base = os.path.join(args.o, os.path.splitext(rel)[0])
    os.makedirs(os.path.dirname(base) or ".", exist_ok=True)
    if args.rtype in ("table", "all"):
        write_raven(base + ".BirdNET.selection.table.txt", detections)
    if args.rtype in ("csv", "all"):
        write_csv(base + ".BirdNET.results.csv", detections)
    logger.info("%s: %d detections in %.2fs", rel, len(detections), time.time() - start)
    return detections


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--i", default="example/", help="input file or folder")
    p.add_argument("--o", default="example/", help="output folder")
    p.add_argument("--lat", type=float, default=-1)
    p.add_argument("--lon", type=float, default=-1)
    p.add_argument("--week", type=int, default=-1, help="1-48, -1 for year-round")
    p.add_argument("--slist", default="", help="custom species list file")
    p.add_argument("--sf_thresh", type=float, default=0.03, help="location filter threshold")
    p.add_argument("--min_conf", type=float, default=0.1)
    p.add_argument("--overlap", type=float, default=0.0, help="0.0-2.9 s")
    p.add_argument("--top_n", type=int, default=3)
    p.add_argument("--rtype", default="table", choices=["table", "csv", "all"])
    p.add_argument("--batchsize", type=int, default=32)
    p.add_argument("--threads", type=int, default=4, help="file-reading threads")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="device to run the model on")
    p.add_argument("--gpu_id", type=int, default=0)
    p.add_argument("--fp16", action="store_true", help="half precision inference (GPU only)")
    return p.parse_args(argv)


def main(argv=None):
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = parse_args(argv)

    if args.device == "cuda" and not torch.cuda.is_available():
        logger.warning("CUDA requested but not available, falling back to CPU (this will be slow)")
        args.device = "cpu"
    device = torch.device(f"cuda:{args.gpu_id}" if args.device == "cuda" else "cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cudnn.benchmark = True

    model, frontend = load_model(args, device)
    batch_size = pick_batch_size(device, args.batchsize)

    species_filter = None
    if args.slist or (args.lat != -1 and args.lon != -1):
        species_filter = SpeciesFilter(cfg.MDATA_MODEL_PATH, args.lat, args.lon, args.week,
                                       args.sf_thresh, slist=args.slist)
        logger.info("species list: %d species", len(species_filter.allowed))

    if os.path.isdir(args.i):
        files = [os.path.join(d, f) for d, _, fs in os.walk(args.i) for f in sorted(fs)
                 if f.lower().endswith(cfg.ALLOWED_FILETYPES)]
    else:
        files = [args.i]
    logger.info("found %d audio files", len(files))

    t0 = time.time()
    # Decode audio in threads; the model runs in the main thread on the GPU
    with ThreadPoolExecutor(max_workers=args.threads) as pool:
        futures = [pool.submit(analyze_file, f, args, model, frontend, device, species_filter, batch_size)
                   for f in files]
        n_det = sum(len(fu.result() or []) for fu in futures)
    logger.info("analyzed %d files in %s, %d detections", len(files),
                datetime.timedelta(seconds=int(time.time() - t0)), n_det)


if __name__ == "__main__":
    main()
