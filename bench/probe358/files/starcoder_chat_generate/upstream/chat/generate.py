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
"""Quick smoke test of a StarChat checkpoint: runs a handful of coding prompts
through the dialogue template and reports throughput on the local GPU."""
import argparse
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, set_seed

from dialogues import DialogueTemplate, get_dialogue_template


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--model_id", type=str, help="Name of model to generate samples with", default="HuggingFaceH4/starchat-alpha"
    )
    parser.add_argument(
        "--revision", type=str, default=None, help="The model repo's revision to use"
    )
    parser.add_argument(
        "--system_prompt", type=str, default=None, help="Overrides the dialogue template's system prompt"
    )
    parser.add_argument(
        "--device",
        type=str,
        default="cuda" if torch.cuda.is_available() else "cpu",
        help="Device to run generation on (defaults to the first GPU)",
    )
    parser.add_argument("--load_in_8bit", action="store_true", help="Load the model weights in 8-bit (bitsandbytes)")
    parser.add_argument("--max_new_tokens", type=int, default=1024)
    args = parser.parse_args()

    # Set seed for reproducibility
    set_seed(42)

    prompts = [
        [
            {
                "role": "user",
                "content": "Develop a C++ program that reads a text file line by line and counts the number of occurrences of a specific word in the file.",
            }
        ],
        [
            {
                "role": "user",
                "content": "Implement a regular expression in Python to validate an email address.",
            }
        ],
        [
            {
                "role": "user",
                "content": "Write a shell script that lists all files in the current directory and sorts them by size.",
            }
        ],
        [
            {
                "role": "user",
                "content": "Write a Python function to find the longest common subsequence of two input strings using dynamic programming.",
            }
        ],
    ]

    try:
        dialogue_template = DialogueTemplate.from_pretrained(args.model_id, revision=args.revision)
    except Exception:
        print("No dialogue template found in model repo. Defaulting to the `no_system` template.")
        dialogue_template = get_dialogue_template("no_system")
    if args.system_prompt is not None:
        dialogue_template.system = args.system_prompt

    formatted_prompts = []
    for prompt in prompts:
        dialogue_template.messages = [prompt] if isinstance(prompt, dict) else prompt
        formatted_prompts.append(dialogue_template.get_inference_prompt())

    print("=== SAMPLE PROMPT ===")
    print(formatted_prompts[0])
    print("=====================")

    tokenizer = AutoTokenizer.from_pretrained(args.model_id, revision=args.revision)
    print(f"Special tokens: {tokenizer.special_tokens_map}")
    print(f"EOS token ID for generation: {tokenizer.convert_tokens_to_ids(dialogue_template.end_token)}")
    generation_config = GenerationConfig(
        temperature=0.2,
        top_k=50,
        top_p=0.95,
        repetition_penalty=1.2,
        do_sample=True,
        pad_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.convert_tokens_to_ids(dialogue_template.end_token),
        min_new_tokens=32,
        max_new_tokens=args.max_new_tokens,
    )
    model = AutoModelForCausalLM.from_pretrained(
        args.model_id,
        revision=args.revision,
        load_in_8bit=args.load_in_8bit,
        device_map="auto" if args.load_in_8bit else None,
        torch_dtype=torch.float16,
    )
    if not args.load_in_8bit:
        model = model.to(args.device)
    model.eval()

    torch.cuda.reset_peak_memory_stats()
    outputs = ""
    for idx, prompt in enumerate(formatted_prompts):
        batch = tokenizer(prompt, return_tensors="pt", return_token_type_ids=False).to(args.device)
        torch.cuda.synchronize()
        start = time.perf_counter()
        generated_ids = model.generate(**batch, generation_config=generation_config)
        torch.cuda.synchronize()  # make sure all kernels finished before stopping the clock
        elapsed = time.perf_counter() - start
        n_new = generated_ids.shape[-1] - batch["input_ids"].shape[-1]
        generated_text = tokenizer.decode(generated_ids[0], skip_special_tokens=False).lstrip()
        outputs += generated_text + "\n\n"
        print(f"=== EXAMPLE {idx} ({n_new / elapsed:.1f} tok/s) ===")
        print()
        print(generated_text)
        print()
        print("======================")
        print()

    print(f"Device: {torch.cuda.get_device_name(0)}")
    print(f"Peak memory allocated: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")

    raw_model_name = args.model_id.split("/")[-1]
    model_name = f"{raw_model_name}-{args.revision}" if args.revision is not None else raw_model_name
    with open(f"data/samples-{model_name}.txt", "w") as f:
        f.write(outputs)


if __name__ == "__main__":
    main()
