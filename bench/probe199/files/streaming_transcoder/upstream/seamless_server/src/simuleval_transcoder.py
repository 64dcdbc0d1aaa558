import logging
import math
import os
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Any, Dict, List, Optional, Union

import numpy as np
import soundfile
import torch
from simuleval.agents import TextToSpeechAgent
from simuleval.agents.actions import ReadAction, WriteAction
from simuleval.data.segments import (
    EmptySegment,
    SpeechSegment,
    TextSegment,
)
from simuleval.utils.agent import build_system_from_dir

from src.speech_and_text_output import SpeechAndTextOutput
from src.transcoder_helpers import get_transcoder_output_events

logger = logging.getLogger(__name__)
logger.setLevel(logging.DEBUG if os.environ.get("TRANSCODER_DEBUG") else logging.INFO)

MODEL_SAMPLE_RATE = 16_000
DEBUG_AUDIO_DIR = Path(os.environ.get("DEBUG_AUDIO_DIR", "/tmp/seamless_debug"))


class OutputSegments:
    def __init__(self, segments: Union[List[Any], Any]):
        if isinstance(segments, list):
            self.segments = segments
        else:
            self.segments = [segments]

    @property
    def is_empty(self) -> bool:
        return all(segment.is_empty for segment in self.segments)

    @property
    def finished(self) -> bool:
        return all(segment.finished for segment in self.segments)

    def compute_length(self, segment: Any) -> int:
        if isinstance(segment, TextSegment):
            return len(segment.content)
        elif isinstance(segment, SpeechSegment):
            return len(segment.content) / segment.sample_rate
        return 0

    def as_json(self) -> Dict[str, Any]:
        return {
            "segments": [
                {
                    "content": s.content if isinstance(s, TextSegment) else None,
                    "finished": s.finished,
                    "type": type(s).__name__,
                }
                for s in self.segments
            ]
        }


def get_agent_device_and_dtype() -> Dict[str, str]:
    """Overrides for the agent yaml when no accelerator is present.

    The shipped agent configs assume a GPU (``device: cuda:0``, ``dtype: fp16``);
    on a CPU-only box we rewrite both so the demo still comes up (slowly).
    """
    overrides: Dict[str, str] = {}
    if not torch.cuda.is_available():
        logger.warning("No GPU found, running the streaming agents on CPU in fp32")
        overrides["device"] = "cpu"
        overrides["dtype"] = "fp32"
    return overrides


class SimulevalTranscoder:
    def __init__(self, agent, sample_rate, debug, buffer_limit):
        self.agent = agent.agent
        self.has_expressive = agent.has_expressive
        self.input_queue: Queue = Queue()
        self.output_queue: Queue = Queue()
        self.states = self.agent.build_states()
        if debug:
            self.get_states_root().debug = True
        self.incoming_sample_rate = sample_rate
        self.close = False
        self.first_input_ts: Optional[float] = None
        self.first_output_ts: Optional[float] = None
        self.debug = debug
        self.debug_ts = f"{time.time()}"
        self.debug_log("Instantiating SimulevalTranscoder")
        self.buffer_limit = buffer_limit
        self.thread: Optional[threading.Thread] = None
        self.lock = threading.Lock()

        assert self.incoming_sample_rate == MODEL_SAMPLE_RATE, (
            f"Only {MODEL_SAMPLE_RATE}Hz input is supported, "
            f"got {self.incoming_sample_rate}"
        )

    def debug_log(self, *args: Any) -> None:
        if self.debug:
            logger.info(*args)

    @classmethod
    def build_agent(cls, model_path: str, config_name: str) -> TextToSpeechAgent:
        logger.info(f"Building simuleval agent: {model_path}, {config_name}")
        agent = build_system_from_dir(
            Path(__file__).resolve().parent.parent / f"models/{model_path}",
            config_name=config_name,
            overwrite_config_dict=get_agent_device_and_dtype(),
        )
        device = next(iter(agent.agents[0].model.parameters())).device
        logger.info(f"Successfully built simuleval agent {model_path} on {device}")

        return agent

    def process_incoming_bytes(self, incoming_bytes: bytes, dynamic_config: Dict[str, Any]) -> None:
        # TODO: We probably want to do some validation on dynamic_config to ensure it has what we needs
        segment, sr = self._preprocess_wav(incoming_bytes)
        segment = SpeechSegment(
            content=segment,
            sample_rate=sr,
            tgt_lang=dynamic_config.get("targetLanguage"),
            config=dynamic_config,
        )
        if dynamic_config.get("expressive") is True and self.has_expressive is False:
            logger.warning(
                "Passing 'expressive' but the agent does not support expressive output!"
            )
        # # segment is array([0, 0, 0, ..., 0, 0, 0], dtype=int16)
        self.input_queue.put_nowait(segment)

    def get_input_segment(self) -> Optional[SpeechSegment]:
        if self.input_queue.empty():
            return None
        chunk = self.input_queue.get_nowait()
        self.input_queue.task_done()
        return chunk

    def convert_waveform(
        self,
        waveform: Union[np.ndarray, torch.Tensor],
        sample_rate: int,
        normalize_volume: bool = False,
        to_mono: bool = False,
        to_sample_rate: Optional[int] = None,
    ):
        """convert a waveform:
        - to a target sample rate
        - from multi-channel to mono channel
        - volume normalization
        """
        import torchaudio.sox_effects as ta_sox

        _waveform = (
            torch.from_numpy(waveform) if isinstance(waveform, np.ndarray) else waveform
        )
        effects = []
        if normalize_volume:
            effects.append(["gain", "-n"])
        if to_sample_rate is not None and to_sample_rate != sample_rate:
            effects.append(["rate", f"{to_sample_rate}"])
        if to_mono and _waveform.shape[0] > 1:
            effects.append(["channels", "1"])
        if len(effects) > 0:
            _waveform, sample_rate = ta_sox.apply_effects_tensor(
                _waveform, sample_rate, effects
            )
        return _waveform, sample_rate

    def _preprocess_wav(self, data: Any) -> Any:
        segment, sample_rate = soundfile.read(
            io_bytes(data),
            dtype="float32",
            always_2d=True,
            frames=-1,
            start=0,
            format="RAW",
            subtype="PCM_16",
            samplerate=self.incoming_sample_rate,
            channels=1,
        )
        self.debug_log(f"Incoming segment shape: {segment.shape}")
        segment, sample_rate = self.convert_waveform(
            segment.T, sample_rate, normalize_volume=False, to_mono=True,
            to_sample_rate=MODEL_SAMPLE_RATE,
        )
        segment = segment.squeeze(axis=0)
        return segment.tolist(), sample_rate

    def process_pipeline_impl(self, input_segment: SpeechSegment) -> Optional[OutputSegments]:
        try:
            with torch.no_grad():
                output_segment = OutputSegments(
                    self.agent.pushpop(input_segment, self.states)
                )
            if (
                self.get_states_root().first_input_ts is not None
                and self.first_input_ts is None
            ):
                # TODO: this is hacky
                self.first_input_ts = self.get_states_root().first_input_ts

            if not output_segment.is_empty and self.first_output_ts is None:
                self.first_output_ts = time.time()
            return output_segment
        except Exception as e:
            logger.error(
                f"Got exception while processing pipeline: {e}", exc_info=True
            )
            # Drop the states and start over: a half-updated decoder state is useless.
            self.reset_states()
            return None

    def process_pipeline_loop(self) -> None:
        if self.close:
            return  # closes the thread

        self.debug_log("processing_pipeline")
        while not self.close:
            input_segment = self.get_input_segment()
            if input_segment is None:
                if self.get_states_root().is_fresh_state:  # TODO: this is hacky
                    time.sleep(0.3)
                else:
                    time.sleep(0.03)
                continue
            output_segment = self.process_pipeline_impl(input_segment)
            if output_segment is None:
                continue
            if output_segment.finished:
                self.debug_log("OUTPUT SEGMENT IS FINISHED. Resetting states.")
                self.reset_states()
                if self.debug:
                    # when we rebuild states, this value is reset to whatever
                    # is in the system dir config, which defaults debug=False.
                    self.get_states_root().debug = True
            self.output_queue.put_nowait(output_segment)
            self._log_latency()

    def _log_latency(self) -> None:
        if self.first_input_ts is None or self.first_output_ts is None:
            return
        latency_ms = (self.first_output_ts - self.first_input_ts) * 1000
        self.debug_log(f"first output latency: {latency_ms:.0f}ms")

    def get_states_root(self) -> Any:
        if hasattr(self.agent, "states_root"):
            # self.states is a dict
            return self.states[self.agent.states_root]
        else:
            # self.states is a list
            return self.states[0]

    def reset_states(self) -> None:
        if isinstance(self.states, dict):
            for state in self.states.values():
                state.reset()
        else:
            for state in self.states:
                state.reset()

    def start(self) -> None:
        self.debug_log("starting transcoder in a thread")
        self.thread = threading.Thread(target=self.process_pipeline_loop, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.close = True
        if self.thread is not None:
            self.thread.join(timeout=5)

    def get_buffered_output(self) -> Optional[SpeechAndTextOutput]:
        speech_out = np.array([])
        text_out = ""
        final = False
        speech_sample_rate: Optional[int] = None

        while not self.output_queue.empty():
            try:
                output_chunk = self.output_queue.get_nowait()
            except Empty:
                break
            self.output_queue.task_done()
            for segment in output_chunk.segments:
                if isinstance(segment, SpeechSegment):
                    speech_out = np.append(speech_out, segment.content)
                    speech_sample_rate = segment.sample_rate
                elif isinstance(segment, TextSegment):
                    text_out += segment.content
                elif isinstance(segment, EmptySegment):
                    continue
                final = final or segment.finished
            if len(speech_out) / MODEL_SAMPLE_RATE > self.buffer_limit:
                break

        if len(speech_out) == 0 and text_out == "" and not final:
            return None
        return SpeechAndTextOutput(
            speech_samples=speech_out.tolist() if len(speech_out) else None,
            speech_sample_rate=speech_sample_rate,
            text=text_out or None,
            final=final,
        )

    def dump_debug_audio(self, samples: List[float], sample_rate: int) -> None:
        if not self.debug:
            return
        DEBUG_AUDIO_DIR.mkdir(parents=True, exist_ok=True)
        path = DEBUG_AUDIO_DIR / f"{self.debug_ts}_{math.floor(time.time())}.wav"
        soundfile.write(str(path), np.asarray(samples, dtype=np.float32), sample_rate)


def io_bytes(data: bytes):
    import io

    return io.BytesIO(data)
