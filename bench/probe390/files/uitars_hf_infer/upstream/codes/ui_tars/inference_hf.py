# Copyright (c) ByteDance Ltd. and/or its affiliates
# SPDX-License-Identifier: Apache-2.0
"""Local (transformers) inference for UI-TARS-1.5-7B / UI-TARS-7B-DPO.

For serving, prefer the vLLM OpenAI-compatible server in deploy/ (much higher throughput);
this script is meant for quick single-GPU checks and for reproducing the grounding numbers.
"""
import argparse
import json
import os
import random

import numpy as np
import torch
from PIL import Image
from transformers import AutoProcessor, Qwen2_5_VLForConditionalGeneration

from ui_tars.action_parser import parse_action_to_structure_output, parsing_response_to_pyautogui_code
from ui_tars.prompt import COMPUTER_USE, GROUNDING, MOBILE_USE

PROMPTS = {"computer": COMPUTER_USE, "mobile": MOBILE_USE, "grounding": GROUNDING}


def seed_everything(seed: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def build_messages(prompt_tmpl, instruction, image_path, history=None, language="English"):
    prompt = prompt_tmpl.format(instruction=instruction, language=language)
    content = [{"type": "text", "text": prompt}]
    for turn in (history or []):
        content.append({"type": "image", "image": turn["image"]})
        content.append({"type": "text", "text": turn["response"]})
    content.append({"type": "image", "image": image_path})
    return [{"role": "user", "content": content}]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="ByteDance-Seed/UI-TARS-1.5-7B")
    parser.add_argument("--image", required=True)
    parser.add_argument("--instruction", required=True)
    parser.add_argument("--mode", default="computer", choices=list(PROMPTS))
    parser.add_argument("--max_new_tokens", type=int, default=512)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--save", default=None, help="optional json file for the parsed actions")
    args = parser.parse_args()

    seed_everything(args.seed)

    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(
        args.model,
        torch_dtype=torch.bfloat16,
        attn_implementation="flash_attention_2",
        device_map="auto",
    )
    processor = AutoProcessor.from_pretrained(args.model, min_pixels=100 * 28 * 28, max_pixels=16384 * 28 * 28)

    image = Image.open(args.image).convert("RGB")
    width, height = image.size
    messages = build_messages(PROMPTS[args.mode], args.instruction, args.image)
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    inputs = processor(text=[text], images=[image], padding=True, return_tensors="pt").to(model.device)

    gen_kwargs = dict(max_new_tokens=args.max_new_tokens)
    if args.temperature > 0:
        gen_kwargs.update(do_sample=True, temperature=args.temperature)
    else:
        gen_kwargs.update(do_sample=False)

    with torch.no_grad():
        output_ids = model.generate(**inputs, **gen_kwargs)
    output_ids = output_ids[:, inputs["input_ids"].shape[1]:]
    response = processor.batch_decode(output_ids, skip_special_tokens=True)[0]
    print("Model response:\n" + response)

    resized_h, resized_w = inputs["image_grid_thw"][0][1].item() * 14, inputs["image_grid_thw"][0][2].item() * 14
    actions = parse_action_to_structure_output(
        response, factor=1000, origin_resized_height=height, origin_resized_width=width,
        model_type="qwen25vl",
    )
    code = parsing_response_to_pyautogui_code(actions, image_height=height, image_width=width)
    print("pyautogui:\n" + code)
    print(f"(resized input: {resized_w}x{resized_h})")

    if args.save:
        os.makedirs(os.path.dirname(args.save) or ".", exist_ok=True)
        with open(args.save, "w") as f:
            json.dump({"response": response, "actions": actions, "pyautogui": code}, f, indent=2,
                      ensure_ascii=False)


if __name__ == "__main__":
    main()
