"""Minimal chatbot / latency demo for lookahead decoding.

USE_LADE=1 python applications/chatbot.py --model_path meta-llama/Llama-2-7b-chat-hf --debug
USE_LADE=0 python applications/chatbot.py --model_path meta-llama/Llama-2-7b-chat-hf --debug   # baseline
"""
import argparse
import os
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

import lade

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
parser.add_argument("--model_path", type=str, help="model path", default="meta-llama/Llama-2-7b-chat-hf")
parser.add_argument("--model_type", type=str, default="llama")
parser.add_argument("--quant", type=str, default="")
parser.add_argument("--use_ds", action="store_true")
parser.add_argument("--debug", action="store_true")
parser.add_argument("--chat", action="store_true")
parser.add_argument("--dtype", type=str, default="float16")
parser.add_argument("--device", type=str, default="cuda:0")
parser.add_argument("--cache_dir", type=str, default="")
parser.add_argument("--max_new_tokens", type=int, default=1024)
parser.add_argument("--do_sample", action="store_true")
parser.add_argument("--top_p", type=float, default=0.9)
parser.add_argument("--temperature", type=float, default=1.0)
parser.add_argument("--level", type=int, default=5)
parser.add_argument("--window", type=int, default=15)
parser.add_argument("--guess", type=int, default=15)
parser.add_argument("--use_flash", action="store_true", help="use FlashAttention-2 for the lookahead forward")
args = parser.parse_args()
torch_device = args.device

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}

if int(os.environ.get("USE_LADE", 0)):
    lade.augment_all()
    lade.config_lade(
        LEVEL=args.level,
        WINDOW_SIZE=args.window,
        GUESS_SET_SIZE=args.guess,
        DEBUG=int(args.debug),
        POOL_FROM_PROMPT=True,
        USE_FLASH=args.use_flash,
    )
    print("lade activated config: ", lade.decoding.CONFIG_MAP)

assert args.dtype in DTYPES, f"unsupported dtype {args.dtype}"
model, tokenizer = lade.utils.get_model(
    args.model_path, args.quant, DTYPES[args.dtype], torch_device, args.cache_dir, args.use_ds, False
)
model.tokenizer = tokenizer
if tokenizer.pad_token_id is None:
    tokenizer.pad_token_id = tokenizer.eos_token_id

prompt_history = []
default_prompt = "How do you fine-tune a large language model?"

# warm up the kernels (and the CUDA caching allocator) before timing anything
warm = tokenizer(default_prompt, return_tensors="pt").input_ids.to(torch_device)
model.generate(warm, max_new_tokens=8, do_sample=False)

while True:
    if args.chat:
        user_input = input("User: ")
        if user_input.strip() in ("exit", "quit"):
            break
        if user_input.strip() == "clear":
            prompt_history = []
            continue
        prompt_history.append({"role": "user", "content": user_input})
        input_ids = tokenizer.apply_chat_template(
            prompt_history, add_generation_prompt=True, return_tensors="pt"
        ).to(torch_device)
        print("Assistant: ", end="", flush=True)
    else:
        input_ids = tokenizer.apply_chat_template(
            [{"role": "user", "content": default_prompt}], add_generation_prompt=True, return_tensors="pt"
        ).to(torch_device)

    os.environ["CHAT"] = str(int(args.chat))
    torch.cuda.synchronize()
    t0 = time.time()
    greedy_output = model.generate(
        input_ids=input_ids,
        max_new_tokens=args.max_new_tokens,
        do_sample=args.do_sample,
        top_p=args.top_p if args.do_sample else None,
        temperature=args.temperature if args.do_sample else None,
    )
    torch.cuda.synchronize(torch_device)
    t1 = time.time()

    new_tokens = greedy_output.shape[1] - input_ids.shape[1]
    output = tokenizer.decode(greedy_output[0][input_ids.shape[1] :], skip_special_tokens=True)
    if args.chat:
        prompt_history.append({"role": "assistant", "content": output})
        print("")
    else:
        print(output)

    if args.debug:
        print(
            f"Generated Tokens: {new_tokens}  Generation Speed: {new_tokens / (t1 - t0):.2f} tokens/s  "
            f"Latency: {t1 - t0:.2f}s"
        )
        if int(os.environ.get("USE_LADE", 0)):
            lade.utils.log_history(clear=True)

    if not args.chat:
        break
