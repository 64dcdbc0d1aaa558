import argparse
import json
import os
import random
import time

import numpy as np
import torch
import yaml
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader
from tqdm import tqdm
from transformers import get_cosine_schedule_with_warmup, get_linear_schedule_with_warmup

from gliner import GLiNER, GLiNERConfig
from gliner.data_processing import SpanProcessor, WordsSplitter
from gliner.data_processing.collator import DataCollator
from gliner.utils import load_config_as_namespace

# TF32 gives a free ~1.3x on Ampere for the span scorer matmuls
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


def create_parser():
    parser = argparse.ArgumentParser(description="Span-based NER")
    parser.add_argument("--config", type=str, default="configs/config.yaml", help="Path to config file")
    parser.add_argument("--log_dir", type=str, default="logs", help="Path to the log directory")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--compile_model", action="store_true", help="torch.compile the encoder (CUDA only)")
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--bf16", action="store_true", help="Use bfloat16 autocast (Ampere or newer)")
    parser.add_argument("--resume_from", type=str, default=None)
    return parser


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    set_seed(seed)


def load_data(path, max_items=None):
    with open(path, "r") as f:
        data = json.load(f)
    if max_items is not None:
        data = data[:max_items]
    return data


def get_optimizer(model, config):
    """Different learning rates for the encoder and for the GLiNER heads."""
    encoder_params = list(model.model.token_rep_layer.parameters())
    encoder_ids = {id(p) for p in encoder_params}
    other_params = [p for p in model.parameters() if id(p) not in encoder_ids]

    param_groups = [
        {"params": encoder_params, "lr": config.lr_encoder, "weight_decay": config.weight_decay_encoder},
        {"params": other_params, "lr": config.lr_others, "weight_decay": config.weight_decay_other},
    ]
    if config.freeze_token_rep:
        for p in encoder_params:
            p.requires_grad = False
        param_groups = param_groups[1:]

    optimizer = torch.optim.AdamW(param_groups, fused=True)
    return optimizer


def get_scheduler(config, optimizer, num_steps):
    num_warmup_steps = int(num_steps * config.warmup_ratio) if config.warmup_ratio < 1 else int(config.warmup_ratio)
    if config.scheduler_type == "cosine":
        return get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_steps)
    return get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_steps)


@torch.no_grad()
def run_eval(model, eval_data, config, device, log_dir, step):
    model.eval()
    results, f1 = model.evaluate(
        eval_data["samples"],
        flat_ner=True,
        threshold=0.5,
        batch_size=config.eval_batch_size,
        entity_types=eval_data["entity_types"],
    )
    with open(os.path.join(log_dir, "eval_log.txt"), "a") as f:
        f.write(f"step {step}\n{results}\n")
    model.train()
    return f1


def train(model, config, args, train_data, eval_data=None):
    accelerator = Accelerator(
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        log_with=None,
    )
    device = accelerator.device

    collator = DataCollator(model.config, data_processor=model.data_processor, prepare_labels=True)
    train_loader = DataLoader(
        train_data,
        batch_size=config.train_batch_size,
        shuffle=True,
        collate_fn=collator,
        num_workers=args.num_workers,
        pin_memory=True,
        persistent_workers=args.num_workers > 0,
    )

    optimizer = get_optimizer(model, config)
    scheduler = get_scheduler(config, optimizer, config.num_steps)

    model, optimizer, train_loader, scheduler = accelerator.prepare(model, optimizer, train_loader, scheduler)

    if args.compile_model:
        accelerator.unwrap_model(model).compile_for_training()

    amp_dtype = torch.bfloat16 if args.bf16 else torch.float16
    use_amp = args.bf16 or config.fp16

    model.train()
    pbar = tqdm(range(config.num_steps), disable=not accelerator.is_local_main_process)
    iter_train_loader = iter(train_loader)
    best_f1 = 0.0
    t0 = time.time()

    for step in pbar:
        try:
            x = next(iter_train_loader)
        except StopIteration:
            iter_train_loader = iter(train_loader)
            x = next(iter_train_loader)

        for k, v in x.items():
            if isinstance(v, torch.Tensor):
                x[k] = v.to(device)

        with accelerator.accumulate(model):
            with torch.cuda.amp.autocast(dtype=amp_dtype, enabled=use_amp):
                try:
                    out = model(**x)
                    loss = out.loss
                except Exception as e:  # noqa: BLE001 - skip broken batches like upstream does
                    accelerator.print(f"skipping batch at step {step}: {e}")
                    torch.cuda.empty_cache()
                    continue

            if torch.isnan(loss):
                accelerator.print("nan loss, skipping")
                continue

            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), config.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)

        description = f"step: {step} | epoch: {step // max(len(train_loader), 1)} | loss: {loss.item():.2f}"
        pbar.set_description(description)

        if (step + 1) % config.log_every == 0 and accelerator.is_main_process:
            elapsed = time.time() - t0
            mem_gb = torch.cuda.max_memory_allocated() / 2**30
            accelerator.print(f"[{step + 1}] {elapsed:.1f}s  peak mem {mem_gb:.2f} GB")
            torch.cuda.reset_peak_memory_stats()

        if (step + 1) % config.eval_every == 0:
            accelerator.wait_for_everyone()
            if accelerator.is_main_process:
                unwrapped = accelerator.unwrap_model(model)
                checkpoint_dir = os.path.join(args.log_dir, f"model_{step + 1}")
                unwrapped.save_pretrained(checkpoint_dir)
                if eval_data is not None:
                    f1 = run_eval(unwrapped, eval_data, config, device, args.log_dir, step + 1)
                    if f1 > best_f1:
                        best_f1 = f1
                        unwrapped.save_pretrained(os.path.join(args.log_dir, "best"))
                    accelerator.print(f"Step={step + 1}  F1={f1:.4f}  best={best_f1:.4f}")
            accelerator.wait_for_everyone()
            model.train()

    accelerator.end_training()
    return best_f1


def build_model(config, args):
    if config.prev_path is not None and config.prev_path != "none":
        model = GLiNER.from_pretrained(config.prev_path)
        model.config.max_len = config.max_len
        model.config.max_width = config.max_width
        return model

    gliner_config = GLiNERConfig(
        model_name=config.model_name,
        name=config.name,
        max_width=config.max_width,
        hidden_size=config.hidden_size,
        dropout=config.dropout,
        fine_tune=config.fine_tune,
        subtoken_pooling=config.subtoken_pooling,
        span_mode=config.span_mode,
        max_types=config.max_types,
        shuffle_types=config.shuffle_types,
        random_drop=config.random_drop,
        max_neg_type_ratio=config.max_neg_type_ratio,
        max_len=config.max_len,
    )
    model = GLiNER(gliner_config)
    return model


def main():
    parser = create_parser()
    args = parser.parse_args()
    config = load_config_as_namespace(args.config)
    config.log_dir = args.log_dir
    os.makedirs(args.log_dir, exist_ok=True)

    seed_everything(args.seed)

    if args.bf16 and not torch.cuda.is_bf16_supported():
        print("bf16 requested but the GPU does not support it, falling back to fp16")
        args.bf16 = False

    train_data = load_data(config.train_data)
    eval_data = None
    if getattr(config, "val_data_dir", "none") != "none":
        with open(config.val_data_dir) as f:
            eval_data = json.load(f)

    model = build_model(config, args)
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"trainable parameters: {n_params / 1e6:.1f}M")

    with open(os.path.join(args.log_dir, "config_used.yaml"), "w") as f:
        yaml.safe_dump(vars(config), f)

    best = train(model, config, args, train_data, eval_data)
    print(f"done. best f1 = {best:.4f}")


if __name__ == "__main__":
    main()
