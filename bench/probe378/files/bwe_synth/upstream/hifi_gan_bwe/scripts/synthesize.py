""" HiFi-GAN+ audio synthesis

This script runs inference using a pretrained HiFi-GAN+ model. It loads
an audio file in an format supported by the audioread package, runs the
model forward, and then writes the results to an output file, in any
format supported by the soundfile library.

"""

import argparse
import time
from pathlib import Path

import numpy as np
import soundfile
import torch
from tqdm import tqdm

from hifi_gan_bwe import models


def main() -> None:
    parser = argparse.ArgumentParser(description="HiFi-GAN+ Bandwidth Extender")
    parser.add_argument(
        "model",
        help="pretrained model name or path",
    )
    parser.add_argument(
        "source_path",
        type=Path,
        help="input audio file path",
    )
    parser.add_argument(
        "target_path",
        type=Path,
        help="output audio file path",
    )
    parser.add_argument(
        "--fp16",
        action="store_true",
        help="use 16-bit floating point for inference",
    )
    parser.add_argument(
        "--device",
        default="cuda" if torch.cuda.is_available() else "cpu",
        help="torch device to use for synthesis (ex: cpu, cuda, cuda:1, etc.)",
    )
    args = parser.parse_args()

    # load the model
    torch.set_grad_enabled(False)
    model = models.BandwidthExtender.from_pretrained(args.model).to(args.device)
    if args.fp16:
        model = model.half()

    # load the source audio file
    x, fs = soundfile.read(str(args.source_path), dtype=np.float32)
    x = torch.from_numpy(x).to(args.device)
    if args.fp16:
        x = x.half()

    # run the bandwidth extender on each audio channel
    start = time.time()
    y = torch.stack([model(c, fs) for c in x.T]).T
    elapsed = time.time() - start
    duration = x.shape[0] / fs
    print(f"synthesized {duration:.2f}s of audio in {elapsed:.2f}s (RTF {elapsed / duration:.3f})")

    # save the output file
    soundfile.write(str(args.target_path), y.float().cpu().numpy(), samplerate=int(model.sample_rate))


if __name__ == "__main__":
    main()
