"""
ESIM on the GPU.

    esim = EventSimulator_torch(contrast_threshold_neg=0.2, contrast_threshold_pos=0.2, refractory_period_ns=0)
    events = esim.forward(log_images, timestamps_ns)      # dict with x, y, t, p (int64 tensors)

``log_images`` is a [T, H, W] float32 tensor of log intensities and ``timestamps_ns`` a [T] int64 tensor.
Calling forward repeatedly continues the simulation from the last reference values, so long videos
can be processed chunk by chunk.
"""
import argparse
import glob
import os
import time

import numpy as np
import torch

import esim_cuda


class EventSimulator_torch(torch.nn.Module):
    def __init__(self, contrast_threshold_neg=0.2, contrast_threshold_pos=0.2, refractory_period_ns=0):
        super().__init__()
        self.contrast_threshold_neg = float(contrast_threshold_neg)
        self.contrast_threshold_pos = float(contrast_threshold_pos)
        self.refractory_period_ns = int(refractory_period_ns)

        self.initial_reference_values = None
        self.timestamps_last_event = None
        self.last_image = None
        self.last_timestamp = None

    def reset(self):
        self.initial_reference_values = None
        self.timestamps_last_event = None
        self.last_image = None
        self.last_timestamp = None

    def _check_inputs(self, log_images, timestamps_ns):
        assert log_images.dim() == 3, "log_images must be [T, H, W]"
        assert timestamps_ns.dim() == 1 and timestamps_ns.shape[0] == log_images.shape[0]
        assert log_images.dtype == torch.float32, "log_images must be float32"
        assert timestamps_ns.dtype == torch.int64, "timestamps must be int64 nanoseconds"
        assert log_images.device == timestamps_ns.device

    def forward(self, log_images, timestamps_ns):
        self._check_inputs(log_images, timestamps_ns)

        # continue from the previous chunk: prepend the last frame so that the crossing between
        # chunks is not lost
        if self.last_image is not None:
            log_images = torch.cat([self.last_image[None], log_images], 0)
            timestamps_ns = torch.cat([self.last_timestamp[None], timestamps_ns], 0)

        if self.initial_reference_values is None:
            self.initial_reference_values = log_images[0].clone()
            self.timestamps_last_event = torch.zeros_like(self.initial_reference_values).long()

        reference_values = self.initial_reference_values.clone()
        H, W = log_images.shape[1:]

        # first pass: count the events of every pixel so that the output can be allocated at once
        event_counts = torch.zeros_like(log_images[0]).long()
        event_counts = esim_cuda.forward_count_events(log_images.contiguous(), reference_values.clone(), event_counts,
                                                      self.contrast_threshold_neg, self.contrast_threshold_pos)

        # per-pixel write offsets into the event buffer
        cumsum = event_counts.view(-1).cumsum(dim=0)
        total_num_events = cumsum[-1].item()
        offsets = cumsum.view(H, W) - event_counts

        events = torch.zeros((total_num_events, 4), device=cumsum.device, dtype=torch.int64)

        # second pass: write x, y, t, p and update the reference values / refractory timestamps
        self.initial_reference_values = esim_cuda.forward(log_images.contiguous(), timestamps_ns.contiguous(),
                                                          reference_values, offsets, events,
                                                          self.timestamps_last_event,
                                                          self.contrast_threshold_neg, self.contrast_threshold_pos,
                                                          self.refractory_period_ns)

        self.last_image = log_images[-1].clone()
        self.last_timestamp = timestamps_ns[-1].clone()

        if total_num_events == 0:
            return None

        # sort by timestamp, drop the events suppressed by the refractory period (t == 0)
        events = events[events[:, 2].argsort()]
        events = events[events[:, 2] > 0]

        return dict(zip(['x', 'y', 't', 'p'], events.T))


def load_image_sequence(folder, timestamps_file):
    import cv2
    files = sorted(glob.glob(os.path.join(folder, "*.png")))
    images = np.stack([cv2.imread(f, cv2.IMREAD_GRAYSCALE) for f in files])
    timestamps_s = np.genfromtxt(timestamps_file)
    assert len(timestamps_s) == len(images), f"{len(timestamps_s)} timestamps for {len(images)} images"
    return images, (timestamps_s * 1e9).astype("int64")


def save_events(events, path):
    np.savez_compressed(path, **{k: v.cpu().numpy() for k, v in events.items()})


def main():
    parser = argparse.ArgumentParser("Generate events from an (upsampled) image sequence with ESIM on the GPU")
    parser.add_argument("--input_dir", required=True, help="folder with imgs/ and timestamps.txt")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--contrast_threshold_negative", "-cn", type=float, default=0.2)
    parser.add_argument("--contrast_threshold_positive", "-cp", type=float, default=0.2)
    parser.add_argument("--refractory_period_ns", "-rp", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=256, help="frames per simulator call")
    args = parser.parse_args()

    images, timestamps = load_image_sequence(os.path.join(args.input_dir, "imgs"),
                                             os.path.join(args.input_dir, "timestamps.txt"))

    esim = EventSimulator_torch(args.contrast_threshold_negative, args.contrast_threshold_positive,
                                args.refractory_period_ns)

    log_images = np.log(images.astype("float32") / 255 + 1e-5)
    os.makedirs(args.output_dir, exist_ok=True)

    n_events = 0
    start = time.time()
    for i, c in enumerate(range(0, len(images), args.chunk)):
        images_chunk = torch.from_numpy(log_images[c:c + args.chunk]).cuda()
        timestamps_chunk = torch.from_numpy(timestamps[c:c + args.chunk]).cuda()
        events = esim.forward(images_chunk, timestamps_chunk)
        if events is None:
            continue
        n_events += len(events["t"])
        save_events(events, os.path.join(args.output_dir, f"{i:010d}.npz"))

    torch.cuda.synchronize()
    elapsed = time.time() - start
    print(f"generated {n_events} events from {len(images)} frames in {elapsed:.2f}s "
          f"({n_events / max(elapsed, 1e-9) / 1e6:.2f} Mev/s)")


if __name__ == "__main__":
    main()
