"""Knowledge tracing as language modelling: fine-tune a causal LM (LoRA) to answer
"Will the student answer the next question correctly? Yes/No" from a textual interaction history.

    CUDA_VISIBLE_DEVICES=0 python llm_kt/finetune_llm_kt.py --base_model Qwen/Qwen2-1.5B \
        --dataset xes3g5m --max_history 50 --load_in_4bit

Question texts come from the XES3G5M / Eedi question banks (pyKT preprocessing, `questions.json`).
"""
import argparse
import json
import math
import os
import random

import numpy as np
import torch
from datasets import Dataset
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from sklearn.metrics import roc_auc_score, accuracy_score
from transformers import (AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, DataCollatorForSeq2Seq,
                          Trainer, TrainingArguments)

PROMPT = ("You are a tutor tracking a student's knowledge.\n"
          "History of the student's answers (question -> result):\n{history}\n"
          "Next question: {question}\n"
          "Will the student answer the next question correctly? Answer Yes or No.\nAnswer:")


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def load_sequences(path, questions, max_history, max_samples=None):
    """Turn pyKT-format sequences into (prompt, label) pairs, one per predicted interaction."""
    samples = []
    with open(path) as f:
        for line in f:
            seq = json.loads(line)
            qs, rs = seq["questions"], seq["responses"]
            for t in range(1, len(qs)):
                hist = [f"- {questions[str(q)]['content'][:120]} -> {'correct' if r == 1 else 'wrong'}"
                        for q, r in zip(qs[max(0, t - max_history):t], rs[max(0, t - max_history):t])]
                samples.append({
                    "prompt": PROMPT.format(history="\n".join(hist), question=questions[str(qs[t])]["content"][:200]),
                    "label": int(rs[t]),
                })
    random.shuffle(samples)
    return samples[:max_samples] if max_samples else samples


def tokenize_fn(tokenizer, max_len):
    def _fn(ex):
        answer = " Yes" if ex["label"] == 1 else " No"
        prompt_ids = tokenizer(ex["prompt"], truncation=True, max_length=max_len - 4)["input_ids"]
        answer_ids = tokenizer(answer, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        return {
            "input_ids": prompt_ids + answer_ids,
            "attention_mask": [1] * (len(prompt_ids) + len(answer_ids)),
            "labels": [-100] * len(prompt_ids) + answer_ids,
        }
    return _fn


def load_model_and_tokenizer(args):
    tokenizer = AutoTokenizer.from_pretrained(args.base_model, trust_remote_code=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"

    quant_config = None
    if args.load_in_4bit:
        quant_config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                          bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=torch.bfloat16)
    model = AutoModelForCausalLM.from_pretrained(
        args.base_model,
        torch_dtype=torch.bfloat16,
        quantization_config=quant_config,
        attn_implementation="flash_attention_2",
        device_map={"": torch.cuda.current_device()},
        trust_remote_code=True,
    )
    if args.load_in_4bit:
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)
    lora = LoraConfig(r=args.lora_r, lora_alpha=2 * args.lora_r, lora_dropout=0.05, bias="none", task_type="CAUSAL_LM",
                      target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    model = get_peft_model(model, lora)
    model.print_trainable_parameters()
    return model, tokenizer


@torch.no_grad()
def evaluate_auc(model, tokenizer, samples, batch_size=16, max_len=1024):
    """P(correct) = softmax over the logits of the ' Yes' / ' No' tokens at the answer position."""
    model.eval()
    yes_id = tokenizer(" Yes", add_special_tokens=False)["input_ids"][0]
    no_id = tokenizer(" No", add_special_tokens=False)["input_ids"][0]
    probs, labels = [], []
    for i in range(0, len(samples), batch_size):
        batch = samples[i:i + batch_size]
        enc = tokenizer([s["prompt"] for s in batch], return_tensors="pt", padding=True, truncation=True,
                        max_length=max_len).to("cuda")
        logits = model(**enc).logits[:, -1, :]
        two = torch.stack([logits[:, no_id], logits[:, yes_id]], dim=-1).float()
        probs.extend(torch.softmax(two, dim=-1)[:, 1].cpu().tolist())
        labels.extend(s["label"] for s in batch)
    preds = [1 if p >= 0.5 else 0 for p in probs]
    return roc_auc_score(labels, probs), accuracy_score(labels, preds)


def pick_eval_batch_size(max_len, base_model):
    """Rough heuristic: ~1.5 GB of activations per 16 x 1k-token sequences for a 1.5B model in bf16."""
    total_gb = torch.cuda.get_device_properties(0).total_memory / 2**30
    scale = 1.5 if "1.5B" in base_model else (4.0 if "7B" in base_model else 2.5)
    bs = int(16 * (total_gb - 2 * scale * 2) / (1.5 * scale) * 1024 / max_len)
    return max(1, min(bs, 128))


def load_for_eval(adapter_dir, base_model):
    """Reload base model + LoRA adapter for evaluation only (merged, no quantisation)."""
    from peft import PeftModel
    tokenizer = AutoTokenizer.from_pretrained(base_model, trust_remote_code=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    base = AutoModelForCausalLM.from_pretrained(base_model, torch_dtype=torch.bfloat16, device_map="cuda:0",
                                                trust_remote_code=True)
    model = PeftModel.from_pretrained(base, adapter_dir)
    model = model.merge_and_unload()
    return model, tokenizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base_model", type=str, default="Qwen/Qwen2-1.5B")
    parser.add_argument("--dataset", type=str, default="xes3g5m")
    parser.add_argument("--data_dir", type=str, default="data")
    parser.add_argument("--max_history", type=int, default=50)
    parser.add_argument("--max_len", type=int, default=1024)
    parser.add_argument("--max_train_samples", type=int, default=200000)
    parser.add_argument("--load_in_4bit", action="store_true")
    parser.add_argument("--lora_r", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--grad_accum", type=int, default=4)
    parser.add_argument("--output_dir", type=str, default="outputs/llm_kt")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--eval_only", action="store_true", help="skip training, evaluate the adapter in --output_dir")
    args = parser.parse_args()

    set_seed(args.seed)
    ddir = os.path.join(args.data_dir, args.dataset)
    with open(os.path.join(ddir, "questions.json")) as f:
        questions = json.load(f)
    train_samples = load_sequences(os.path.join(ddir, "train.jsonl"), questions, args.max_history, args.max_train_samples)
    test_samples = load_sequences(os.path.join(ddir, "test.jsonl"), questions, args.max_history, 20000)
    print(f"train samples: {len(train_samples)}, test samples: {len(test_samples)}")

    if args.eval_only:
        model, tokenizer = load_for_eval(args.output_dir, args.base_model)
        bs = pick_eval_batch_size(args.max_len, args.base_model)
        auc, acc = evaluate_auc(model, tokenizer, test_samples, batch_size=bs, max_len=args.max_len)
        print(f"[eval_only] test auc {auc:.4f} acc {acc:.4f} (batch size {bs})")
        return

    model, tokenizer = load_model_and_tokenizer(args)
    train_ds = Dataset.from_list(train_samples).map(tokenize_fn(tokenizer, args.max_len),
                                                    remove_columns=["prompt", "label"], num_proc=8)

    training_args = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.batch_size,
        gradient_accumulation_steps=args.grad_accum,
        num_train_epochs=args.epochs,
        learning_rate=args.lr,
        lr_scheduler_type="cosine",
        warmup_ratio=0.03,
        logging_steps=20,
        save_strategy="steps",
        save_steps=1000,
        save_total_limit=2,
        bf16=True,
        tf32=True,
        optim="paged_adamw_8bit" if args.load_in_4bit else "adamw_torch_fused",
        gradient_checkpointing=True,
        dataloader_num_workers=4,
        dataloader_pin_memory=True,
        report_to="wandb",
        seed=args.seed,
    )
    trainer = Trainer(model=model, args=training_args, train_dataset=train_ds,
                      data_collator=DataCollatorForSeq2Seq(tokenizer, padding=True, label_pad_token_id=-100))
    trainer.train()
    trainer.save_model(args.output_dir)
    torch.cuda.empty_cache()

    auc, acc = evaluate_auc(model, tokenizer, test_samples, max_len=args.max_len)
    print(f"test auc {auc:.4f} acc {acc:.4f}")
    with open(os.path.join(args.output_dir, "test_metrics.json"), "w") as f:
        json.dump({"auc": auc, "acc": acc}, f)


if __name__ == "__main__":
    main()
