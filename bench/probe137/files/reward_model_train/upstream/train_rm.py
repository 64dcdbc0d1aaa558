"""Train a scalar reward model on pairwise preference data (chosen vs. rejected).

Launched by scripts/run_rm_deepspeed.sh with the `deepspeed` launcher. The loss is the
Bradley-Terry ranking loss  -log(sigmoid(r_chosen - r_rejected)) computed in one forward
pass over the concatenated [chosen; rejected] batch.
"""
import json
import logging
import math
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import deepspeed
import torch
import torch.nn.functional as F
import transformers
from datasets import load_dataset, load_from_disk
from torch.utils.data import DataLoader
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    HfArgumentParser,
    PreTrainedTokenizerBase,
    Trainer,
    TrainingArguments,
)

logger = logging.getLogger(__name__)


@dataclass
class ScriptArguments:
    model_name_or_path: str = field(default="meta-llama/Llama-2-7b-hf")
    data_path: str = field(default="data/hh_rlhf_pairs")
    max_length: int = field(default=1024)
    margin_loss: bool = field(default=False, metadata={"help": "use the per-pair margin column if present"})
    eval_only: bool = field(default=False)
    eval_batch_size: int = field(default=16)


@dataclass
class RewardDataCollator:
    tokenizer: PreTrainedTokenizerBase
    max_length: int = 1024
    pad_to_multiple_of: Optional[int] = 8

    def __call__(self, features: List[Dict]) -> Dict[str, torch.Tensor]:
        chosen = [f["input_ids_chosen"] for f in features]
        rejected = [f["input_ids_rejected"] for f in features]
        batch = self.tokenizer.pad(
            {"input_ids": chosen + rejected},
            padding=True,
            max_length=self.max_length,
            pad_to_multiple_of=self.pad_to_multiple_of,
            return_tensors="pt",
        )
        out = {
            "input_ids": batch["input_ids"],
            "attention_mask": batch["attention_mask"],
            "return_loss": True,
        }
        if "margin" in features[0]:
            out["margin"] = torch.tensor([f["margin"] for f in features], dtype=torch.float)
        return out


class RewardTrainer(Trainer):
    """Trainer with the pairwise ranking loss; logits of the first half are the chosen responses."""

    def compute_loss(self, model, inputs, return_outputs=False):
        margin = inputs.pop("margin", None)
        inputs.pop("return_loss", None)
        rewards = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"]).logits.squeeze(-1)
        bsz = rewards.size(0) // 2
        r_chosen, r_rejected = rewards[:bsz].float(), rewards[bsz:].float()
        if margin is not None:
            loss = -F.logsigmoid(r_chosen - r_rejected - margin).mean()
        else:
            loss = -F.logsigmoid(r_chosen - r_rejected).mean()
        if return_outputs:
            return loss, {"rewards_chosen": r_chosen, "rewards_rejected": r_rejected}
        return loss

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad():
            loss, logits_dict = self.compute_loss(model, inputs, return_outputs=True)
        if prediction_loss_only:
            return (loss.detach(), None, None)
        logits = torch.stack([logits_dict["rewards_chosen"], logits_dict["rewards_rejected"]], dim=1)
        labels = torch.zeros(logits.shape[0], device=logits.device, dtype=torch.long)
        return loss.detach(), logits, labels


def compute_accuracy(eval_pred) -> Dict[str, float]:
    logits, _ = eval_pred
    chosen, rejected = logits[:, 0], logits[:, 1]
    return {"accuracy": float((chosen > rejected).mean()), "margin": float((chosen - rejected).mean())}


def build_dataset(path: str, tokenizer, max_length: int):
    if os.path.isdir(path):
        raw = load_from_disk(path)
    else:
        raw = load_dataset("json", data_files={"train": path})

    def tokenize(example):
        prompt = example["prompt"]
        c = tokenizer(prompt + example["chosen"] + tokenizer.eos_token, truncation=True, max_length=max_length)
        r = tokenizer(prompt + example["rejected"] + tokenizer.eos_token, truncation=True, max_length=max_length)
        return {"input_ids_chosen": c["input_ids"], "input_ids_rejected": r["input_ids"]}

    cols = raw["train"].column_names
    keep = [c for c in cols if c == "margin"]
    tokenized = raw.map(tokenize, remove_columns=[c for c in cols if c not in keep], num_proc=8)
    if "test" not in tokenized:
        tokenized = tokenized["train"].train_test_split(test_size=0.02, seed=42)
    return tokenized["train"], tokenized["test"]


@torch.no_grad()
def standalone_eval(model, dataset, collator, batch_size: int) -> Dict[str, float]:
    """Quick preference accuracy without the Trainer (used with --eval_only on a single GPU)."""
    model.eval()
    loader = DataLoader(dataset, batch_size=batch_size, collate_fn=collator, pin_memory=True, num_workers=2)
    correct, total = 0, 0
    for batch in loader:
        batch.pop("return_loss", None)
        batch.pop("margin", None)
        batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
        rewards = model(**batch).logits.squeeze(-1).float()
        bsz = rewards.size(0) // 2
        correct += (rewards[:bsz] > rewards[bsz:]).sum().item()
        total += bsz
    return {"accuracy": correct / max(total, 1), "n": total}


def main():
    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
    script_args, training_args = parser.parse_args_into_dataclasses()

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    deepspeed.init_distributed(dist_backend="nccl")

    logging.basicConfig(level=logging.INFO if training_args.process_index == 0 else logging.WARN)

    tokenizer = AutoTokenizer.from_pretrained(script_args.model_name_or_path, use_fast=False)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.unk_token or tokenizer.eos_token
    tokenizer.padding_side = "right"

    model = AutoModelForSequenceClassification.from_pretrained(
        script_args.model_name_or_path,
        num_labels=1,
        torch_dtype=torch.bfloat16 if training_args.bf16 else torch.float32,
    )
    model.config.pad_token_id = tokenizer.pad_token_id
    model.config.use_cache = False

    train_ds, eval_ds = build_dataset(script_args.data_path, tokenizer, script_args.max_length)
    collator = RewardDataCollator(tokenizer=tokenizer, max_length=script_args.max_length)

    if script_args.eval_only:
        model.cuda()
        metrics = standalone_eval(model, eval_ds, collator, script_args.eval_batch_size)
        logger.info(f"eval-only: {metrics}")
        with open(os.path.join(training_args.output_dir, "eval_only.json"), "w") as f:
            json.dump(metrics, f)
        return

    training_args.remove_unused_columns = False
    trainer = RewardTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        tokenizer=tokenizer,
        data_collator=collator,
        compute_metrics=compute_accuracy,
    )
    trainer.train()
    trainer.save_model(training_args.output_dir)
    metrics = trainer.evaluate()
    trainer.log_metrics("eval", metrics)
    trainer.save_metrics("eval", metrics)

    if trainer.is_world_process_zero():
        logger.info(
            f"peak memory on rank0: {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB, "
            f"eval accuracy {metrics.get('eval_accuracy', math.nan):.4f}"
        )


if __name__ == "__main__":
    main()
