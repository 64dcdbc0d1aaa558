"""FastAPI OCR endpoint with dynamic micro-batching on a single GPU.

Requests are queued; a background task drains the queue every few milliseconds,
pads the crops into one batch and runs the recognizer under torch.inference_mode.
"""
import asyncio
import io
import logging
import os
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import List

import torch
import torch.nn.functional as F
from fastapi import FastAPI, File, HTTPException, UploadFile
from PIL import Image
from pydantic import BaseModel
from torchvision.transforms.functional import to_tensor

from app.model import TextRecognizer, load_charset

log = logging.getLogger("ocr-api")

DEVICE = os.environ.get("OCR_DEVICE", "cuda:0")
MAX_BATCH = int(os.environ.get("OCR_MAX_BATCH", "64"))
MAX_WAIT_MS = float(os.environ.get("OCR_MAX_WAIT_MS", "8"))
IMG_H, MAX_W = 32, 512
USE_AMP = os.environ.get("OCR_AMP", "1") == "1"


class LineResult(BaseModel):
    text: str
    confidence: float


@dataclass
class _Job:
    tensor: torch.Tensor
    future: asyncio.Future = field(default_factory=lambda: asyncio.get_event_loop().create_future())


class Batcher:
    def __init__(self, model: TextRecognizer, charset: List[str]):
        self.model = model
        self.charset = charset
        self.queue: "asyncio.Queue[_Job]" = asyncio.Queue()
        self.stream = torch.cuda.Stream()
        self._task = None

    def start(self):
        self._task = asyncio.create_task(self._loop())

    async def stop(self):
        if self._task:
            self._task.cancel()

    def _prep(self, img: Image.Image) -> torch.Tensor:
        img = img.convert("L")
        w = min(MAX_W, max(8, int(img.width * IMG_H / max(img.height, 1))))
        t = to_tensor(img.resize((w, IMG_H), Image.BILINEAR))
        return F.pad(t, (0, MAX_W - w), value=1.0)

    async def submit(self, img: Image.Image) -> LineResult:
        job = _Job(self._prep(img).pin_memory())
        await self.queue.put(job)
        return await job.future

    async def _loop(self):
        while True:
            first = await self.queue.get()
            jobs = [first]
            deadline = time.perf_counter() + MAX_WAIT_MS / 1000
            while len(jobs) < MAX_BATCH and time.perf_counter() < deadline:
                try:
                    jobs.append(self.queue.get_nowait())
                except asyncio.QueueEmpty:
                    await asyncio.sleep(0.001)
            try:
                results = await asyncio.get_running_loop().run_in_executor(None, self._run, jobs)
                for job, res in zip(jobs, results):
                    job.future.set_result(res)
            except Exception as exc:  # noqa: BLE001
                for job in jobs:
                    if not job.future.done():
                        job.future.set_exception(exc)

    def _run(self, jobs: List[_Job]) -> List[LineResult]:
        batch = torch.stack([j.tensor for j in jobs])
        with torch.cuda.stream(self.stream):
            batch = batch.to(DEVICE, non_blocking=True)
            with torch.inference_mode(), torch.cuda.amp.autocast(enabled=USE_AMP):
                logits = self.model(batch)
            probs = logits.float().softmax(-1)
            conf, idx = probs.max(-1)
        self.stream.synchronize()
        idx, conf = idx.cpu(), conf.cpu()
        out = []
        for row_idx, row_conf in zip(idx.tolist(), conf.tolist()):
            chars, prev, cs = [], 0, []
            for i, c in zip(row_idx, row_conf):
                if i != prev and i != 0:
                    chars.append(self.charset[i - 1])
                    cs.append(c)
                prev = i
            out.append(LineResult(text="".join(chars), confidence=min(cs) if cs else 0.0))
        return out


batcher: Batcher = None


@asynccontextmanager
async def lifespan(app: FastAPI):
    global batcher
    if DEVICE.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"OCR_DEVICE={DEVICE} but CUDA is not available")
    torch.backends.cudnn.benchmark = True
    charset = load_charset(os.environ.get("OCR_CHARSET", "/models/charset.txt"))
    model = TextRecognizer(num_classes=len(charset) + 1)
    state = torch.load(os.environ.get("OCR_WEIGHTS", "/models/rec.pt"), map_location="cpu")
    model.load_state_dict(state)
    model = model.to(DEVICE).eval()
    model = torch.compile(model, mode="reduce-overhead", dynamic=False)
    batcher = Batcher(model, charset)
    batcher.start()
    log.info("model ready on %s", DEVICE)
    yield
    await batcher.stop()
    torch.cuda.empty_cache()


app = FastAPI(title="line-ocr", lifespan=lifespan)


@app.post("/v1/lines", response_model=List[LineResult])
async def recognize(files: List[UploadFile] = File(...)):
    if len(files) > 256:
        raise HTTPException(413, "too many files")
    images = [Image.open(io.BytesIO(await f.read())) for f in files]
    return await asyncio.gather(*(batcher.submit(im) for im in images))


@app.get("/healthz")
def healthz():
    free, total = torch.cuda.mem_get_info()
    return {"device": DEVICE, "free_mb": free >> 20, "total_mb": total >> 20,
            "queue": batcher.queue.qsize() if batcher else 0}
