"""Batch inference and an OpenAI-style server with LMDeploy's TurboMind engine.

    python serve_lmdeploy.py offline --model internlm/internlm2_5-7b-chat --tp 2
    python serve_lmdeploy.py serve --model internlm/internlm2_5-7b-chat --port 23333
"""
import argparse
import json
import os
import time

import torch
from lmdeploy import GenerationConfig, TurbomindEngineConfig, pipeline
from lmdeploy.messages import PytorchEngineConfig
from lmdeploy.serve.openai.api_server import serve

PROMPTS = [
    "Introduce yourself in one sentence.",
    "What is the capital of Australia?",
    "Write a haiku about the sea.",
    "Explain paged attention to a new engineer.",
]


def engine_config(args):
    if args.backend == "turbomind":
        return TurbomindEngineConfig(
            tp=args.tp,
            session_len=args.session_len,
            cache_max_entry_count=args.cache_ratio,
            quant_policy=args.kv_quant,
            model_format=args.model_format,
            enable_prefix_caching=True,
        )
    return PytorchEngineConfig(
        tp=args.tp,
        session_len=args.session_len,
        cache_max_entry_count=args.cache_ratio,
        device_type="cuda",
        eager_mode=args.eager,
    )


def offline(args):
    gen = GenerationConfig(max_new_tokens=args.max_new_tokens, top_p=0.8, temperature=0.7)
    pipe = pipeline(args.model, backend_config=engine_config(args), log_level="WARNING")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    responses = pipe(PROMPTS * args.repeat, gen_config=gen)
    dt = time.perf_counter() - t0
    n_tokens = sum(r.generate_token_len for r in responses)
    for prompt, r in zip(PROMPTS, responses):
        print(json.dumps({"prompt": prompt, "response": r.text[:200]}, ensure_ascii=False))
    print(f"{len(responses)} requests, {n_tokens} tokens, {n_tokens / dt:.1f} tok/s")
    free, total = torch.cuda.mem_get_info()
    print(f"GPU memory in use: {(total - free) / 2**30:.1f} / {total / 2**30:.1f} GiB")
    pipe.close()


def online(args):
    serve(
        args.model,
        backend=args.backend,
        backend_config=engine_config(args),
        server_name="0.0.0.0",
        server_port=args.port,
        log_level="INFO",
        api_keys=os.environ.get("LMDEPLOY_API_KEYS", "").split(",") or None,
    )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["offline", "serve"])
    p.add_argument("--model", default="internlm/internlm2_5-7b-chat")
    p.add_argument("--backend", choices=["turbomind", "pytorch"], default="turbomind")
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--session-len", type=int, default=8192)
    p.add_argument("--cache-ratio", type=float, default=0.8, help="fraction of free GPU memory for the k/v cache")
    p.add_argument("--kv-quant", type=int, default=8, choices=[0, 4, 8], help="online int4/int8 kv cache quantization")
    p.add_argument("--model-format", default="hf", choices=["hf", "awq", "gptq"])
    p.add_argument("--eager", action="store_true", help="pytorch engine: disable CUDA graphs")
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument("--repeat", type=int, default=16)
    p.add_argument("--port", type=int, default=23333)
    args = p.parse_args()

    if args.tp > torch.cuda.device_count():
        raise SystemExit(f"--tp {args.tp} but only {torch.cuda.device_count()} GPUs visible")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", ",".join(str(i) for i in range(args.tp)))

    if args.mode == "offline":
        offline(args)
    else:
        online(args)


if __name__ == "__main__":
    main()
