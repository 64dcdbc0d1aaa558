"""Voice cloning with XTTS-v2, two ways:

1. the high level 🐸TTS API (`TTS(...).to(device)`), and
2. the low level `Xtts` model with cached conditioning latents and streaming.

    python examples/xtts_voice_clone.py --speaker_wav data/speaker.wav --text "Hello world" --out out.wav
    python examples/xtts_voice_clone.py --mode stream --speaker_wav data/speaker.wav --text_file book.txt

XTTS runs at roughly 0.3 RTF on an RTX 3090; on CPU expect more than 5x real time.
"""
import argparse
import os
import time

import torch
import torchaudio

from TTS.api import TTS
from TTS.tts.configs.xtts_config import XttsConfig
from TTS.tts.models.xtts import Xtts

MODEL_NAME = "tts_models/multilingual/multi-dataset/xtts_v2"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["api", "stream", "legacy"], default="api")
    parser.add_argument("--speaker_wav", required=True, nargs="+")
    parser.add_argument("--language", default="en")
    parser.add_argument("--text", default=None)
    parser.add_argument("--text_file", default=None)
    parser.add_argument("--out", default="output.wav")
    parser.add_argument("--checkpoint_dir", default=None, help="local XTTS checkpoint dir (config.json, model.pth, vocab.json)")
    parser.add_argument("--use_deepspeed", action="store_true", help="DeepSpeed inference kernels (GPU only)")
    parser.add_argument("--no_cuda", action="store_true", help="force CPU even if a GPU is present")
    return parser.parse_args()


def read_text(args):
    if args.text:
        return args.text
    with open(args.text_file, encoding="utf-8") as f:
        return f.read()


def run_api(args, device):
    # Init TTS; `.to(device)` moves the whole Synthesizer (tts model + vocoder) to the GPU
    tts = TTS(MODEL_NAME, progress_bar=False).to(device)
    tts.tts_to_file(
        text=read_text(args),
        speaker_wav=args.speaker_wav,
        language=args.language,
        file_path=args.out,
        split_sentences=True,
    )


def run_legacy(args):
    # pre-0.20 style: the deprecated `gpu` flag is forwarded to Synthesizer(use_cuda=...)
    tts = TTS(model_name=MODEL_NAME, progress_bar=False, gpu=True)
    tts.tts_to_file(text=read_text(args), speaker_wav=args.speaker_wav, language=args.language, file_path=args.out)


def load_xtts(checkpoint_dir, use_deepspeed):
    config = XttsConfig()
    config.load_json(os.path.join(checkpoint_dir, "config.json"))
    model = Xtts.init_from_config(config)
    model.load_checkpoint(config, checkpoint_dir=checkpoint_dir, use_deepspeed=use_deepspeed)
    model.cuda()
    return model


def run_stream(args):
    checkpoint_dir = args.checkpoint_dir or os.path.expanduser(
        os.path.join("~/.local/share/tts", MODEL_NAME.replace("/", "--"))
    )
    model = load_xtts(checkpoint_dir, args.use_deepspeed)

    print("Computing speaker latents...")
    gpt_cond_latent, speaker_embedding = model.get_conditioning_latents(audio_path=args.speaker_wav)

    paragraphs = [p.strip() for p in read_text(args).split("\n\n") if p.strip()]
    wav_chunks = []
    for n, paragraph in enumerate(paragraphs):
        t0 = time.time()
        chunks = model.inference_stream(paragraph, args.language, gpt_cond_latent, speaker_embedding)
        for i, chunk in enumerate(chunks):
            if i == 0 and n == 0:
                print(f"Time to first chunk: {time.time() - t0:.3f}s")
            wav_chunks.append(chunk)
        # long books: the allocator keeps growing with paragraph length otherwise
        torch.cuda.empty_cache()
        print(f"paragraph {n + 1}/{len(paragraphs)} done in {time.time() - t0:.2f}s")

    wav = torch.cat(wav_chunks, dim=0)
    torchaudio.save(args.out, wav.squeeze().unsqueeze(0).cpu(), 24000)


def main():
    args = parse_args()
    # Get device
    device = "cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu"
    print(f"Using device: {device}")

    if args.mode == "api":
        run_api(args, device)
    elif args.mode == "legacy":
        run_legacy(args)
    else:
        run_stream(args)
    print(f"Saved {args.out}")


if __name__ == "__main__":
    main()
