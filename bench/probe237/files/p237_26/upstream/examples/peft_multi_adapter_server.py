"""Minimal multi-LoRA HTTP server on top of HF transformers + PEFT.

One base model is loaded once; every adapter listed in the config is attached
with ``PeftModel.load_adapter(..., adapter_name=...)``.  Requests are grouped
by adapter and served one adapter-group at a time with ``model.set_adapter``
(PEFT cannot mix adapters inside one forward, unlike punica/S-LoRA), so this
is the baseline the kernel-based servers are compared against.

    python examples/peft_multi_adapter_server.py --config configs/multi_lora_serving.yaml
"""
import argparse
import asyncio
import contextlib
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import torch
import uvicorn
import yaml
from fastapi import FastAPI, HTTPException
from peft import PeftModel
from pydantic import BaseModel
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

logger = logging.getLogger("multi_lora")
logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"))


def get_device(preferred: Optional[str] = None) -> torch.device:
    """Pick the accelerator: explicit choice, else CUDA, else Apple MPS, else CPU."""
    if preferred:
        return torch.device(preferred)
    if torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def pick_dtype(name: str, device: torch.device) -> torch.dtype:
    if name == "auto":
        if device.type == "cuda":
            major, _ = torch.cuda.get_device_capability(device)
            return torch.bfloat16 if major >= 8 else torch.float16
        return torch.float32
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[name]


@dataclass
class ServerConfig:
    base_model: str
    adapters: Dict[str, str]
    device: Optional[str] = None
    dtype: str = "auto"
    attn_implementation: str = "flash_attention_2"
    max_new_tokens: int = 256
    max_batch_size: int = 16
    batch_timeout_ms: int = 10
    compile: bool = False
    host: str = "0.0.0.0"
    port: int = 8080
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_yaml(cls, path: str) -> "ServerConfig":
        with open(path) as f:
            raw = yaml.safe_load(f)
        serving = raw.get("serving", {})
        return cls(
            base_model=raw["base_model"],
            adapters=raw.get("adapters", {}),
            device=raw.get("device"),
            dtype=raw.get("dtype", "auto"),
            attn_implementation=raw.get("attn_implementation", "flash_attention_2"),
            max_new_tokens=serving.get("max_new_tokens", 256),
            max_batch_size=serving.get("max_batch_size", 16),
            batch_timeout_ms=serving.get("batch_timeout_ms", 10),
            compile=serving.get("compile", False),
            host=serving.get("host", "0.0.0.0"),
            port=serving.get("port", 8080),
            extra=raw.get("extra", {}),
        )


class GenerateRequest(BaseModel):
    prompt: str
    adapter: Optional[str] = None
    max_new_tokens: Optional[int] = None
    temperature: float = 0.0


class GenerateResponse(BaseModel):
    text: str
    adapter: Optional[str]
    latency_ms: float


class MultiLoraEngine:
    def __init__(self, cfg: ServerConfig):
        self.cfg = cfg
        self.device = get_device(cfg.device)
        self.dtype = pick_dtype(cfg.dtype, self.device)
        logger.info("loading %s on %s (%s)", cfg.base_model, self.device, self.dtype)

        self.tokenizer = AutoTokenizer.from_pretrained(cfg.base_model, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

        base = AutoModelForCausalLM.from_pretrained(
            cfg.base_model,
            torch_dtype=self.dtype,
            attn_implementation=cfg.attn_implementation,
            low_cpu_mem_usage=True,
        ).to("cuda")

        names = list(cfg.adapters)
        if not names:
            raise ValueError("at least one adapter is required")
        first = names[0]
        self.model = PeftModel.from_pretrained(base, cfg.adapters[first], adapter_name=first)
        for name in names[1:]:
            self.model.load_adapter(cfg.adapters[name], adapter_name=name)
        self.model.eval()
        self.adapter_names = set(names)

        if cfg.compile:
            self.model = torch.compile(self.model, mode="reduce-overhead", fullgraph=False)

        # set_adapter mutates global module state; serialise adapter switches
        self._lock = threading.Lock()
        self._stats = {"requests": 0, "adapter_switches": 0}
        self._active: Optional[str] = first

    def _switch(self, adapter: Optional[str]):
        if adapter == self._active:
            return
        if adapter is None:
            self._active = None
            return
        if adapter not in self.adapter_names:
            raise HTTPException(status_code=404, detail=f"unknown adapter {adapter!r}")
        self.model.set_adapter(adapter)
        self._active = adapter
        self._stats["adapter_switches"] += 1

    @torch.inference_mode()
    def generate_batch(self, adapter: Optional[str], reqs: List[GenerateRequest]) -> List[str]:
        with self._lock:
            self._switch(adapter)
            enc = self.tokenizer([r.prompt for r in reqs], return_tensors="pt", padding=True)
            enc = {k: v.cuda(non_blocking=True) for k, v in enc.items()}
            max_new = max(r.max_new_tokens or self.cfg.max_new_tokens for r in reqs)
            temperature = reqs[0].temperature
            gen_cfg = GenerationConfig(
                max_new_tokens=max_new,
                do_sample=temperature > 0,
                temperature=temperature if temperature > 0 else None,
                pad_token_id=self.tokenizer.pad_token_id,
            )
            ctx = self.model.disable_adapter() if adapter is None else contextlib.nullcontext()
            with ctx, torch.autocast(device_type="cuda", dtype=self.dtype):
                out = self.model.generate(**enc, generation_config=gen_cfg)
            texts = self.tokenizer.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
            self._stats["requests"] += len(reqs)
            return texts

    def stats(self) -> dict:
        s = dict(self._stats)
        if self.device.type == "cuda":
            s["gpu_mem_allocated_gb"] = round(torch.cuda.memory_allocated(self.device) / 2**30, 2)
            s["gpu_mem_peak_gb"] = round(torch.cuda.max_memory_allocated(self.device) / 2**30, 2)
        s["active_adapter"] = self._active
        return s


class AdapterBatcher:
    """Collects requests for a few ms and groups them by adapter."""

    def __init__(self, engine: MultiLoraEngine, max_batch: int, timeout_ms: int):
        self.engine = engine
        self.max_batch = max_batch
        self.timeout = timeout_ms / 1000
        self.queue: "asyncio.Queue[tuple]" = asyncio.Queue()

    async def submit(self, req: GenerateRequest) -> str:
        fut = asyncio.get_running_loop().create_future()
        await self.queue.put((req, fut))
        return await fut

    async def run(self):
        loop = asyncio.get_running_loop()
        while True:
            req, fut = await self.queue.get()
            pending = [(req, fut)]
            deadline = loop.time() + self.timeout
            while len(pending) < self.max_batch:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    pending.append(await asyncio.wait_for(self.queue.get(), remaining))
                except asyncio.TimeoutError:
                    break
            groups: Dict[Optional[str], list] = {}
            for r, f in pending:
                groups.setdefault(r.adapter, []).append((r, f))
            for adapter, items in groups.items():
                try:
                    texts = await loop.run_in_executor(
                        None, self.engine.generate_batch, adapter, [r for r, _ in items]
                    )
                    for (_, f), t in zip(items, texts):
                        f.set_result(t)
                except Exception as e:  # noqa: BLE001
                    for _, f in items:
                        if not f.done():
                            f.set_exception(e)


def build_app(cfg: ServerConfig) -> FastAPI:
    engine = MultiLoraEngine(cfg)
    batcher = AdapterBatcher(engine, cfg.max_batch_size, cfg.batch_timeout_ms)
    app = FastAPI(title="multi-lora (peft baseline)")

    @app.on_event("startup")
    async def _start():
        asyncio.get_running_loop().create_task(batcher.run())

    @app.post("/generate", response_model=GenerateResponse)
    async def generate(req: GenerateRequest):
        t0 = time.perf_counter()
        text = await batcher.submit(req)
        return GenerateResponse(text=text, adapter=req.adapter, latency_ms=(time.perf_counter() - t0) * 1e3)

    @app.get("/adapters")
    async def adapters():
        return sorted(engine.adapter_names)

    @app.get("/stats")
    async def stats():
        return engine.stats()

    return app


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args()

    cfg = ServerConfig.from_yaml(args.config)
    if args.port is not None:
        cfg.port = args.port
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cuda.enable_flash_sdp(True)
    app = build_app(cfg)
    uvicorn.run(app, host=cfg.host, port=cfg.port)


if __name__ == "__main__":
    main()
