"""
Batch prediction over pre-processed HDF5 files (the ``predictor`` step of the
original EQTransformer workflow: downloader -> preprocessor -> predictor -> associator).

Usage:
    python -m eqtransformer.predictor --config configs/predict.json

The JSON config mirrors the keyword arguments of the Keras ``predictor()`` function.
"""
import argparse
import csv
import json
import logging
import os
import time
from datetime import datetime, timedelta
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import torch
from scipy.signal import find_peaks
from tqdm import tqdm

from .model import EQTransformer, flatten_lstm_weights

logger = logging.getLogger("eqt.predictor")

DEFAULTS = {
    "input_dir": "downloads_processed_hdfs",
    "input_model": "EqT_model.pt",
    "output_dir": "detections",
    "detection_threshold": 0.3,
    "P_threshold": 0.1,
    "S_threshold": 0.1,
    "number_of_plots": 10,
    "estimate_uncertainty": False,
    "number_of_sampling": 5,
    "batch_size": 500,
    "gpuid": None,
    "gpu_limit": None,
    "half_precision": False,
    "keepPS": False,
    "spLimit": 60,
}


def _normalize(data, mode="std"):
    data = data - np.mean(data, axis=0, keepdims=True)
    if mode == "max":
        max_data = np.max(np.abs(data), axis=0, keepdims=True)
        max_data[max_data == 0] = 1
        return data / max_data
    std_data = np.std(data, axis=0, keepdims=True)
    std_data[std_data == 0] = 1
    return data / std_data


def select_device(gpuid, gpu_limit):
    """
    Mimics the tensorflow GPU options of the original code: ``gpuid`` chooses the
    card, ``gpu_limit`` caps the fraction of its memory the process may take.
    """
    if gpuid is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(gpuid)
    if not torch.cuda.is_available():
        logger.warning("No GPU found, predicting on CPU. This will be slow.")
        return torch.device("cpu")
    device = torch.device("cuda:0")
    if gpu_limit is not None:
        torch.cuda.set_per_process_memory_fraction(float(gpu_limit), device=0)
    logger.info("Using %s", torch.cuda.get_device_name(device))
    return device


def load_model(path, device, half=False):
    model = EQTransformer(in_samples=6000)
    state = torch.load(path, map_location=device)
    model.load_state_dict(state["model"] if "model" in state else state)
    model.to(device)
    flatten_lstm_weights(model)
    model.eval()
    if half:
        model.half()
    return model


def mc_dropout_predict(model, x, n_samples):
    """Monte Carlo dropout: keep dropout active and average the runs."""
    model.train()
    runs = [torch.stack(model(x), dim=1) for _ in range(n_samples)]
    model.eval()
    runs = torch.stack(runs, dim=0)
    return runs.mean(0), runs.std(0)


def picker(args, yh1, yh2, yh3, yh1_std, yh2_std, yh3_std):
    detection = find_peaks(yh1, height=args["detection_threshold"], distance=100)[0]
    p_peaks, p_props = find_peaks(yh2, height=args["P_threshold"], distance=100)
    s_peaks, s_props = find_peaks(yh3, height=args["S_threshold"], distance=100)

    events = []
    for d in detection:
        start = d
        while start > 0 and yh1[start] > args["detection_threshold"]:
            start -= 1
        end = d
        while end < len(yh1) - 1 and yh1[end] > args["detection_threshold"]:
            end += 1
        ps = [p for p in p_peaks if start - 100 <= p <= end]
        ss = [s for s in s_peaks if start <= s <= end + 100]
        p = ps[0] if ps else None
        s = ss[0] if ss else None
        if args["keepPS"] and (p is None or s is None):
            continue
        if p is not None and s is not None and (s - p) / 100.0 > args["spLimit"]:
            continue
        events.append({
            "start": start, "end": end,
            "det_prob": float(yh1[d]), "det_unc": float(yh1_std[d]) if yh1_std is not None else None,
            "p": p, "p_prob": float(yh2[p]) if p is not None else None,
            "p_unc": float(yh2_std[p]) if (p is not None and yh2_std is not None) else None,
            "s": s, "s_prob": float(yh3[s]) if s is not None else None,
            "s_unc": float(yh3_std[s]) if (s is not None and yh3_std is not None) else None,
        })
    return events


def predict_station(model, device, h5_path, csv_path, args, writer):
    meta = pd.read_csv(csv_path)
    trace_names = meta["trace_name"].tolist()
    bs = args["batch_size"]
    n_events = 0

    with h5py.File(h5_path, "r") as f:
        for i0 in tqdm(range(0, len(trace_names), bs), desc=Path(h5_path).stem, leave=False):
            names = trace_names[i0:i0 + bs]
            batch = np.stack([_normalize(np.array(f["data"][n]), "std") for n in names])  # (B, 6000, 3)
            x = torch.from_numpy(batch.transpose(0, 2, 1).astype(np.float32)).to(device)
            if args["half_precision"]:
                x = x.half()

            with torch.no_grad():
                if args["estimate_uncertainty"]:
                    mean, std = mc_dropout_predict(model, x, args["number_of_sampling"])
                    det, pp, ss = mean[:, 0], mean[:, 1], mean[:, 2]
                    det_s, pp_s, ss_s = std[:, 0], std[:, 1], std[:, 2]
                else:
                    det, pp, ss = model(x)
                    det_s = pp_s = ss_s = None

            det = det.float().cpu().numpy()
            pp = pp.float().cpu().numpy()
            ss = ss.float().cpu().numpy()
            if det_s is not None:
                det_s, pp_s, ss_s = (t.float().cpu().numpy() for t in (det_s, pp_s, ss_s))

            for j, name in enumerate(names):
                events = picker(args, det[j], pp[j], ss[j],
                                None if det_s is None else det_s[j],
                                None if pp_s is None else pp_s[j],
                                None if ss_s is None else ss_s[j])
                start_time = datetime.strptime(name.split("_")[-1], "%Y-%m-%dT%H:%M:%S.%fZ")
                for ev in events:
                    writer.writerow([
                        name,
                        (start_time + timedelta(seconds=ev["start"] / 100)).isoformat(),
                        ev["det_prob"], ev["det_unc"],
                        None if ev["p"] is None else (start_time + timedelta(seconds=ev["p"] / 100)).isoformat(),
                        ev["p_prob"], ev["p_unc"],
                        None if ev["s"] is None else (start_time + timedelta(seconds=ev["s"] / 100)).isoformat(),
                        ev["s_prob"], ev["s_unc"],
                    ])
                    n_events += 1

        # free the activations of the big batch before the next station
        del x
        torch.cuda.empty_cache()
    return n_events


def predictor(**kwargs):
    args = dict(DEFAULTS)
    args.update(kwargs)

    device = select_device(args["gpuid"], args["gpu_limit"])
    model = load_model(args["input_model"], device, half=args["half_precision"])

    out_dir = Path(args["output_dir"])
    out_dir.mkdir(parents=True, exist_ok=True)
    stations = sorted(p.stem for p in Path(args["input_dir"]).glob("*.hdf5"))
    logger.info("Found %d stations", len(stations))

    t0 = time.time()
    total = 0
    for st in stations:
        h5_path = Path(args["input_dir"]) / f"{st}.hdf5"
        csv_path = Path(args["input_dir"]) / f"{st}.csv"
        st_dir = out_dir / f"{st}_outputs"
        st_dir.mkdir(exist_ok=True)
        with open(st_dir / "X_prediction_results.csv", "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["file_name", "event_start_time", "detection_probability", "detection_uncertainty",
                             "p_arrival_time", "p_probability", "p_uncertainty",
                             "s_arrival_time", "s_probability", "s_uncertainty"])
            n = predict_station(model, device, h5_path, csv_path, args, writer)
        total += n
        logger.info("%s: %d events", st, n)

    elapsed = time.time() - t0
    logger.info("Finished %d stations, %d events in %.1f min", len(stations), total, elapsed / 60)
    with open(out_dir / "run_summary.json", "w") as f:
        json.dump({"stations": len(stations), "events": total, "seconds": elapsed,
                   "device": str(device), "half_precision": args["half_precision"]}, f, indent=2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--gpuid", type=int, default=None, help="overrides the config")
    cli = parser.parse_args()
    with open(cli.config) as f:
        cfg = json.load(f)
    if cli.gpuid is not None:
        cfg["gpuid"] = cli.gpuid
    logging.basicConfig(level=logging.INFO)
    predictor(**cfg)


if __name__ == "__main__":
    main()
