# Copyright 2023 AllenAI. All rights reserved.
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

# Score chosen/rejected completion pairs with a sequence-classification reward model.
import argparse
import logging
import os
import sys

import numpy as np
import torch
import transformers
from accelerate import Accelerator
from accelerate.logging import get_logger
from datasets import load_dataset
from tqdm import tqdm
from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

# get token from HF_TOKEN env variable, but if it doesn't exist pass none
HF_TOKEN = os.getenv("HF_TOKEN", None)

logger = get_logger(__name__)


def get_args():
    """
    Parse arguments strings model and chat_template
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=str, required=True, help="path to model")
    parser.add_argument("--tokenizer", type=str, default=None, help="path to non-matching tokenizer to model")
    parser.add_argument("--dataset", type=str, default="allenai/reward-bench", help="preference dataset")
    parser.add_argument("--split", type=str, default="filtered")
    parser.add_argument("--trust_remote_code", action="store_true", default=False, help="directly load model instead of pipeline")
    parser.add_argument("--batch_size", type=int, default=64, help="batch size for inference")
    parser.add_argument("--max_length", type=int, default=2048, help="Max length of RM inputs (passed to pipeline)")
    parser.add_argument("--load_in_8bit", action="store_true", default=False, help="load model in 8-bit to save memory (bitsandbytes)")
    parser.add_argument("--torch_dtype", type=str, default="float16", choices=["float16", "bfloat16", "float32", "float64"])
    parser.add_argument("--attn_implementation", type=str, default=None, choices=["eager", "sdpa", "flash_attention_2"])
    parser.add_argument("--debug", action="store_true", help="run on common preference sets instead of our custom eval set")
    parser.add_argument("--output_dir", type=str, default="results/")
    args = parser.parse_args()
    args.torch_dtype = getattr(torch, args.torch_dtype)
    return args


class PairDataset(torch.utils.data.Dataset):
    def __init__(self, ds, tokenizer, max_length):
        self.ds = ds
        self.tokenizer = tokenizer
        self.max_length = max_length

    def __len__(self):
        return len(self.ds)

    def _render(self, prompt, completion):
        messages = [{"role": "user", "content": prompt}, {"role": "assistant", "content": completion}]
        return self.tokenizer.apply_chat_template(messages, tokenize=False)

    def __getitem__(self, i):
        ex = self.ds[i]
        return {
            "id": ex["id"],
            "subset": ex["subset"],
            "chosen": self._render(ex["prompt"], ex["chosen"]),
            "rejected": self._render(ex["prompt"], ex["rejected"]),
        }


def main():
    args = get_args()
    ###############
    # Setup logging
    ###############
    accelerator = Accelerator()
    current_device = accelerator.process_index

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
        handlers=[logging.StreamHandler(sys.stdout)],
    )
    log_level = logging.INFO
    logger.setLevel(log_level)
    transformers.utils.logging.set_verbosity(log_level)
    transformers.utils.logging.enable_default_handler()
    transformers.utils.logging.enable_explicit_format()

    logger.info(f"Running reward model on {args.model} with chat template from tokenizer")
    logger.info(f"Using {torch.cuda.device_count()} GPUs, this is process {current_device}")

    # faster TF32 matmuls on Ampere+
    torch.backends.cuda.matmul.allow_tf32 = True
    if torch.cuda.get_device_capability(current_device)[0] >= 8 and args.torch_dtype == torch.float16:
        logger.info("Ampere or newer GPU detected, switching fp16 -> bf16 for numerical headroom")
        args.torch_dtype = torch.bfloat16

    ############################
    # Load reward model pipeline
    ############################
    tokenizer_path = args.tokenizer if args.tokenizer else args.model
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_path, trust_remote_code=args.trust_remote_code)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    if args.load_in_8bit:
        model_kwargs = {
            "load_in_8bit": True,
            "device_map": {"": current_device},
            "torch_dtype": args.torch_dtype if torch.cuda.is_available() else None,
        }
    else:
        model_kwargs = {
            "device_map": {"": f"cuda:{current_device}"},
            "torch_dtype": args.torch_dtype,
        }
    if args.attn_implementation:
        model_kwargs["attn_implementation"] = args.attn_implementation

    model = AutoModelForSequenceClassification.from_pretrained(
        args.model, trust_remote_code=args.trust_remote_code, token=HF_TOKEN, **model_kwargs
    )
    model.eval()

    ############################
    # Load dataset
    ############################
    ds = load_dataset(args.dataset, split=args.split)
    if args.debug:
        ds = ds.select(range(64))
    dataset = PairDataset(ds, tokenizer, args.max_length)
    dataloader = torch.utils.data.DataLoader(
        dataset,
        batch_size=args.batch_size,
        shuffle=False,
        num_workers=4,
        pin_memory=True,
        collate_fn=lambda b: {k: [x[k] for x in b] for k in b[0]},
    )
    dataloader = accelerator.prepare(dataloader)

    results, ids, subsets = [], [], []
    scores_chosen, scores_rejected = [], []
    for step, batch in enumerate(tqdm(dataloader, desc="RM batch steps", disable=not accelerator.is_main_process)):
        with torch.no_grad(), torch.cuda.amp.autocast(dtype=args.torch_dtype):
            enc_c = tokenizer(batch["chosen"], padding=True, truncation=True, max_length=args.max_length, return_tensors="pt").to(model.device)
            enc_r = tokenizer(batch["rejected"], padding=True, truncation=True, max_length=args.max_length, return_tensors="pt").to(model.device)
            rewards_chosen = model(**enc_c).logits[:, 0].float()
            rewards_rejected = model(**enc_r).logits[:, 0].float()

        score_chosen_batch = rewards_chosen.cpu().numpy().tolist()
        score_rejected_batch = rewards_rejected.cpu().numpy().tolist()
        [results.append(1) if c > r else results.append(0) for c, r in zip(score_chosen_batch, score_rejected_batch)]
        scores_chosen.extend(score_chosen_batch)
        scores_rejected.extend(score_rejected_batch)
        ids.extend(batch["id"])
        subsets.extend(batch["subset"])

        if step % 50 == 0 and accelerator.is_main_process:
            mem = torch.cuda.max_memory_allocated(current_device) / 2**30
            logger.info(f"step {step}: running acc {np.mean(results):.4f}, peak mem {mem:.1f} GiB")

    ############################
    # Gather and save
    ############################
    results = accelerator.gather_for_metrics(torch.tensor(results, device=accelerator.device)).cpu().tolist()
    if accelerator.is_main_process:
        acc = float(np.mean(results))
        logger.info(f"Results: {acc:.4f} over {len(results)} pairs")
        os.makedirs(args.output_dir, exist_ok=True)
        out_file = os.path.join(args.output_dir, os.path.basename(args.model.rstrip("/")) + ".json")
        with open(out_file, "w") as f:
            import json

            json.dump({"model": args.model, "accuracy": acc, "num_pairs": len(results)}, f, indent=2)


if __name__ == "__main__":
    main()
