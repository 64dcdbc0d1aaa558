# coding=utf-8
# Copyright 2023 Authors of "A Watermark for Large Language Models"
# available at https://arxiv.org/abs/2301.10226
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
"""Large-scale generation pipeline for the watermark reliability experiments.

Streams prompts out of an HF dataset, generates with and without the watermark and
dumps everything to a jsonl file that the evaluation pipeline picks up later.
"""

import os
import sys
import time
import json
import argparse
from functools import partial

from tqdm import tqdm
import wandb
import torch
from datasets import load_dataset, Dataset
from transformers import (
    AutoTokenizer,
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    LogitsProcessorList,
    DataCollatorWithPadding,
)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from extended_watermark_processor import WatermarkLogitsProcessor  # noqa: E402

MAX_GENERATIONS = int(10_000)  # Hardcoded max length to avoid infinite loop
SEQ2SEQ_MODEL_TYPES = ["t5", "T0"]
DECODER_ONLY_MODEL_TYPES = ["gpt", "opt", "bloom", "llama", "pythia"]


def str2bool(v):
    if isinstance(v, bool):
        return v
    return v.lower() in ("yes", "true", "t", "y", "1")


def parse_args():
    parser = argparse.ArgumentParser(description="Run watermarked huggingface LM generation pipeline")
    parser.add_argument("--model_name_or_path", type=str, default="facebook/opt-1.3b")
    parser.add_argument("--load_fp16", type=str2bool, default=False, help="Load the model in fp16 (half precision).")
    parser.add_argument("--load_bf16", type=str2bool, default=False, help="Load the model in bfloat16.")
    parser.add_argument("--use_gpu", type=str2bool, default=True, help="Whether to run inference and watermark hashing on gpu.")
    parser.add_argument("--dataset_name", type=str, default="c4")
    parser.add_argument("--dataset_config_name", type=str, default="realnewslike")
    parser.add_argument("--dataset_split", type=str, default="train")
    parser.add_argument("--stream_dataset", type=str2bool, default=True)
    parser.add_argument("--columns_to_remove", type=str, default=None)
    parser.add_argument("--shuffle_dataset", type=str2bool, default=False)
    parser.add_argument("--shuffle_seed", type=int, default=1234)
    parser.add_argument("--shuffle_buffer_size", type=int, default=10_000)
    parser.add_argument("--max_new_tokens", type=int, default=200)
    parser.add_argument("--min_prompt_tokens", type=int, default=50)
    parser.add_argument("--min_generations", type=int, default=500)
    parser.add_argument("--input_truncation_strategy", type=str, default="completion_length", choices=["no_truncation", "completion_length", "prompt_length"])
    parser.add_argument("--input_filtering_strategy", type=str, default="completion_length", choices=["no_filter", "completion_length", "prompt_length", "prompt_and_completion_length"])
    parser.add_argument("--output_filtering_strategy", type=str, default="no_filter", choices=["no_filter", "max_new_tokens"])
    parser.add_argument("--use_sampling", type=str2bool, default=True)
    parser.add_argument("--sampling_temp", type=float, default=0.7)
    parser.add_argument("--num_beams", type=int, default=1)
    parser.add_argument("--generation_seed", type=int, default=None)
    parser.add_argument("--generation_batch_size", type=int, default=4)
    parser.add_argument("--seeding_scheme", type=str, default="selfhash")
    parser.add_argument("--gamma", type=float, default=0.25)
    parser.add_argument("--delta", type=float, default=2.0)
    parser.add_argument("--store_spike_ents", type=str2bool, default=True)
    parser.add_argument("--verbose", type=str2bool, default=False)
    parser.add_argument("--output_dir", type=str, default="./output")
    parser.add_argument("--overwrite", type=str2bool, default=False)
    parser.add_argument("--wandb", type=str2bool, default=False)
    parser.add_argument("--wandb_project", type=str, default="lm-watermarking")
    parser.add_argument("--wandb_entity", type=str, default="jwkirchenbauer")
    parser.add_argument("--run_name", type=str, default=None)
    return parser.parse_args()


def load_model(args):
    """Load and return the model and tokenizer"""
    args.is_seq2seq_model = any([(model_type in args.model_name_or_path) for model_type in SEQ2SEQ_MODEL_TYPES])
    args.is_decoder_only_model = any([(model_type in args.model_name_or_path) for model_type in DECODER_ONLY_MODEL_TYPES])

    dtype_kwargs = {}
    if args.load_fp16:
        dtype_kwargs = dict(torch_dtype=torch.float16)
    elif args.load_bf16:
        dtype_kwargs = dict(torch_dtype=torch.bfloat16)

    if args.use_gpu and torch.cuda.device_count() > 1:
        # shard big checkpoints (llama-65b etc.) over all visible gpus
        model_cls = AutoModelForSeq2SeqLM if args.is_seq2seq_model else AutoModelForCausalLM
        model = model_cls.from_pretrained(args.model_name_or_path, device_map="auto", **dtype_kwargs)
        device = torch.device("cuda")
    else:
        if args.is_seq2seq_model:
            model = AutoModelForSeq2SeqLM.from_pretrained(args.model_name_or_path, **dtype_kwargs)
        elif args.is_decoder_only_model:
            model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, **dtype_kwargs)
        else:
            raise ValueError(f"Unknown model type: {args.model_name_or_path}")
        device = torch.device("cuda" if torch.cuda.is_available() and args.use_gpu else "cpu")
        model = model.to(device)

    model.eval()

    if args.is_decoder_only_model:
        padding_side = "left"
    else:
        raise NotImplementedError("Need to check how to handle padding for seq2seq models when calling generate")

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path, padding_side=padding_side)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token_id = tokenizer.eos_token_id

    args.model_max_length = model.config.max_position_embeddings if hasattr(model.config, "max_position_embeddings") else 2048
    return model, tokenizer, device


def load_hf_dataset(args):
    dataset = load_dataset(
        args.dataset_name,
        args.dataset_config_name,
        split=args.dataset_split,
        streaming=args.stream_dataset,
    )
    if args.dataset_name == "c4":
        args.__dict__.update({"truncate_input_for_prompt": True, "input_col_name": "text"})
    elif args.dataset_name == "lfqa":
        args.__dict__.update({"truncate_input_for_prompt": False, "input_col_name": "prefix", "ref_output_col_name": "gold_completion"})
    elif args.dataset_name == "wikitext":
        args.__dict__.update({"truncate_input_for_prompt": True, "input_col_name": "text"})
    else:
        raise NotImplementedError(f"Dataset {args.dataset_name} not yet supported.")

    if args.shuffle_dataset:
        dataset = dataset.shuffle(seed=args.shuffle_seed, buffer_size=args.shuffle_buffer_size)
    return dataset


def tokenize_and_truncate(example, input_col_name="text", completion_length=None, prompt_length=None, hf_model_name=None, tokenizer=None, truncate_left=False, model_max_length=None):
    """take hf dataset entry and preprocess it for completion by a model"""
    assert hf_model_name is not None, "need model name to know whether to adjust wrt special tokens"
    assert input_col_name in example, f"expects {input_col_name} field to be present"
    # tokenize
    inputs_ids = tokenizer(example[input_col_name], return_tensors="pt")["input_ids"]
    example.update({"untruncated_inputs": inputs_ids})

    if truncate_left:
        # truncate left
        inputs_ids = inputs_ids[:, -model_max_length:]
        if example["untruncated_inputs"].shape != inputs_ids.shape:
            print("Input too long for model! ", "Left truncating under assumption that this is the prompt+output to be scored.")
        example.update({"untruncated_inputs": inputs_ids})

    if (completion_length is not None) and (prompt_length is None):
        # leave at least one token as prefix # FIXME I think plus 1 since 0 is start tok
        slice_length = min(inputs_ids.shape[1] - 1, completion_length)
    elif (prompt_length is not None) and (completion_length is None):
        desired_comp_len = (inputs_ids.shape[1] - 1) - prompt_length
        slice_length = desired_comp_len if desired_comp_len > 0 else 0
    else:
        raise ValueError(("Can only tokenize and truncate based on either the desired prompt length or desired completion length,", f" but got completion_length:{completion_length},prompt_length:{prompt_length}"))

    # truncate
    inputs_ids = inputs_ids[:, : inputs_ids.shape[1] - slice_length]
    # logic depending on special tokens for the model
    if "t5" in hf_model_name or "T0" in hf_model_name:
        inputs_ids[0, -1] = 1
    # else: pass
    example.update({"input_ids": inputs_ids})
    return example


def generate(examples, data_collator=None, generate_without_watermark=None, generate_with_watermark=None, watermark_processor=None, tokenizer=None, device=None, args=None):
    input_ids = collate_batch(input_ids=examples["input_ids"], collator=data_collator).to(device)

    with torch.no_grad():
        if args.generation_seed is not None:
            torch.manual_seed(args.generation_seed)
        output_without_watermark = generate_without_watermark(input_ids=input_ids)

        if args.generation_seed is not None:
            torch.manual_seed(args.generation_seed)
        output_with_watermark = generate_with_watermark(input_ids=input_ids)

    if args.is_decoder_only_model:
        # need to isolate the newly generated tokens
        output_without_watermark = output_without_watermark[:, input_ids.shape[-1]:]
        output_with_watermark = output_with_watermark[:, input_ids.shape[-1]:]

    decoded_output_without_watermark = tokenizer.batch_decode(output_without_watermark, skip_special_tokens=True)
    decoded_output_with_watermark = tokenizer.batch_decode(output_with_watermark, skip_special_tokens=True)
    examples.update(
        {
            "no_wm_output": decoded_output_without_watermark,
            "w_wm_output": decoded_output_with_watermark,
            "no_wm_output_length": (output_without_watermark != tokenizer.pad_token_id).sum(dim=-1).tolist(),
            "w_wm_output_length": (output_with_watermark != tokenizer.pad_token_id).sum(dim=-1).tolist(),
        }
    )

    if watermark_processor.spike_entropies is not None:
        examples["spike_entropies"] = watermark_processor._get_and_clear_stored_spike_ents()
        examples["spike_entropies"] = [ents[:num_toks] for ents, num_toks in zip(examples["spike_entropies"], examples["w_wm_output_length"])]

    return examples


def collate_batch(input_ids=None, collator=None):
    """collate batch of input_ids into a padded batch of tensors"""
    assert input_ids[0].shape[0] == 1 and input_ids[0].shape[1] > 0, "expecting batch dimension of each tensor to be 1"
    # remove batch dimension for each tensor
    input_ids = [x.squeeze(0) for x in input_ids]
    return collator({"input_ids": input_ids})["input_ids"]


def main(args):
    ###########################################################################
    # Start logging
    ###########################################################################
    # storing slurm info to allow auditing logfiles later
    args.SLURM_JOB_ID = os.getenv("SLURM_JOB_ID")
    args.SLURM_ARRAY_JOB_ID = os.getenv("SLURM_ARRAY_JOB_ID")
    args.SLURM_ARRAY_TASK_ID = os.getenv("SLURM_ARRAY_TASK_ID")
    args.gpu_name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"

    if args.wandb:
        # start a new wandb run to track this experiment, will send data to it later
        run = wandb.init(
            # set the wandb project where this run will be logged
            project=args.wandb_project,
            entity=args.wandb_entity,
            name=f"{args.run_name}",
            # track hyperparameters and run metadata
            config=args,
            tags=["generation"],
        )

    ###########################################################################
    # Create the output dir
    ###########################################################################
    print(f"Output dir for this run: {args.output_dir}")
    # notify if exists
    if os.path.exists(args.output_dir):
        print("Output dir for this run already exists!")
        print(f"Contents: {sorted(os.listdir(args.output_dir))}")
    else:
        # create the output dir where run artifacts are stored
        os.makedirs(args.output_dir)

    ###########################################################################
    # Load the dataset
    ###########################################################################
    dataset = load_hf_dataset(args)

    ###########################################################################
    # Instantiate model and tokenizer
    ###########################################################################
    model, tokenizer, device = load_model(args)

    token_kwargs = dict(hf_model_name=args.model_name_or_path, tokenizer=tokenizer, model_max_length=args.model_max_length)
    if args.input_truncation_strategy == "prompt_length":
        token_kwargs.update(dict(min_prompt_tokens=args.min_prompt_tokens))
    elif args.input_truncation_strategy == "completion_length":
        token_kwargs.update(dict(completion_length=args.max_new_tokens))
    tokenize_prompts = partial(tokenize_and_truncate, input_col_name=args.input_col_name, **token_kwargs)

    dataset_w_prompts = dataset.map(tokenize_prompts, batched=False)

    def check_input_lengths(example, min_prompt_len=0, max_new_tokens=None):
        prompt_len = example["input_ids"].shape[1]
        orig_len = example["untruncated_inputs"].shape[1]
        return prompt_len >= min_prompt_len and (orig_len - prompt_len) >= (max_new_tokens or 0)

    dataset_input_len_filtered = dataset_w_prompts.filter(partial(check_input_lengths, min_prompt_len=args.min_prompt_tokens, max_new_tokens=args.max_new_tokens), batched=False)

    ###########################################################################
    # Construct the watermark processor and generation partials
    ###########################################################################
    watermark_processor = WatermarkLogitsProcessor(
        vocab=list(tokenizer.get_vocab().values()),
        gamma=args.gamma,
        delta=args.delta,
        seeding_scheme=args.seeding_scheme,
        store_spike_ents=args.store_spike_ents,
        select_green_tokens=True,
    )

    gen_kwargs = dict(max_new_tokens=args.max_new_tokens)
    if args.use_sampling:
        gen_kwargs.update(dict(do_sample=True, top_k=0, temperature=args.sampling_temp))
    else:
        gen_kwargs.update(dict(num_beams=args.num_beams))

    generate_without_watermark = partial(model.generate, **gen_kwargs)
    generate_with_watermark = partial(model.generate, logits_processor=LogitsProcessorList([watermark_processor]), **gen_kwargs)

    data_collator = DataCollatorWithPadding(tokenizer=tokenizer, padding=True, pad_to_multiple_of=8)

    gen_completions = partial(
        generate,
        data_collator=data_collator,
        generate_without_watermark=generate_without_watermark,
        generate_with_watermark=generate_with_watermark,
        watermark_processor=watermark_processor,
        tokenizer=tokenizer,
        device=device,
        args=args,
    )

    ###########################################################################
    # Main generation loop
    ###########################################################################
    dataset_w_generations = dataset_input_len_filtered.map(gen_completions, batched=True, batch_size=args.generation_batch_size)

    processed_examples = []
    ds_iterator = iter(dataset_w_generations)
    i = 0
    total_steps = 0
    pbar = tqdm(total=args.min_generations)
    torch.cuda.reset_peak_memory_stats()
    start_time = time.time()
    while i < args.min_generations:
        try:
            ex = next(ds_iterator)
            total_steps += 1
        except StopIteration:
            break

        if args.verbose:
            print(f"#" * 80, f"\ngeneration {i}:", f"\n{ex['w_wm_output']}")

        if args.output_filtering_strategy == "max_new_tokens":
            if ex["w_wm_output_length"] < args.max_new_tokens or ex["no_wm_output_length"] < args.max_new_tokens:
                continue

        ex.pop("input_ids")
        ex.pop("untruncated_inputs")
        processed_examples.append(ex)
        i += 1
        pbar.update(1)

        if i % 100 == 0:
            # generations on long prompts fragment the allocator pretty badly
            torch.cuda.empty_cache()

        if total_steps > MAX_GENERATIONS:
            raise RuntimeError(f"Hit max generation limit of {MAX_GENERATIONS} without producing {args.min_generations} usable samples.")
    torch.cuda.synchronize()
    elapsed = time.time() - start_time
    peak_mem_gb = torch.cuda.max_memory_allocated() / 2**30
    pbar.close()

    print(f"Generated {len(processed_examples)} samples in {elapsed:.1f}s ({elapsed / max(1, len(processed_examples)):.2f}s/sample), peak memory {peak_mem_gb:.1f} GB")

    ###########################################################################
    # Save the generations
    ###########################################################################
    gen_table_path = os.path.join(args.output_dir, "gen_table.jsonl")
    with open(gen_table_path, "w") as f:
        for ex in processed_examples:
            f.write(json.dumps({k: v for k, v in ex.items() if not isinstance(v, torch.Tensor)}) + "\n")

    with open(os.path.join(args.output_dir, "gen_table_meta.json"), "w") as f:
        meta = {k: v for k, v in vars(args).items() if isinstance(v, (int, float, str, bool, type(None)))}
        meta.update(dict(elapsed_sec=elapsed, peak_mem_gb=peak_mem_gb))
        json.dump(meta, f, indent=4)

    if args.wandb:
        run.log(dict(num_generations=len(processed_examples), elapsed_sec=elapsed, peak_mem_gb=peak_mem_gb))
        run.finish()


if __name__ == "__main__":
    args = parse_args()
    main(args)
