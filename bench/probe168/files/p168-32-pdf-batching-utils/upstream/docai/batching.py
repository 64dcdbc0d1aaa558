"""
PDF -> page images -> model batches.

Shared by the LayoutLMv3 / Donut / Nougat inference jobs in this repo:

    pages = render_pdf("paper.pdf", dpi=144)
    loader = make_page_loader(pages, transform, batch_size=auto_batch_size(model_mem_gb=2.5))
    for batch in CUDAPrefetcher(loader):
        out = model(batch["pixel_values"])

Rendering is done on the CPU with pypdfium2; host->GPU copies are overlapped with
compute through a side CUDA stream (see CUDAPrefetcher).
"""
from __future__ import annotations

import io
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Union

import numpy as np
import pypdfium2 as pdfium
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger(__name__)

_DEFAULT_DPI = 144


@dataclass
class Page:
    doc_id: str
    page_idx: int
    image: Image.Image
    width_pt: float
    height_pt: float


def render_pdf(path: Union[str, Path, bytes], dpi: int = _DEFAULT_DPI, pages: Optional[Sequence[int]] = None,
               max_side: int = 2560) -> List[Page]:
    """Render (a subset of) the pages of a PDF into RGB PIL images."""
    doc_id = Path(path).stem if not isinstance(path, bytes) else "bytes"
    pdf = pdfium.PdfDocument(path)
    indices = list(range(len(pdf))) if pages is None else list(pages)
    out = []
    for i in indices:
        page = pdf[i]
        w_pt, h_pt = page.get_size()
        scale = dpi / 72.0
        longest = max(w_pt, h_pt) * scale
        if longest > max_side:
            scale *= max_side / longest
        bitmap = page.render(scale=scale, rotation=0)
        img = bitmap.to_pil().convert("RGB")
        out.append(Page(doc_id=doc_id, page_idx=i, image=img, width_pt=w_pt, height_pt=h_pt))
        page.close()
    pdf.close()
    return out


class PageDataset(Dataset):
    def __init__(self, pages: List[Page], transform: Callable[[Image.Image], Dict[str, torch.Tensor]]):
        self.pages = pages
        self.transform = transform

    def __len__(self):
        return len(self.pages)

    def __getitem__(self, idx):
        p = self.pages[idx]
        sample = self.transform(p.image)
        sample["page_idx"] = torch.tensor(p.page_idx)
        return sample


def _stack(batch: List[Dict[str, Any]]) -> Dict[str, Any]:
    out = {}
    for key in batch[0]:
        vals = [b[key] for b in batch]
        if isinstance(vals[0], torch.Tensor):
            out[key] = torch.stack(vals)
        else:
            out[key] = vals
    return out


def make_page_loader(pages: List[Page], transform, batch_size: int = 8, num_workers: int = 2) -> DataLoader:
    return DataLoader(
        PageDataset(pages, transform),
        batch_size=batch_size,
        shuffle=False,
        num_workers=num_workers,
        collate_fn=_stack,
        pin_memory=True,
    )


def select_device(prefer: Optional[str] = None) -> torch.device:
    """Explicit --device wins; otherwise the current GPU, otherwise CPU."""
    if prefer:
        return torch.device(prefer)
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def auto_batch_size(model_mem_gb: float, per_page_mb: float = 350.0, device: Optional[torch.device] = None,
                    cap: int = 64) -> int:
    """Fit as many pages as the free device memory allows, leaving room for the weights."""
    device = device or select_device()
    if device.type != "cuda":
        return 1
    free, total = torch.cuda.mem_get_info(device)
    budget_mb = free / 2 ** 20 - model_mem_gb * 1024
    bs = int(max(1, math.floor(budget_mb / per_page_mb)))
    logger.debug("auto batch size: free=%.0fMB total=%.0fMB -> %d", free / 2 ** 20, total / 2 ** 20, bs)
    return min(bs, cap)


def _move(obj, device, dtype=None, non_blocking=False):
    if isinstance(obj, torch.Tensor):
        if dtype is not None and obj.is_floating_point():
            return obj.to(device=device, dtype=dtype, non_blocking=non_blocking)
        return obj.to(device, non_blocking=non_blocking)
    if isinstance(obj, dict):
        return {k: _move(v, device, dtype, non_blocking) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_move(v, device, dtype, non_blocking) for v in obj)
    return obj


def _iter_tensors(obj) -> Iterator[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _iter_tensors(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _iter_tensors(v)


class CUDAPrefetcher:
    """
    Wrap a DataLoader so that batch i+1 is copied to the GPU on a side stream while
    the model runs on batch i. Requires pinned host memory (pin_memory=True) to overlap.
    """

    def __init__(self, loader: Iterable, device: Union[str, torch.device] = "cuda", dtype: Optional[torch.dtype] = None):
        self.loader = loader
        self.device = torch.device(device)
        self.dtype = dtype
        self.stream = torch.cuda.Stream(device=self.device)
        self._it = None
        self.next_batch = None

    def __iter__(self):
        self._it = iter(self.loader)
        self._preload()
        return self

    def _preload(self):
        try:
            batch = next(self._it)
        except StopIteration:
            self.next_batch = None
            return
        with torch.cuda.stream(self.stream):
            self.next_batch = _move(batch, self.device, self.dtype, non_blocking=True)

    def __next__(self):
        torch.cuda.current_stream(self.device).wait_stream(self.stream)
        batch = self.next_batch
        if batch is None:
            raise StopIteration
        for t in _iter_tensors(batch):
            t.record_stream(torch.cuda.current_stream(self.device))
        self._preload()
        return batch

    def __len__(self):
        return len(self.loader)


def iterate_batches(loader: DataLoader, device: torch.device, dtype: Optional[torch.dtype] = None):
    """Use the stream prefetcher on GPU, plain synchronous copies elsewhere."""
    if device.type == "cuda":
        yield from CUDAPrefetcher(loader, device=device, dtype=dtype)
    else:
        for batch in loader:
            yield _move(batch, device, dtype)


def pages_to_numpy(pages: List[Page]) -> List[np.ndarray]:
    """For docTR-style predictors that take HxWx3 uint8 arrays."""
    return [np.asarray(p.image, dtype=np.uint8) for p in pages]


def image_bytes_to_pages(blobs: List[bytes], doc_id: str = "upload") -> List[Page]:
    pages = []
    for i, blob in enumerate(blobs):
        img = Image.open(io.BytesIO(blob)).convert("RGB")
        pages.append(Page(doc_id=doc_id, page_idx=i, image=img, width_pt=img.width * 0.75, height_pt=img.height * 0.75))
    return pages
