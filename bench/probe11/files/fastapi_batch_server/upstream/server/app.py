"""FastAPI text-generation server with dynamic request batching.

Requests are queued; a background task gathers up to MAX_BATCH prompts (or waits BATCH_TIMEOUT_MS), runs one
padded `generate` call and resolves each request's future. Latency is measured around the device work.

    GPU_ID=0 uvicorn server.app:app --host 0.0.0.0 --port 8000 --workers 1
"""
import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from typing import List, Optional

import torch
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel
from transformers import AutoModelForCausalLM, AutoTokenizer

logger = logging.getLogger("gen-server")
logging.basicConfig(level=logging.INFO)

MODEL_ID = os.getenv("MODEL_ID", "Qwen/Qwen2.5-1.5B-Instruct")
DEVICE = os.getenv("DEVICE", "cuda")
GPU_ID = int(os.getenv("GPU_ID", "0"))
MAX_BATCH = int(os.getenv("MAX_BATCH", "16"))
BATCH_TIMEOUT_MS = float(os.getenv("BATCH_TIMEOUT_MS", "15"))
MAX_INPUT_TOKENS = int(os.getenv("MAX_INPUT_TOKENS", "2048"))

torch.cuda.set_device(GPU_ID)
torch.backends.cuda.matmul.allow_tf32 = True

app = FastAPI(title="batched generation server")


class GenerateRequest(BaseModel):
    prompt: str
    max_new_tokens: int = 128
    temperature: float = 0.7
    top_p: float = 0.95


class GenerateResponse(BaseModel):
    text: str
    prompt_tokens: int
    completion_tokens: int
    batch_size: int
    device_ms: float


@dataclass
class Pending:
    req: GenerateRequest
    future: asyncio.Future
    enqueued: float = field(default_factory=time.perf_counter)


class Engine:
    def __init__(self):
        self.tokenizer = AutoTokenizer.from_pretrained(MODEL_ID, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(MODEL_ID, torch_dtype=torch.float16)
        self.model = self.model.to(f"{DEVICE}:{GPU_ID}").eval()
        self.queue: "asyncio.Queue[Pending]" = asyncio.Queue()
        self.served = 0

    @torch.inference_mode()
    def run_batch(self, batch: List[Pending]):
        prompts = [p.req.prompt for p in batch]
        enc = self.tokenizer(prompts, return_tensors="pt", padding=True, truncation=True,
                             max_length=MAX_INPUT_TOKENS).to(self.model.device)
        max_new = max(p.req.max_new_tokens for p in batch)
        temperature = max(min(p.req.temperature for p in batch), 1e-3)
        top_p = min(p.req.top_p for p in batch)

        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = self.model.generate(**enc, max_new_tokens=max_new, do_sample=True, temperature=temperature,
                                  top_p=top_p, pad_token_id=self.tokenizer.pad_token_id)
        torch.cuda.synchronize()  # generate() is async on the device
        device_ms = (time.perf_counter() - t0) * 1000

        results = []
        prompt_len = enc["input_ids"].shape[1]
        for i, p in enumerate(batch):
            gen = out[i, prompt_len:][: p.req.max_new_tokens]
            text = self.tokenizer.decode(gen, skip_special_tokens=True)
            results.append(GenerateResponse(
                text=text,
                prompt_tokens=int(enc["attention_mask"][i].sum()),
                completion_tokens=int((gen != self.tokenizer.pad_token_id).sum()),
                batch_size=len(batch),
                device_ms=round(device_ms, 2),
            ))
        return results

    async def batch_loop(self):
        loop = asyncio.get_running_loop()
        while True:
            first = await self.queue.get()
            batch = [first]
            deadline = time.perf_counter() + BATCH_TIMEOUT_MS / 1000
            while len(batch) < MAX_BATCH:
                timeout = deadline - time.perf_counter()
                if timeout <= 0:
                    break
                try:
                    batch.append(await asyncio.wait_for(self.queue.get(), timeout))
                except asyncio.TimeoutError:
                    break
            try:
                results = await loop.run_in_executor(None, self.run_batch, batch)
            except torch.cuda.OutOfMemoryError:
                logger.warning("OOM at batch size %d, retrying one by one", len(batch))
                torch.cuda.empty_cache()
                results = []
                for p in batch:
                    try:
                        results.extend(await loop.run_in_executor(None, self.run_batch, [p]))
                    except Exception as exc:  # noqa: BLE001
                        results.append(exc)
            except Exception as exc:  # noqa: BLE001
                results = [exc] * len(batch)
            for p, r in zip(batch, results):
                if isinstance(r, Exception):
                    p.future.set_exception(r)
                else:
                    p.future.set_result(r)
            self.served += len(batch)


engine: Optional[Engine] = None


@app.on_event("startup")
async def startup():
    global engine
    engine = Engine()
    asyncio.create_task(engine.batch_loop())
    logger.info("model %s ready on %s", MODEL_ID, engine.model.device)


@app.post("/generate", response_model=GenerateResponse)
async def generate(req: GenerateRequest):
    if engine is None:
        raise HTTPException(503, "engine not ready")
    fut = asyncio.get_running_loop().create_future()
    await engine.queue.put(Pending(req, fut))
    return await fut


@app.get("/health")
async def health():
    return {
        "status": "ok" if engine is not None else "starting",
        "queue": engine.queue.qsize() if engine else 0,
        "served": engine.served if engine else 0,
        "device": torch.cuda.get_device_name(GPU_ID),
        "mem_allocated_gb": round(torch.cuda.memory_allocated(GPU_ID) / 2**30, 2),
        "mem_reserved_gb": round(torch.cuda.memory_reserved(GPU_ID) / 2**30, 2),
    }
