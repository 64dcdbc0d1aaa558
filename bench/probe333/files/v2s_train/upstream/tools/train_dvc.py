"""Train / evaluate Vid2Seq (T5-base + CLIP ViT-L/14 features) for dense video captioning.

    torchrun --nproc_per_node 8 tools/train_dvc.py --config configs/yc2_vid2seq.yaml
    torchrun --nproc_per_node 8 tools/train_dvc.py --config configs/yc2_vid2seq.yaml --eval_only --load ckpt.pth

Mixed precision (bf16 on A100/H100, fp16 + GradScaler elsewhere) is controlled by `amp` in the config.
"""
import argparse
import datetime
import json
import math
import os
import random
import re
import sys
import time
from functools import reduce

import numpy as np
import torch
from packaging import version
from torch.utils.data import DataLoader, DistributedSampler
from omegaconf import OmegaConf

if version.parse(torch.__version__) < version.parse("2.0"):
    raise RuntimeError("Vid2Seq-PyTorch needs torch>=2.0 (F.scaled_dot_product_attention, bf16 autocast)")

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

from vid2seq.data import build_dvc_dataset, dvc_collate_fn
from vid2seq.models import build_vid2seq_model, get_tokenizer
from vid2seq.utils import misc as dist
from vid2seq.utils.misc import MetricLogger
from vid2seq.utils.lr import adjust_learning_rate
from vid2seq.eval.dvc_eval import eval_dvc, eval_soda


def parse_args():
    parser = argparse.ArgumentParser("Vid2Seq dense video captioning")
    parser.add_argument("--config", required=True, help="path to a yaml config")
    parser.add_argument("--eval_only", action="store_true")
    parser.add_argument("--load", default="", help="checkpoint to resume / evaluate")
    parser.add_argument("--dist_url", default="env://")
    parser.add_argument("opts", nargs=argparse.REMAINDER, help="dotlist overrides, e.g. optim.lr=1e-4")
    return parser.parse_args()


def load_config(args):
    cfg = OmegaConf.load(args.config)
    if "base" in cfg:
        base = OmegaConf.load(os.path.join(os.path.dirname(args.config), cfg.base))
        cfg = OmegaConf.merge(base, cfg)
    cfg = OmegaConf.merge(cfg, OmegaConf.from_dotlist(args.opts))
    return cfg


def fix_seeds(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    np.random.seed(seed)
    random.seed(seed)


def get_amp_dtype(cfg):
    """bf16 when the GPU supports it (Ampere+), fp16 otherwise, None when AMP is off."""
    if not cfg.amp.enabled:
        return None
    if cfg.amp.dtype == "bf16":
        if torch.cuda.is_bf16_supported():
            return torch.bfloat16
        print("bf16 requested but not supported on this GPU (needs sm_80+), using fp16 + GradScaler")
    return torch.float16


def build_optimizer(cfg, model):
    params = [p for p in model.parameters() if p.requires_grad]
    if cfg.optim.name == "fused_adam":
        assert HAS_APEX, "apex built with --cuda_ext is required for optim.name=fused_adam"
        return FusedAdam(params, lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay, adam_w_mode=True)
    if cfg.optim.name == "adamw":
        return torch.optim.AdamW(params, lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay)
    return torch.optim.Adam(params, lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay)


def train_one_epoch(model, data_loader, optimizer, scaler, device, epoch, cfg, amp_dtype):
    model.train()
    metric_logger = MetricLogger(delimiter="  ")
    header = "Epoch: [{}]".format(epoch)
    num_training_steps = int(len(data_loader) * cfg.epochs)

    for i_batch, batch_dict in enumerate(metric_logger.log_every(data_loader, cfg.print_freq, header)):
        video = batch_dict["video"].to(device, non_blocking=True)
        input_tokenized = {k: v.to(device, non_blocking=True) for k, v in batch_dict["input_tokenized"].items()}
        output_tokenized = {k: v.to(device, non_blocking=True) for k, v in batch_dict["output_tokenized"].items()}

        with torch.cuda.amp.autocast(enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):
            loss, _ = model(video=video, input_tokenized=input_tokenized, output_tokenized=output_tokenized)

        loss_dict = {"loss": loss.detach()}
        loss_dict_reduced = dist.reduce_dict(loss_dict)
        loss_value = sum(loss_dict_reduced.values()).item()
        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value))
            sys.exit(1)

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        if cfg.optim.clip_max_norm > 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.optim.clip_max_norm)
        scaler.step(optimizer)
        scaler.update()

        adjust_learning_rate(optimizer, epoch=epoch, curr_step=i_batch, num_training_steps=num_training_steps,
                             args=cfg.optim)
        metric_logger.update(**loss_dict_reduced)
        metric_logger.update(lr=optimizer.param_groups[0]["lr"])

    metric_logger.synchronize_between_processes()
    print("Averaged stats:", metric_logger)
    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}


@torch.no_grad()
def evaluate(model, tokenizer, data_loader, device, cfg, amp_dtype, split="val"):
    model.eval()
    metric_logger = MetricLogger(delimiter="  ")
    header = f"{split}:"
    res = {}
    torch.cuda.synchronize()
    t0 = time.time()
    for i_batch, batch_dict in enumerate(metric_logger.log_every(data_loader, cfg.print_freq, header)):
        duration = batch_dict["duration"]
        video = batch_dict["video"].to(device, non_blocking=True)
        input_tokenized = {k: v.to(device, non_blocking=True) for k, v in batch_dict["input_tokenized"].items()}
        with torch.cuda.amp.autocast(enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):  # generation
            output = model.generate(video=video,
                                    input_tokenized=input_tokenized,
                                    use_nucleus_sampling=cfg.gen.num_beams == 0,
                                    num_beams=cfg.gen.num_beams,
                                    max_length=cfg.gen.max_output_tokens,
                                    min_length=1,
                                    top_p=cfg.gen.top_p,
                                    repetition_penalty=cfg.gen.repetition_penalty,
                                    length_penalty=cfg.gen.length_penalty,
                                    num_captions=1,
                                    temperature=1)
        for i, vid in enumerate(batch_dict["video_id"]):
            sequences = re.split(r'(?<!<)\s+(?!>)', output[i])  # "<time=5> <time=7> Blablabla <time=7> <time=9> Blobloblo <time=2>" -> ['<time=5>', '<time=7>', 'Blablabla', '<time=7>', '<time=9>', 'Blobloblo', '<time=2>']
            indexes = [j for j in range(len(sequences) - 1) if sequences[j][:6] == '<time=' and sequences[j + 1][:6] == '<time=']
            last_processed = -2
            res[vid] = []
            for j, idx in enumerate(indexes):
                if idx == last_processed + 1:  # avoid processing 3 time tokens in a row as 2 separate events
                    continue
                seq = [sequences[k] for k in range(idx + 2, indexes[j + 1] if j < len(indexes) - 1 else len(sequences)) if sequences[k] != '<time=']
                if seq:
                    text = ' '.join(seq)
                else:
                    continue
                start_re = re.search(r'\<time\=(\d+)\>', sequences[idx])
                assert start_re, sequences[idx]
                start_token = int(start_re.group(1))
                start = float(start_token) * float(duration[i]) / float(cfg.num_bins - 1)
                end_re = re.search(r'\<time\=(\d+)\>', sequences[idx + 1])
                assert end_re, sequences[idx + 1]
                end_token = int(end_re.group(1))
                end = float(end_token) * float(duration[i]) / float(cfg.num_bins - 1)
                if end <= start:  # invalid time
                    continue
                res[vid].append({'sentence': text, 'timestamp': [start, end]})
                last_processed = idx
    torch.cuda.synchronize()  # wait for the last generate() before reading the clock
    print("generation time: {:.1f}s".format(time.time() - t0))

    all_res = dist.all_gather(res)
    results = reduce(lambda a, b: a.update(b) or a, all_res, {})
    assert len(results) == len(data_loader.dataset)
    metrics = {}
    if dist.is_main_process():
        if cfg.save_dir:
            pred_path = os.path.join(cfg.save_dir, f"{cfg.dataset}_{split}_preds.json")
            json.dump({'results': results}, open(pred_path, "w"))
        else:
            pred_path = {'results': results}
        references = [cfg.data[cfg.dataset][f"{split}_json"]]
        metrics.update(eval_dvc(pred_path, references, tious=[0.3, 0.5, 0.7, 0.9], max_proposals_per_video=1000,
                                verbose=False, no_lang_eval=False))
        metrics.update(eval_soda(pred_path, references, verbose=False))
        print(metrics)
    metrics = dist.all_gather(metrics)
    metrics = reduce(lambda a, b: a.update(b) or a, metrics, {})
    return metrics


def main(args):
    cfg = load_config(args)
    dist.init_distributed_mode(args)
    if dist.is_main_process():
        if cfg.save_dir and not os.path.isdir(cfg.save_dir):
            os.makedirs(cfg.save_dir, exist_ok=True)
        print(OmegaConf.to_yaml(cfg))

    device = torch.device(cfg.device)
    fix_seeds(cfg.seed + dist.get_rank())

    torch.backends.cuda.matmul.allow_tf32 = cfg.allow_tf32
    torch.backends.cudnn.allow_tf32 = cfg.allow_tf32
    amp_dtype = get_amp_dtype(cfg)

    tokenizer = get_tokenizer(cfg.model.t5_path, cfg.num_bins)
    model = build_vid2seq_model(cfg.model, tokenizer)
    model.to(device)
    model_without_ddp = model
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu], find_unused_parameters=True)
        model_without_ddp = model.module

    n_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print("number of params:", n_parameters)

    optimizer = build_optimizer(cfg, model)
    scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)

    datasets = {split: build_dvc_dataset(cfg.dataset, split=split, cfg=cfg.data, tokenizer=tokenizer)
                for split in (["val"] if args.eval_only else ["train", "val"])}
    loaders = {}
    for split, dset in datasets.items():
        sampler = DistributedSampler(dset, shuffle=split == "train") if args.distributed else (
            torch.utils.data.RandomSampler(dset) if split == "train" else torch.utils.data.SequentialSampler(dset))
        loaders[split] = DataLoader(
            dset,
            batch_size=cfg.batch_size if split == "train" else cfg.batch_size_val,
            sampler=sampler,
            collate_fn=dvc_collate_fn,
            num_workers=cfg.data.num_workers,
            pin_memory=cfg.data.pin_memory,
            drop_last=split == "train",
            persistent_workers=cfg.data.num_workers > 0,
        )

    if args.load:
        print("loading from", args.load)
        checkpoint = torch.load(args.load, map_location="cpu")
        model_without_ddp.load_state_dict(checkpoint["model"], strict=False)
        if "optimizer" in checkpoint and not args.eval_only:
            optimizer.load_state_dict(checkpoint["optimizer"])
            cfg.start_epoch = checkpoint["epoch"] + 1
        if "scaler" in checkpoint:
            scaler.load_state_dict(checkpoint["scaler"])

    if args.eval_only:
        evaluate(model_without_ddp, tokenizer, loaders["val"], device, cfg, amp_dtype)
        return

    print("Start training")
    start_time = time.time()
    best_epoch = cfg.start_epoch
    best_score = 0.0
    for epoch in range(cfg.start_epoch, cfg.epochs):
        if args.distributed:
            loaders["train"].sampler.set_epoch(epoch)
        torch.cuda.reset_peak_memory_stats()
        train_stats = train_one_epoch(model, loaders["train"], optimizer, scaler, device, epoch, cfg, amp_dtype)

        if cfg.save_dir:
            dist.save_on_master({
                "model": model_without_ddp.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scaler": scaler.state_dict(),
                "epoch": epoch,
                "cfg": OmegaConf.to_container(cfg),
            }, os.path.join(cfg.save_dir, "ckpt.pth"))

        if (epoch + 1) % cfg.eval_skip == 0:
            out = evaluate(model_without_ddp, tokenizer, loaders["val"], device, cfg, amp_dtype)
            score = out.get("CIDEr", 0.0) + out.get("SODA_c", 0.0)
            if score > best_score:
                best_score, best_epoch = score, epoch
                if dist.is_main_process() and cfg.save_dir:
                    dist.save_on_master({"model": model_without_ddp.state_dict(), "epoch": epoch},
                                        os.path.join(cfg.save_dir, "best_model.pth"))
        else:
            out = {}

        log_stats = {**{f"train_{k}": v for k, v in train_stats.items()},
                     **{f"val_{k}": v for k, v in out.items()},
                     "epoch": epoch, "n_parameters": n_parameters}
        if cfg.save_dir and dist.is_main_process():
            with open(os.path.join(cfg.save_dir, "log.txt"), "a") as f:
                f.write(json.dumps(log_stats) + "\n")

    total_time = time.time() - start_time
    print("Training time {} (best epoch {})".format(str(datetime.timedelta(seconds=int(total_time))), best_epoch))


if __name__ == "__main__":
    main(parse_args())
