"""PDF rasterisation and text clean-up that run before and after the GPU models.

Everything here is CPU-only on purpose: the GPU workers in gpu_pool.py only ever
see PNG bytes, and the text that comes back is normalised here. Keep torch out of
this module so that the rasteriser pods can run on cheap CPU nodes.
"""
import argparse
import io
import logging
import os
import re
import unicodedata
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

import numpy as np
import pypdfium2 as pdfium
from PIL import Image

log = logging.getLogger("docpipe.rasterize")

# Ligatures and look-alikes that OCR models (and some PDF text layers) emit.
_REPLACEMENTS = {
    "\ufb01": "fi", "\ufb02": "fl", "\ufb00": "ff", "\ufb03": "ffi", "\ufb04": "ffl",
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " ",
}
_HYPHEN_BREAK = re.compile(r"(\w)-\n(\w)")
_MULTI_SPACE = re.compile(r"[ \t]{2,}")
_MULTI_NL = re.compile(r"\n{3,}")
_PAGE_NUMBER = re.compile(r"^\s*(page\s+)?\d+\s*(/\s*\d+)?\s*$", re.IGNORECASE)


@dataclass
class PageImage:
    doc_id: str
    page_no: int
    png: bytes
    width: int
    height: int


def render_pages(path: str, dpi: int = 192, pages: Optional[List[int]] = None,
                 max_side: int = 4096) -> Iterator[PageImage]:
    """Render PDF pages to PNG bytes. 192 dpi matches what the OCR models were trained on."""
    pdf = pdfium.PdfDocument(path)
    doc_id = os.path.splitext(os.path.basename(path))[0]
    scale = dpi / 72.0
    indices = pages if pages is not None else range(len(pdf))
    for i in indices:
        page = pdf[i]
        w, h = page.get_size()
        s = min(scale, max_side / max(w, h))
        bitmap = page.render(scale=s, rotation=0, grayscale=False)
        img = bitmap.to_pil().convert("RGB")
        buf = io.BytesIO()
        img.save(buf, format="PNG", optimize=False)
        yield PageImage(doc_id, i, buf.getvalue(), img.width, img.height)
        page.close()
    pdf.close()


def deskew_angle(img: Image.Image, max_angle: float = 5.0, step: float = 0.25) -> float:
    """Projection-profile deskew; cheap enough to run on CPU for every page."""
    gray = np.asarray(img.convert("L").resize((img.width // 4, img.height // 4)), dtype=np.float32)
    ink = (gray < 128).astype(np.float32)
    best, best_score = 0.0, -1.0
    for angle in np.arange(-max_angle, max_angle + step, step):
        rot = np.asarray(Image.fromarray((ink * 255).astype(np.uint8)).rotate(angle, expand=False))
        score = float(np.var(rot.sum(axis=1)))
        if score > best_score:
            best, best_score = float(angle), score
    return best


def clean_text(text: str, drop_page_numbers: bool = True) -> str:
    """Normalise OCR / text-layer output to NFC plain text."""
    text = unicodedata.normalize("NFKC", text)
    for src, dst in _REPLACEMENTS.items():
        text = text.replace(src, dst)
    text = _HYPHEN_BREAK.sub(r"\1\2", text)
    lines = []
    for line in text.splitlines():
        if drop_page_numbers and _PAGE_NUMBER.match(line):
            continue
        lines.append(_MULTI_SPACE.sub(" ", line).rstrip())
    text = "\n".join(lines)
    return _MULTI_NL.sub("\n\n", text).strip()


def split_for_devices(pages: List[PageImage], n_devices: int) -> List[List[PageImage]]:
    """Round-robin pages over n GPU queues (n_devices comes from the GPU pool)."""
    buckets: List[List[PageImage]] = [[] for _ in range(max(1, n_devices))]
    for k, p in enumerate(pages):
        buckets[k % len(buckets)].append(p)
    return buckets


def _render_one(args: Tuple[str, int]) -> List[PageImage]:
    path, dpi = args
    try:
        return list(render_pages(path, dpi=dpi))
    except Exception as exc:  # broken PDFs are common in crawls
        log.warning("failed to render %s: %s", path, exc)
        return []


def main():
    ap = argparse.ArgumentParser(description="Rasterise PDFs (CPU only; does not need a GPU or CUDA).")
    ap.add_argument("pdfs", nargs="+")
    ap.add_argument("--dpi", type=int, default=192)
    ap.add_argument("--out", default="pages")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4,
                    help="CPU processes; the device option of the GPU pool does not apply here")
    ap.add_argument("--device", default="cpu", choices=["cpu"], help="kept for CLI symmetry with the GPU tools")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with ProcessPoolExecutor(max_workers=args.jobs) as ex:
        for pages in ex.map(_render_one, [(p, args.dpi) for p in args.pdfs]):
            for page in pages:
                name = f"{page.doc_id}_{page.page_no:04d}.png"
                with open(os.path.join(args.out, name), "wb") as f:
                    f.write(page.png)
    log.info("done")


if __name__ == "__main__":
    main()
