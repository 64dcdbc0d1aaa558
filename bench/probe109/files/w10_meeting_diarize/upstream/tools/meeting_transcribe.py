"""Speaker-attributed meeting transcription: openai-whisper + pyannote.audio 3.1.

    HF_TOKEN=hf_xxx python tools/meeting_transcribe.py meeting.wav --model large-v3 --num-speakers 4

Runs everything on the first GPU. Output: <audio>.rttm, <audio>.speakers.json, <audio>.srt
"""
import argparse
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import torch
import torchaudio
import whisper
from pyannote.audio import Inference, Model, Pipeline
from pyannote.audio.pipelines.utils.hook import ProgressHook
from pyannote.core import Annotation, Segment

SAMPLE_RATE = 16000


@dataclass
class Utterance:
    speaker: str
    start: float
    end: float
    text: str


def get_device(requested: Optional[str] = None) -> torch.device:
    if requested:
        return torch.device(requested)
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


def load_waveform(path: str) -> torch.Tensor:
    wav, sr = torchaudio.load(path)
    if wav.shape[0] > 1:
        wav = wav.mean(dim=0, keepdim=True)
    if sr != SAMPLE_RATE:
        wav = torchaudio.functional.resample(wav, sr, SAMPLE_RATE)
    return wav


def run_diarization(wav: torch.Tensor, hf_token: str, num_speakers: Optional[int], min_speakers: Optional[int], max_speakers: Optional[int]) -> Annotation:
    pipeline = Pipeline.from_pretrained("pyannote/speaker-diarization-3.1", use_auth_token=hf_token)
    # send pipeline to GPU (when available)
    pipeline.to(torch.device("cuda"))
    kwargs = {}
    if num_speakers:
        kwargs["num_speakers"] = num_speakers
    else:
        if min_speakers:
            kwargs["min_speakers"] = min_speakers
        if max_speakers:
            kwargs["max_speakers"] = max_speakers
    with ProgressHook() as hook:
        diarization = pipeline({"waveform": wav, "sample_rate": SAMPLE_RATE}, hook=hook, **kwargs)
    return diarization


def speaker_centroids(wav: torch.Tensor, diarization: Annotation, hf_token: str, device: torch.device) -> Dict[str, np.ndarray]:
    """Average WeSpeaker embeddings per speaker (used to match speakers across meetings)."""
    emb_model = Model.from_pretrained("pyannote/wespeaker-voxceleb-resnet34-LM", use_auth_token=hf_token)
    inference = Inference(emb_model, window="whole")
    inference.to(device)
    out: Dict[str, List[np.ndarray]] = {}
    for turn, _, spk in diarization.itertracks(yield_label=True):
        if turn.duration < 1.0:
            continue
        emb = inference.crop({"waveform": wav, "sample_rate": SAMPLE_RATE}, turn)
        out.setdefault(spk, []).append(np.asarray(emb).reshape(-1))
    return {spk: np.mean(v, axis=0) for spk, v in out.items()}


def transcribe(wav: torch.Tensor, model_name: str, device: torch.device, language: Optional[str]) -> dict:
    model = whisper.load_model(model_name, device=device)
    audio = wav.squeeze(0).numpy().astype(np.float32)
    result = model.transcribe(
        audio,
        language=language,
        word_timestamps=True,
        fp16=device.type == "cuda",
        condition_on_previous_text=False,
        verbose=False,
    )
    del model
    torch.cuda.empty_cache()
    return result


def assign_speakers(result: dict, diarization: Annotation) -> List[Utterance]:
    utts: List[Utterance] = []
    for seg in result["segments"]:
        words = seg.get("words") or [{"word": seg["text"], "start": seg["start"], "end": seg["end"]}]
        for w in words:
            mid = Segment(w["start"], w["end"])
            overlap = diarization.crop(mid).chart()
            spk = overlap[0][0] if overlap else "UNKNOWN"
            if utts and utts[-1].speaker == spk and w["start"] - utts[-1].end < 1.0:
                utts[-1].text += w["word"]
                utts[-1].end = w["end"]
            else:
                utts.append(Utterance(spk, w["start"], w["end"], w["word"].strip()))
    return utts


def to_srt(utts: List[Utterance]) -> str:
    def ts(t: float) -> str:
        h, rem = divmod(t, 3600)
        m, s = divmod(rem, 60)
        return f"{int(h):02d}:{int(m):02d}:{int(s):02d},{int((s % 1) * 1000):03d}"

    lines = []
    for i, u in enumerate(utts, 1):
        lines += [str(i), f"{ts(u.start)} --> {ts(u.end)}", f"[{u.speaker}] {u.text.strip()}", ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("audio")
    ap.add_argument("--model", default="large-v3")
    ap.add_argument("--language", default=None)
    ap.add_argument("--device", default=None, help="e.g. cuda:1; defaults to first GPU")
    ap.add_argument("--num-speakers", type=int, default=None)
    ap.add_argument("--min-speakers", type=int, default=None)
    ap.add_argument("--max-speakers", type=int, default=None)
    ap.add_argument("--embeddings", action="store_true", help="also dump per-speaker centroid embeddings")
    ap.add_argument("--hf-token", default=os.environ.get("HF_TOKEN"))
    args = ap.parse_args()

    device = get_device(args.device)
    gpu_name = torch.cuda.get_device_name(device) if device.type == "cuda" else "-"
    print(f"device={device} ({gpu_name}) torch={torch.__version__} cuda={torch.version.cuda}")

    wav = load_waveform(args.audio)
    t0 = time.time()
    diarization = run_diarization(wav, args.hf_token, args.num_speakers, args.min_speakers, args.max_speakers)
    t1 = time.time()
    result = transcribe(wav, args.model, device, args.language)
    t2 = time.time()
    utts = assign_speakers(result, diarization)

    stem = Path(args.audio).with_suffix("")
    with open(f"{stem}.rttm", "w") as f:
        diarization.write_rttm(f)
    with open(f"{stem}.speakers.json", "w", encoding="utf-8") as f:
        json.dump([asdict(u) for u in utts], f, ensure_ascii=False, indent=1)
    with open(f"{stem}.srt", "w", encoding="utf-8") as f:
        f.write(to_srt(utts))

    if args.embeddings:
        cents = speaker_centroids(wav, diarization, args.hf_token, device)
        np.savez(f"{stem}.centroids.npz", **cents)

    dur = wav.shape[-1] / SAMPLE_RATE
    print(f"audio {dur:.1f}s | diarization {t1 - t0:.1f}s | asr {t2 - t1:.1f}s | speakers {len(set(u.speaker for u in utts))}")
    if device.type == "cuda":
        print(f"peak mem {torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
