import argparse
import logging
import threading
import time
from typing import Callable, List, Optional

import numpy as np
import pyaudio
import torch

from howl.context import InferenceContext
from howl.model.inference import InferenceEngine

__all__ = ["HowlClient"]


class HowlClient:
    """
    A client for serving Howl models. Users can provide custom listener callbacks
    using `add_listener()` which are called when a wake word is detected.

    On a workstation with a GPU the engine runs on CUDA; on a Raspberry Pi it stays on the CPU.
    """

    def __init__(
        self,
        engine: Optional[InferenceEngine] = None,
        context: Optional[InferenceContext] = None,
        device: Optional[torch.device] = None,
        chunk_size: int = 500,
    ):
        self.listeners: List[Callable[[int], None]] = []
        self.chunk_size = chunk_size
        self.engine = engine
        self.ctx = context
        self.device = device or torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        self._audio_buf = []
        self._audio_buf_len = 16
        self._audio_float_size = 32767
        self.last_data = np.zeros(self.chunk_size)
        self._lock = threading.Lock()
        self._stream = None
        self._audio = None

    def _on_audio(self, in_data, frame_count, time_info, status):
        data_ok = (in_data, pyaudio.paContinue)
        self.last_data = in_data
        self._audio_buf.append(in_data)
        if len(self._audio_buf) != self._audio_buf_len:
            return data_ok

        audio_data = np.frombuffer(b"".join(self._audio_buf), dtype=np.int16).astype(np.float) / self._audio_float_size
        inp = torch.from_numpy(audio_data).float().to(self.device)
        with self._lock:
            if self.engine.infer(inp):
                phrase = " ".join(self.ctx.vocab[x] for x in self.engine.sequence).title()
                logging.info(f"{phrase} detected", end="\r")
                for listener in self.listeners:
                    listener(self.engine.sequence)
                self.engine.reset()
        self._audio_buf = self._audio_buf[2:]
        return data_ok

    def add_listener(self, listener: Callable[[int], None]):
        """Add a listener callback to be called when a wake word is detected"""
        self.listeners.append(listener)

    def from_pretrained(self, name: str, force_reload: bool = False):
        """Load a pretrained model using the provided name"""
        engine, ctx = torch.hub.load("castorini/howl", name, force_reload=force_reload, reload_models=force_reload)
        # hub checkpoints are CPU tensors; move the engine (model + zmuv buffers) to our device
        self.engine = engine.to(self.device)
        self.ctx = ctx
        return self

    def start(self):
        """Start the audio stream for inference"""
        if self.engine is None:
            raise AttributeError("Please provide an InferenceEngine or initialize using from_pretrained.")
        self.engine.eval()
        if self.ctx is None:
            raise AttributeError("Please provide an InferenceContext or initialize using from_pretrained.")

        chosen_idx = 0
        self._audio = pyaudio.PyAudio()
        for idx in range(self._audio.get_device_count()):
            info = self._audio.get_device_info_by_index(idx)
            if info["name"] == "pulse":
                chosen_idx = idx
                break
        self._stream = self._audio.open(
            format=pyaudio.paInt16,
            channels=1,
            rate=16000,
            input=True,
            input_device_index=chosen_idx,
            frames_per_buffer=self.chunk_size,
            stream_callback=self._on_audio,
        )
        self._stream.start_stream()
        return self

    def join(self):
        """Block while the audio inference stream is active"""
        while self._stream.is_active():
            time.sleep(0.1)

    def stop(self):
        if self._stream is not None:
            self._stream.stop_stream()
            self._stream.close()
        if self._audio is not None:
            self._audio.terminate()


def main():
    parser = argparse.ArgumentParser(description="Listen for a wake word on the default microphone.")
    parser.add_argument("--model", type=str, default="hey_fire_fox")
    parser.add_argument("--force-reload", action="store_true")
    parser.add_argument("--cpu", action="store_true", help="do not use the GPU even if one is available")
    args = parser.parse_args()

    device = torch.device("cpu") if args.cpu else None
    client = HowlClient(device=device)
    client.from_pretrained(args.model, force_reload=args.force_reload)

    def on_detect(sequence):
        print(f"Detected {sequence} on {client.device}")

    client.add_listener(on_detect)
    client.start().join()


if __name__ == "__main__":
    main()
