# coding=utf-8
# Copyright 2023 The BigCode and HuggingFace teams. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
"""Generate samples from a fine-tuned StarChat model, one prompt per line of a JSONL file."""
import argparse
import json
import time
from pathlib import Path

import torch
from dialogues import DialogueTemplate, get_dialogue_template
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, set_seed


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--model_id", type=str, help="Name of model to generate samples with", default="HuggingFaceH4/starchat-alpha"
    )
    parser.add_argument("--revision", type=str, default=None, help="The model repo's revision to use")
    parser.add_argument(
        "--system_prompt", type=str, default="", help="Whether to use a system prompt to condition the generation"
    )
    parser.add_argument("--prompts_file", type=str, default="prompt_templates/coding_prompts.jsonl")
    parser.add_argument("--output_file", type=str, default="generations.json")
    parser.add_argument("--max_new_tokens", type=int, default=1024)
    parser.add_argument("--temperature", type=float, default=0.2)
    parser.add_argument("--top_k", type=int, default=50)
    parser.add_argument("--top_p", type=float, default=0.95)
    parser.add_argument("--load_in_8bit", action="store_true", help="Quantise the weights with bitsandbytes")
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def load_prompts(path):
    prompts = []
    with open(path, "r", encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            prompts.append(json.loads(line)["prompt"])
    return prompts


def main():
    args = parse_args()
    set_seed(args.seed)

    device = "cuda" if torch.cuda.is_available() else "cpu"

    try:
        dialogue_template = DialogueTemplate.from_pretrained(args.model_id, revision=args.revision)
    except Exception:
        print("No dialogue template found in model repo. Defaulting to the `no_system` template.")
        dialogue_template = get_dialogue_template("no_system")

    prompts = load_prompts(args.prompts_file)
    print(f"Loaded {len(prompts)} prompts from {args.prompts_file}")

    tokenizer = AutoTokenizer.from_pretrained(args.model_id, revision=args.revision)
    generation_config = GenerationConfig(
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        do_sample=True,
        eos_token_id=tokenizer.convert_tokens_to_ids(dialogue_template.end_token),
        min_new_tokens=32,
        max_new_tokens=args.max_new_tokens,
    )

    model = AutoModelForCausalLM.from_pretrained(
        args.model_id,
        revision=args.revision,
        load_in_8bit=args.load_in_8bit,
        device_map="auto",
        torch_dtype=torch.float16,
    )

    outputs = []
    start = time.time()
    for idx, prompt in enumerate(prompts):
        dialogue_template.system = args.system_prompt
        dialogue_template.messages = [{"role": "user", "content": prompt}]
        formatted_prompt = dialogue_template.get_inference_prompt()

        inputs = tokenizer(formatted_prompt, return_tensors="pt").to(device)
        with torch.no_grad():
            generated_ids = model.generate(**inputs, generation_config=generation_config)
        completion = tokenizer.decode(generated_ids[0][inputs["input_ids"].shape[1]:], skip_special_tokens=False)
        completion = completion.replace(dialogue_template.end_token, "").strip()
        print(f"=== EXAMPLE {idx} ===")
        print()
        print(formatted_prompt)
        print(completion)
        print()
        print("=" * 80)
        outputs.append({"prompt": prompt, "completion": completion})

    elapsed = time.time() - start
    print(f"Generated {len(outputs)} completions in {elapsed:.1f}s on {device}")

    out_path = Path(args.output_file)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(outputs, f, indent=2)


if __name__ == "__main__":
    main()
