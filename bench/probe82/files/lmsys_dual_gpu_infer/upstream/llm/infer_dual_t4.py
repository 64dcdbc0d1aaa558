"""LMSYS - Chatbot Arena: inference kernel for the Gemma-2-9b QLoRA classifier on 2 x T4.

The 4-bit model (~6 GB) fits on one T4, so instead of splitting layers across the GPUs we load
one full copy per GPU and run the two halves of the test set concurrently in two threads (the
CUDA kernels release the GIL). TTA: the same pair with response_a / response_b swapped, whose
a/b probabilities are swapped back and averaged.
"""
import gc
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
import sklearn
import torch
from peft import PeftModel
from transformers import AutoTokenizer, BitsAndBytesConfig, Gemma2ForSequenceClassification
from transformers.data.data_collator import pad_without_fast_tokenizer_warning

assert torch.cuda.device_count() == 2, "this kernel expects the 2 x T4 accelerator"


@dataclass
class Config:
    gemma_dir = "/kaggle/input/gemma-2/transformers/gemma-2-9b-it-4bit/1/gemma-2-9b-it-4bit"
    lora_dir = "/kaggle/input/lmsys-gemma2-9b-qlora-fold0/checkpoint-5748"
    max_length = 2048
    batch_size = 4
    tta = True
    spread_max_length = False


cfg = Config()
test = pd.read_csv("/kaggle/input/lmsys-chatbot-arena/test.csv")


def process_text(text):
    return " ".join(eval(text, {"null": ""}))


test.loc[:, "prompt"] = test["prompt"].apply(process_text)
test.loc[:, "response_a"] = test["response_a"].apply(process_text)
test.loc[:, "response_b"] = test["response_b"].apply(process_text)


def tokenize(tokenizer, prompts, resp_a, resp_b, max_length=cfg.max_length, spread_max_length=False):
    """Build "<prompt>: ... <response_a>: ... <response_b>: ..." sequences (same format as training)."""
    parts = (
        ["<prompt>: " + p for p in prompts],
        ["\n\n<response_a>: " + r for r in resp_a],
        ["\n\n<response_b>: " + r for r in resp_b],
    )
    if spread_max_length:
        # give each of the three segments an equal share of the budget
        ids = [tokenizer(seg, max_length=max_length // 3, truncation=True, padding=False).input_ids for seg in parts]
        input_ids = [a + b + c for a, b, c in zip(*ids)]
        attention_mask = [[1] * len(x) for x in input_ids]
        return input_ids, attention_mask
    texts = ["".join(t) for t in zip(*parts)]
    enc = tokenizer(texts, max_length=max_length, truncation=True, padding=False)
    return enc.input_ids, enc.attention_mask


tokenizer = AutoTokenizer.from_pretrained(cfg.gemma_dir)
tokenizer.add_eos_token = True
tokenizer.padding_side = "right"

data = pd.DataFrame()
data["id"] = test["id"]
data["input_ids"], data["attention_mask"] = tokenize(tokenizer, test["prompt"], test["response_a"], test["response_b"])
data["length"] = data["input_ids"].apply(len)

aug_data = pd.DataFrame()
aug_data["id"] = test["id"]
# swap response_a & response_b
aug_data["input_ids"], aug_data["attention_mask"] = tokenize(tokenizer, test["prompt"], test["response_b"], test["response_a"])
aug_data["length"] = aug_data["input_ids"].apply(len)


def load_model(device):
    model = Gemma2ForSequenceClassification.from_pretrained(
        cfg.gemma_dir,
        device_map=device,
        use_cache=False,
    )
    model = PeftModel.from_pretrained(model, cfg.lora_dir)
    model.eval()
    return model


# Load base model on GPU 0 and GPU 1
device_0 = torch.device("cuda:0")
device_1 = torch.device("cuda:1")
model_0 = load_model(device_0)
model_1 = load_model(device_1)


@torch.no_grad()
@torch.cuda.amp.autocast()
def inference(df, model, device, batch_size=cfg.batch_size, max_length=cfg.max_length):
    a_win, b_win, tie = [], [], []
    for start_idx in range(0, len(df), batch_size):
        end_idx = min(start_idx + batch_size, len(df))
        tmp = df.iloc[start_idx:end_idx]
        input_ids = tmp["input_ids"].to_list()
        attention_mask = tmp["attention_mask"].to_list()
        inputs = pad_without_fast_tokenizer_warning(
            tokenizer,
            {"input_ids": input_ids, "attention_mask": attention_mask},
            padding="longest",
            pad_to_multiple_of=None,
            return_tensors="pt",
        )
        outputs = model(**inputs.to(device))
        proba = outputs.logits.softmax(-1).cpu()
        a_win.extend(proba[:, 0].tolist())
        b_win.extend(proba[:, 1].tolist())
        tie.extend(proba[:, 2].tolist())
    df["winner_model_a"] = a_win
    df["winner_model_b"] = b_win
    df["winner_tie"] = tie
    return df


def run_parallel(frame):
    # sort by length so that each batch pads little; alternate rows between the two GPUs
    frame = frame.sort_values("length", ascending=False)
    sub_1 = frame.iloc[0::2].copy()
    sub_2 = frame.iloc[1::2].copy()
    with ThreadPoolExecutor(max_workers=2) as executor:
        results = executor.map(inference, (sub_1, sub_2), (model_0, model_1), (device_0, device_1))
    return pd.concat(list(results), axis=0)


st = time.time()
result_df = run_parallel(data)
proba = result_df[["winner_model_a", "winner_model_b", "winner_tie"]].values
print(f"elapsed time: {time.time() - st:.1f}s")

if cfg.tta:
    st = time.time()
    tta_result_df = run_parallel(aug_data)
    # recall TTA's order is flipped
    tta_proba = tta_result_df[["winner_model_b", "winner_model_a", "winner_tie"]].values
    # average original result and TTA result
    proba = (proba + tta_proba) / 2
    print(f"TTA elapsed time: {time.time() - st:.1f}s")

result_df.loc[:, "winner_model_a"] = proba[:, 0]
result_df.loc[:, "winner_model_b"] = proba[:, 1]
result_df.loc[:, "winner_tie"] = proba[:, 2]
submission_df = result_df[["id", "winner_model_a", "winner_model_b", "winner_tie"]]
submission_df.to_csv("submission.csv", index=False)
print(submission_df.head())

del model_0, model_1
gc.collect()
torch.cuda.empty_cache()
