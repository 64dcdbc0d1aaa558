# accelerate launch --num_processes 8 --config_file accelerate_configs/deepspeed_inference.yaml --main_process_port 6000 eval_needle.py \
#     --model PY007/EasyContext-1M-Llama-2-7B --max_context_length 1000000 --min_context_length 50000 \
#     --context_interval 50000 --depth_interval 0.1 --num_samples 2 --rnd_number_digits 7 --haystack_dir PaulGrahamEssays
import argparse
import gc
import glob
import math
import os
import random
import sys
import warnings

import numpy as np
import torch
from accelerate import Accelerator
from tqdm import tqdm
from transformers import AutoTokenizer, LlamaForCausalLM

from easy_context import apply_seq_parallel_monkey_patch, prepare_seq_parallel_inputs

apply_seq_parallel_monkey_patch("zigzag_ring_attn", "llama")

SEED = 24242424
torch.manual_seed(SEED)
random.seed(SEED)
np.random.seed(SEED)

PROMPT_PREFIX = (
    "You are a helpful assistant. There is a pass key hidden inside a lot of irrelevant text. "
    "Find the pass key and memorize it. I will quiz you about the pass key.\n"
)
NEEDLE_FORMAT = "\nThe pass key is {}. Remember it. {} is the pass key.\n"
QUESTION_STR = "\nWhat is the pass key? The pass key is"


def read_file(file):
    with open(file, "r") as f:
        return f.read()


def load_haystack(args, tokenizer):
    haystack = ""
    for file in sorted(glob.glob(f"{args.haystack_dir}/*.txt")):
        haystack += read_file(file)
        if len(haystack) > args.max_context_length * 6:
            break
    return tokenizer.encode(haystack, add_special_tokens=False)


def construct_prompt(haystack_ids, tokenizer, context_length, depth, needle_number):
    prefix_ids = tokenizer.encode(PROMPT_PREFIX, add_special_tokens=True)
    needle_ids = tokenizer.encode(
        NEEDLE_FORMAT.format(needle_number, needle_number), add_special_tokens=False
    )
    question_ids = tokenizer.encode(QUESTION_STR, add_special_tokens=False)

    budget = context_length - len(prefix_ids) - len(needle_ids) - len(question_ids)
    context = haystack_ids[:budget]
    insert_at = int(len(context) * depth)
    ids = prefix_ids + context[:insert_at] + needle_ids + context[insert_at:] + question_ids
    return torch.tensor(ids, dtype=torch.long).unsqueeze(0)


def eval_forward(accelerator, model, tokenizer, input_ids, pad_id, answer_ids):
    # first append labels to input_ids
    prompt_length = input_ids.shape[1]
    labels_length = answer_ids.shape[1]
    input_ids = torch.cat([input_ids, answer_ids], dim=1)
    # second pad input_ids to the multiple of accelerator.num_processes
    pad_tensor = torch.tensor(
        [pad_id]
        * (
            (accelerator.num_processes * 2)
            - input_ids.shape[1] % (accelerator.num_processes * 2)
        )
    ).unsqueeze(0)
    input_ids = torch.cat([input_ids, pad_tensor], dim=1)
    position_ids = (
        torch.arange(input_ids.shape[1]).unsqueeze(0).expand(input_ids.shape[0], -1)
    )
    prepared = prepare_seq_parallel_inputs(
        "zigzag_ring_attn",
        input_ids,
        position_ids,
        None,
        accelerator.process_index,
        accelerator.num_processes,
        accelerator.device,
    )
    local_input_ids = prepared["local_input_ids"]
    local_position_ids = prepared["local_position_ids"]
    with torch.inference_mode():
        logits = model(
            local_input_ids,
            position_ids=local_position_ids,
            use_cache=False,
        ).logits
        pred = logits.argmax(dim=-1)

    # gather all logits using accelerator.gather
    def undo_extract_local(gathered_value, world_size, dim=1):
        value_chunks = gathered_value.chunk(2 * world_size, dim=dim)
        reordered_chunks = [None] * (2 * world_size)
        for i in range(world_size):
            reordered_chunks[i] = value_chunks[i * 2]
            reordered_chunks[2 * world_size - i - 1] = value_chunks[i * 2 + 1]
        return torch.cat(reordered_chunks, dim=dim)

    correct = False

    gathered_logits = accelerator.gather(pred.squeeze(0)).unsqueeze(0)
    # undo extract local on the gathered logits
    pred = undo_extract_local(gathered_logits, accelerator.num_processes)
    pred = pred[:, prompt_length - 1 : prompt_length + labels_length - 1]
    # check if the logits are correct, extract argmax id
    # compare the predicted_ids with the labels
    correct = (pred == answer_ids.to(accelerator.device)).all()
    if accelerator.is_main_process:
        print(
            "Predicted: ",
            tokenizer.decode(pred.squeeze().tolist()),
            "Answer: ",
            tokenizer.decode(answer_ids.squeeze().tolist()),
        )
        # print id as well
        print(
            "Predicted: ",
            pred.squeeze().tolist(),
            "Answer: ",
            answer_ids.squeeze().tolist(),
        )
    return int(correct)


def plot_heatmap(all_accuries, model_name, out_dir):
    import matplotlib.pyplot as plt
    import pandas as pd
    import seaborn as sns
    from matplotlib.colors import LinearSegmentedColormap

    df = pd.DataFrame(all_accuries)
    cmap = LinearSegmentedColormap.from_list(
        "custom_cmap", ["#F0496E", "#EBB839", "#9ad5b3"]
    )
    pivot_table = pd.pivot_table(
        df,
        values="Score",
        index=["Document Depth", "Context Length"],
        aggfunc="mean",
    ).reset_index()  # This will aggregate
    pivot_table = pivot_table.pivot(
        index="Document Depth", columns="Context Length", values="Score"
    )
    plt.figure(figsize=(17.5, 8))  # Can adjust these dimensions as needed
    sns.heatmap(pivot_table, vmin=0, vmax=1, cmap=cmap, cbar_kws={"label": "Score"})
    plt.xlabel("Token Limit")
    plt.ylabel("Depth Percent")
    plt.title(f"{model_name} needle-in-a-haystack")
    plt.xticks(rotation=45)
    plt.yticks(rotation=0)
    plt.tight_layout()
    plt.savefig(os.path.join(out_dir, "heatmap.png"))


def main(args):
    accelerator = Accelerator(
        mixed_precision="bf16",
    )
    model = LlamaForCausalLM.from_pretrained(
        args.model,
        torch_dtype=torch.bfloat16,
        _attn_implementation="flash_attention_2",
    ).to(accelerator.device)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    pad_id = tokenizer.eos_token_id if tokenizer.pad_token_id is None else tokenizer.pad_token_id

    haystack_ids = load_haystack(args, tokenizer)
    model = accelerator.prepare(model)
    model.eval()

    all_accuries = []
    accelerator.print("Starting evaluation")
    for context_length in tqdm(
        range(args.min_context_length, args.max_context_length + 1, args.context_interval),
        disable=not accelerator.is_main_process,
    ):
        depth_percents = np.arange(0.0, 1.0 + 1e-6, args.depth_interval)
        for depth in depth_percents:
            correct_count = 0
            for _ in range(args.num_samples):
                needle_number = random.randint(
                    10 ** (args.rnd_number_digits - 1), 10**args.rnd_number_digits - 1
                )
                input_ids = construct_prompt(
                    haystack_ids, tokenizer, context_length, depth, needle_number
                )
                answer_ids = torch.tensor(
                    tokenizer.encode(f" {needle_number}", add_special_tokens=False)
                ).unsqueeze(0)
                correct_count += eval_forward(
                    accelerator, model, tokenizer, input_ids, pad_id, answer_ids
                )
                gc.collect()
                torch.cuda.empty_cache()
            result = {
                "Context Length": context_length,
                "Document Depth": round(depth * 100, -1),
                "Score": correct_count / args.num_samples,
            }
            all_accuries.append(result)
        accelerator.print(
            f"ctx {context_length}: peak mem {torch.cuda.max_memory_allocated() / 1e9:.1f} GB"
        )

    if accelerator.is_main_process:
        model_name = args.model.split("/")[-1]
        out_dir = f"data/heatmap/{model_name}"
        os.makedirs(out_dir, exist_ok=True)
        plot_heatmap(all_accuries, model_name, out_dir)
        with open(os.path.join(out_dir, "results.txt"), "w") as f:
            for r in all_accuries:
                f.write(f"{r}\n")


if __name__ == "__main__":
    args = argparse.ArgumentParser()
    args.add_argument("--model", type=str, required=True)
    args.add_argument("--max_context_length", type=int, default=1_000_000)
    args.add_argument("--min_context_length", type=int, default=100_000)
    args.add_argument("--context_interval", type=int, default=100_000)
    args.add_argument("--depth_interval", type=float, default=0.1)
    args.add_argument("--num_samples", type=int, default=1)
    args.add_argument("--rnd_number_digits", type=int, default=7)
    args.add_argument("--haystack_dir", type=str, default="PaulGrahamEssays")
    main(args.parse_args())
