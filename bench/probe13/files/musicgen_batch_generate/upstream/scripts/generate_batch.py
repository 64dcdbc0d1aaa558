"""Generate a batch of music clips from text prompts with MusicGen and save them as wav.

    python scripts/generate_batch.py --prompts prompts.txt --model facebook/musicgen-medium --duration 12
"""
import argparse
import os
import time
from pathlib import Path

import torch
import torchaudio
from audiocraft.data.audio import audio_write
from audiocraft.models import MusicGen
from audiocraft.modules.transformer import set_efficient_attention_backend


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--prompts", required=True, help="text file, one prompt per line")
    p.add_argument("--melody", default=None, help="optional melody wav for musicgen-melody")
    p.add_argument("--model", default="facebook/musicgen-medium")
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--out-dir", default="samples")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--xformers", action="store_true", help="use xformers memory efficient attention")
    p.add_argument("--profile", action="store_true")
    return p.parse_args()


def main():
    args = parse_args()
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    if args.xformers:
        set_efficient_attention_backend("xformers")

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = MusicGen.get_pretrained(args.model, device=device)
    model.set_generation_params(duration=args.duration, top_k=250, cfg_coef=3.0)
    print(f"loaded {args.model} on {device} (sample rate {model.sample_rate})")

    prompts = [l.strip() for l in open(args.prompts, encoding="utf-8") if l.strip()]

    melody = None
    if args.melody:
        wav, sr = torchaudio.load(args.melody)
        melody = wav[None].expand(args.batch_size, -1, -1).to(device)

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)

    n = 0
    for i in range(0, len(prompts), args.batch_size):
        batch = prompts[i:i + args.batch_size]
        start_evt.record()
        if melody is not None:
            wavs = model.generate_with_chroma(batch, melody[: len(batch)], sr)
        else:
            wavs = model.generate(batch, progress=False)
        end_evt.record()
        torch.cuda.synchronize()
        elapsed = start_evt.elapsed_time(end_evt) / 1000.0
        print(f"batch {i // args.batch_size}: {len(batch)} clips in {elapsed:.1f}s "
              f"({args.duration * len(batch) / elapsed:.2f}x realtime)")
        for prompt, wav in zip(batch, wavs):
            name = f"{n:04d}_" + "".join(c if c.isalnum() else "_" for c in prompt)[:60]
            audio_write(str(out_dir / name), wav.cpu(), model.sample_rate, strategy="loudness", loudness_compressor=True)
            n += 1

    if torch.cuda.is_available():
        print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 1e9:.2f} GB")
        print(torch.cuda.memory_summary(abbreviated=True))


if __name__ == "__main__":
    main()
