"""Few-shot fine-tuning of a causal LM on serialized tabular rows (TabLLM-style).

Every row is serialized with the "text template" ("The age is 39. The workclass is
State-gov. ...") followed by the question and the answer choices; the model is trained
with LoRA to generate the correct answer and evaluated by comparing the
log-likelihood of each answer choice.

    accelerate launch --num_processes 4 tabllm/finetune_llm.py \
        --dataset income --num-shots 64 --model meta-llama/Llama-2-7b-hf
"""
import argparse
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from datasets import Dataset, load_from_disk
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from sklearn.metrics import roc_auc_score
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    BitsAndBytesConfig,
    DataCollatorForSeq2Seq,
    Trainer,
    TrainingArguments,
    set_seed,
)

TEMPLATES = {
    "income": ("Does this person earn more than 50000 dollars per year? Yes or no?", ["no", "yes"]),
    "heart": ("Does the coronary angiography of this patient show a heart disease? Yes or no?", ["no", "yes"]),
    "diabetes": ("Does this patient have diabetes? Yes or no?", ["no", "yes"]),
    "bank": ("Does this client subscribe to a term deposit? Yes or no?", ["no", "yes"]),
}


@dataclass
class Example:
    text: str
    label: int


def serialize_row(row: dict) -> str:
    return " ".join(f"The {k.replace('_', ' ')} is {v}." for k, v in row.items() if v is not None and v == v)


def build_prompt(row: dict, dataset: str) -> str:
    question, _ = TEMPLATES[dataset]
    return f"{serialize_row(row)}\n{question}\nAnswer:"


def load_split(data_dir: Path, dataset: str, num_shots: int, seed: int):
    ds = load_from_disk(str(data_dir / dataset))
    ds = ds.shuffle(seed=seed)
    train = ds.select(range(num_shots))
    test = ds.select(range(num_shots, len(ds)))
    return train, test


def tokenize_fn(tokenizer, dataset_name, max_len):
    _, choices = TEMPLATES[dataset_name]

    def fn(batch):
        prompts = [build_prompt({k: batch[k][i] for k in batch if k != "label"}, dataset_name) for i in range(len(batch["label"]))]
        answers = [" " + choices[l] for l in batch["label"]]
        enc = tokenizer([p + a for p, a in zip(prompts, answers)], truncation=True, max_length=max_len)
        prompt_lens = [len(tokenizer(p)["input_ids"]) for p in prompts]
        enc["labels"] = [
            [-100] * pl + ids[pl:] for ids, pl in zip(enc["input_ids"], prompt_lens)
        ]
        return enc

    return fn


@torch.no_grad()
def score_choices(model, tokenizer, rows, dataset_name, batch_size=16):
    """Returns P(yes) for each row from the length-normalized answer log-likelihoods."""
    _, choices = TEMPLATES[dataset_name]
    model.eval()
    probs = []
    for i in range(0, len(rows), batch_size):
        chunk = rows[i : i + batch_size]
        prompts = [build_prompt(r, dataset_name) for r in chunk]
        scores = []
        for choice in choices:
            enc = tokenizer([p + " " + choice for p in prompts], return_tensors="pt", padding=True).to("cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(**enc).logits
            logp = torch.log_softmax(logits.float(), -1)
            choice_len = len(tokenizer(" " + choice, add_special_tokens=False)["input_ids"])
            tgt = enc["input_ids"][:, -choice_len:]
            lp = logp[:, -choice_len - 1 : -1].gather(-1, tgt[..., None]).squeeze(-1).mean(-1)
            scores.append(lp)
        scores = torch.stack(scores, -1)
        probs.append(torch.softmax(scores, -1)[:, 1].cpu())
    return torch.cat(probs).numpy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="income", choices=list(TEMPLATES))
    ap.add_argument("--data-dir", type=Path, default=Path("datasets_serialized"))
    ap.add_argument("--model", default="meta-llama/Llama-2-7b-hf")
    ap.add_argument("--num-shots", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--load-in-8bit", action="store_true")
    ap.add_argument("--max-len", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--output-dir", default="outputs/tabllm")
    args = ap.parse_args()

    set_seed(args.seed)
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"

    quant_config = BitsAndBytesConfig(load_in_8bit=True) if args.load_in_8bit else None
    model = AutoModelForCausalLM.from_pretrained(
        args.model,
        torch_dtype=torch.bfloat16,
        quantization_config=quant_config,
        attn_implementation="flash_attention_2",
        device_map={"": f"cuda:{local_rank}"},
    )
    if args.load_in_8bit:
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)
    lora = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"], task_type="CAUSAL_LM")
    model = get_peft_model(model, lora)
    model.print_trainable_parameters()

    train_ds, test_ds = load_split(args.data_dir, args.dataset, args.num_shots, args.seed)
    train_tok = train_ds.map(tokenize_fn(tokenizer, args.dataset, args.max_len), batched=True, remove_columns=train_ds.column_names)

    steps_per_epoch = max(1, math.ceil(len(train_tok) / (4 * int(os.environ.get("WORLD_SIZE", 1)))))
    training_args = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=4,
        gradient_accumulation_steps=1,
        num_train_epochs=args.epochs,
        learning_rate=args.lr,
        lr_scheduler_type="constant_with_warmup",
        warmup_steps=min(10, steps_per_epoch),
        bf16=True,
        tf32=True,
        optim="adamw_torch_fused",
        logging_steps=10,
        save_strategy="no",
        report_to="none",
        ddp_backend="nccl",
        ddp_find_unused_parameters=False,
        dataloader_pin_memory=True,
        gradient_checkpointing=True,
        seed=args.seed,
    )
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_tok,
        data_collator=DataCollatorForSeq2Seq(tokenizer, padding=True, label_pad_token_id=-100),
    )
    trainer.train()

    if trainer.is_world_process_zero():
        rows = [{k: v for k, v in r.items() if k != "label"} for r in test_ds]
        p_yes = score_choices(model, tokenizer, rows, args.dataset)
        auc = roc_auc_score(np.array(test_ds["label"]), p_yes)
        print(f"{args.dataset} {args.num_shots}-shot ROC AUC: {auc:.4f}")
        os.makedirs(args.output_dir, exist_ok=True)
        with open(os.path.join(args.output_dir, f"{args.dataset}_{args.num_shots}_{args.seed}.json"), "w") as f:
            json.dump({"auc": auc, "num_shots": args.num_shots, "model": args.model,
                       "peak_mem_gb": torch.cuda.max_memory_allocated() / 1e9}, f)


if __name__ == "__main__":
    main()
