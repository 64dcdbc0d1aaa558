"""Host->device transfer helpers: recursive non_blocking moves, a pinned staging ring, and
page-locking of externally owned buffers (numpy memmaps, shared-memory batches from the workers).

    from fastloader.transfer import to_device, PinnedRing, register_pinned
    loader = DataLoader(ds, batch_size=256, num_workers=8, pin_memory=use_pinned())
    for batch in loader:
        batch = to_device(batch)            # non_blocking when the source is pinned
"""
import collections.abc
import ctypes
import logging
import threading
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch

log = logging.getLogger(__name__)

_REGISTERED: Dict[int, int] = {}
_LOCK = threading.Lock()


def use_pinned() -> bool:
    """Pinned memory only pays off when batches go to an accelerator."""
    return torch.cuda.is_available()


def to_device(obj: Any, device: Optional[torch.device] = None, non_blocking: bool = True) -> Any:
    """Recursively move tensors in (nested) dicts/lists/tuples/namedtuples to `device`."""
    if device is None:
        device = torch.device("cuda", torch.cuda.current_device())
    if isinstance(obj, torch.Tensor):
        return obj.to(device, non_blocking=non_blocking and obj.is_pinned())
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(obj).to(device, non_blocking=False)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        return type(obj)(*(to_device(o, device, non_blocking) for o in obj))
    if isinstance(obj, collections.abc.Mapping):
        return {k: to_device(v, device, non_blocking) for k, v in obj.items()}
    if isinstance(obj, collections.abc.Sequence) and not isinstance(obj, (str, bytes)):
        return type(obj)(to_device(o, device, non_blocking) for o in obj)
    return obj


def register_pinned(t: torch.Tensor) -> torch.Tensor:
    """Page-lock an existing CPU tensor in place (no copy), e.g. a view over a numpy memmap.

    cudaHostRegister is much cheaper than t.pin_memory() for multi-GB buffers because it does not
    allocate + copy; the registration is dropped again by `unregister_pinned`.
    """
    assert t.device.type == "cpu" and t.is_contiguous()
    ptr, nbytes = t.data_ptr(), t.numel() * t.element_size()
    with _LOCK:
        if ptr in _REGISTERED:
            return t
        err = torch.cuda.cudart().cudaHostRegister(ptr, nbytes, 0)
        if err != 0:
            raise RuntimeError(f"cudaHostRegister failed with error {err} for {nbytes} bytes")
        _REGISTERED[ptr] = nbytes
    return t


def unregister_pinned(t: torch.Tensor) -> None:
    ptr = t.data_ptr()
    with _LOCK:
        if _REGISTERED.pop(ptr, None) is not None:
            torch.cuda.cudart().cudaHostUnregister(ptr)


class PinnedRing:
    """N pinned staging buffers reused round-robin for H2D copies of fixed-shape batches.

    Each slot carries a CUDA event recorded after its copy was enqueued; a slot is only
    overwritten on the host once that event has completed, so the async copy never reads
    a buffer that is being refilled.
    """

    def __init__(self, shape: Sequence[int], dtype: torch.dtype = torch.uint8, slots: int = 4,
                 device: Optional[torch.device] = None):
        self.device = device or torch.device("cuda")
        self.buffers = [torch.empty(tuple(shape), dtype=dtype, pin_memory=True) for _ in range(slots)]
        self.events: List[Optional[torch.cuda.Event]] = [None] * slots
        self.copy_stream = torch.cuda.Stream(device=self.device)
        self._i = 0

    def put(self, host_batch: torch.Tensor) -> torch.Tensor:
        """Stage `host_batch` and start its copy; returns the device tensor (valid on the current stream)."""
        slot = self._i % len(self.buffers)
        self._i += 1
        ev = self.events[slot]
        if ev is not None:
            ev.synchronize()
        buf = self.buffers[slot]
        buf[: host_batch.shape[0]].copy_(host_batch)
        with torch.cuda.stream(self.copy_stream):
            dev = buf[: host_batch.shape[0]].to(self.device, non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(self.copy_stream)
        self.events[slot] = ev
        torch.cuda.current_stream(self.device).wait_event(ev)
        dev.record_stream(torch.cuda.current_stream(self.device))
        return dev

    def close(self):
        for ev in self.events:
            if ev is not None:
                ev.synchronize()
        self.buffers.clear()


def pin_batch(batch: Any) -> Any:
    """collate_fn wrapper helper: pin every tensor of a batch (what DataLoader(pin_memory=True) does)."""
    if isinstance(batch, torch.Tensor):
        return batch.pin_memory()
    if isinstance(batch, collections.abc.Mapping):
        return {k: pin_batch(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(pin_batch(b) for b in batch)
    return batch


def memmap_as_pinned_tensor(path: str, dtype=np.uint8, shape=None) -> torch.Tensor:
    """Open a .npy/.bin memmap and page-lock it so slices can be copied with non_blocking=True."""
    arr = np.load(path, mmap_mode="r") if path.endswith(".npy") else np.memmap(path, dtype=dtype, mode="r", shape=shape)
    t = torch.from_numpy(np.asarray(arr))
    if use_pinned():
        register_pinned(t)
    else:
        log.info("no accelerator: %s left pageable", path)
    return t


def libc_mlock(t: torch.Tensor) -> bool:
    """Fallback used on hosts without CUDA: keep the pages resident (does not make copies async)."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    return libc.mlock(ctypes.c_void_p(t.data_ptr()), ctypes.c_size_t(t.numel() * t.element_size())) == 0
