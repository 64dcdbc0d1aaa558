#!/usr/bin/env python3
"""
DP-LoRA fine-tuning of a Llama-family model on a private instruction set.

  torchrun --nproc_per_node 8 scripts/dp_finetune_llama_lora.py \
      --model meta-llama/Llama-2-7b-hf --data data/private_chat.jsonl --epsilon 8

Per-sample gradients are only needed for the LoRA adapters (and, optionally, the
RMSNorm gains), so Opacus' ghost clipping keeps memory close to non-private
training. Attention has no parameters, so the fast attention kernel is safe to use.
"""

import argparse
import json
import math
import os
import time

import torch
import torch.distributed as dist
from opacus import PrivacyEngine
from opacus.distributed import DifferentiallyPrivateDistributedDataParallel as DPDDP
from opacus.grad_sample import register_grad_sampler
from opacus.utils.batch_memory_manager import BatchMemoryManager
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.models.llama.modeling_llama import LlamaRMSNorm


# --------------------------------------------------------------------------------------
# Opacus has no built-in sampler for LlamaRMSNorm; y = w * x / rms(x), so dL/dw per sample
# is sum_t (dy_t * xhat_t).
# --------------------------------------------------------------------------------------
@register_grad_sampler(LlamaRMSNorm)
def compute_llama_rmsnorm_grad_sample(layer, activations, backprops):
    x = activations[0]
    variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
    x_hat = (x.to(torch.float32) * torch.rsqrt(variance + layer.variance_epsilon)).to(backprops.dtype)
    gs = torch.einsum("n...d,n...d->nd", backprops, x_hat)
    return {layer.weight: gs}


class JsonlChatDataset(Dataset):
    def __init__(self, path, tokenizer, max_len):
        self.rows = [json.loads(l) for l in open(path)]
        self.tok = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        r = self.rows[i]
        prompt = f"### Instruction:\n{r['instruction']}\n\n### Response:\n"
        full = prompt + r["response"] + self.tok.eos_token
        ids = self.tok(full, truncation=True, max_length=self.max_len, padding="max_length", return_tensors="pt")
        n_prompt = len(self.tok(prompt)["input_ids"])
        labels = ids["input_ids"].clone()
        labels[:, :n_prompt] = -100
        labels[ids["attention_mask"] == 0] = -100
        return {"input_ids": ids["input_ids"][0], "attention_mask": ids["attention_mask"][0], "labels": labels[0]}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="meta-llama/Llama-2-7b-hf")
    p.add_argument("--data", required=True)
    p.add_argument("--max_len", type=int, default=512)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--logical_batch_size", type=int, default=512)
    p.add_argument("--physical_batch_size", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--epsilon", type=float, default=8.0)
    p.add_argument("--max_grad_norm", type=float, default=1.0)
    p.add_argument("--lora_r", type=int, default=16)
    p.add_argument("--train_norms", action="store_true")
    p.add_argument("--output_dir", default="out/dp_lora")
    return p.parse_args()


def main():
    args = parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(local_rank)
    world_size = dist.get_world_size()
    is_main = dist.get_rank() == 0

    torch.backends.cuda.matmul.allow_tf32 = True
    amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        args.model,
        torch_dtype=amp_dtype,
        attn_implementation="flash_attention_2",
        device_map={"": f"cuda:{local_rank}"},
    )
    model.config.use_cache = False

    lora_cfg = LoraConfig(
        r=args.lora_r,
        lora_alpha=2 * args.lora_r,
        lora_dropout=0.0,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, lora_cfg)
    for n, p in model.named_parameters():
        if "lora_" in n:
            p.data = p.data.float()
        if args.train_norms and "norm" in n:
            p.requires_grad = True
    if is_main:
        model.print_trainable_parameters()

    ds = JsonlChatDataset(args.data, tokenizer, args.max_len)
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=dist.get_rank(), shuffle=True)
    loader = DataLoader(ds, batch_size=args.logical_batch_size // world_size, sampler=sampler, num_workers=2, pin_memory=True)

    model = DPDDP(model)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr, weight_decay=0.0)

    privacy_engine = PrivacyEngine(accountant="rdp")
    model, optimizer, criterion, loader = privacy_engine.make_private_with_epsilon(
        module=model,
        optimizer=optimizer,
        data_loader=loader,
        criterion=torch.nn.CrossEntropyLoss(ignore_index=-100),
        target_epsilon=args.epsilon,
        target_delta=1.0 / len(ds),
        epochs=args.epochs,
        max_grad_norm=args.max_grad_norm,
        grad_sample_mode="ghost",
    )

    step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        t0 = time.time()
        with BatchMemoryManager(data_loader=loader, max_physical_batch_size=args.physical_batch_size, optimizer=optimizer) as mloader:
            for batch in mloader:
                batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
                with torch.autocast(device_type="cuda", dtype=amp_dtype):
                    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
                shift_logits = logits[:, :-1].float().reshape(-1, logits.size(-1))
                shift_labels = batch["labels"][:, 1:].reshape(-1)
                loss = criterion(shift_logits, shift_labels)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)

                if not optimizer._is_last_step_skipped:
                    step += 1
                    if is_main and step % 10 == 0:
                        mem = torch.cuda.max_memory_reserved() / 2**30
                        print(f"ep {epoch} step {step} loss {loss.item():.4f} mem {mem:.1f}GiB {time.time() - t0:.0f}s", flush=True)

        if is_main:
            eps = privacy_engine.get_epsilon(1.0 / len(ds))
            print(f"epoch {epoch} finished, epsilon spent: {eps:.2f}", flush=True)

    if is_main:
        os.makedirs(args.output_dir, exist_ok=True)
        model._module.module.save_pretrained(args.output_dir)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
