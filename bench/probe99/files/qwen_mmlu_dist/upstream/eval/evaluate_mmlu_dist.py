"""5-shot MMLU with next-token choice scoring, sharded over GPUs.

    torchrun --nproc_per_node 8 eval/evaluate_mmlu_dist.py \
        --checkpoint-path Qwen/Qwen-7B --eval-data-path data/mmlu/data

Each rank scores a strided slice of every subject; rank 0 gathers and reports.
"""
import argparse
import itertools
import json
import os
import re
from datetime import timedelta

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.generation import GenerationConfig

SUBJECTS = [
    "abstract_algebra", "anatomy", "astronomy", "business_ethics", "clinical_knowledge",
    "college_biology", "college_chemistry", "college_computer_science", "college_mathematics",
    "college_medicine", "college_physics", "computer_security", "conceptual_physics",
    "econometrics", "electrical_engineering", "elementary_mathematics", "formal_logic",
    "global_facts", "high_school_biology", "high_school_chemistry", "high_school_computer_science",
    "high_school_european_history", "high_school_geography", "high_school_government_and_politics",
    "high_school_macroeconomics", "high_school_mathematics", "high_school_microeconomics",
    "high_school_physics", "high_school_psychology", "high_school_statistics",
    "high_school_us_history", "high_school_world_history", "human_aging", "human_sexuality",
    "international_law", "jurisprudence", "logical_fallacies", "machine_learning", "management",
    "marketing", "medical_genetics", "miscellaneous", "moral_disputes", "moral_scenarios",
    "nutrition", "philosophy", "prehistory", "professional_accounting", "professional_law",
    "professional_medicine", "professional_psychology", "public_relations", "security_studies",
    "sociology", "us_foreign_policy", "virology", "world_religions",
]
CHOICES = ["A", "B", "C", "D"]


class InferenceSampler(torch.utils.data.sampler.Sampler):
    """Strided, non-padded sampler so every example is scored exactly once."""

    def __init__(self, size):
        self._size = int(size)
        assert size > 0
        self._rank = dist.get_rank()
        self._world_size = dist.get_world_size()
        self._local_indices = self._get_local_indices(size, self._world_size, self._rank)

    @staticmethod
    def _get_local_indices(total_size, world_size, rank):
        shard_size = total_size // world_size
        left = total_size % world_size
        shard_sizes = [shard_size + int(r < left) for r in range(world_size)]
        begin = sum(shard_sizes[:rank])
        end = min(sum(shard_sizes[: rank + 1]), total_size)
        return range(begin, end)

    def __iter__(self):
        yield from self._local_indices

    def __len__(self):
        return len(self._local_indices)


def format_example(line, include_answer=True):
    example = "Question: " + line["question"]
    for choice in CHOICES:
        example += f'\n{choice}. {line[f"{choice}"]}'
    if include_answer:
        example += "\nAnswer: " + line["answer"] + "\n\n"
    else:
        example += "\nAnswer:"
    return example


def generate_few_shot_prompt(k, subject, dev_df):
    def format_subject(subject):
        return " ".join(subject.split("_"))

    prompt = "The following are multiple choice questions (with answers) about {}.\n\n".format(
        format_subject(subject)
    )
    if k == -1:
        k = dev_df.shape[0]
    for i in range(k):
        prompt += format_example(dev_df.iloc[i, :], include_answer=True)
    return prompt


def get_logits(tokenizer, model, inputs):
    input_ids = tokenizer(inputs, padding="longest")["input_ids"]
    input_ids = torch.tensor(input_ids).cuda()
    tokens = {"input_ids": input_ids}
    attention_mask = input_ids.ne(tokenizer.pad_token_id)
    outputs = model(input_ids, attention_mask=attention_mask)["logits"]
    logits = outputs[:, -1, :]
    log_probs = torch.nn.functional.softmax(logits, dim=-1)
    return log_probs, {"tokens": tokens}


class MMLUDataset(torch.utils.data.Dataset):
    def __init__(self, test_df, dev_df, subject, k=5):
        self.test_df = test_df
        self.few_shot = generate_few_shot_prompt(k, subject, dev_df)

    def __len__(self):
        return len(self.test_df)

    def __getitem__(self, idx):
        row = self.test_df.iloc[idx, :]
        return {
            "idx": idx,
            "prompt": self.few_shot + format_example(row, include_answer=False),
            "answer": row["answer"],
        }


def collate_fn(batches):
    return {
        "idx": [b["idx"] for b in batches],
        "prompt": [b["prompt"] for b in batches],
        "answer": [b["answer"] for b in batches],
    }


@torch.no_grad()
def eval_subject(model, tokenizer, subject, test_df, dev_df, batch_size, choice_ids):
    dataset = MMLUDataset(test_df, dev_df, subject)
    loader = torch.utils.data.DataLoader(
        dataset,
        sampler=InferenceSampler(len(dataset)),
        batch_size=batch_size,
        num_workers=2,
        pin_memory=True,
        drop_last=False,
        collate_fn=collate_fn,
    )
    local = []
    for batch in loader:
        probs, _ = get_logits(tokenizer, model, batch["prompt"])
        choice_probs = probs[:, choice_ids].float().cpu().numpy()
        preds = [CHOICES[i] for i in np.argmax(choice_probs, axis=-1)]
        for idx, pred, ans in zip(batch["idx"], preds, batch["answer"]):
            local.append({"idx": int(idx), "pred": pred, "answer": ans, "correct": pred == ans})

    gathered = [None for _ in range(dist.get_world_size())]
    dist.all_gather_object(gathered, local)
    merged = sorted(itertools.chain.from_iterable(gathered), key=lambda x: x["idx"])
    return merged


def main(args):
    dist.init_process_group(
        backend="nccl",
        world_size=int(os.getenv("WORLD_SIZE", "1")),
        rank=int(os.getenv("RANK", "0")),
        timeout=timedelta(minutes=60),
    )
    torch.cuda.set_device(int(os.getenv("LOCAL_RANK", 0)))
    rank = dist.get_rank()

    tokenizer = AutoTokenizer.from_pretrained(args.checkpoint_path, trust_remote_code=True, padding_side="left")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token_id = tokenizer.eod_id if hasattr(tokenizer, "eod_id") else tokenizer.eos_token_id

    model = AutoModelForCausalLM.from_pretrained(
        args.checkpoint_path,
        trust_remote_code=True,
        torch_dtype=torch.bfloat16,
        use_flash_attn=True,
    ).cuda().eval()
    model.generation_config = GenerationConfig.from_pretrained(args.checkpoint_path, trust_remote_code=True)

    choice_ids = [tokenizer(f" {c}")["input_ids"][-1] for c in CHOICES]

    results = {}
    for subject in tqdm(SUBJECTS, disable=rank != 0):
        dev_df = pd.read_csv(os.path.join(args.eval_data_path, "dev", f"{subject}_dev.csv"),
                             names=["question", "A", "B", "C", "D", "answer"])
        test_df = pd.read_csv(os.path.join(args.eval_data_path, "test", f"{subject}_test.csv"),
                              names=["question", "A", "B", "C", "D", "answer"])
        records = eval_subject(model, tokenizer, subject, test_df, dev_df, args.batch_size, choice_ids)
        if rank == 0:
            results[subject] = float(np.mean([r["correct"] for r in records]))
        dist.barrier()

    if rank == 0:
        avg = float(np.mean(list(results.values())))
        print(f"MMLU 5-shot average: {avg * 100:.2f}")
        os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)
        with open(args.output, "w") as f:
            json.dump({"average": avg, "subjects": results}, f, indent=2)
    dist.barrier()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="MMLU 5-shot evaluation (distributed)")
    parser.add_argument("-c", "--checkpoint-path", type=str, required=True)
    parser.add_argument("-d", "--eval-data-path", type=str, default="data/mmlu/data")
    parser.add_argument("-o", "--output", type=str, default="outs/mmlu_eval_result.json")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    main(args)
