"""Inference helpers for beat and downbeat tracking (beat_this style).

    from beat_this.inference import File2Beats
    f2b = File2Beats(checkpoint_path="final0", device="cuda", dbn=False)
    beats, downbeats = f2b("song.mp3")
"""
import argparse
import inspect
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr
import torch
import torch.nn.functional as F
import torchaudio

from beat_this.model.beat_tracker import BeatThis
from beat_this.model.postprocessor import Postprocessor
from beat_this.utils import replace_state_dict_key, save_beat_tsv

CHECKPOINT_URL = "https://cloud.cp.jku.at/index.php/s/7ik4RrBKTS273gp"


def lightning_to_torch(checkpoint: dict):
    """Convert a PyTorch Lightning checkpoint to a plain state dict + hyper-parameters."""
    state_dict = checkpoint["state_dict"]
    state_dict = replace_state_dict_key(state_dict, "model.", "")
    state_dict = {k: v for k, v in state_dict.items() if not k.startswith("loss.")}
    hparams = checkpoint["hyper_parameters"]
    model_args = {k: v for k, v in hparams.items() if k in inspect.signature(BeatThis).parameters}
    return state_dict, model_args


def load_checkpoint(checkpoint_path: str, device="cpu") -> dict:
    if checkpoint_path is None:
        return None
    if not Path(checkpoint_path).exists() and "/" not in checkpoint_path:
        url = f"{CHECKPOINT_URL}/download?path=%2F&files={checkpoint_path}.ckpt"
        return torch.hub.load_state_dict_from_url(url, file_name=f"beat_this-{checkpoint_path}.ckpt",
                                                  map_location=device)
    return torch.load(checkpoint_path, map_location=device, weights_only=True)


def load_model(checkpoint_path="final0", device="cpu") -> BeatThis:
    checkpoint = load_checkpoint(checkpoint_path, device)
    if checkpoint is not None:
        state_dict, model_args = lightning_to_torch(checkpoint)
        model = BeatThis(**model_args)
        model.load_state_dict(state_dict)
    else:
        model = BeatThis()
    return model.to(device).eval()


class LogMelSpect(torch.nn.Module):
    def __init__(self, sample_rate=22050, n_fft=1024, hop_length=441, f_min=30, f_max=11000,
                 n_mels=128, mel_scale="slaney", normalized="frame_length", power=1,
                 log_multiplier=1000, device="cpu"):
        super().__init__()
        self.spect_class = torchaudio.transforms.MelSpectrogram(
            sample_rate=sample_rate, n_fft=n_fft, hop_length=hop_length, f_min=f_min,
            f_max=f_max, n_mels=n_mels, power=power, normalized=normalized,
            mel_scale=mel_scale).to(device)
        self.log_multiplier = log_multiplier

    def forward(self, x):
        return torch.log1p(self.log_multiplier * self.spect_class(x).T)


def split_piece(spect, chunk_size, border_size=6, avoid_short_end=True):
    """Split a long spectrogram into overlapping chunks with `border_size` frames of context."""
    if len(spect) <= chunk_size - 2 * border_size:
        return [F.pad(spect, (0, 0, border_size, border_size))], [-border_size]
    starts = np.arange(-border_size, len(spect) - border_size, chunk_size - 2 * border_size)
    if avoid_short_end and len(spect) - starts[-1] < chunk_size:
        starts[-1] = len(spect) - (chunk_size - border_size)
    chunks = [spect[max(s, 0): min(s + chunk_size, len(spect))] for s in starts]
    chunks = [F.pad(c, (0, 0, max(0, -s), max(0, s + chunk_size - len(spect)))) for c, s in zip(chunks, starts)]
    return chunks, starts


def aggregate_prediction(pred_chunks, starts, full_size, chunk_size, border_size=6, overlap_mode="keep_first"):
    if border_size > 0:
        pred_chunks = [{"beat": p["beat"][border_size:-border_size],
                        "downbeat": p["downbeat"][border_size:-border_size]} for p in pred_chunks]
    piece_prediction_beat = torch.full((full_size,), -1000.0, device=pred_chunks[0]["beat"].device)
    piece_prediction_downbeat = torch.full((full_size,), -1000.0, device=pred_chunks[0]["beat"].device)
    if overlap_mode == "keep_first":
        pred_chunks, starts = pred_chunks[::-1], starts[::-1]
    for start, pchunk in zip(starts, pred_chunks):
        piece_prediction_beat[start + border_size: start + chunk_size - border_size] = pchunk["beat"]
        piece_prediction_downbeat[start + border_size: start + chunk_size - border_size] = pchunk["downbeat"]
    return piece_prediction_beat, piece_prediction_downbeat


def split_predict_aggregate(spect, chunk_size, border_size, overlap_mode, model, float16=False):
    chunks, starts = split_piece(spect, chunk_size, border_size=border_size, avoid_short_end=True)
    with torch.autocast(device_type="cuda", enabled=float16):
        pred_chunks = [model(chunk.unsqueeze(0)) for chunk in chunks]
    pred_chunks = [{"beat": p["beat"][0].float(), "downbeat": p["downbeat"][0].float()} for p in pred_chunks]
    return aggregate_prediction(pred_chunks, starts, spect.shape[0], chunk_size, border_size, overlap_mode)


class Spect2Frames:
    def __init__(self, checkpoint_path="final0", device="cpu", float16=False):
        super().__init__()
        self.device = torch.device(device)
        self.float16 = float16
        self.model = load_model(checkpoint_path, self.device)

    def spect2frames(self, spect):
        with torch.inference_mode():
            beat, downbeat = split_predict_aggregate(
                spect=spect, chunk_size=1500, overlap_mode="keep_first", border_size=6,
                model=self.model, float16=self.float16)
        return beat, downbeat

    def __call__(self, spect):
        return self.spect2frames(spect)


class Audio2Frames(Spect2Frames):
    def __init__(self, checkpoint_path="final0", device="cpu", float16=False):
        super().__init__(checkpoint_path, device, float16)
        self.spect = LogMelSpect(device=self.device)

    def signal2spect(self, signal, sr):
        if signal.ndim == 2:
            signal = signal.mean(1)
        elif signal.ndim != 1:
            raise ValueError(f"Expected 1D or 2D signal, got shape {signal.shape}")
        if sr != 22050:
            signal = soxr.resample(signal, in_rate=sr, out_rate=22050)
        signal = torch.tensor(signal, dtype=torch.float32, device=self.device)
        return self.spect(signal)

    def __call__(self, signal, sr):
        spect = self.signal2spect(signal, sr)
        return self.spect2frames(spect)


class File2Beats:
    def __init__(self, checkpoint_path="final0", device="cuda", float16=False, dbn=False):
        self.frames = Audio2Frames(checkpoint_path, device, float16)
        self.postprocessor = Postprocessor(type="dbn" if dbn else "minimal")

    def __call__(self, audio_path):
        signal, sr = sf.read(audio_path, dtype="float32")
        beat_logits, downbeat_logits = self.frames(signal, sr)
        return self.postprocessor(beat_logits, downbeat_logits)


def derive_output_path(input_path, output_path, suffix=".beats"):
    input_path = Path(input_path)
    if output_path is None:
        return input_path.with_suffix(suffix)
    output_path = Path(output_path)
    if output_path.is_dir():
        return output_path / (input_path.stem + suffix)
    return output_path


def main():
    parser = argparse.ArgumentParser(description="Detect beats and downbeats in audio files.")
    parser.add_argument("inputs", nargs="+", type=str)
    parser.add_argument("-o", "--output", type=str, default=None)
    parser.add_argument("--model", type=str, default="final0")
    parser.add_argument("--gpu", type=int, default=0, help="which GPU to use, or -1 for CPU")
    parser.add_argument("--float16", action="store_true", help="half-precision inference (GPU only)")
    parser.add_argument("--dbn", action="store_true", help="use madmom's DBN instead of peak picking")
    parser.add_argument("--compile", action="store_true")
    args = parser.parse_args()

    if args.gpu >= 0 and torch.cuda.is_available():
        device = torch.device(f"cuda:{args.gpu}")
    else:
        device = torch.device("cpu")

    f2b = File2Beats(checkpoint_path=args.model, device=device, float16=args.float16, dbn=args.dbn)
    if args.compile:
        f2b.frames.model = torch.compile(f2b.frames.model)

    for item in args.inputs:
        beats, downbeats = f2b(item)
        out = derive_output_path(item, args.output)
        save_beat_tsv(beats, downbeats, out)
        print(f"{item}: {len(beats)} beats, {len(downbeats)} downbeats -> {out}")


if __name__ == "__main__":
    main()
