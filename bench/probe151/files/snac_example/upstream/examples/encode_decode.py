"""Round-trip a wav file through SNAC and report the bitrate / timing.

    python examples/encode_decode.py input.wav output.wav --model hubertsiuzdak/snac_24khz
"""
import argparse
import time

import soundfile as sf
import torch
import torchaudio

from snac import SNAC


def main():
    p = argparse.ArgumentParser()
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--model", default="hubertsiuzdak/snac_24khz")
    p.add_argument("--cpu", action="store_true", help="force CPU even when a GPU is present")
    p.add_argument("--compile", action="store_true", help="torch.compile the decoder (CUDA only)")
    args = p.parse_args()

    model = SNAC.from_pretrained(args.model).eval()
    if not args.cpu:
        model = model.cuda()
    device = next(model.parameters()).device

    wav, sr = torchaudio.load(args.input)
    wav = torchaudio.functional.resample(wav.mean(0, keepdim=True), sr, model.sampling_rate)
    audio = wav[None].to(device)

    if args.compile:
        model.decoder = torch.compile(model.decoder, mode="reduce-overhead")

    with torch.inference_mode():
        t0 = time.perf_counter()
        codes = model.encode(audio)
        audio_hat = model.decode(codes)
        if audio.is_cuda:
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0

    n_tokens = sum(c.numel() for c in codes)
    seconds = audio.shape[-1] / model.sampling_rate
    bits = n_tokens * 12
    print(f"{seconds:.2f}s audio, {n_tokens} tokens, {bits / seconds / 1000:.2f} kbps, {dt * 1000:.1f} ms")
    for i, c in enumerate(codes):
        print(f"  level {i}: {tuple(c.shape)}")
    sf.write(args.output, audio_hat[0, 0].float().cpu().numpy(), model.sampling_rate)


if __name__ == "__main__":
    main()
