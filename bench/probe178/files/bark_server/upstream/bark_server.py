"""Small FastAPI wrapper around Suno Bark for the internal voice-prompt service.

    BARK_GPU=1 uvicorn bark_server:app --host 0.0.0.0 --port 8008 --workers 1

One worker per GPU: bark keeps its three GPT models + EnCodec resident on the card (~12 GB with the
large checkpoints), so run several instances with different BARK_GPU values behind the load balancer.
"""
import io
import os
import threading
import time

# must happen before torch initialises CUDA
os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("BARK_GPU", "0")
os.environ.setdefault("SUNO_OFFLOAD_CPU", "False")
os.environ.setdefault("SUNO_USE_SMALL_MODELS", "False")

import numpy as np
import pynvml
import torch
from fastapi import FastAPI, HTTPException
from fastapi.responses import Response
from pydantic import BaseModel, Field
from scipy.io.wavfile import write as write_wav

from bark import SAMPLE_RATE, generate_audio, preload_models
from bark.generation import SUPPORTED_LANGS

MAX_CHARS = int(os.environ.get("BARK_MAX_CHARS", "400"))
GPU_MEMORY_FRACTION = float(os.environ.get("BARK_GPU_MEMORY_FRACTION", "0.9"))

app = FastAPI(title="bark-tts", version="0.3.1")
_lock = threading.Lock()  # bark's global model dict is not thread safe
_stats = {"requests": 0, "audio_seconds": 0.0, "busy_seconds": 0.0}


class TTSRequest(BaseModel):
    text: str = Field(..., max_length=MAX_CHARS)
    voice: str | None = Field(None, description="history prompt, e.g. 'v2/en_speaker_6'")
    text_temp: float = 0.7
    waveform_temp: float = 0.7
    seed: int | None = None


@app.on_event("startup")
def load_models():
    pynvml.nvmlInit()
    torch.cuda.set_per_process_memory_fraction(GPU_MEMORY_FRACTION)
    t0 = time.time()
    preload_models(
        text_use_gpu=True,
        coarse_use_gpu=True,
        fine_use_gpu=True,
        codec_use_gpu=True,
    )
    print(f"bark models loaded in {time.time() - t0:.1f}s on {torch.cuda.get_device_name(0)}", flush=True)


@app.on_event("shutdown")
def shutdown():
    pynvml.nvmlShutdown()


@app.get("/voices")
def voices():
    return {
        "languages": [code for _, code in SUPPORTED_LANGS],
        "speakers": [f"v2/{code}_speaker_{n}" for _, code in SUPPORTED_LANGS for n in range(10)],
    }


@app.post("/tts", response_class=Response)
def tts(req: TTSRequest):
    if not req.text.strip():
        raise HTTPException(status_code=400, detail="empty text")
    with _lock:
        if req.seed is not None:
            torch.manual_seed(req.seed)
            np.random.seed(req.seed)
        t0 = time.time()
        try:
            audio = generate_audio(
                req.text,
                history_prompt=req.voice,
                text_temp=req.text_temp,
                waveform_temp=req.waveform_temp,
                silent=True,
            )
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            raise HTTPException(status_code=503, detail="GPU out of memory, retry with shorter text")
        busy = time.time() - t0
        _stats["requests"] += 1
        _stats["audio_seconds"] += len(audio) / SAMPLE_RATE
        _stats["busy_seconds"] += busy

    buf = io.BytesIO()
    write_wav(buf, SAMPLE_RATE, (audio * 32767).astype(np.int16))
    return Response(content=buf.getvalue(), media_type="audio/wav", headers={"X-Gen-Seconds": f"{busy:.2f}"})


@app.get("/metrics")
def metrics():
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    util = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu
    mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
    rtf = _stats["busy_seconds"] / _stats["audio_seconds"] if _stats["audio_seconds"] else None
    return {
        **_stats,
        "rtf": rtf,
        "gpu_util_percent": util,
        "gpu_mem_used_mib": mem.used // 2**20,
        "gpu_mem_total_mib": mem.total // 2**20,
        "torch_allocated_mib": torch.cuda.memory_allocated() // 2**20,
    }
