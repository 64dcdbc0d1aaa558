#!/usr/bin/env python
"""
Pick one day of continuous data for a list of stations with a pretrained
SeisBench picker and write the picks to CSV.

Example:
    python annotate_day.py --network CI --stations stations.txt --day 2019-07-06 \
        --model PhaseNet --weights original --batch-size 1024

Runs on the first GPU if available (set CUDA_VISIBLE_DEVICES to choose another one).
"""
import argparse
import logging
import time
from pathlib import Path

import pandas as pd
import torch
from obspy import UTCDateTime
from obspy.clients.fdsn import Client

import seisbench.models as sbm

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("annotate_day")

PICKERS = {
    "phasenet": sbm.PhaseNet,
    "eqtransformer": sbm.EQTransformer,
    "gpd": sbm.GPD,
    "basicphaseae": sbm.BasicPhaseAE,
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--network", default="CI")
    p.add_argument("--stations", type=Path, required=True, help="text file, one station code per line")
    p.add_argument("--day", required=True, help="YYYY-MM-DD")
    p.add_argument("--client", default="SCEDC")
    p.add_argument("--model", default="phasenet", choices=sorted(PICKERS))
    p.add_argument("--weights", default="original")
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--p-threshold", type=float, default=0.3)
    p.add_argument("--s-threshold", type=float, default=0.3)
    p.add_argument("--out", type=Path, default=Path("picks"))
    p.add_argument("--cpu", action="store_true", help="force CPU even if a GPU is present")
    return p.parse_args()


def load_picker(name, weights, use_gpu):
    model = PICKERS[name].from_pretrained(weights)
    if use_gpu:
        model.cuda()
        log.info("Model moved to %s", torch.cuda.get_device_name(0))
    else:
        log.info("Running on CPU")
    model.eval()
    return model


def fetch_day(client, network, station, day):
    t0 = UTCDateTime(day)
    t1 = t0 + 86400
    st = client.get_waveforms(network=network, station=station, location="*", channel="HH?,BH?,EH?",
                              starttime=t0, endtime=t1)
    st.merge(method=1, fill_value="interpolate")
    return st


def picks_to_frame(picks, station):
    rows = []
    for pick in picks:
        rows.append({
            "station": station,
            "trace_id": pick.trace_id,
            "phase": pick.phase,
            "time": str(pick.peak_time),
            "prob": float(pick.peak_value),
        })
    return pd.DataFrame(rows)


def main():
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    use_gpu = torch.cuda.is_available() and not args.cpu

    model = load_picker(args.model, args.weights, use_gpu)
    client = Client(args.client)
    stations = [s.strip() for s in args.stations.read_text().splitlines() if s.strip()]

    frames = []
    for station in stations:
        try:
            st = fetch_day(client, args.network, station, args.day)
        except Exception as e:  # FDSN services fail regularly, just skip the station
            log.warning("No data for %s.%s: %s", args.network, station, e)
            continue

        t_start = time.time()
        output = model.classify(st, batch_size=args.batch_size,
                                P_threshold=args.p_threshold, S_threshold=args.s_threshold)
        if use_gpu:
            torch.cuda.synchronize()
        log.info("%s: %d picks in %.1f s", station, len(output.picks), time.time() - t_start)
        frames.append(picks_to_frame(output.picks, station))

    if frames:
        df = pd.concat(frames, ignore_index=True)
        out_file = args.out / f"{args.network}_{args.day}_{args.model}.csv"
        df.to_csv(out_file, index=False)
        log.info("Wrote %d picks to %s", len(df), out_file)

    if use_gpu:
        log.info("Peak GPU memory: %.2f GB", torch.cuda.max_memory_allocated() / 1e9)


if __name__ == "__main__":
    main()
