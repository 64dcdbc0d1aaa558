"""OpenAI-compatible chat server on top of plain transformers.

This is the "no extra dependencies" backend of the stack: when vLLM or llama.cpp are not an
option (odd architectures, LoRA adapters, quick experiments) the UI talks to this server.

Features:
  * /v1/chat/completions with SSE streaming, /v1/models, /health
  * static KV cache + torch.compile for low-latency single-user decoding
  * optional LoRA adapter (peft) merged at load time
  * per-request timing (TTFT / tokens per second) in the response "usage" block

    python -m backend.hf_server --model meta-llama/Meta-Llama-3-8B-Instruct --port 8080 --compile
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import threading
import time
import uuid
from typing import AsyncIterator, List, Optional

import torch
import uvicorn
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field
from transformers import AutoModelForCausalLM, AutoTokenizer, StaticCache, TextIteratorStreamer
from transformers.utils import is_flash_attn_2_available

log = logging.getLogger("hf_server")


# ----------------------------------------------------------------------------- CLI / config
def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--adapter", default=None, help="optional LoRA adapter to merge")
    ap.add_argument("--served-name", default=None)
    ap.add_argument("--host", default="0.0.0.0")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    ap.add_argument("--max-cache-len", type=int, default=8192)
    ap.add_argument("--compile", action="store_true", help="torch.compile the decode step (CUDA graphs)")
    ap.add_argument("--mem-fraction", type=float, default=0.92, help="cap this process' share of VRAM")
    ap.add_argument("--profile-nvtx", action="store_true", help="emit NVTX ranges for nsys")
    return ap.parse_args()


ARGS = parse_args() if __name__ == "__main__" else None
DEVICE = torch.device("cuda:0")


# ----------------------------------------------------------------------------- model
class Engine:
    def __init__(self, args):
        self.args = args
        self.name = args.served_name or os.path.basename(args.model.rstrip("/"))
        dtype = getattr(torch, args.dtype)

        torch.cuda.set_per_process_memory_fraction(args.mem_fraction, DEVICE)
        torch.set_float32_matmul_precision("high")

        attn_impl = "flash_attention_2" if is_flash_attn_2_available() else "sdpa"
        log.info("loading %s (%s, attn=%s)", args.model, args.dtype, attn_impl)
        self.tokenizer = AutoTokenizer.from_pretrained(args.model)
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(
            args.model,
            torch_dtype=dtype,
            attn_implementation=attn_impl,
            low_cpu_mem_usage=True,
        ).to(DEVICE)
        if args.adapter:
            from peft import PeftModel

            self.model = PeftModel.from_pretrained(self.model, args.adapter).merge_and_unload()
        self.model.eval()
        self.model.generation_config.pad_token_id = self.tokenizer.pad_token_id

        self.cache = None
        if args.compile:
            self.cache = StaticCache(
                config=self.model.config,
                max_batch_size=1,
                max_cache_len=args.max_cache_len,
                device="cuda",
                dtype=dtype,
            )
            self.model.forward = torch.compile(self.model.forward, mode="reduce-overhead", fullgraph=True)
            self._warmup()
        self.lock = threading.Lock()
        free, total = torch.cuda.mem_get_info(DEVICE)
        log.info("ready: %.1f / %.1f GiB free", free / 2**30, total / 2**30)

    def _warmup(self):
        log.info("warming up compiled graphs (this takes a minute) ...")
        ids = self.tokenizer("Hello", return_tensors="pt").input_ids.to(DEVICE)
        for _ in range(3):
            self._generate_ids(ids, max_new_tokens=16, temperature=0.0, top_p=1.0, streamer=None)
        torch.cuda.synchronize(DEVICE)

    def encode_chat(self, messages: List[dict]) -> torch.Tensor:
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")
        return ids.pin_memory().to(DEVICE, non_blocking=True)

    @torch.inference_mode()
    def _generate_ids(self, input_ids, max_new_tokens, temperature, top_p, streamer):
        kwargs = dict(
            input_ids=input_ids,
            attention_mask=torch.ones_like(input_ids),
            max_new_tokens=max_new_tokens,
            do_sample=temperature > 0,
            temperature=max(temperature, 1e-5),
            top_p=top_p,
            streamer=streamer,
        )
        if self.cache is not None:
            self.cache.reset()
            kwargs["past_key_values"] = self.cache
        if self.args.profile_nvtx:
            torch.cuda.nvtx.range_push("generate")
        # prefill is attention-bound: make sure the flash kernel is used for long prompts
        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
            out = self.model.generate(**kwargs)
        if self.args.profile_nvtx:
            torch.cuda.nvtx.range_pop()
        return out

    def generate(self, messages, max_new_tokens, temperature, top_p):
        input_ids = self.encode_chat(messages)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        with self.lock:
            start.record()
            out = self._generate_ids(input_ids, max_new_tokens, temperature, top_p, streamer=None)
            end.record()
            torch.cuda.synchronize()
        new_tokens = out[0, input_ids.shape[1]:]
        text = self.tokenizer.decode(new_tokens, skip_special_tokens=True)
        ms = start.elapsed_time(end)
        return text, input_ids.shape[1], len(new_tokens), ms

    def stream(self, messages, max_new_tokens, temperature, top_p):
        input_ids = self.encode_chat(messages)
        streamer = TextIteratorStreamer(self.tokenizer, skip_prompt=True, skip_special_tokens=True, timeout=120)

        def _run():
            with self.lock:
                self._generate_ids(input_ids, max_new_tokens, temperature, top_p, streamer)

        threading.Thread(target=_run, daemon=True).start()
        return streamer, input_ids.shape[1]


# ----------------------------------------------------------------------------- API schema
class ChatMessage(BaseModel):
    role: str
    content: str


class ChatRequest(BaseModel):
    model: Optional[str] = None
    messages: List[ChatMessage]
    max_tokens: int = Field(default=512, ge=1, le=8192)
    temperature: float = 0.7
    top_p: float = 0.95
    stream: bool = False


app = FastAPI(title="hf-openai-server")
ENGINE: Optional[Engine] = None


def _chunk(req_id: str, model: str, delta: dict, finish: Optional[str] = None) -> str:
    payload = {
        "id": req_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


async def _sse(req: ChatRequest, request: Request) -> AsyncIterator[str]:
    req_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    messages = [m.model_dump() for m in req.messages]
    streamer, n_prompt = ENGINE.stream(messages, req.max_tokens, req.temperature, req.top_p)
    yield _chunk(req_id, ENGINE.name, {"role": "assistant"})
    loop = asyncio.get_running_loop()
    it = iter(streamer)
    while True:
        piece = await loop.run_in_executor(None, next, it, None)
        if piece is None:
            break
        if await request.is_disconnected():
            log.info("%s: client went away", req_id)
            break
        if piece:
            yield _chunk(req_id, ENGINE.name, {"content": piece})
    yield _chunk(req_id, ENGINE.name, {}, finish="stop")
    yield "data: [DONE]\n\n"


@app.post("/v1/chat/completions")
async def chat_completions(req: ChatRequest, request: Request):
    if ENGINE is None:
        raise HTTPException(503, "model not loaded")
    if req.stream:
        return StreamingResponse(_sse(req, request), media_type="text/event-stream")
    messages = [m.model_dump() for m in req.messages]
    loop = asyncio.get_running_loop()
    text, n_prompt, n_completion, ms = await loop.run_in_executor(
        None, ENGINE.generate, messages, req.max_tokens, req.temperature, req.top_p
    )
    return JSONResponse(
        {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": ENGINE.name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": n_prompt,
                "completion_tokens": n_completion,
                "total_tokens": n_prompt + n_completion,
                "latency_ms": round(ms, 1),
                "tokens_per_second": round(n_completion / max(ms / 1000, 1e-6), 1),
            },
        }
    )


@app.get("/v1/models")
def models():
    name = ENGINE.name if ENGINE else "unloaded"
    return {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "local"}]}


@app.get("/health")
def health():
    if ENGINE is None:
        return {"status": "loading"}
    return {
        "status": "ok",
        "model": ENGINE.name,
        "compiled": ENGINE.cache is not None,
        "gpu": torch.cuda.get_device_name(DEVICE),
        "allocated_gib": round(torch.cuda.memory_allocated(DEVICE) / 2**30, 2),
        "max_allocated_gib": round(torch.cuda.max_memory_allocated(DEVICE) / 2**30, 2),
    }


def main():
    global ENGINE
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    ENGINE = Engine(ARGS)
    uvicorn.run(app, host=ARGS.host, port=ARGS.port, log_level="info")


if __name__ == "__main__":
    main()
