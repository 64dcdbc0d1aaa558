"""Small HTTP service around a fine-tuned wav2vec2/HuBERT emotion classifier.

    uvicorn serve.app:app --host 0.0.0.0 --port 8000
    curl -F "file=@sample.wav" localhost:8000/predict
"""
import io
import logging
import os
import time

import numpy as np
import soundfile as sf
import torch
import torch.nn.functional as F
import torchaudio
from fastapi import FastAPI, File, HTTPException, UploadFile
from transformers import AutoConfig, Wav2Vec2FeatureExtractor

from src.models import HubertForSpeechClassification, Wav2Vec2ForSpeechClassification

logger = logging.getLogger("ser.serve")
logging.basicConfig(level=logging.INFO)

MODEL_ID = os.environ.get("SER_MODEL", "m3hrdadfi/hubert-base-persian-speech-emotion-recognition")
DEVICE = os.environ.get("SER_DEVICE", "cuda:0" if torch.cuda.is_available() else "cpu")
USE_HALF = DEVICE.startswith("cuda") and os.environ.get("SER_FP16", "1") == "1"
MAX_SECONDS = float(os.environ.get("SER_MAX_SECONDS", "20"))

app = FastAPI(title="speech-emotion-recognition")

config = AutoConfig.from_pretrained(MODEL_ID)
feature_extractor = Wav2Vec2FeatureExtractor.from_pretrained(MODEL_ID)
SR = feature_extractor.sampling_rate
model_cls = HubertForSpeechClassification if config.model_type == "hubert" else Wav2Vec2ForSpeechClassification
model = model_cls.from_pretrained(MODEL_ID).to(DEVICE).eval()
if USE_HALF:
    model = model.half()
DTYPE = torch.float16 if USE_HALF else torch.float32


def load_audio(raw: bytes) -> np.ndarray:
    wav, sr = sf.read(io.BytesIO(raw), dtype="float32", always_2d=True)
    wav = torch.from_numpy(wav.T).mean(dim=0, keepdim=True)
    if sr != SR:
        wav = torchaudio.functional.resample(wav, sr, SR)
    return wav.squeeze(0).numpy()[: int(MAX_SECONDS * SR)]


@torch.inference_mode()
def classify(speech: np.ndarray):
    features = feature_extractor(speech, sampling_rate=SR, return_tensors="pt", padding=True)
    input_values = features.input_values.to(DEVICE, dtype=DTYPE)
    logits = model(input_values).logits
    probs = F.softmax(logits.float(), dim=-1)[0].cpu().numpy()
    return {config.id2label[i]: float(p) for i, p in enumerate(probs)}


@app.on_event("startup")
def warmup():
    t0 = time.perf_counter()
    classify(np.zeros(SR, dtype=np.float32))
    logger.info("warmup on %s (fp16=%s) took %.1f ms", DEVICE, USE_HALF, (time.perf_counter() - t0) * 1e3)


@app.post("/predict")
async def predict(file: UploadFile = File(...)):
    raw = await file.read()
    try:
        speech = load_audio(raw)
    except Exception as e:  # noqa: BLE001
        raise HTTPException(status_code=400, detail=f"cannot decode audio: {e}")
    t0 = time.perf_counter()
    scores = classify(speech)
    latency_ms = (time.perf_counter() - t0) * 1e3
    label = max(scores, key=scores.get)
    return {"label": label, "scores": scores, "latency_ms": round(latency_ms, 2)}


@app.get("/health")
def health():
    return {
        "model": MODEL_ID,
        "device": DEVICE,
        "fp16": USE_HALF,
        "gpu_mem_mb": torch.cuda.memory_allocated() / 2**20 if DEVICE.startswith("cuda") else 0,
    }
