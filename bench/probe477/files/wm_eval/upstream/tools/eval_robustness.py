"""Batch robustness evaluation for WavMark.

Watermarks every clip of a folder, applies a set of signal-processing attacks and
reports BER / detection rate / SNR per attack, plus encode/decode latency.

    python tools/eval_robustness.py --data_dir data/librispeech_test --gpu 1 --n_clips 200
"""
import argparse
import json
import os
import random
import time
from collections import defaultdict
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--data_dir", type=str, required=True)
parser.add_argument("--out", type=str, default="results/robustness.json")
parser.add_argument("--gpu", type=str, default="0", help="which GPU to run on")
parser.add_argument("--n_clips", type=int, default=100)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--attacks", type=str, default="none,noise,resample,lowpass,mp3,amplitude,crop")
parser.add_argument("--benchmark_latency", action="store_true")
args = parser.parse_args()

# must be set before torch initialises CUDA
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchaudio  # noqa: E402
import wavmark  # noqa: E402
from wavmark.utils import file_reader, metric_util  # noqa: E402

SR = 16000


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


# ---------------------------------------------------------------- attacks
def attack_none(x):
    return x


def attack_noise(x, snr_db=20):
    power = np.mean(x ** 2)
    noise = np.random.randn(*x.shape) * np.sqrt(power / (10 ** (snr_db / 10)))
    return (x + noise).astype(np.float32)


def attack_resample(x, mid_sr=8000):
    t = torch.from_numpy(x).float()[None]
    t = torchaudio.functional.resample(t, SR, mid_sr)
    t = torchaudio.functional.resample(t, mid_sr, SR)
    y = t[0].numpy()
    if len(y) < len(x):
        y = np.pad(y, (0, len(x) - len(y)))
    return y[: len(x)]


def attack_lowpass(x, cutoff=5000):
    t = torch.from_numpy(x).float()[None]
    t = torchaudio.functional.lowpass_biquad(t, SR, cutoff)
    return t[0].numpy()


def attack_mp3(x, bitrate="64k"):
    import subprocess
    import tempfile
    import soundfile
    with tempfile.TemporaryDirectory() as d:
        wav = os.path.join(d, "a.wav")
        mp3 = os.path.join(d, "a.mp3")
        soundfile.write(wav, x, SR)
        subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-i", wav, "-b:a", bitrate, mp3], check=True)
        subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-i", mp3, "-ar", str(SR), wav], check=True)
        y, _ = soundfile.read(wav)
    if len(y) < len(x):
        y = np.pad(y, (0, len(x) - len(y)))
    return y[: len(x)].astype(np.float32)


def attack_amplitude(x, factor=0.5):
    return x * factor


def attack_crop(x, keep=0.7):
    n = int(len(x) * keep)
    start = random.randint(0, len(x) - n)
    return x[start:start + n]


ATTACKS = {
    "none": attack_none,
    "noise": attack_noise,
    "resample": attack_resample,
    "lowpass": attack_lowpass,
    "mp3": attack_mp3,
    "amplitude": attack_amplitude,
    "crop": attack_crop,
}


def list_clips(data_dir, n):
    files = sorted(str(p) for p in Path(data_dir).rglob("*.wav")) + \
        sorted(str(p) for p in Path(data_dir).rglob("*.flac"))
    random.shuffle(files)
    return files[:n]


def measure_latency(model, device, n_iter=20):
    """Encode/decode latency on one 1 s segment, measured with CUDA events."""
    signal = torch.randn(1, SR, device=device)
    message = torch.randint(0, 2, (1, 32), device=device).float() * 2 - 1
    with torch.no_grad():
        for _ in range(3):  # warm-up
            model.decode(model.encode(signal, message))
        starter = torch.cuda.Event(enable_timing=True)
        ender = torch.cuda.Event(enable_timing=True)
        enc_ms, dec_ms = [], []
        for _ in range(n_iter):
            starter.record()
            wmd = model.encode(signal, message)
            ender.record()
            torch.cuda.synchronize()
            enc_ms.append(starter.elapsed_time(ender))
            starter.record()
            model.decode(wmd)
            ender.record()
            torch.cuda.synchronize(device)
            dec_ms.append(starter.elapsed_time(ender))
    return float(np.mean(enc_ms)), float(np.mean(dec_ms))


def main():
    set_seed(args.seed)
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    print(f"Running on {device} (CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')})")
    model = wavmark.load_model().to(device)

    clips = list_clips(args.data_dir, args.n_clips)
    attacks = [a.strip() for a in args.attacks.split(",") if a.strip()]
    stats = defaultdict(lambda: defaultdict(list))

    t_start = time.time()
    for ci, path in enumerate(clips):
        signal = file_reader.read_as_single_channel(path, aim_sr=SR)
        if len(signal) < 3 * SR:
            continue
        payload = np.random.choice([0, 1], size=16)
        wmd, info = wavmark.encode_watermark(model, signal, payload)
        snr = metric_util.signal_noise_ratio(signal, wmd)
        for name in attacks:
            attacked = ATTACKS[name](wmd)
            decoded, _ = wavmark.decode_watermark(model, attacked)
            detected = decoded is not None
            ber = 1.0 - wavmark.bit_accuracy(payload, decoded) if detected else 1.0
            stats[name]["ber"].append(ber)
            stats[name]["detected"].append(float(detected))
            stats[name]["snr"].append(snr)
        if (ci + 1) % 10 == 0:
            print(f"[{ci + 1}/{len(clips)}] {time.time() - t_start:.1f}s "
                  f"gpu mem {torch.cuda.memory_allocated() / 2 ** 20:.0f} MiB")

    summary = {}
    for name, d in stats.items():
        summary[name] = {k: float(np.mean(v)) for k, v in d.items()}
        print(f"{name:>10s}  BER {summary[name]['ber'] * 100:5.2f}%  "
              f"det {summary[name]['detected'] * 100:5.1f}%  SNR {summary[name]['snr']:.2f} dB")

    if args.benchmark_latency and device != "cpu":
        enc_ms, dec_ms = measure_latency(model, device)
        summary["latency_ms"] = {"encode": enc_ms, "decode": dec_ms,
                                 "device": torch.cuda.get_device_name(0)}
        print(f"latency: encode {enc_ms:.2f} ms, decode {dec_ms:.2f} ms")

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=2)
    print("saved to", args.out)


if __name__ == "__main__":
    main()
