"""BigVGAN-v2 vocoder stage for the TTS pipeline: mel (100 bands, 24 kHz, hop 256) -> waveform.

Used by the acoustic-model servers instead of HiFi-GAN. The fused anti-alias CUDA kernel
(`use_cuda_kernel=True`) is built on first import with nvcc and gives ~1.5-3x faster synthesis.

    python vocoder_bigvgan.py --mel_dir out/mels --out_dir out/wavs
"""
import argparse
import glob
import os

import numpy as np
import soundfile as sf
import torch

import bigvgan
from meldataset import get_mel_spectrogram

MODEL_ID = os.environ.get("BIGVGAN_MODEL", "nvidia/bigvgan_v2_24khz_100band_256x")
device = 'cuda'


def load_vocoder(model_id=MODEL_ID, use_cuda_kernel=True):
    # instantiate the model. You can optionally set use_cuda_kernel=True for faster inference.
    model = bigvgan.BigVGAN.from_pretrained(model_id, use_cuda_kernel=use_cuda_kernel)

    # remove weight norm in the model and set to eval mode
    model.remove_weight_norm()
    model = model.eval().to(device)
    return model


@torch.inference_mode()
def mel_to_wav(model, mel):
    """mel: [B(1), C_mel, T_frame] float tensor or numpy array -> int16 numpy waveform"""
    if isinstance(mel, np.ndarray):
        mel = torch.from_numpy(mel)
    if mel.dim() == 2:
        mel = mel.unsqueeze(0)
    wav_gen = model(mel.to(device))  # wav_gen is FloatTensor with shape [B(1), 1, T_time] and values in [-1, 1]
    wav_gen_float = wav_gen.squeeze(0).cpu()  # wav_gen is FloatTensor with shape [1, T_time]
    return (wav_gen_float * 32767.0).numpy().astype("int16")  # wav_gen is now np.ndarray with shape [1, T_time] and int16 dtype


@torch.inference_mode()
def resynthesize(model, wav_path):
    """Copy-synthesis check: wav -> mel -> wav."""
    import librosa

    wav, sr = librosa.load(wav_path, sr=model.h.sampling_rate, mono=True)
    wav = torch.FloatTensor(wav).unsqueeze(0)
    mel = get_mel_spectrogram(wav, model.h).to(device)
    return mel_to_wav(model, mel)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mel_dir", required=True)
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--no_cuda_kernel", action="store_true", help="use the pure PyTorch anti-alias activation")
    args = parser.parse_args()

    os.makedirs(args.out_dir, exist_ok=True)
    model = load_vocoder(use_cuda_kernel=not args.no_cuda_kernel)
    sr = model.h.sampling_rate
    for path in sorted(glob.glob(os.path.join(args.mel_dir, "*.npy"))):
        wav = mel_to_wav(model, np.load(path))
        out = os.path.join(args.out_dir, os.path.basename(path).replace(".npy", ".wav"))
        sf.write(out, wav.squeeze(0), sr)
        print(out)


if __name__ == "__main__":
    main()
