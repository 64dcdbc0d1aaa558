#!/usr/bin/env python3
"""Batch speech enhancement / separation with pretrained SpeechBrain models.

Examples
--------
Denoise a folder of 16 kHz recordings with SepFormer-DNS4:

    python tools/enhance_folder.py --in_dir noisy/ --out_dir clean/ \
        --model speechbrain/sepformer-dns4-16k-enhancement

Separate two-speaker mixtures:

    python tools/enhance_folder.py --in_dir mixtures/ --out_dir sep/ \
        --model speechbrain/sepformer-wsj02mix --separate

By default the first visible GPU is used; pass --device cpu to force CPU.
"""
import argparse
import glob
import os
import time

import torch
import torchaudio
from tqdm import tqdm

from speechbrain.pretrained import SepformerSeparation as Separator


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--in_dir", required=True)
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--model", default="speechbrain/sepformer-dns4-16k-enhancement")
    parser.add_argument("--savedir", default="pretrained_models",
                        help="where HF checkpoints are cached")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--separate", action="store_true",
                        help="write one file per estimated source instead of the first one")
    parser.add_argument("--max_len_s", type=float, default=30.0,
                        help="split longer files into chunks of this many seconds")
    parser.add_argument("--fp16", action="store_true",
                        help="run inference under autocast (GPU only)")
    return parser.parse_args()


def load_model(args):
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("CUDA not available, falling back to CPU")
        args.device = "cpu"
    model = Separator.from_hparams(
        source=args.model,
        savedir=os.path.join(args.savedir, os.path.basename(args.model)),
        run_opts={"device": args.device},
    )
    model.eval()
    return model


def chunked_separate(model, wav, sr, max_len_s, use_amp):
    """Runs `separate_batch` on chunks of at most max_len_s seconds and
    concatenates the estimates (no overlap -- good enough for enhancement)."""
    chunk = int(max_len_s * sr)
    outs = []
    for start in range(0, wav.shape[-1], chunk):
        piece = wav[:, start:start + chunk].to(model.device)
        with torch.no_grad(), torch.autocast(device_type="cuda", dtype=torch.float16,
                                             enabled=use_amp):
            est = model.separate_batch(piece)
        outs.append(est.float().cpu())
    return torch.cat(outs, dim=1)


def main():
    args = parse_args()
    model = load_model(args)
    target_sr = model.hparams.sample_rate
    use_amp = args.fp16 and args.device.startswith("cuda")

    files = sorted(glob.glob(os.path.join(args.in_dir, "**", "*.wav"), recursive=True))
    os.makedirs(args.out_dir, exist_ok=True)
    print(f"{len(files)} files, model={args.model}, device={args.device}, amp={use_amp}")

    total_audio, total_time = 0.0, 0.0
    for path in tqdm(files):
        wav, sr = torchaudio.load(path)
        if wav.shape[0] > 1:
            wav = wav.mean(0, keepdim=True)
        if sr != target_sr:
            wav = torchaudio.functional.resample(wav, sr, target_sr)
        t0 = time.time()
        est = chunked_separate(model, wav, target_sr, args.max_len_s, use_amp)
        total_time += time.time() - t0
        total_audio += wav.shape[-1] / target_sr

        rel = os.path.relpath(path, args.in_dir)
        stem, _ = os.path.splitext(rel)
        n_out = est.shape[-1] if args.separate else 1
        for k in range(n_out):
            out = est[0, :, k]
            out = out / out.abs().max().clamp(min=1e-8) * 0.9
            suffix = f"_s{k + 1}" if args.separate else ""
            out_path = os.path.join(args.out_dir, stem + suffix + ".wav")
            os.makedirs(os.path.dirname(out_path), exist_ok=True)
            torchaudio.save(out_path, out.unsqueeze(0), target_sr)

    if total_audio > 0:
        print(f"RTF: {total_time / total_audio:.3f} over {total_audio / 60:.1f} min of audio")
    if args.device.startswith("cuda"):
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
