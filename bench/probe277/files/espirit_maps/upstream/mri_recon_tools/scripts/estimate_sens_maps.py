"""Pre-compute ESPIRiT coil sensitivity maps for fastMRI multi-coil volumes.

The maps are written next to the k-space as ``<fname>_espirit.h5`` and are
consumed by the MoDL / SENSE-based baselines (VarNet estimates its own maps).

    python scripts/estimate_sens_maps.py --data_dir /data/fastMRI/knee/multicoil_train \
        --out_dir /data/fastMRI/knee/maps_train --calib 24 --gpu 0 --workers 1

ESPIRiT runs through SigPy; with ``--gpu >= 0`` it runs on CuPy, which is
~20x faster than the CPU path for 15-coil 640x368 slices.
"""
import argparse
import glob
import logging
import os
import time

import h5py
import numpy as np
import sigpy as sp
import sigpy.mri as mr
import torch

try:
    import cupy as cp
except ImportError:  # CPU-only install
    cp = None

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
log = logging.getLogger("espirit")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data_dir", required=True)
    p.add_argument("--out_dir", required=True)
    p.add_argument("--calib", type=int, default=24, help="ACS width for ESPIRiT")
    p.add_argument("--kernel_width", type=int, default=6)
    p.add_argument("--thresh", type=float, default=0.02)
    p.add_argument("--crop", type=float, default=0.95)
    p.add_argument("--gpu", type=int, default=0, help="-1 for CPU")
    p.add_argument("--overwrite", action="store_true")
    p.add_argument("--max_files", type=int, default=None)
    return p.parse_args()


def get_sp_device(gpu):
    """SigPy device: sp.Device(-1) is CPU, sp.Device(i) is GPU i (needs CuPy)."""
    if gpu >= 0 and cp is not None:
        return sp.Device(gpu)
    return sp.cpu_device


def espirit_slice(ksp, device, calib, kernel_width, thresh, crop):
    """ksp: [coils, ky, kx] complex64 numpy array -> maps [coils, ky, kx]"""
    xp = device.xp
    with device:
        ksp_dev = sp.to_device(ksp, device)
        maps = mr.app.EspiritCalib(ksp_dev,
                                   calib_width=calib,
                                   kernel_width=kernel_width,
                                   thresh=thresh,
                                   crop=crop,
                                   device=device,
                                   show_pbar=False).run()
        maps = xp.asarray(maps, dtype=xp.complex64)
    return sp.to_device(maps, sp.cpu_device)


def zero_filled_sense(ksp, maps):
    """quick sanity image: sum_c conj(S_c) * IFFT(k_c), on torch (GPU if available)"""
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    k = torch.from_numpy(ksp).to(dev)
    s = torch.from_numpy(maps).to(dev)
    img = torch.fft.fftshift(torch.fft.ifft2(torch.fft.ifftshift(k, dim=(-2, -1)), norm="ortho"), dim=(-2, -1))
    return torch.sum(img * s.conj(), dim=0).abs().cpu().numpy()


def process_file(path, out_path, device, args):
    with h5py.File(path, "r") as hf:
        kspace = hf["kspace"][()]  # [slices, coils, ky, kx]
        attrs = dict(hf.attrs)
    n_slices = kspace.shape[0]
    maps = np.zeros_like(kspace, dtype=np.complex64)
    sanity = np.zeros((n_slices,) + kspace.shape[2:], dtype=np.float32)
    t0 = time.time()
    for s in range(n_slices):
        maps[s] = espirit_slice(kspace[s], device, args.calib, args.kernel_width, args.thresh, args.crop)
        sanity[s] = zero_filled_sense(kspace[s], maps[s])
    if device != sp.cpu_device:
        cp.get_default_memory_pool().free_all_blocks()
    with h5py.File(out_path, "w") as hf:
        hf.create_dataset("sens_maps", data=maps, compression="gzip")
        hf.create_dataset("sense_zf", data=sanity)
        for k, v in attrs.items():
            hf.attrs[k] = v
        hf.attrs["espirit_calib"] = args.calib
        hf.attrs["espirit_thresh"] = args.thresh
    return n_slices, time.time() - t0


def main():
    args = parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    device = get_sp_device(args.gpu)
    log.info("ESPIRiT on %s", "GPU %d" % args.gpu if device != sp.cpu_device else "CPU")
    if device != sp.cpu_device:
        cp.cuda.Device(args.gpu).use()

    files = sorted(glob.glob(os.path.join(args.data_dir, "*.h5")))
    if args.max_files is not None:
        files = files[: args.max_files]
    total_slices, total_time = 0, 0.0
    for i, f in enumerate(files):
        out = os.path.join(args.out_dir, os.path.basename(f).replace(".h5", "_espirit.h5"))
        if os.path.exists(out) and not args.overwrite:
            continue
        n, dt = process_file(f, out, device, args)
        total_slices += n
        total_time += dt
        log.info("[%d/%d] %s: %d slices in %.1fs (%.2fs/slice)", i + 1, len(files),
                 os.path.basename(f), n, dt, dt / max(n, 1))
    log.info("done: %d slices, %.1f min", total_slices, total_time / 60)


if __name__ == "__main__":
    main()
