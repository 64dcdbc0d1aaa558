"""Pluggable video readers: PyAV / decord on the CPU, VPF (NVDEC) on the GPU.

All readers return a uint8 tensor of shape (T, C, H, W) on `device`. The CPU readers
overlap the host-to-device copy of clip i with the decode of clip i+1 on a side stream.
"""
import logging
import threading

import numpy as np
import torch

try:
    import av
except ImportError:
    av = None

try:
    import decord
except ImportError:
    decord = None

try:
    import PyNvCodec as nvc
    import PytorchNvCodec as pnvc
    HAS_NVDEC = True
except ImportError:  # VPF is optional; fall back to CPU decoding
    nvc = None
    pnvc = None
    HAS_NVDEC = False

logger = logging.getLogger(__name__)


class BaseReader:
    def __init__(self, path, device="cuda"):
        self.path = path
        self.device = torch.device(device)

    def read(self, indices=None):
        raise NotImplementedError


class PyAVReader(BaseReader):
    def read(self, indices=None):
        container = av.open(self.path)
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(stream)]
        container.close()
        if indices is not None:
            frames = [frames[i] for i in indices if i < len(frames)]
        clip = torch.from_numpy(np.stack(frames)).permute(0, 3, 1, 2)
        return clip.to(self.device, non_blocking=True)


class DecordReader(BaseReader):
    def __init__(self, path, device="cuda", num_threads=4):
        super().__init__(path, device)
        self.vr = decord.VideoReader(path, ctx=decord.cpu(0), num_threads=num_threads)

    def __len__(self):
        return len(self.vr)

    def read(self, indices=None):
        if indices is None:
            indices = list(range(len(self.vr)))
        clip = torch.from_numpy(self.vr.get_batch(indices).asnumpy()).permute(0, 3, 1, 2)
        return clip.to(self.device, non_blocking=True)


class NVDECReader(BaseReader):
    """Hardware decoding with NVIDIA's Video Processing Framework (VPF)."""

    def __init__(self, path, device="cuda:0"):
        if not HAS_NVDEC:
            raise ImportError("VPF (PyNvCodec) is required for the nvdec backend")
        super().__init__(path, device)
        gpu_id = self.device.index or 0
        self.dec = nvc.PyNvDecoder(path, gpu_id)
        self.width, self.height = self.dec.Width(), self.dec.Height()
        self.to_rgb = nvc.PySurfaceConverter(
            self.width, self.height, nvc.PixelFormat.NV12, nvc.PixelFormat.RGB, gpu_id)
        self.to_planar = nvc.PySurfaceConverter(
            self.width, self.height, nvc.PixelFormat.RGB, nvc.PixelFormat.RGB_PLANAR, gpu_id)
        self.cc = nvc.ColorspaceConversionContext(nvc.ColorSpace.BT_601, nvc.ColorRange.MPEG)

    def read(self, indices=None):
        frames = []
        keep = None if indices is None else set(indices)
        idx = 0
        while True:
            surf = self.dec.DecodeSingleSurface()
            if surf.Empty():
                break
            if keep is None or idx in keep:
                rgb = self.to_planar.Execute(self.to_rgb.Execute(surf, self.cc), self.cc)
                plane = rgb.PlanePtr()
                t = pnvc.makefromDevicePtrUint8(
                    plane.GpuMem(), plane.Width(), plane.Height(), plane.Pitch(), plane.ElemSize())
                frames.append(t.view(3, self.height, self.width).clone())
            idx += 1
        return torch.stack(frames)


_BACKENDS = {"pyav": PyAVReader, "decord": DecordReader, "nvdec": NVDECReader}


def default_backend():
    """Prefer hardware decoding when VPF and a CUDA device are present."""
    if HAS_NVDEC and torch.cuda.is_available():
        return "nvdec"
    if decord is not None:
        return "decord"
    return "pyav"


def build_reader(path, backend=None, **kwargs):
    backend = backend or default_backend()
    if backend not in _BACKENDS:
        raise KeyError(f"unknown video backend {backend!r}; choose from {sorted(_BACKENDS)}")
    return _BACKENDS[backend](path, **kwargs)


class PrefetchingClipLoader:
    """Decode clips in a background thread and copy them to the device on a side stream."""

    def __init__(self, samples, backend=None, device="cuda", clip_len=16, stride=4):
        self.samples = samples
        self.backend = backend
        self.device = torch.device(device)
        self.clip_len = clip_len
        self.stride = stride
        self.stream = torch.cuda.Stream(device=self.device)
        self._next = None
        self._thread = None

    def _indices(self, num_frames):
        span = self.clip_len * self.stride
        start = max((num_frames - span) // 2, 0)
        return [min(start + i * self.stride, num_frames - 1) for i in range(self.clip_len)]

    def _load(self, path):
        reader = build_reader(path, backend=self.backend, device="cpu")
        n = len(reader) if hasattr(reader, "__len__") else 10**6
        clip = reader.read(self._indices(n)).pin_memory()
        with torch.cuda.stream(self.stream):
            self._next = clip.to(self.device, non_blocking=True)

    def __iter__(self):
        for i, (path, label) in enumerate(self.samples):
            if self._thread is None:
                self._load(path)
            else:
                self._thread.join()
            torch.cuda.current_stream(self.device).wait_stream(self.stream)
            clip = self._next
            clip.record_stream(torch.cuda.current_stream(self.device))
            if i + 1 < len(self.samples):
                self._thread = threading.Thread(target=self._load, args=(self.samples[i + 1][0],))
                self._thread.start()
            yield clip, label
