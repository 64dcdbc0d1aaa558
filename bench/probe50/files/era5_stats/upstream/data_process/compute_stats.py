"""Global mean / std / time-mean climatology of the ERA5 training years.

One rank per GPU reads a disjoint set of (year, time-chunk) blocks from the HDF5 archive,
accumulates per-channel sums on the device, and the partial sums are all-reduced at the end.
Percentiles for the precipitation log-transform are computed with CuPy on the gathered sample.

    mpirun -np 8 python data_process/compute_stats.py --data-dir /data/era5/train --out-dir /data/era5/stats
"""
import argparse
import glob
import os
import time

import cupy as cp
import h5py
import numpy as np
import torch
import torch.distributed as dist
from mpi4py import MPI


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--chunk", type=int, default=64, help="time steps per read")
    p.add_argument("--tp-channel", type=int, default=20, help="index of total precipitation")
    p.add_argument("--tp-sample", type=int, default=2000, help="time steps sampled for percentiles")
    return p.parse_args()


def setup():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    local_rank = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", rank % torch.cuda.device_count()))
    torch.cuda.set_device(local_rank)
    cp.cuda.Device(local_rank).use()
    os.environ.setdefault("MASTER_ADDR", comm.bcast(os.uname().nodename if rank == 0 else None, root=0))
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group("nccl", rank=rank, world_size=size)
    return comm, rank, size, torch.device("cuda", local_rank)


def work_items(files, chunk):
    items = []
    for f in files:
        with h5py.File(f, "r") as h:
            n = h["fields"].shape[0]
        items += [(f, s, min(s + chunk, n)) for s in range(0, n, chunk)]
    return items


def main():
    args = parse_args()
    comm, rank, size, device = setup()
    files = sorted(glob.glob(os.path.join(args.data_dir, "*.h5")))
    items = work_items(files, args.chunk)[rank::size]

    with h5py.File(files[0], "r") as h:
        _, n_chan, n_lat, n_lon = h["fields"].shape

    # float64 accumulators: ~40 years x 1460 steps x 1M grid points per channel
    s1 = torch.zeros(n_chan, dtype=torch.float64, device=device)
    s2 = torch.zeros(n_chan, dtype=torch.float64, device=device)
    tmean = torch.zeros(n_chan, n_lat, n_lon, dtype=torch.float64, device=device)
    count = torch.zeros(1, dtype=torch.float64, device=device)

    t0 = time.time()
    for k, (path, start, stop) in enumerate(items):
        with h5py.File(path, "r") as h:
            block = h["fields"][start:stop]
        x = torch.from_numpy(block).to(device, non_blocking=True).double()
        s1 += x.sum(dim=(0, 2, 3))
        s2 += (x * x).sum(dim=(0, 2, 3))
        tmean += x.sum(dim=0)
        count += x.shape[0]
        if rank == 0 and k % 20 == 0:
            print(f"[{k}/{len(items)}] {time.time() - t0:.0f}s", flush=True)

    for t in (s1, s2, tmean, count):
        dist.all_reduce(t)

    n_pts = count.item() * n_lat * n_lon
    mean = s1 / n_pts
    std = torch.sqrt(s2 / n_pts - mean * mean)
    tmean = tmean / count

    # precipitation percentiles on a random subsample, gathered on rank 0 (CuPy sort is much
    # faster than numpy for ~2e9 values)
    rng = np.random.default_rng(1234 + rank)
    local_idx = rng.choice(len(items), size=max(1, args.tp_sample // (size * args.chunk)), replace=False)
    samples = []
    for i in local_idx:
        path, start, stop = items[i]
        with h5py.File(path, "r") as h:
            samples.append(h["fields"][start:stop, args.tp_channel])
    local = np.concatenate(samples).ravel().astype(np.float32)
    gathered = comm.gather(local, root=0)

    if rank == 0:
        tp = cp.asarray(np.concatenate(gathered))
        tp = cp.log1p(tp / 1e-5)
        q = cp.percentile(tp, cp.asarray([50.0, 90.0, 99.0, 99.9]))
        q = cp.asnumpy(q)

        os.makedirs(args.out_dir, exist_ok=True)
        np.save(os.path.join(args.out_dir, "global_means.npy"), mean.cpu().numpy().reshape(1, -1, 1, 1).astype(np.float32))
        np.save(os.path.join(args.out_dir, "global_stds.npy"), std.cpu().numpy().reshape(1, -1, 1, 1).astype(np.float32))
        np.save(os.path.join(args.out_dir, "time_means.npy"), tmean.cpu().numpy()[None].astype(np.float32))
        np.save(os.path.join(args.out_dir, "tp_log_percentiles.npy"), q)
        print("means", mean.cpu().numpy())
        print("stds", std.cpu().numpy())
        print("tp log percentiles (50/90/99/99.9):", q)

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
