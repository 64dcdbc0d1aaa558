"""
LLM-based gloss-free sign language translation (Sign2GPT / SpaMo style).

Frozen spatial features (CLIP ViT-L/14 per frame, pre-extracted) go through a small
temporal encoder + projector into the embedding space of a decoder-only LLM that is
fine-tuned with LoRA. Run with torchrun on a single node:

    torchrun --nproc_per_node 8 slt_llm/train.py --llm meta-llama/Llama-2-7b-hf \
        --train_feats data/p14t/clip_feats/train --dev_feats data/p14t/clip_feats/dev
"""
import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

import bitsandbytes as bnb
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer, get_cosine_schedule_with_warmup
from transformers.utils import is_flash_attn_2_available

from slt_llm.data import SignFeatureDataset, collate_sign_batch
from slt_llm.metrics import corpus_bleu4, rouge_l


PROMPT = "Translate the German sign language video into German text: "


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--llm", default="meta-llama/Llama-2-7b-hf")
    p.add_argument("--train_feats", required=True)
    p.add_argument("--dev_feats", required=True)
    p.add_argument("--feat_dim", type=int, default=1024)
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--grad_accum", type=int, default=2)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--warmup_ratio", type=float, default=0.05)
    p.add_argument("--lora_r", type=int, default=16)
    p.add_argument("--attn_impl", default="flash_attention_2",
                   help="flash_attention_2 | sdpa | eager")
    p.add_argument("--optim", default="adamw8bit", choices=["adamw8bit", "adamw"])
    p.add_argument("--compile", action="store_true")
    p.add_argument("--output_dir", default="runs/slt_llm")
    p.add_argument("--num_workers", type=int, default=4)
    return p.parse_args()


class TemporalEncoder(nn.Module):
    """1D-conv temporal downsampling (x4) + MLP projector into the LLM embedding space."""

    def __init__(self, feat_dim, llm_dim, hidden=1024):
        super().__init__()
        self.temporal = nn.Sequential(
            nn.Conv1d(feat_dim, hidden, kernel_size=5, stride=1, padding=2),
            nn.BatchNorm1d(hidden),
            nn.GELU(),
            nn.MaxPool1d(2),
            nn.Conv1d(hidden, hidden, kernel_size=5, stride=1, padding=2),
            nn.BatchNorm1d(hidden),
            nn.GELU(),
            nn.MaxPool1d(2),
        )
        self.proj = nn.Sequential(nn.Linear(hidden, llm_dim), nn.GELU(), nn.Linear(llm_dim, llm_dim))

    def forward(self, feats, lengths):
        x = self.temporal(feats.transpose(1, 2)).transpose(1, 2)
        lengths = torch.div(lengths, 4, rounding_mode="floor").clamp(min=1)
        mask = torch.arange(x.size(1), device=x.device)[None, :] < lengths[:, None]
        return self.proj(x), mask


class SignLLM(nn.Module):
    def __init__(self, llm, tokenizer, feat_dim):
        super().__init__()
        self.llm = llm
        self.tokenizer = tokenizer
        self.visual = TemporalEncoder(feat_dim, llm.config.hidden_size)

    def build_inputs(self, feats, feat_lens, text_ids=None, text_mask=None):
        emb_layer = self.llm.get_input_embeddings()
        vis, vis_mask = self.visual(feats, feat_lens)
        vis = vis.to(emb_layer.weight.dtype)
        prompt = self.tokenizer([PROMPT] * feats.size(0), return_tensors="pt", add_special_tokens=True)
        prompt_ids = prompt.input_ids.to(feats.device)
        prompt_emb = emb_layer(prompt_ids)
        parts, masks = [prompt_emb, vis], [prompt.attention_mask.to(feats.device), vis_mask.long()]
        if text_ids is not None:
            parts.append(emb_layer(text_ids))
            masks.append(text_mask)
        return torch.cat(parts, 1), torch.cat(masks, 1), prompt_emb.size(1) + vis.size(1)

    def forward(self, feats, feat_lens, text_ids, text_mask):
        inputs_embeds, attn_mask, n_prefix = self.build_inputs(feats, feat_lens, text_ids, text_mask)
        labels = torch.full(attn_mask.shape, -100, dtype=torch.long, device=attn_mask.device)
        labels[:, n_prefix:] = text_ids.masked_fill(text_mask == 0, -100)
        out = self.llm(inputs_embeds=inputs_embeds, attention_mask=attn_mask, labels=labels)
        return out.loss

    @torch.no_grad()
    def generate(self, feats, feat_lens, max_new_tokens=64, num_beams=4):
        inputs_embeds, attn_mask, _ = self.build_inputs(feats, feat_lens)
        return self.llm.generate(inputs_embeds=inputs_embeds, attention_mask=attn_mask,
                                 max_new_tokens=max_new_tokens, num_beams=num_beams)


def setup_distributed():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return local_rank, dist.get_rank(), dist.get_world_size()


def load_llm(name, attn_impl, dtype):
    tokenizer = AutoTokenizer.from_pretrained(name, use_fast=False)
    tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    llm = AutoModelForCausalLM.from_pretrained(name, torch_dtype=dtype, attn_implementation=attn_impl)
    llm.gradient_checkpointing_enable()
    llm.enable_input_require_grads()
    return llm, tokenizer


def load_for_eval(name, dtype):
    """Standalone loader used by scripts/evaluate.py (no LoRA merge, no DDP)."""
    impl = "flash_attention_2" if is_flash_attn_2_available() else "sdpa"
    return load_llm(name, impl, dtype)


def evaluate(model, loader, tokenizer, device):
    model.eval()
    hyps, refs = [], []
    for batch in loader:
        feats = batch["feats"].to(device, non_blocking=True)
        lens = batch["feat_lens"].to(device)
        out = model.module.generate(feats, lens) if isinstance(model, DDP) else model.generate(feats, lens)
        hyps += tokenizer.batch_decode(out, skip_special_tokens=True)
        refs += batch["text"]
    model.train()
    return corpus_bleu4(hyps, refs), rouge_l(hyps, refs)


def main():
    args = get_args()
    local_rank, rank, world = setup_distributed()
    device = torch.device("cuda", local_rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cuda.enable_flash_sdp(True)

    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    llm, tokenizer = load_llm(args.llm, args.attn_impl, dtype)
    lora = LoraConfig(r=args.lora_r, lora_alpha=2 * args.lora_r, lora_dropout=0.05,
                      target_modules=["q_proj", "k_proj", "v_proj", "o_proj"], task_type="CAUSAL_LM")
    llm = get_peft_model(llm, lora)
    model = SignLLM(llm, tokenizer, args.feat_dim).to(device)
    model.visual.float()

    total_mem = torch.cuda.get_device_properties(local_rank).total_memory / 2 ** 30
    if total_mem < 40 and args.batch_size > 4:
        if rank == 0:
            print(f"{total_mem:.0f} GB card: lowering per-device batch size to 4")
        args.grad_accum *= args.batch_size // 4
        args.batch_size = 4

    if args.compile:
        model.visual = torch.compile(model.visual, mode="max-autotune")

    model = DDP(model, device_ids=[local_rank], find_unused_parameters=False)

    train_set = SignFeatureDataset(args.train_feats, tokenizer)
    dev_set = SignFeatureDataset(args.dev_feats, tokenizer, split="dev")
    sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler,
                              num_workers=args.num_workers, collate_fn=collate_sign_batch,
                              pin_memory=True, drop_last=True)
    dev_loader = DataLoader(dev_set, batch_size=16, shuffle=False, num_workers=2,
                            collate_fn=collate_sign_batch)

    params = [p for p in model.parameters() if p.requires_grad]
    if args.optim == "adamw8bit":
        optimizer = bnb.optim.AdamW8bit(params, lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01)
    else:
        optimizer = torch.optim.AdamW(params, lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01, fused=True)
    steps = args.epochs * len(train_loader) // args.grad_accum
    scheduler = get_cosine_schedule_with_warmup(optimizer, int(args.warmup_ratio * steps), steps)

    best_bleu, step = 0.0, 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        t0 = time.time()
        for it, batch in enumerate(train_loader):
            feats = batch["feats"].to(device, non_blocking=True)
            lens = batch["feat_lens"].to(device)
            text_ids = batch["text_ids"].to(device)
            text_mask = batch["text_mask"].to(device)
            with torch.autocast("cuda", dtype=dtype):
                loss = model(feats, lens, text_ids, text_mask) / args.grad_accum
            loss.backward()
            if (it + 1) % args.grad_accum == 0:
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
                if rank == 0 and step % 50 == 0:
                    mem = torch.cuda.max_memory_allocated() / 2 ** 30
                    print(f"ep {epoch} step {step} loss {loss.item() * args.grad_accum:.4f} "
                          f"lr {scheduler.get_last_lr()[0]:.2e} mem {mem:.1f}G")
        torch.cuda.synchronize()
        if rank == 0:
            bleu, rouge = evaluate(model, dev_loader, tokenizer, device)
            print(f"epoch {epoch} ({time.time() - t0:.0f}s) dev BLEU-4 {bleu:.2f} ROUGE-L {rouge:.2f}")
            if bleu > best_bleu:
                best_bleu = bleu
                os.makedirs(args.output_dir, exist_ok=True)
                model.module.llm.save_pretrained(os.path.join(args.output_dir, "lora_best"))
                torch.save(model.module.visual.state_dict(), os.path.join(args.output_dir, "visual_best.pt"))
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
