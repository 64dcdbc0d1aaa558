"""Speed / memory benchmark: nnAudio layers vs torch.stft / torchaudio vs librosa.

Reproduces the GPU timing table of the nnAudio paper (Cheuk et al., 2020):
every front-end is run on a batch of random 5 s clips, timed with CUDA events
after a short warm-up, and the peak GPU memory is recorded.

    python benchmarks/speed_test.py --batch 32 --iters 50 --out results/speed.csv
"""
import argparse
import csv
import os
import time
from collections import OrderedDict

import librosa
import numpy as np
import torch
import torchaudio
from nnAudio import Spectrogram

SR = 22050
N_FFT = 2048
HOP = 512
N_MELS = 128


def build_layers(device):
    """nnAudio layers compute their kernels on the requested device at construction time."""
    layers = OrderedDict()
    layers["nnAudio_STFT"] = Spectrogram.STFT(
        n_fft=N_FFT, hop_length=HOP, freq_scale="no", sr=SR, output_format="Magnitude",
        device="cuda:0")
    layers["nnAudio_MelSpectrogram"] = Spectrogram.MelSpectrogram(
        sr=SR, n_fft=N_FFT, n_mels=N_MELS, hop_length=HOP, trainable_mel=False,
        trainable_STFT=False, device="cuda:0")
    layers["nnAudio_CQT1992v2"] = Spectrogram.CQT1992v2(
        sr=SR, hop_length=HOP, fmin=32.70, n_bins=84, bins_per_octave=12,
        norm=1, window="hann", center=True, pad_mode="reflect", device=device)
    layers["nnAudio_CQT2010v2"] = Spectrogram.CQT2010v2(
        sr=SR, hop_length=HOP, fmin=32.70, n_bins=84, bins_per_octave=12,
        norm=True, basis_norm=1, window="hann", pad_mode="reflect", earlydownsample=True,
        device=device)
    layers["nnAudio_Gammatonegram"] = Spectrogram.Gammatonegram(
        sr=SR, n_fft=N_FFT, n_bins=64, hop_length=HOP, device=device)
    layers["torchaudio_MelSpectrogram"] = torchaudio.transforms.MelSpectrogram(
        sample_rate=SR, n_fft=N_FFT, hop_length=HOP, n_mels=N_MELS).to(device)
    layers["torch_stft"] = lambda x: torch.stft(
        x, N_FFT, HOP, window=torch.hann_window(N_FFT, device=x.device),
        center=True, return_complex=True).abs()
    return layers


def time_layer(name, layer, x, iters, warmup=5, use_nvtx=False):
    """Returns (mean ms per batch, peak MiB) for one front-end."""
    with torch.no_grad():
        for _ in range(warmup):
            layer(x)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    if use_nvtx:
        torch.cuda.nvtx.range_push(name)
    start_evt.record()
    with torch.no_grad():
        for _ in range(iters):
            layer(x)
    end_evt.record()
    if use_nvtx:
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize(x.device)
    ms = start_evt.elapsed_time(end_evt) / iters
    peak_mib = torch.cuda.max_memory_allocated(x.device) / 2 ** 20
    return ms, peak_mib


def time_librosa(x_np, iters):
    t0 = time.perf_counter()
    for _ in range(iters):
        for clip in x_np:
            S = librosa.feature.melspectrogram(y=clip, sr=SR, n_fft=N_FFT,
                                               hop_length=HOP, n_mels=N_MELS)
    return (time.perf_counter() - t0) * 1000.0 / iters


def time_fp16(layer, x, iters):
    """Mixed precision variant: nnAudio's conv1d kernels run in half precision."""
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
        for _ in range(3):
            layer(x)
        torch.cuda.synchronize()  # drain warm-up
        t0 = time.perf_counter()
        for _ in range(iters):
            layer(x)
        torch.cuda.synchronize(device=x.device)
    return (time.perf_counter() - t0) * 1000.0 / iters


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--nvtx", action="store_true", help="emit NVTX ranges for nsys")
    parser.add_argument("--skip-librosa", action="store_true")
    parser.add_argument("--out", type=str, default="results/speed.csv")
    args = parser.parse_args()

    assert torch.cuda.is_available(), "this benchmark needs a GPU"
    device = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    # torch.stft creates one cuFFT plan per (n_fft, batch) shape; keep them all around
    torch.backends.cuda.cufft_plan_cache.max_size = 64

    n_samples = int(args.seconds * SR)
    x = torch.randn(args.batch, n_samples, device="cuda")
    x_np = x.cpu().numpy()

    gpu_name = torch.cuda.get_device_name(0)
    print(f"device: {gpu_name}  torch {torch.__version__}  torchaudio {torchaudio.__version__}")

    layers = build_layers(device)
    rows = []
    for name, layer in layers.items():
        ms, peak = time_layer(name, layer, x, args.iters, use_nvtx=args.nvtx)
        row = {"layer": name, "device": gpu_name, "batch": args.batch,
               "ms_per_batch": round(ms, 3), "peak_mib": round(peak, 1)}
        if args.fp16 and name.startswith("nnAudio"):
            row["ms_per_batch_fp16"] = round(time_fp16(layer, x, args.iters), 3)
        rows.append(row)
        print(f"{name:28s} {ms:9.3f} ms  {peak:8.1f} MiB")

    if not args.skip_librosa:
        ms = time_librosa(x_np, max(1, args.iters // 10))
        rows.append({"layer": "librosa_melspectrogram", "device": "cpu", "batch": args.batch,
                     "ms_per_batch": round(ms, 3), "peak_mib": 0.0})
        print(f"{'librosa_melspectrogram':28s} {ms:9.3f} ms  (cpu)")

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    keys = sorted({k for r in rows for k in r})
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    print(f"wrote {args.out}")

    # sanity check: nnAudio STFT magnitude vs torch.stft magnitude
    with torch.no_grad():
        a = layers["nnAudio_STFT"](x[:2])
        b = layers["torch_stft"](x[:2])
        err = (a - b).abs().max().item() / b.abs().max().item()
    print(f"relative max error nnAudio STFT vs torch.stft: {err:.2e}")
    assert np.isfinite(err)


if __name__ == "__main__":
    main()
