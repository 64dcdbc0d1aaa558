"""
Low-latency HiFi-GAN vocoder for streaming TTS.

Mel chunks arrive with variable length; each length is padded up to a bucket and run through
a CUDA graph captured once per bucket, which removes the launch overhead of the ~100 small
convolution kernels of the generator (the dominant cost at batch 1).

    voc = GraphedVocoder.from_checkpoint("g_02500000", "config_v1.json", buckets=(32, 64, 128, 256))
    wav = voc(mel)          # mel: (1, 80, T) float tensor, any device
"""
import json
import logging
import time
from typing import Dict, Sequence

import torch
import torch.nn.functional as F

from hifigan.models import Generator
from hifigan.env import AttrDict

log = logging.getLogger(__name__)


class _Bucket:
    def __init__(self, frames, graph, static_in, static_out):
        self.frames = frames
        self.graph = graph
        self.static_in = static_in
        self.static_out = static_out


class GraphedVocoder:
    def __init__(self, generator: torch.nn.Module, hop_length: int, buckets: Sequence[int] = (32, 64, 128, 256),
                 n_mels: int = 80, warmup_iters: int = 3, use_graphs: bool = True):
        self.hop = hop_length
        self.n_mels = n_mels
        self.buckets = sorted(buckets)
        self.use_graphs = use_graphs and torch.cuda.is_available()
        self.device = torch.device("cuda") if self.use_graphs else torch.device("cpu")
        self.dtype = torch.float16 if self.use_graphs else torch.float32
        self.model = generator.to(self.device, self.dtype).eval()
        self._graphs: Dict[int, _Bucket] = {}
        if self.use_graphs:
            self.pool = torch.cuda.graph_pool_handle()
            t0 = time.time()
            for frames in self.buckets:
                self._graphs[frames] = self._capture(frames, warmup_iters)
            log.info("captured %d vocoder graphs in %.1fs", len(self._graphs), time.time() - t0)

    @classmethod
    def from_checkpoint(cls, ckpt_path: str, config_path: str, **kwargs):
        with open(config_path) as f:
            h = AttrDict(json.load(f))
        generator = Generator(h)
        state = torch.load(ckpt_path, map_location="cpu")
        generator.load_state_dict(state["generator"])
        generator.remove_weight_norm()
        return cls(generator, hop_length=h.hop_size, **kwargs)

    @torch.inference_mode()
    def _capture(self, frames: int, warmup_iters: int) -> _Bucket:
        static_in = torch.zeros(1, self.n_mels, frames, device=self.device, dtype=self.dtype)

        # warm up on a side stream so that lazy initialisation is not captured
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup_iters):
                self.model(static_in)
        torch.cuda.current_stream().wait_stream(side)

        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.pool):
            static_out = self.model(static_in)
        return _Bucket(frames, graph, static_in, static_out)

    def _bucket_for(self, frames: int) -> int:
        for b in self.buckets:
            if frames <= b:
                return b
        return -1

    @torch.inference_mode()
    def __call__(self, mel: torch.Tensor) -> torch.Tensor:
        """mel: (1, n_mels, T) -> waveform (T * hop,) float32 on the CPU."""
        assert mel.dim() == 3 and mel.shape[0] == 1, "streaming vocoder expects batch 1"
        frames = mel.shape[-1]
        bucket = self._bucket_for(frames) if self.use_graphs else -1
        if bucket < 0:
            # too long for any graph (or graphs disabled): eager path
            wav = self.model(mel.to(self.device, self.dtype))
            return wav.squeeze().float().cpu()

        entry = self._graphs[bucket]
        mel = mel.cuda(non_blocking=True).to(self.dtype)
        entry.static_in.zero_()
        entry.static_in[:, :, :frames].copy_(mel)
        entry.graph.replay()
        wav = entry.static_out[..., : frames * self.hop]
        return wav.squeeze().float().cpu()

    def stream(self, mel: torch.Tensor, chunk_frames: int = 64, overlap: int = 8):
        """Vocode a long mel in overlapping chunks; yields waveform pieces with cross-faded seams."""
        T = mel.shape[-1]
        fade = torch.linspace(0, 1, overlap * self.hop)
        tail = None
        for start in range(0, T, chunk_frames):
            lo = max(0, start - overlap)
            piece = self(mel[..., lo: start + chunk_frames])
            if tail is not None and lo < start:
                n = (start - lo) * self.hop
                head = piece[:n]
                piece = piece[n:]
                yield tail * (1 - fade[-n:]) + head * fade[-n:]
            if start + chunk_frames < T:
                tail = piece[-overlap * self.hop:]
                piece = piece[: -overlap * self.hop]
            yield piece


def benchmark(voc: GraphedVocoder, frames: int = 100, iters: int = 50):
    mel = torch.randn(1, voc.n_mels, frames)
    for _ in range(5):
        voc(mel)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        voc(mel)
    torch.cuda.synchronize()  # graph replays are asynchronous
    dt = (time.perf_counter() - t0) / iters
    audio_s = frames * voc.hop / 22050
    print(f"{frames} frames: {dt * 1e3:.2f} ms per call, RTF {dt / audio_s:.4f}")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--no-graphs", action="store_true")
    a = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    torch.backends.cudnn.benchmark = True
    v = GraphedVocoder.from_checkpoint(a.ckpt, a.config, use_graphs=not a.no_graphs)
    for n in (32, 100, 250):
        benchmark(v, frames=n)
