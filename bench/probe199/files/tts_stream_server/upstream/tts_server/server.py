"""Streaming multilingual TTS server.

Text -> acoustic model (MMS-VITS for the long tail of languages, SpeechT5 for
English voices with x-vector cloning) -> mel -> BigVGAN-v2 vocoder -> 24 kHz PCM,
streamed over a websocket in ~200 ms chunks.

    python -m tts_server.server --config tts_server/configs/server.yaml
"""
import argparse
import asyncio
import io
import logging
import os
import time
from dataclasses import dataclass
from typing import AsyncIterator, Dict, List, Optional

import numpy as np
import torch
import torchaudio
import yaml
from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel
from transformers import AutoTokenizer, VitsModel

from vocoder.bigvgan import BigVGAN
from vocoder.meldataset import get_mel_spectrogram

logger = logging.getLogger("tts_server")

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


@dataclass
class ServerConfig:
    device: str
    dtype: str
    vits_langs: List[str]
    vocoder_repo: str
    use_cuda_kernel: bool
    compile: bool
    compile_mode: str
    chunk_ms: int
    max_concurrent: int
    warmup_text: str

    @classmethod
    def from_yaml(cls, path: str) -> "ServerConfig":
        with open(path) as f:
            raw = yaml.safe_load(f)
        voc = raw.get("vocoder", {})
        return cls(
            device=raw.get("device", "cuda:0"),
            dtype=raw.get("dtype", "float16"),
            vits_langs=raw.get("vits_langs", ["eng"]),
            vocoder_repo=voc.get("repo", "nvidia/bigvgan_v2_24khz_100band_256x"),
            use_cuda_kernel=bool(voc.get("use_cuda_kernel", False)),
            compile=bool(raw.get("compile", False)),
            compile_mode=raw.get("compile_mode", "reduce-overhead"),
            chunk_ms=int(raw.get("chunk_ms", 200)),
            max_concurrent=int(raw.get("max_concurrent", 4)),
            warmup_text=raw.get("warmup_text", "Hello, this is a warmup sentence."),
        )


class SynthRequest(BaseModel):
    text: str
    lang: str = "eng"
    speaking_rate: float = 1.0
    seed: Optional[int] = None


class TTSEngine:
    def __init__(self, cfg: ServerConfig):
        self.cfg = cfg
        self.device = torch.device(cfg.device)
        self.dtype = DTYPES[cfg.dtype]
        self.vits: Dict[str, VitsModel] = {}
        self.tok: Dict[str, AutoTokenizer] = {}
        for lang in cfg.vits_langs:
            name = f"facebook/mms-tts-{lang}"
            self.tok[lang] = AutoTokenizer.from_pretrained(name)
            self.vits[lang] = VitsModel.from_pretrained(name).to(self.device).eval()
            logger.info("loaded %s", name)

        self.vocoder = BigVGAN.from_pretrained(cfg.vocoder_repo, use_cuda_kernel=cfg.use_cuda_kernel)
        self.vocoder.remove_weight_norm()
        self.vocoder = self.vocoder.eval().to(self.device, dtype=self.dtype)
        self.voc_sr = self.vocoder.h.sampling_rate
        if cfg.compile:
            self.vocoder = torch.compile(self.vocoder, mode=cfg.compile_mode, dynamic=True)

        # Vocoding runs on a side stream so the next sentence's acoustic model
        # can be enqueued while the previous chunk is still being vocoded.
        self.voc_stream = torch.cuda.Stream(device=self.device)
        self.sem = asyncio.Semaphore(cfg.max_concurrent)

    def warmup(self) -> None:
        t0 = time.perf_counter()
        for lang in self.vits:
            list(self._synth_chunks(SynthRequest(text=self.cfg.warmup_text, lang=lang)))
        torch.cuda.synchronize(self.device)
        logger.info("warmup %.2fs", time.perf_counter() - t0)

    @torch.inference_mode()
    def _acoustic(self, req: SynthRequest) -> torch.Tensor:
        tok = self.tok[req.lang]
        model = self.vits[req.lang]
        if req.seed is not None:
            torch.manual_seed(req.seed)
        model.speaking_rate = req.speaking_rate
        ids = tok(req.text, return_tensors="pt").to(self.device)
        wav = model(**ids).waveform  # (1, T) at 16 kHz
        # BigVGAN expects a 24 kHz, 100-band mel; re-derive it from the VITS waveform.
        wav = torchaudio.functional.resample(wav.float(), model.config.sampling_rate, self.voc_sr)
        mel = get_mel_spectrogram(wav, self.vocoder.h)
        return mel.to(self.dtype)

    @torch.inference_mode()
    def _synth_chunks(self, req: SynthRequest):
        mel = self._acoustic(req)
        hop = self.vocoder.h.hop_size
        frames_per_chunk = max(1, int(self.cfg.chunk_ms / 1000 * self.voc_sr / hop))
        overlap = 4
        for start in range(0, mel.shape[-1], frames_per_chunk):
            lo = max(0, start - overlap)
            hi = min(mel.shape[-1], start + frames_per_chunk + overlap)
            with torch.cuda.stream(self.voc_stream):
                audio = self.vocoder(mel[..., lo:hi])
            torch.cuda.current_stream(self.device).wait_stream(self.voc_stream)
            audio = audio.squeeze().float()
            cut_lo = (start - lo) * hop
            cut_hi = audio.shape[-1] - (hi - min(mel.shape[-1], start + frames_per_chunk)) * hop
            pcm = (audio[cut_lo:cut_hi].clamp(-1, 1) * 32767).to(torch.int16).cpu().numpy()
            yield pcm.tobytes()

    async def stream(self, req: SynthRequest) -> AsyncIterator[bytes]:
        async with self.sem:
            loop = asyncio.get_running_loop()
            it = self._synth_chunks(req)
            while True:
                chunk = await loop.run_in_executor(None, next, it, None)
                if chunk is None:
                    break
                yield chunk

    def stats(self) -> Dict[str, float]:
        return {
            "allocated_gb": torch.cuda.memory_allocated(self.device) / 2**30,
            "reserved_gb": torch.cuda.memory_reserved(self.device) / 2**30,
            "utilization": torch.cuda.utilization(self.device),
        }


def create_app(cfg: ServerConfig) -> FastAPI:
    app = FastAPI(title="tts-server")
    engine = TTSEngine(cfg)

    @app.on_event("startup")
    async def _startup() -> None:
        engine.warmup()

    @app.get("/health")
    async def health() -> JSONResponse:
        return JSONResponse({"status": "ok", "langs": list(engine.vits), "device": str(engine.device), **engine.stats()})

    @app.post("/tts")
    async def tts(req: SynthRequest):
        if req.lang not in engine.vits:
            return JSONResponse({"error": f"unsupported lang {req.lang}"}, status_code=400)
        return StreamingResponse(engine.stream(req), media_type="audio/L16; rate=%d" % engine.voc_sr)

    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            while True:
                msg = await websocket.receive_json()
                req = SynthRequest(**msg)
                if req.lang not in engine.vits:
                    await websocket.send_json({"error": f"unsupported lang {req.lang}"})
                    continue
                t0 = time.perf_counter()
                first = True
                async for chunk in engine.stream(req):
                    if first:
                        await websocket.send_json({"event": "start", "sample_rate": engine.voc_sr,
                                                   "ttfb_ms": (time.perf_counter() - t0) * 1000})
                        first = False
                    await websocket.send_bytes(chunk)
                await websocket.send_json({"event": "end"})
        except WebSocketDisconnect:
            logger.info("client disconnected")

    return app


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--config", default=os.path.join(os.path.dirname(__file__), "configs", "server.yaml"))
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=8080)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    torch.backends.cudnn.benchmark = True
    cfg = ServerConfig.from_yaml(args.config)
    logger.info("config: %s", cfg)

    import uvicorn

    uvicorn.run(create_app(cfg), host=args.host, port=args.port, workers=1)


if __name__ == "__main__":
    main()
