"""LongBench with KV-cache compression, data-parallel over all GPUs of one node.

    torchrun --nproc_per_node 8 run_longbench_ddp.py --method SnapKV --max_capacity_prompts 128 \
        --model_path meta-llama/Meta-Llama-3-8B-Instruct --save_dir results/

Every rank holds a full replica of the model (fits on one 80GB card) and handles a strided shard of
every dataset; predictions are gathered to rank 0 with all_gather_object.
"""
import argparse
import datetime
import json
import logging
import os
import random

import numpy as np
import torch
import torch.distributed as dist
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer

from pyramidkv.monkeypatch import replace_llama, replace_mistral

logger = logging.getLogger(__name__)

os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
os.environ.setdefault("NCCL_DEBUG", "WARN")

datasets = ["narrativeqa", "qasper", "multifieldqa_en", "hotpotqa", "2wikimqa", "musique",
            "gov_report", "qmsum", "multi_news", "trec", "triviaqa", "samsum",
            "passage_count", "passage_retrieval_en", "lcc", "repobench-p"]

dataset2maxlen = {
    "narrativeqa": 128, "qasper": 128, "multifieldqa_en": 64, "hotpotqa": 32, "2wikimqa": 32,
    "musique": 32, "gov_report": 512, "qmsum": 512, "multi_news": 512, "trec": 64, "triviaqa": 32,
    "samsum": 128, "passage_count": 32, "passage_retrieval_en": 32, "lcc": 64, "repobench-p": 64,
}

model2maxlen = {
    "llama2": 3950,
    "llama-2": 3950,
    "llama3": 7950,
    "llama-3": 7950,
    "mistral": 31500,
}


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 1, 0
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(
        backend="nccl",
        timeout=datetime.timedelta(hours=2),
    )
    return rank, world_size, local_rank


def build_chat(prompt, tokenizer, model_path):
    if "instruct" in model_path.lower() or "chat" in model_path.lower():
        messages = [{"role": "user", "content": prompt}]
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return prompt


def load_model(args, local_rank):
    tokenizer = AutoTokenizer.from_pretrained(args.model_path, use_fast=args.use_fast_tokenizer, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(
        args.model_path,
        torch_dtype=torch.float16,
        low_cpu_mem_usage=True,
        device_map={"": f"cuda:{local_rank}"},
        use_cache=args.use_cache,
        attn_implementation=args.attn_implementation,
    )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
        tokenizer.pad_token_id = tokenizer.eos_token_id
    model.eval()
    return model, tokenizer


def configure_compression(model, args):
    if args.method.lower() == "fullkv":
        return
    layers = len(model.model.layers)
    window_sizes = [args.window_size] * layers
    kernel_sizes = [args.kernel_size] * layers
    for i in range(layers):
        model.model.layers[i].self_attn.config.window_size = window_sizes[i]
        model.model.layers[i].self_attn.config.max_capacity_prompt = args.max_capacity_prompts
        model.model.layers[i].self_attn.config.kernel_size = kernel_sizes[i]
        model.model.layers[i].self_attn.config.pooling = args.pooling


@torch.no_grad()
def predict_shard(model, tokenizer, shard, dataset, args, model_max_len, local_rank):
    device = torch.device("cuda", local_rank)
    out = []
    with open(os.path.join("data/LongBench/config", "dataset2prompt.json")) as f:
        prompt_format = json.load(f)[dataset]
    for example in tqdm(shard, desc=f"{dataset}[{local_rank}]", disable=local_rank != 0):
        prompt = prompt_format.format(**example)
        tokenized = tokenizer(prompt, truncation=False, return_tensors="pt").input_ids[0]
        if len(tokenized) > model_max_len:
            half = model_max_len // 2
            prompt = tokenizer.decode(tokenized[:half], skip_special_tokens=True) + \
                tokenizer.decode(tokenized[-half:], skip_special_tokens=True)
        if dataset not in ["trec", "triviaqa", "samsum", "lsht", "lcc", "repobench-p"]:
            prompt = build_chat(prompt, tokenizer, args.model_path)
        inputs = tokenizer(prompt, return_tensors="pt", padding="longest").to(device)
        context_length = inputs.input_ids.shape[-1]
        output = model.generate(
            **inputs,
            output_attentions=args.output_attentions,
            max_new_tokens=dataset2maxlen[dataset],
            num_beams=1,
            do_sample=False,
            temperature=1.0,
            min_length=context_length + 1,
            eos_token_id=[tokenizer.eos_token_id],
        )[0]
        pred = tokenizer.decode(output[context_length:], skip_special_tokens=True)
        out.append({"pred": pred, "answers": example["answers"], "all_classes": example["all_classes"],
                    "length": example["length"], "_id": example.get("_id")})
    return out


def gather_predictions(local_preds, world_size, local_rank):
    if world_size == 1:
        return local_preds
    gathered = [None] * world_size
    # all_gather_object on NCCL stages the pickles on the current CUDA device
    if dist.get_backend() == "nccl":
        torch.cuda.set_device(local_rank)  # already set in setup_distributed, but be explicit
    dist.all_gather_object(gathered, local_preds)
    merged = []
    for part in gathered:
        merged.extend(part)
    return merged


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--model_path", type=str, required=True)
    parser.add_argument("--save_dir", type=str, default="results")
    parser.add_argument("--method", type=str, default="SnapKV",
                        choices=["FullKV", "SnapKV", "PyramidKV", "H2O", "StreamingLLM"])
    parser.add_argument("--max_capacity_prompts", type=int, default=512)
    parser.add_argument("--window_size", type=int, default=32)
    parser.add_argument("--kernel_size", type=int, default=7)
    parser.add_argument("--pooling", type=str, default="maxpool")
    parser.add_argument("--use_fast_tokenizer", type=bool, default=True)
    parser.add_argument("--use_cache", type=bool, default=True)
    parser.add_argument("--output_attentions", action="store_true")
    parser.add_argument("--attn_implementation", type=str, default="flash_attention_2",
                        choices=["flash_attention_2", "sdpa", "eager"])
    parser.add_argument("--datasets", type=str, default=",".join(datasets))
    args = parser.parse_args()

    rank, world_size, local_rank = setup_distributed()
    set_seed(args.seed)
    if rank == 0:
        logger.info(f"world_size={world_size}, devices={torch.cuda.device_count()}, "
                    f"gpu={torch.cuda.get_device_name(local_rank)}")

    if args.method.lower() != "fullkv":
        replace_llama(args.method.lower())
        replace_mistral(args.method.lower())

    model, tokenizer = load_model(args, local_rank)
    configure_compression(model, args)

    model_max_len = next((v for k, v in model2maxlen.items() if k in args.model_path.lower()), 7950)

    from datasets import load_dataset
    for dataset in args.datasets.split(","):
        data = load_dataset("THUDM/LongBench", dataset, split="test")
        shard = [data[i] for i in range(rank, len(data), world_size)]
        local_preds = predict_shard(model, tokenizer, shard, dataset, args, model_max_len, local_rank)
        all_preds = gather_predictions(local_preds, world_size, local_rank)

        if rank == 0:
            save_dir = os.path.join(args.save_dir, os.path.basename(args.model_path.rstrip("/")),
                                    f"{args.method}_{args.max_capacity_prompts}")
            os.makedirs(save_dir, exist_ok=True)
            with open(os.path.join(save_dir, f"{dataset}.json"), "w", encoding="utf-8") as f:
                for p in all_preds:
                    json.dump(p, f, ensure_ascii=False)
                    f.write("\n")
        if world_size > 1:
            dist.barrier()
        torch.cuda.empty_cache()

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
