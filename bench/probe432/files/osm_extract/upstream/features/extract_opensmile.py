"""Extract openSMILE functionals / low-level descriptors for a corpus.

    python features/extract_opensmile.py --csv data/iemocap.csv --out feats/egemaps.pkl \
        --feature-set eGeMAPSv02 --level functionals --jobs 16

The resulting table is indexed by (file, start, end) like every audformat/opensmile
output and is what `train.py --features` expects.
"""
import argparse
import logging
import os

import audiofile
import numpy as np
import opensmile
import pandas as pd

log = logging.getLogger("extract_opensmile")

FEATURE_SETS = {
    "eGeMAPSv02": opensmile.FeatureSet.eGeMAPSv02,
    "GeMAPSv01b": opensmile.FeatureSet.GeMAPSv01b,
    "ComParE_2016": opensmile.FeatureSet.ComParE_2016,
    "emobase": opensmile.FeatureSet.emobase,
}
LEVELS = {
    "functionals": opensmile.FeatureLevel.Functionals,
    "lld": opensmile.FeatureLevel.LowLevelDescriptors,
    "lld_de": opensmile.FeatureLevel.LowLevelDescriptors_Deltas,
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--csv", required=True, help="csv with columns file,label[,speaker,session]")
    p.add_argument("--root", default="", help="prefix prepended to relative file paths")
    p.add_argument("--out", required=True)
    p.add_argument("--feature-set", default="eGeMAPSv02", choices=sorted(FEATURE_SETS))
    p.add_argument("--level", default="functionals", choices=sorted(LEVELS))
    p.add_argument("--sampling-rate", type=int, default=16000)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="openSMILE runs on the CPU; parallelise over files")
    p.add_argument("--min-duration", type=float, default=0.25, help="pad shorter files with silence")
    return p.parse_args()


def load_signal(path, sampling_rate, min_duration):
    signal, sr = audiofile.read(path, always_2d=True)
    signal = signal.mean(axis=0)
    if sr != sampling_rate:
        import audresample
        signal = audresample.resample(signal, sr, sampling_rate)[0]
    n_min = int(min_duration * sampling_rate)
    if len(signal) < n_min:
        signal = np.pad(signal, (0, n_min - len(signal)))
    return signal.astype(np.float32)


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    table = pd.read_csv(args.csv)
    files = [os.path.join(args.root, f) for f in table["file"]]
    log.info("%d files, feature set %s (%s)", len(files), args.feature_set, args.level)

    smile = opensmile.Smile(
        feature_set=FEATURE_SETS[args.feature_set],
        feature_level=LEVELS[args.level],
        sampling_rate=args.sampling_rate,
        resample=True,
        num_workers=args.jobs,
        multiprocessing=args.jobs > 1,
        verbose=True,
    )

    short = [f for f in files if audiofile.duration(f) < args.min_duration]
    if short:
        log.warning("%d files shorter than %.2fs will be padded", len(short), args.min_duration)

    feats = []
    long_files = [f for f in files if f not in set(short)]
    if long_files:
        feats.append(smile.process_files(long_files))
    for f in short:
        signal = load_signal(f, args.sampling_rate, args.min_duration)
        df = smile.process_signal(signal, args.sampling_rate, file=f)
        feats.append(df)
    df = pd.concat(feats)

    n_nan = int(df.isna().sum().sum())
    if n_nan:
        log.warning("%d NaN values, replacing with 0", n_nan)
        df = df.fillna(0.0)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    df.to_pickle(args.out)
    log.info("wrote %s with shape %s", args.out, df.shape)


if __name__ == "__main__":
    main()
