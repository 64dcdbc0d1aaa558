"""Audio-visual speaker diarization.

Combines
  * pyannote.audio speaker diarization (who speaks when, audio only),
  * per-face-track active speaker scores (TalkNet / Light-ASD, see avdiar.asd),
  * optionally a Whisper transcript,
into one timeline where every speech turn is attached to a face track when the
ASD scores agree.

Typical use (one GPU):

    python -m avdiar.pipeline.diarize --video talk.mp4 --work /tmp/talk --asd-scores /tmp/talk/pywork/scores.pckl

Set HF_TOKEN (or pass --hf-token) to download the gated pyannote models.
"""

import os
import sys
import json
import time
import pickle
import logging
import argparse
import subprocess
from dataclasses import dataclass, field, asdict
from typing import Dict, List, Optional

import numpy as np
import torch
import torchaudio

from pyannote.audio import Pipeline, Model, Inference
from pyannote.core import Segment, Annotation

from avdiar.utils.gpu import select_device, gpu_summary

logger = logging.getLogger("avdiar.diarize")

DIARIZATION_MODEL = "pyannote/speaker-diarization-3.1"
EMBEDDING_MODEL = "pyannote/wespeaker-voxceleb-resnet34-LM"
ASD_FPS = 25.0


@dataclass
class Turn:
    start: float
    end: float
    speaker: str
    track: Optional[int] = None
    asd_score: float = 0.0
    text: str = ""
    extra: Dict = field(default_factory=dict)


def extract_wav(video_path, wav_path, sr=16000):
    cmd = ["ffmpeg", "-y", "-i", video_path, "-ac", "1", "-ar", str(sr), "-vn", "-acodec", "pcm_s16le", wav_path, "-loglevel", "error"]
    subprocess.run(cmd, check=True)
    return wav_path


def load_diarization_pipeline(hf_token, device):
    pipeline = Pipeline.from_pretrained(DIARIZATION_MODEL, use_auth_token=hf_token)
    if pipeline is None:
        raise RuntimeError("could not load %s (accept the user conditions on hf.co and set HF_TOKEN)" % DIARIZATION_MODEL)
    # pyannote 3.x runs on CPU unless explicitly sent to the GPU
    pipeline.to(torch.device("cuda"))
    return pipeline


def run_diarization(pipeline, wav_path, num_speakers=None, min_speakers=None, max_speakers=None):
    waveform, sample_rate = torchaudio.load(wav_path)
    t0 = time.time()
    annotation = pipeline({"waveform": waveform, "sample_rate": sample_rate},
                          num_speakers=num_speakers, min_speakers=min_speakers, max_speakers=max_speakers)
    logger.info("diarization: %d turns, %d speakers in %.1fs", len(list(annotation.itertracks())), len(annotation.labels()), time.time() - t0)
    return annotation


class SpeakerEmbedder:
    """Whole-segment speaker embeddings, used to merge speakers that pyannote split
    and to match speakers across the videos of one episode."""

    def __init__(self, hf_token, device=None):
        model = Model.from_pretrained(EMBEDDING_MODEL, use_auth_token=hf_token)
        self.inference = Inference(model, window="whole", device=device or torch.device("cuda"))

    def __call__(self, wav_path, segment):
        emb = self.inference.crop(wav_path, segment)
        return emb / (np.linalg.norm(emb) + 1e-8)


def load_asd_scores(scores_path, tracks_path):
    with open(scores_path, "rb") as f:
        scores = pickle.load(f)
    with open(tracks_path, "rb") as f:
        tracks = pickle.load(f)
    out = []
    for tidx, (track, score) in enumerate(zip(tracks, scores)):
        frames = np.asarray(track["track"]["frame"])
        score = np.asarray(score, dtype=np.float32)
        n = min(len(frames), len(score))
        out.append({"track": tidx, "frames": frames[:n], "score": score[:n]})
    return out


def attach_tracks(annotation, asd_tracks, min_score=0.0, min_overlap=0.3):
    """Assign every diarization turn to the face track with the highest mean ASD
    score over the turn, if that track is visible for >= min_overlap of the turn."""
    turns = []
    for segment, _, speaker in annotation.itertracks(yield_label=True):
        f0, f1 = int(segment.start * ASD_FPS), int(np.ceil(segment.end * ASD_FPS))
        best, best_score = None, -np.inf
        for t in asd_tracks:
            mask = (t["frames"] >= f0) & (t["frames"] < f1)
            visible = mask.sum() / max(1, f1 - f0)
            if visible < min_overlap:
                continue
            s = float(t["score"][mask].mean())
            if s > best_score:
                best, best_score = t["track"], s
        turn = Turn(start=segment.start, end=segment.end, speaker=speaker)
        if best is not None and best_score > min_score:
            turn.track, turn.asd_score = best, best_score
        turns.append(turn)
    return turns


def speaker_to_track(turns):
    """Majority vote: which face track is each pyannote speaker label?"""
    votes = {}
    for t in turns:
        if t.track is None:
            continue
        votes.setdefault(t.speaker, {}).setdefault(t.track, 0.0)
        votes[t.speaker][t.track] += t.end - t.start
    return {spk: max(v.items(), key=lambda kv: kv[1])[0] for spk, v in votes.items()}


def transcribe(wav_path, turns, model_name="medium", device="cuda", language=None):
    import whisper
    model = whisper.load_model(model_name, device=device)
    audio = whisper.load_audio(wav_path)
    for t in turns:
        chunk = audio[int(t.start * 16000): int(t.end * 16000)]
        if len(chunk) < 1600:
            continue
        result = model.transcribe(chunk, language=language, fp16=torch.cuda.is_available(), condition_on_previous_text=False)
        t.text = result["text"].strip()
    del model
    torch.cuda.empty_cache()
    return turns


def merge_similar_speakers(annotation, wav_path, embedder, threshold=0.75, min_dur=2.0):
    """pyannote sometimes splits one person into two labels across a scene cut.
    Merge labels whose centroid embeddings have cosine similarity > threshold."""
    centroids = {}
    for label in annotation.labels():
        segs = [s for s in annotation.label_timeline(label) if s.duration >= min_dur]
        if not segs:
            continue
        embs = np.stack([embedder(wav_path, s) for s in segs[:10]])
        c = embs.mean(0)
        centroids[label] = c / (np.linalg.norm(c) + 1e-8)
    labels = sorted(centroids)
    mapping = {}
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            if b in mapping:
                continue
            if float(np.dot(centroids[a], centroids[b])) > threshold:
                mapping[b] = mapping.get(a, a)
    if mapping:
        logger.info("merging speakers %s", mapping)
        annotation = annotation.rename_labels(mapping)
    return annotation


def write_rttm(turns, uri, path):
    with open(path, "w") as f:
        for t in turns:
            name = "track%03d" % t.track if t.track is not None else t.speaker
            f.write("SPEAKER %s 1 %.3f %.3f <NA> <NA> %s <NA> <NA>\n" % (uri, t.start, t.end - t.start, name))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="audio-visual speaker diarization")
    p.add_argument("--video", required=True)
    p.add_argument("--work", required=True, help="work dir of the ASD demo (pyavi/, pywork/)")
    p.add_argument("--asd-scores", default=None)
    p.add_argument("--asd-tracks", default=None)
    p.add_argument("--hf-token", default=os.environ.get("HF_TOKEN"))
    p.add_argument("--num-speakers", type=int, default=None)
    p.add_argument("--max-speakers", type=int, default=None)
    p.add_argument("--transcribe", action="store_true")
    p.add_argument("--whisper-model", default="medium")
    p.add_argument("--gpu", type=int, default=None, help="GPU index; default: the one with most free memory")
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")

    device = select_device(args.gpu)
    logger.info("device %s | %s", device, gpu_summary())

    wav_path = extract_wav(args.video, os.path.join(args.work, "pyavi", "audio16k.wav"))
    pipeline = load_diarization_pipeline(args.hf_token, device)
    annotation = run_diarization(pipeline, wav_path, num_speakers=args.num_speakers, max_speakers=args.max_speakers)

    scores_path = args.asd_scores or os.path.join(args.work, "pywork", "scores.pckl")
    tracks_path = args.asd_tracks or os.path.join(args.work, "pywork", "tracks.pckl")
    asd_tracks = load_asd_scores(scores_path, tracks_path)
    turns = attach_tracks(annotation, asd_tracks)
    mapping = speaker_to_track(turns)
    for t in turns:
        if t.track is None and t.speaker in mapping:
            t.track = mapping[t.speaker]
            t.extra["from_vote"] = True

    write_rttm(turns, os.path.splitext(os.path.basename(args.video))[0], os.path.join(args.work, "pywork", "av.rttm"))

    if args.transcribe:
        turns = transcribe(wav_path, turns, model_name=args.whisper_model, device=str(device))

    out = args.out or os.path.join(args.work, "pywork", "av_diarization.json")
    with open(out, "w") as f:
        json.dump({"video": args.video, "speaker_to_track": mapping, "turns": [asdict(t) for t in turns]}, f, indent=1)
    logger.info("wrote %s (%d turns)", out, len(turns))

    if torch.cuda.is_available():
        logger.info("peak GPU memory %.2f GiB", torch.cuda.max_memory_allocated(device) / 2**30)


if __name__ == "__main__":
    sys.exit(main())
