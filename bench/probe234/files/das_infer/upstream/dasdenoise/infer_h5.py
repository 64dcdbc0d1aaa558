"""
Denoise a long DAS recording stored as HDF5 (channels x samples) in overlapping
tiles, overlapping host->device copies with compute on a side stream.

    python -m dasdenoise.infer_h5 ckpt.pt raw/Ridgecrest_2019-07-06.h5 out/denoised.h5 \
        --tile 1024 2048 --overlap 128 256 --gpu 0 --fp16

A 4 h, 5000-channel, 250 Hz record takes ~6 min on one A100.
"""
import argparse
import logging
import math
import time

import h5py
import numpy as np
import torch
import torch.nn.functional as F

from dasdenoise.models.unet import build_model

log = logging.getLogger("dasdenoise.infer")


def tile_starts(n, tile, overlap):
    step = tile - overlap
    starts = list(range(0, max(n - tile, 0) + 1, step))
    if starts[-1] + tile < n:
        starts.append(n - tile)
    return starts


def blend_window(tile, overlap):
    """Separable cosine window so overlapping tiles sum to one."""
    wins = []
    for t, o in zip(tile, overlap):
        w = np.ones(t, dtype=np.float32)
        if o > 0:
            ramp = 0.5 * (1 - np.cos(np.linspace(0, np.pi, o, dtype=np.float32)))
            w[:o] = ramp
            w[-o:] = ramp[::-1]
        wins.append(w)
    return np.outer(wins[0], wins[1])


def auto_batch_size(tile, device, bytes_per_px=220, reserve_gb=4.0):
    """Rough batch size from free device memory (measured ~220 B/pixel for base=32, depth=4, fp16)."""
    total = torch.cuda.get_device_properties(device).total_memory
    usable = max(total - reserve_gb * 2 ** 30, 2 ** 30)
    return max(1, int(usable // (tile[0] * tile[1] * bytes_per_px)))


class TileReader:
    """Reads tiles from the HDF5 dataset into pinned host buffers."""

    def __init__(self, dset, tile, scale):
        self.dset = dset
        self.tile = tile
        self.scale = scale

    def read(self, coords):
        batch = np.zeros((len(coords), 1, self.tile[0], self.tile[1]), dtype=np.float32)
        for i, (c0, t0) in enumerate(coords):
            block = self.dset[c0:c0 + self.tile[0], t0:t0 + self.tile[1]]
            batch[i, 0, :block.shape[0], :block.shape[1]] = block
        batch /= self.scale
        return torch.from_numpy(batch).pin_memory()


def run(args):
    device = torch.device(f"cuda:{args.gpu}")
    torch.cuda.set_device(device)

    ckpt = torch.load(args.checkpoint, map_location="cpu")
    model = build_model(ckpt["cfg"])
    model.load_state_dict(ckpt["model"])
    model.to(device).eval()
    if args.fp16:
        model.half()

    fin = h5py.File(args.input, "r")
    dset = fin[args.dataset]
    n_ch, n_t = dset.shape
    log.info("input %s: %d channels x %d samples", args.input, n_ch, n_t)

    scale = float(np.std(dset[:, : min(n_t, 100000)])) + 1e-12
    tile = tuple(args.tile)
    overlap = tuple(args.overlap)
    window = torch.from_numpy(blend_window(tile, overlap)).to(device)

    ch_starts = tile_starts(n_ch, tile[0], overlap[0])
    t_starts = tile_starts(n_t, tile[1], overlap[1])
    coords = [(c, t) for c in ch_starts for t in t_starts]
    batch_size = args.batch_size or auto_batch_size(tile, device)
    log.info("%d tiles, batch size %d", len(coords), batch_size)

    out_sum = np.zeros((n_ch, n_t), dtype=np.float32)
    out_w = np.zeros((n_ch, n_t), dtype=np.float32)

    reader = TileReader(dset, tile, scale)
    copy_stream = torch.cuda.Stream()
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)

    batches = [coords[i:i + batch_size] for i in range(0, len(coords), batch_size)]
    t_wall = time.time()
    start_evt.record()

    # prefetch the first batch
    next_host = reader.read(batches[0])
    with torch.cuda.stream(copy_stream):
        next_dev = next_host.to(device, non_blocking=True)

    for bi, bcoords in enumerate(batches):
        torch.cuda.current_stream().wait_stream(copy_stream)
        x = next_dev
        x.record_stream(torch.cuda.current_stream())

        if bi + 1 < len(batches):
            next_host = reader.read(batches[bi + 1])
            with torch.cuda.stream(copy_stream):  # overlap next H2D copy with compute
                next_dev = next_host.to(device, non_blocking=True)

        torch.cuda.nvtx.range_push(f"batch{bi}")
        with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.fp16):
            y = model(x.half() if args.fp16 else x)
        y = (y.float() * window).cpu().numpy()
        torch.cuda.nvtx.range_pop()

        for i, (c0, t0) in enumerate(bcoords):
            c1 = min(c0 + tile[0], n_ch)
            t1 = min(t0 + tile[1], n_t)
            out_sum[c0:c1, t0:t1] += y[i, 0, : c1 - c0, : t1 - t0]
            out_w[c0:c1, t0:t1] += window.cpu().numpy()[: c1 - c0, : t1 - t0]

        if bi % 20 == 0:
            log.info("batch %d / %d", bi + 1, len(batches))

    end_evt.record()
    torch.cuda.synchronize()
    gpu_ms = start_evt.elapsed_time(end_evt)
    log.info("GPU time %.1f s, wall %.1f s", gpu_ms / 1000, time.time() - t_wall)

    out = out_sum / np.maximum(out_w, 1e-6) * scale
    with h5py.File(args.output, "w") as fout:
        d = fout.create_dataset(args.dataset, data=out, chunks=(min(256, n_ch), min(4096, n_t)),
                                compression="lzf")
        for k, v in dset.attrs.items():
            d.attrs[k] = v
        d.attrs["denoised_with"] = str(args.checkpoint)
    fin.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("checkpoint")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--dataset", default="Acquisition/Raw[0]/RawData")
    p.add_argument("--tile", type=int, nargs=2, default=[1024, 2048])
    p.add_argument("--overlap", type=int, nargs=2, default=[128, 256])
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--fp16", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    run(args)


if __name__ == "__main__":
    main()
