"""Criteo 1TB click logs -> parquet features with NVTabular.

Continuous columns: fill missing with 0, clip at 0, log(1+x), normalize.
Categorical columns: frequency-capped Categorify (hashed above the cap).
Runs on a Dask-CUDA cluster with one worker per GPU.
"""
import argparse
import glob
import os
import shutil
import time

import cudf
import nvtabular as nvt
import rmm
from dask.distributed import Client
from dask_cuda import LocalCUDACluster
from nvtabular import ops
from nvtabular.utils import device_mem_size

CONTINUOUS_COLUMNS = [f"I{i}" for i in range(1, 14)]
CATEGORICAL_COLUMNS = [f"C{i}" for i in range(1, 27)]
LABEL_COLUMNS = ["label"]
COLUMNS = LABEL_COLUMNS + CONTINUOUS_COLUMNS + CATEGORICAL_COLUMNS


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", required=True, help="directory with day_*.parquet")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--devices", default="0,1,2,3,4,5,6,7", help="comma separated GPU ids")
    parser.add_argument("--device-limit-frac", type=float, default=0.8)
    parser.add_argument("--device-pool-frac", type=float, default=0.9)
    parser.add_argument("--part-mem-frac", type=float, default=0.125)
    parser.add_argument("--freq-limit", type=int, default=15)
    parser.add_argument("--protocol", default="tcp", choices=["tcp", "ucx"])
    parser.add_argument("--train-days", type=int, default=23)
    parser.add_argument("--dashboard-port", default="8787")
    return parser.parse_args()


def setup_rmm_pool(client, pool_size):
    client.run(rmm.reinitialize, pool_allocator=True, initial_pool_size=pool_size)
    return None


def make_cluster(args):
    device_size = device_mem_size(kind="total")
    device_limit = int(args.device_limit_frac * device_size)
    device_pool_size = int(args.device_pool_frac * device_size)

    cluster = LocalCUDACluster(
        protocol=args.protocol,
        CUDA_VISIBLE_DEVICES=args.devices,
        n_workers=len(args.devices.split(",")),
        device_memory_limit=device_limit,
        local_directory=os.path.join(args.out_dir, "dask-workdir"),
        dashboard_address=":" + args.dashboard_port,
    )
    client = Client(cluster)
    setup_rmm_pool(client, device_pool_size)
    return client, device_size


def build_workflow(freq_limit):
    cont = CONTINUOUS_COLUMNS >> ops.FillMissing(fill_val=0) >> ops.Clip(min_value=0) \
        >> ops.LogOp() >> ops.Normalize()
    cat = CATEGORICAL_COLUMNS >> ops.Categorify(freq_threshold=freq_limit, out_path="categories",
                                                max_size=10_000_000)
    label = LABEL_COLUMNS >> ops.AddMetadata(tags=["binary_classification", "target"])
    return nvt.Workflow(cont + cat + label)


def inspect_sample(path):
    """Quick sanity check on one file before launching the cluster."""
    df = cudf.read_parquet(path, columns=COLUMNS, num_rows=100_000)
    na = df.isna().sum().to_pandas()
    print("null fraction per column (first 100k rows):")
    print((na / len(df)).round(3).to_string())
    return len(df)


def main():
    args = parse_args()
    files = sorted(glob.glob(os.path.join(args.data_dir, "day_*.parquet")))
    train_paths, valid_paths = files[: args.train_days], files[args.train_days:]
    inspect_sample(train_paths[0])

    client, device_size = make_cluster(args)
    part_size = int(args.part_mem_frac * device_size)

    dtypes = {c: "float32" for c in CONTINUOUS_COLUMNS}
    dtypes.update({c: "int64" for c in CATEGORICAL_COLUMNS})
    dtypes["label"] = "float32"

    train_ds = nvt.Dataset(train_paths, engine="parquet", part_size=part_size)
    valid_ds = nvt.Dataset(valid_paths, engine="parquet", part_size=part_size)

    workflow = build_workflow(args.freq_limit)

    t0 = time.time()
    workflow.fit(train_ds)
    print(f"fit took {time.time() - t0:.1f}s")

    out_train = os.path.join(args.out_dir, "train")
    out_valid = os.path.join(args.out_dir, "valid")
    for d in (out_train, out_valid):
        shutil.rmtree(d, ignore_errors=True)

    t0 = time.time()
    workflow.transform(train_ds).to_parquet(
        output_path=out_train, shuffle=nvt.io.Shuffle.PER_PARTITION, out_files_per_proc=8,
        dtypes=dtypes, cats=CATEGORICAL_COLUMNS, conts=CONTINUOUS_COLUMNS, labels=LABEL_COLUMNS,
    )
    workflow.transform(valid_ds).to_parquet(
        output_path=out_valid, shuffle=None, out_files_per_proc=None,
        dtypes=dtypes, cats=CATEGORICAL_COLUMNS, conts=CONTINUOUS_COLUMNS, labels=LABEL_COLUMNS,
    )
    print(f"transform took {time.time() - t0:.1f}s")
    workflow.save(os.path.join(args.out_dir, "workflow"))
    client.close()


if __name__ == "__main__":
    main()
