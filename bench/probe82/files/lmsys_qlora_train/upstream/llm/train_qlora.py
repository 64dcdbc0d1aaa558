"""LMSYS - Chatbot Arena Human Preference Predictions: QLoRA fine-tune of Gemma-2-9b as a
3-way sequence classifier (winner_model_a / winner_model_b / winner_tie).

    torchrun --nproc_per_node=2 llm/train_qlora.py --model google/gemma-2-9b-it --fold 0
"""
import argparse
import os
from dataclasses import dataclass

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import numpy as np
import pandas as pd
import torch
from datasets import Dataset
from peft import LoraConfig, TaskType, get_peft_model, prepare_model_for_kbit_training
from sklearn.metrics import accuracy_score, log_loss
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    BitsAndBytesConfig,
    DataCollatorWithPadding,
    Trainer,
    TrainingArguments,
)


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="google/gemma-2-9b-it")
    p.add_argument("--data", default="../input/lmsys-chatbot-arena/train_folds.csv")
    p.add_argument("--extra", default="../input/lmsys-33k-deduplicated/lmsys-33k-deduplicated.csv")
    p.add_argument("--fold", type=int, default=0)
    p.add_argument("--max-length", type=int, default=2048)
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--per-device-bs", type=int, default=4)
    p.add_argument("--grad-accum", type=int, default=2)
    p.add_argument("--out", default="outputs/gemma2_9b_qlora")
    return p.parse_args()


@dataclass
class Formatter:
    tokenizer: AutoTokenizer
    max_length: int

    @staticmethod
    def _join(turns):
        turns = eval(turns, {"null": ""})
        return "\n".join(t if isinstance(t, str) else "" for t in turns)

    def __call__(self, batch):
        prompts = ["<prompt>: " + self._join(p) for p in batch["prompt"]]
        resp_a = ["\n\n<response_a>: " + self._join(r) for r in batch["response_a"]]
        resp_b = ["\n\n<response_b>: " + self._join(r) for r in batch["response_b"]]
        texts = [p + a + b for p, a, b in zip(prompts, resp_a, resp_b)]
        enc = self.tokenizer(texts, max_length=self.max_length, truncation=True)
        labels = []
        for a_win, b_win in zip(batch["winner_model_a"], batch["winner_model_b"]):
            labels.append(0 if a_win else 1 if b_win else 2)
        return {**enc, "labels": labels}


def compute_metrics(eval_preds):
    logits, labels = eval_preds
    probs = torch.from_numpy(logits).float().softmax(-1).numpy()
    return {"acc": accuracy_score(labels, probs.argmax(-1)), "log_loss": log_loss(labels, probs, labels=[0, 1, 2])}


def main():
    args = get_args()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    compute_dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.padding_side = "right"
    tokenizer.add_eos_token = True

    df = pd.read_csv(args.data)
    trn = df[df.fold != args.fold]
    if args.extra and os.path.exists(args.extra):
        trn = pd.concat([trn, pd.read_csv(args.extra)], ignore_index=True)
    val = df[df.fold == args.fold]
    fmt = Formatter(tokenizer, args.max_length)
    cols = ["prompt", "response_a", "response_b", "winner_model_a", "winner_model_b"]
    trn_ds = Dataset.from_pandas(trn[cols].reset_index(drop=True)).map(fmt, batched=True, remove_columns=cols)
    val_ds = Dataset.from_pandas(val[cols].reset_index(drop=True)).map(fmt, batched=True, remove_columns=cols)

    bnb_config = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=compute_dtype,
    )
    model = AutoModelForSequenceClassification.from_pretrained(
        args.model,
        num_labels=3,
        torch_dtype=compute_dtype,
        quantization_config=bnb_config,
        attn_implementation="flash_attention_2",
        device_map={"": local_rank},
    )
    model.config.pad_token_id = tokenizer.pad_token_id
    model.config.use_cache = False
    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True,
                                            gradient_checkpointing_kwargs={"use_reentrant": False})
    lora = LoraConfig(
        r=args.lora_r,
        lora_alpha=args.lora_r * 2,
        lora_dropout=0.05,
        bias="none",
        task_type=TaskType.SEQ_CLS,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        layers_to_transform=[i for i in range(42) if i >= 8],
    )
    model = get_peft_model(model, lora)
    if local_rank == 0:
        model.print_trainable_parameters()

    targs = TrainingArguments(
        output_dir=args.out,
        overwrite_output_dir=True,
        report_to="none",
        num_train_epochs=args.epochs,
        per_device_train_batch_size=args.per_device_bs,
        per_device_eval_batch_size=args.per_device_bs * 2,
        gradient_accumulation_steps=args.grad_accum,
        learning_rate=args.lr,
        warmup_steps=20,
        lr_scheduler_type="linear",
        optim="paged_adamw_8bit",
        bf16=compute_dtype == torch.bfloat16,
        fp16=compute_dtype == torch.float16,
        tf32=True,
        logging_steps=10,
        eval_strategy="steps",
        eval_steps=200,
        save_strategy="steps",
        save_steps=200,
        save_total_limit=2,
        ddp_find_unused_parameters=False,
        group_by_length=True,
        dataloader_num_workers=4,
    )
    trainer = Trainer(
        model=model,
        args=targs,
        train_dataset=trn_ds,
        eval_dataset=val_ds,
        tokenizer=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer, pad_to_multiple_of=16),
        compute_metrics=compute_metrics,
    )
    trainer.train()
    if trainer.is_world_process_zero():
        model.save_pretrained(os.path.join(args.out, "final"))
        tokenizer.save_pretrained(os.path.join(args.out, "final"))
        preds = trainer.predict(val_ds)
        logits = preds.predictions
        np.save(os.path.join(args.out, f"oof_fold{args.fold}.npy"), logits)
        print(compute_metrics((logits, preds.label_ids)))
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
