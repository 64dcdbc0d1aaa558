"""Video clip readers for action recognition / video-text training.

Three backends are supported:
  * ``decord``      - frame-accurate random access, optionally decoding on the GPU (NVDEC)
  * ``torchaudio``  - ffmpeg StreamReader, with the h264_cuvid / hevc_cuvid hardware decoders
  * ``pyav``        - pure CPU fallback, slowest
Decoded clips are returned as uint8 tensors shaped (T, H, W, C).
"""
import io
import logging
import math
import random
from typing import List, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)

try:
    import decord
    from decord import VideoReader, cpu, gpu
    decord.bridge.set_bridge("torch")
except ImportError:
    decord = None

try:
    from torchaudio.io import StreamReader
except ImportError:
    StreamReader = None

try:
    import av
except ImportError:
    av = None


def get_frame_indices(num_frames: int, vlen: int, sample: str = "rand", fix_start: Optional[int] = None,
                      input_fps: float = 1.0, max_num_frames: int = -1) -> List[int]:
    if sample in ["rand", "middle"]:
        acc_samples = min(num_frames, vlen)
        # split the video into `acc_samples` intervals, and sample from each interval.
        intervals = np.linspace(start=0, stop=vlen, num=acc_samples + 1).astype(int)
        ranges = []
        for idx, interv in enumerate(intervals[:-1]):
            ranges.append((interv, intervals[idx + 1] - 1))
        if sample == "rand":
            try:
                frame_indices = [random.choice(range(x[0], x[1])) for x in ranges]
            except IndexError:
                frame_indices = np.random.permutation(vlen)[:acc_samples]
                frame_indices.sort()
                frame_indices = list(frame_indices)
        elif fix_start is not None:
            frame_indices = [x[0] + fix_start for x in ranges]
        else:
            frame_indices = [(x[0] + x[1]) // 2 for x in ranges]
        if len(frame_indices) < num_frames:  # padded with last frame
            padded = [frame_indices[-1]] * num_frames
            padded[:len(frame_indices)] = frame_indices
            frame_indices = padded
    elif "fps" in sample:  # fps0.5, sequentially sample frames at 0.5 fps
        output_fps = float(sample[3:])
        duration = float(vlen) / input_fps
        delta = 1 / output_fps  # gap between frames, this is also the clip length each frame represents
        frame_seconds = np.arange(0 + delta / 2, duration + delta / 2, delta)
        frame_indices = np.around(frame_seconds * input_fps).astype(int)
        frame_indices = [e for e in frame_indices if e < vlen]
        if max_num_frames > 0 and len(frame_indices) > max_num_frames:
            frame_indices = frame_indices[:max_num_frames]
    else:
        raise ValueError(sample)
    return frame_indices


class DecordClipReader:
    """Random-access reader; with ``use_gpu`` the NVDEC decoder writes frames straight to device memory."""

    def __init__(self, num_frames=16, sample="rand", use_gpu=False, gpu_id=0, num_threads=1, short_side=None):
        if decord is None:
            raise ImportError("decord is not installed")
        self.num_frames = num_frames
        self.sample = sample
        self.num_threads = num_threads
        self.short_side = short_side
        self.ctx = gpu(gpu_id) if use_gpu else cpu(0)

    def __call__(self, path, fix_start=None):
        kwargs = {"ctx": self.ctx, "num_threads": self.num_threads}
        if self.short_side is not None:
            kwargs.update(width=-1, height=self.short_side)
        vr = VideoReader(path, **kwargs)
        vlen = len(vr)
        fps = vr.get_avg_fps()
        duration = vlen / float(fps)
        frame_indices = get_frame_indices(self.num_frames, vlen, sample=self.sample,
                                          fix_start=fix_start, input_fps=fps)
        frames = vr.get_batch(frame_indices)  # (T, H, W, C) torch.uint8 via the torch bridge
        return frames, frame_indices, duration


class CuvidStreamReader:
    """Sequential decoding through ffmpeg's NVDEC (cuvid) decoders; frames come back on the GPU."""

    CODEC_TO_DECODER = {"h264": "h264_cuvid", "hevc": "hevc_cuvid", "vp9": "vp9_cuvid", "av1": "av1_cuvid"}

    def __init__(self, num_frames=16, stride=4, gpu_id=0, resize=None):
        if StreamReader is None:
            raise ImportError("torchaudio with ffmpeg support is required")
        self.num_frames = num_frames
        self.stride = stride
        self.resize = resize
        self.hw_accel = f"cuda:{gpu_id}"

    def __call__(self, path, start_sec=0.0):
        reader = StreamReader(path)
        info = reader.get_src_stream_info(reader.default_video_stream)
        decoder = self.CODEC_TO_DECODER.get(info.codec)
        decoder_option = {}
        if self.resize is not None:
            decoder_option["resize"] = f"{self.resize[1]}x{self.resize[0]}"
        if start_sec > 0:
            reader.seek(start_sec)
        reader.add_video_stream(
            frames_per_chunk=self.num_frames * self.stride,
            decoder=decoder,
            decoder_option=decoder_option,
            hw_accel=self.hw_accel,
        )
        chunk = None
        for (chunk,) in reader.stream():
            break
        if chunk is None:
            raise RuntimeError(f"no frames decoded from {path}")
        # NV12 -> RGB conversion happens inside ffmpeg; chunk is (T, C, H, W) uint8 on the device
        clip = chunk[:: self.stride][: self.num_frames]
        return clip.permute(0, 2, 3, 1).contiguous()


class PyAVClipReader:

    def __init__(self, num_frames=16, sample="rand"):
        if av is None:
            raise ImportError("PyAV is not installed")
        self.num_frames = num_frames
        self.sample = sample

    def __call__(self, path_or_bytes):
        if isinstance(path_or_bytes, (bytes, bytearray)):
            path_or_bytes = io.BytesIO(path_or_bytes)
        container = av.open(path_or_bytes)
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(stream)]
        container.close()
        vlen = len(frames)
        fps = float(stream.average_rate) if stream.average_rate else 30.0
        idx = get_frame_indices(self.num_frames, vlen, sample=self.sample, input_fps=fps)
        clip = torch.from_numpy(np.stack([frames[i] for i in idx]))
        return clip, idx, vlen / fps


def normalize_clip(clip: torch.Tensor, mean: Sequence[float], std: Sequence[float], size: int) -> torch.Tensor:
    """uint8 (T, H, W, C) -> float (C, T, size, size), resized on whatever device the clip is on."""
    clip = clip.permute(0, 3, 1, 2).float().div_(255.0)
    clip = F.interpolate(clip, size=(size, size), mode="bilinear", align_corners=False)
    mean_t = torch.as_tensor(mean, device=clip.device).view(1, 3, 1, 1)
    std_t = torch.as_tensor(std, device=clip.device).view(1, 3, 1, 1)
    clip = (clip - mean_t) / std_t
    return clip.permute(1, 0, 2, 3).contiguous()


def build_reader(cfg):
    backend = cfg.get("video_reader", "decord")
    if backend == "decord":
        return DecordClipReader(cfg.num_frames, cfg.sample, use_gpu=cfg.get("gpu_decode", True),
                                gpu_id=cfg.get("local_rank", 0))
    if backend == "cuvid":
        return CuvidStreamReader(cfg.num_frames, cfg.get("stride", 4), gpu_id=cfg.get("local_rank", 0))
    if backend == "pyav":
        return PyAVClipReader(cfg.num_frames, cfg.sample)
    raise ValueError(f"unknown video reader {backend}")


class GPUDecodeCollator:
    """Collate for GPU-decoded clips: the DataLoader must run with num_workers=0, clips are already on device."""

    def __init__(self, mean, std, size, device="cuda"):
        self.mean, self.std, self.size = mean, std, size
        self.device = torch.device(device)

    def __call__(self, batch):
        clips, labels = zip(*batch)
        clips = [normalize_clip(c.to(self.device, non_blocking=True), self.mean, self.std, self.size) for c in clips]
        return torch.stack(clips), torch.as_tensor(labels, device=self.device)
