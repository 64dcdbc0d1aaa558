"""Push-to-talk voice input / output for the local assistant.

* speech-to-text: faster-whisper (CTranslate2 backend)
* text-to-speech: Coqui XTTS v2 (torch)

Both models stay resident on the GPU; the LLM runs in a separate process (llama.cpp server).
"""
from __future__ import annotations

import io
import logging
import os
import queue
import tempfile
import threading
import wave
from dataclasses import dataclass
from typing import Optional

import numpy as np
import sounddevice as sd
import torch
from faster_whisper import WhisperModel

log = logging.getLogger("assistant.voice")

SAMPLE_RATE = 16000
CHANNELS = 1


@dataclass
class VoiceConfig:
    whisper_size: str = os.environ.get("WHISPER_MODEL", "large-v3")
    whisper_device: str = os.environ.get("WHISPER_DEVICE", "cuda")
    whisper_compute_type: str = os.environ.get("WHISPER_COMPUTE_TYPE", "float16")
    language: Optional[str] = os.environ.get("WHISPER_LANG") or None
    vad_filter: bool = True
    tts_model: str = "tts_models/multilingual/multi-dataset/xtts_v2"
    tts_speaker_wav: str = os.environ.get("TTS_SPEAKER_WAV", "voices/default.wav")
    tts_language: str = "en"


class Recorder:
    """Records from the default microphone while ``recording`` is set."""

    def __init__(self):
        self.q: "queue.Queue[np.ndarray]" = queue.Queue()
        self.recording = threading.Event()

    def _callback(self, indata, frames, time_info, status):
        if status:
            log.debug("sounddevice status: %s", status)
        if self.recording.is_set():
            self.q.put(indata.copy())

    def record_until(self, stop_event: threading.Event) -> np.ndarray:
        chunks = []
        self.recording.set()
        with sd.InputStream(samplerate=SAMPLE_RATE, channels=CHANNELS, dtype="float32", callback=self._callback):
            while not stop_event.is_set():
                try:
                    chunks.append(self.q.get(timeout=0.1))
                except queue.Empty:
                    pass
        self.recording.clear()
        while not self.q.empty():
            chunks.append(self.q.get_nowait())
        if not chunks:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate(chunks, axis=0).reshape(-1)


class SpeechToText:
    def __init__(self, cfg: VoiceConfig):
        self.cfg = cfg
        log.info("loading whisper %s on %s (%s)", cfg.whisper_size, cfg.whisper_device, cfg.whisper_compute_type)
        self.model = WhisperModel(
            cfg.whisper_size,
            device=cfg.whisper_device,
            compute_type=cfg.whisper_compute_type,
            download_root=os.environ.get("WHISPER_CACHE", "models/whisper"),
        )

    def transcribe(self, audio: np.ndarray) -> str:
        if audio.size < SAMPLE_RATE // 4:
            return ""
        segments, info = self.model.transcribe(
            audio,
            language=self.cfg.language,
            beam_size=5,
            vad_filter=self.cfg.vad_filter,
            vad_parameters={"min_silence_duration_ms": 500},
        )
        text = " ".join(s.text.strip() for s in segments)
        log.info("heard (%s, p=%.2f): %s", info.language, info.language_probability, text)
        return text


class TextToSpeech:
    def __init__(self, cfg: VoiceConfig):
        from TTS.api import TTS

        self.cfg = cfg
        self.tts = TTS(cfg.tts_model).to("cuda")
        self.sample_rate = self.tts.synthesizer.output_sample_rate

    @torch.inference_mode()
    def speak(self, text: str, block: bool = True):
        if not text.strip():
            return
        wav = self.tts.tts(text=text, speaker_wav=self.cfg.tts_speaker_wav, language=self.cfg.tts_language)
        sd.play(np.asarray(wav, dtype=np.float32), self.sample_rate)
        if block:
            sd.wait()

    def to_wav_bytes(self, text: str) -> bytes:
        wav = np.asarray(
            self.tts.tts(text=text, speaker_wav=self.cfg.tts_speaker_wav, language=self.cfg.tts_language),
            dtype=np.float32,
        )
        buf = io.BytesIO()
        with wave.open(buf, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(self.sample_rate)
            w.writeframes((np.clip(wav, -1, 1) * 32767).astype(np.int16).tobytes())
        return buf.getvalue()


class VoiceIO:
    """Glue used by ``assistant.main``: record -> transcribe -> (LLM) -> speak."""

    def __init__(self, cfg: Optional[VoiceConfig] = None, enable_tts: bool = True):
        self.cfg = cfg or VoiceConfig()
        self.recorder = Recorder()
        self.stt = SpeechToText(self.cfg)
        self.tts = TextToSpeech(self.cfg) if enable_tts else None
        if torch.cuda.is_available():
            log.info(
                "voice models resident, %.1f GiB allocated on %s",
                torch.cuda.memory_allocated() / 2**30,
                torch.cuda.get_device_name(),
            )

    def listen(self, stop_event: threading.Event) -> str:
        audio = self.recorder.record_until(stop_event)
        return self.stt.transcribe(audio)

    def say(self, text: str):
        if self.tts is not None:
            self.tts.speak(text)

    def save_debug_audio(self, audio: np.ndarray) -> str:
        fd, path = tempfile.mkstemp(suffix=".wav", prefix="utt_")
        os.close(fd)
        with wave.open(path, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(SAMPLE_RATE)
            w.writeframes((np.clip(audio, -1, 1) * 32767).astype(np.int16).tobytes())
        return path


def _ask_llm(text: str, history: list, base_url: str) -> str:
    """Send the transcript to the llama.cpp / Ollama OpenAI-compatible endpoint."""
    import requests

    history.append({"role": "user", "content": text})
    r = requests.post(
        f"{base_url}/v1/chat/completions",
        json={"model": "local", "messages": history, "temperature": 0.6, "max_tokens": 300},
        timeout=120,
    )
    r.raise_for_status()
    answer = r.json()["choices"][0]["message"]["content"].strip()
    history.append({"role": "assistant", "content": answer})
    return answer


def main():
    import argparse

    ap = argparse.ArgumentParser(description="push-to-talk demo: Enter starts/stops recording")
    ap.add_argument("--llm-url", default=os.environ.get("LLM_URL", "http://127.0.0.1:8000"))
    ap.add_argument("--no-tts", action="store_true")
    ap.add_argument("--keep-audio", action="store_true", help="save every utterance as a wav for debugging")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    vio = VoiceIO(enable_tts=not args.no_tts)
    history = [{"role": "system", "content": "You are a friendly voice assistant. Keep answers short."}]
    print("Press Enter to talk, Enter again to stop. Ctrl-C to quit.")
    try:
        while True:
            input()
            stop = threading.Event()
            result = {}

            def _worker():
                audio = vio.recorder.record_until(stop)
                if args.keep_audio:
                    log.info("saved %s", vio.save_debug_audio(audio))
                result["text"] = vio.stt.transcribe(audio)

            t = threading.Thread(target=_worker)
            t.start()
            print("... listening (Enter to stop)")
            input()
            stop.set()
            t.join()
            text = result.get("text", "")
            if not text:
                print("(heard nothing)")
                continue
            print(f"you: {text}")
            answer = _ask_llm(text, history, args.llm_url)
            print(f"bot: {answer}")
            vio.say(answer)
    except KeyboardInterrupt:
        print()


if __name__ == "__main__":
    main()
