"""
Interactive chat with a 4-bit (NF4, double-quant) causal LM on a single consumer GPU, plus an
optional 8-bit paged-AdamW LoRA "quick tune" on a local jsonl file.

    python scripts/chat_4bit.py --model mistralai/Mistral-7B-Instruct-v0.2
    python scripts/chat_4bit.py --model ... --tune data/my_chats.jsonl --steps 200
"""
import argparse
import json
import os
import sys
import time

import bitsandbytes as bnb
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, TextStreamer


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--max-new-tokens", type=int, default=512)
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--top-p", type=float, default=0.9)
    p.add_argument("--tune", default=None, help="jsonl with {'prompt','response'} rows")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-4)
    return p.parse_args()


def load_4bit(model_id: str):
    compute_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    bnb_config = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=compute_dtype,
    )
    tokenizer = AutoTokenizer.from_pretrained(model_id, use_fast=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        model_id,
        quantization_config=bnb_config,
        device_map={"": torch.cuda.current_device()},
        torch_dtype=compute_dtype,
        attn_implementation="flash_attention_2",
    )
    model.config.use_cache = True
    n4 = sum(1 for m in model.modules() if isinstance(m, bnb.nn.Linear4bit))
    print(f"loaded {model_id}: {n4} Linear4bit layers, "
          f"{torch.cuda.memory_allocated() / 2**30:.2f} GiB allocated", file=sys.stderr)
    return model, tokenizer


def quick_tune(model, tokenizer, path, steps, r, lr):
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)
    cfg = LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.05, bias="none", task_type="CAUSAL_LM",
                     target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    model = get_peft_model(model, cfg)
    model.print_trainable_parameters()

    rows = [json.loads(line) for line in open(path)]
    optimizer = bnb.optim.PagedAdamW8bit([p for p in model.parameters() if p.requires_grad], lr=lr)
    model.train()
    t0 = time.time()
    for step in range(steps):
        row = rows[step % len(rows)]
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": row["prompt"]}, {"role": "assistant", "content": row["response"]}],
            tokenize=False)
        batch = tokenizer(text, return_tensors="pt", truncation=True, max_length=1024).to("cuda")
        out = model(**batch, labels=batch["input_ids"])
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.3)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 20 == 0:
            print(f"step {step} loss {out.loss.item():.4f} ({time.time() - t0:.0f}s, "
                  f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB)", file=sys.stderr)
    model.eval()
    return model


@torch.no_grad()
def chat(model, tokenizer, args):
    streamer = TextStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)
    history = []
    while True:
        try:
            user = input("\n>>> ")
        except (EOFError, KeyboardInterrupt):
            break
        if user.strip() in {"/exit", "/quit"}:
            break
        if user.strip() == "/reset":
            history = []
            torch.cuda.empty_cache()
            continue
        history.append({"role": "user", "content": user})
        input_ids = tokenizer.apply_chat_template(history, add_generation_prompt=True, return_tensors="pt").to(model.device)
        out = model.generate(
            input_ids,
            max_new_tokens=args.max_new_tokens,
            do_sample=args.temperature > 0,
            temperature=args.temperature,
            top_p=args.top_p,
            streamer=streamer,
            pad_token_id=tokenizer.pad_token_id,
        )
        reply = tokenizer.decode(out[0, input_ids.shape[1]:], skip_special_tokens=True)
        history.append({"role": "assistant", "content": reply})


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        sys.exit("bitsandbytes 4-bit inference needs a CUDA GPU")
    model, tokenizer = load_4bit(args.model)
    if args.tune:
        model = quick_tune(model, tokenizer, args.tune, args.steps, args.lora_r, args.lr)
    chat(model, tokenizer, args)


if __name__ == "__main__":
    main()
