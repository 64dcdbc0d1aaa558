"""Fast local chat with a CTranslate2-converted Llama/Mistral model.

Convert once:

    ct2-transformers-converter --model mistralai/Mistral-7B-Instruct-v0.2 \
        --output_dir models/mistral-7b-ct2 --quantization int8_float16

then chat:

    python -m ct2_chat.chat --model models/mistral-7b-ct2 --tokenizer mistralai/Mistral-7B-Instruct-v0.2
"""
import argparse
import os
import sys
import time
from typing import Iterator, List

import ctranslate2
from transformers import AutoTokenizer

DEFAULT_SYSTEM = "You are a concise, helpful assistant running entirely on the user's machine."


def build_generator(model_dir: str, device: str, compute_type: str, inter_threads: int):
    if device == "cuda":
        n = ctranslate2.get_cuda_device_count()
        if n == 0:
            raise SystemExit("device=cuda requested but CTranslate2 sees no CUDA device")
        device_index = list(range(n)) if inter_threads > 1 else [0]
        if compute_type == "auto":
            supported = ctranslate2.get_supported_compute_types("cuda")
            compute_type = "int8_float16" if "int8_float16" in supported else "float16"
    else:
        device_index = [0]
        if compute_type == "auto":
            compute_type = "int8"
    print(f"[ct2] loading {model_dir} on {device}{device_index} ({compute_type})", file=sys.stderr)
    return ctranslate2.Generator(
        model_dir,
        device=device,
        device_index=device_index,
        compute_type=compute_type,
        inter_threads=inter_threads,
        intra_threads=0 if device == "cuda" else os.cpu_count() // 2,
    )


def render_prompt(tokenizer, history: List[dict]) -> List[str]:
    text = tokenizer.apply_chat_template(history, tokenize=False, add_generation_prompt=True)
    ids = tokenizer(text, add_special_tokens=False).input_ids
    return tokenizer.convert_ids_to_tokens(ids)


def stream_reply(generator, tokenizer, prompt_tokens: List[str], args) -> Iterator[str]:
    step_results = generator.generate_tokens(
        prompt_tokens,
        max_length=args.max_new_tokens,
        sampling_temperature=args.temperature,
        sampling_topk=args.top_k,
        sampling_topp=args.top_p,
        repetition_penalty=args.repetition_penalty,
        end_token=tokenizer.eos_token,
    )
    ids: List[int] = []
    printed = ""
    for step in step_results:
        ids.append(step.token_id)
        text = tokenizer.decode(ids, skip_special_tokens=True)
        # only emit complete characters (sentencepiece can split multi-byte chars)
        if not text.endswith("\ufffd"):
            yield text[len(printed):]
            printed = text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="CTranslate2 model directory")
    ap.add_argument("--tokenizer", required=True, help="HF tokenizer name or path")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu", "auto"])
    ap.add_argument("--compute-type", default="auto")
    ap.add_argument("--inter-threads", type=int, default=1)
    ap.add_argument("--max-new-tokens", type=int, default=512)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--top-k", type=int, default=40)
    ap.add_argument("--top-p", type=float, default=0.95)
    ap.add_argument("--repetition-penalty", type=float, default=1.1)
    ap.add_argument("--system", default=DEFAULT_SYSTEM)
    ap.add_argument("--save", default=None, help="append the conversation to this JSONL file on exit")
    ap.add_argument("--max-history-tokens", type=int, default=3072)
    args = ap.parse_args()

    device = args.device
    if device == "auto":
        device = "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    generator = build_generator(args.model, device, args.compute_type, args.inter_threads)

    history = [{"role": "system", "content": args.system}] if args.system else []
    print("Type your message, /reset to clear history, Ctrl-D to quit.")
    while True:
        try:
            user = input("\nyou> ").strip()
        except EOFError:
            print()
            break
        if not user:
            continue
        if user == "/reset":
            history = history[:1]
            continue
        history.append({"role": "user", "content": user})
        prompt_tokens = render_prompt(tokenizer, history)
        # drop the oldest turns (keep the system prompt) until the prompt fits
        while len(prompt_tokens) > args.max_history_tokens and len(history) > 2:
            del history[1:3]
            prompt_tokens = render_prompt(tokenizer, history)
        t0 = time.perf_counter()
        n_chars = 0
        print("bot> ", end="", flush=True)
        chunks = []
        for piece in stream_reply(generator, tokenizer, prompt_tokens, args):
            print(piece, end="", flush=True)
            chunks.append(piece)
            n_chars += len(piece)
        dt = time.perf_counter() - t0
        print(f"\n[{dt:.1f}s, {n_chars / max(dt, 1e-6):.0f} chars/s]", file=sys.stderr)
        history.append({"role": "assistant", "content": "".join(chunks)})

    if args.save and len(history) > 1:
        import json

        with open(args.save, "a", encoding="utf-8") as f:
            f.write(json.dumps({"model": args.model, "messages": history}, ensure_ascii=False) + "\n")
        print(f"conversation appended to {args.save}", file=sys.stderr)


if __name__ == "__main__":
    main()
