"""Python front-end of the nvJPEG extension.

    import torchnvjpeg
    dec = torchnvjpeg.Decoder(max_batch_size=256, device_id=0)
    imgs = dec.batch_decode([open(p, "rb").read() for p in paths])   # list of HWC uint8 CUDA tensors

`Decoder` owns the nvJPEG handle, the pinned staging buffers and the per-image device buffers; it is
not thread-safe, create one per dataloader consumer (one per rank). Undecodable images (CMYK, progressive
on the hardware backend) fall back to torchvision's decoder on the same device.
"""
import logging
import warnings
from typing import List, Optional, Sequence, Union

import torch
import torchvision

from . import _C as _nvjpeg

logger = logging.getLogger(__name__)

BytesLike = Union[bytes, bytearray, memoryview]

_BACKENDS = {
    "default": _nvjpeg.Backend.DEFAULT,
    "hybrid": _nvjpeg.Backend.HYBRID,
    "gpu_hybrid": _nvjpeg.Backend.GPU_HYBRID,
    "hardware": _nvjpeg.Backend.HARDWARE,
}


def _as_uint8_tensor(data: BytesLike) -> torch.Tensor:
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


class Decoder:
    """Batched JPEG -> CUDA uint8 tensors (HWC, RGB)."""

    def __init__(
        self,
        max_batch_size: int = 128,
        device_id: Optional[int] = None,
        max_cpu_threads: int = 8,
        max_image_size: int = 3840 * 2160 * 3,
        backend: str = "hardware",
        stream: Optional[torch.cuda.Stream] = None,
    ):
        if device_id is None:
            device_id = torch.cuda.current_device()
        self.device_id = device_id
        self.device = torch.device("cuda", device_id)
        self.max_batch_size = max_batch_size
        if stream is None:
            stream = torch.cuda.current_stream(device_id)
        self.stream = stream
        if backend not in _BACKENDS:
            raise ValueError(f"unknown nvJPEG backend {backend!r}, choose from {sorted(_BACKENDS)}")
        with torch.cuda.device(device_id):
            self._decoder = _nvjpeg.Decoder(
                max_batch_size,
                device_id,
                max_cpu_threads,
                max_image_size,
                _BACKENDS[backend],
                stream.cuda_stream,
            )
        self._fallbacks = 0

    def __repr__(self):
        return f"Decoder(device={self.device}, max_batch_size={self.max_batch_size})"

    @property
    def num_fallbacks(self) -> int:
        return self._fallbacks

    def decode(self, data: BytesLike) -> torch.Tensor:
        """Decode one image. Returns HWC uint8 on `self.device`."""
        try:
            return self._decoder.decode(bytes(data))
        except RuntimeError as err:
            return self._fallback(data, err)

    def batch_decode(self, datas: Sequence[BytesLike]) -> List[torch.Tensor]:
        """Decode a list of images in chunks of `max_batch_size`; order is preserved."""
        out: List[torch.Tensor] = []
        for start in range(0, len(datas), self.max_batch_size):
            chunk = [bytes(d) for d in datas[start:start + self.max_batch_size]]
            try:
                out.extend(self._decoder.batch_decode(chunk))
            except RuntimeError as err:
                logger.debug("batched nvJPEG decode failed (%s), decoding one by one", err)
                out.extend(self.decode(d) for d in chunk)
        return out

    def _fallback(self, data: BytesLike, err: Exception) -> torch.Tensor:
        self._fallbacks += 1
        if self._fallbacks in (1, 100, 10000):
            warnings.warn(f"nvJPEG could not decode an image ({err}); using torchvision.io "
                          f"({self._fallbacks} so far)")
        img = torchvision.io.decode_jpeg(
            _as_uint8_tensor(data), mode=torchvision.io.ImageReadMode.RGB, device=self.device
        )
        return img.permute(1, 2, 0).contiguous()

    def synchronize(self):
        self.stream.synchronize()


class DecodeCollate:
    """DataLoader collate_fn for datasets that return (jpeg_bytes, label).

    Decoding happens in the main process on the GPU, so use it with num_workers that only read files.
    """

    def __init__(self, size: int, decoder: Optional[Decoder] = None, channels_last: bool = True):
        self.size = size
        self.decoder = decoder
        self.channels_last = channels_last

    def __call__(self, batch):
        if self.decoder is None:
            # created lazily so the collate fn can be pickled into worker processes
            self.decoder = Decoder()
        datas, labels = zip(*batch)
        images = self.decoder.batch_decode(datas)
        resized = [
            torch.nn.functional.interpolate(
                img.permute(2, 0, 1)[None].float(), size=(self.size, self.size),
                mode="bilinear", align_corners=False, antialias=True)
            for img in images
        ]
        x = torch.cat(resized)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        y = torch.as_tensor(labels, dtype=torch.long).to(self.decoder.device, non_blocking=True)
        return x, y
