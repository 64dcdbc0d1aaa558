"""Vid2Seq (PyTorch port): dense video captioning with a T5 language model over
CLIP ViT-L/14 frame features and ASR speech transcripts; the event boundaries are
emitted as special time tokens interleaved with the captions.

Single node, 8 GPUs:
    python -m torch.distributed.launch --nproc_per_node 8 --use_env dvc.py \
        --epochs=20 --lr=3e-4 --save_dir=yc2 --combine_datasets youcook --combine_datasets_val youcook \
        --batch_size=2 --batch_size_val=2 --schedule="cosine_with_warmup" --load=vid2seq_htmchildren.pth
"""
import os
import re
import sys
import json
import math
import time
import random
import datetime
from collections import namedtuple
from functools import reduce

import numpy as np
import torch
import torch.nn as nn
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from transformers import get_cosine_schedule_with_warmup

from dvc_eval import eval_dvc, eval_soda
from args import get_args_parser, MODEL_DIR
import util.dist as dist_util
from util.metrics import MetricLogger
from util.misc import adjust_learning_rate
from model import build_vid2seq_model, _get_tokenizer
from dataset import dense_video_collate_fn, build_densevideo_dataset


def train_one_epoch(
    model: torch.nn.Module,
    tokenizer,
    data_loader,
    optimizer: torch.optim.Optimizer,
    device: torch.device,
    epoch: int,
    args,
    max_norm: float = 0,
    scaler=None,
):
    model.train()
    metric_logger = MetricLogger(delimiter="  ")
    metric_logger.add_meter(
        "lr", dist_util.SmoothedValue(window_size=1, fmt="{value:.6f}")
    )
    header = "Epoch: [{}]".format(epoch)
    num_training_steps = int(len(data_loader) * args.epochs)

    for i_batch, batch_dict in enumerate(
        metric_logger.log_every(data_loader, args.print_freq, header)
    ):
        video = batch_dict["video"].to(device, non_blocking=True)
        input_text = batch_dict["input_text"]
        input_tokenized = tokenizer(input_text,
                                    padding="longest",
                                    truncation=True,
                                    max_length=args.max_input_tokens,
                                    return_tensors="pt").to(device)
        output_text = batch_dict["output_text"]
        output_tokenized = tokenizer(output_text,
                                     padding="longest",
                                     truncation=True,
                                     max_length=args.max_output_tokens,
                                     return_tensors="pt").to(device)

        with torch.cuda.amp.autocast(enabled=args.fp16, dtype=torch.float16):
            output = model(video=video,
                           input_tokenized=input_tokenized,
                           output_tokenized=output_tokenized)
            loss_dict = {"loss": output["loss"]}
            loss = sum(loss_dict.values())

        # reduce losses over all GPUs for logging purposes
        loss_dict_reduced = dist_util.reduce_dict(loss_dict)
        loss_dict_reduced_scaled = {k: v for k, v in loss_dict_reduced.items()}
        losses_reduced_scaled = sum(loss_dict_reduced_scaled.values())
        loss_value = losses_reduced_scaled.item()

        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value))
            print(loss_dict_reduced)
            sys.exit(1)

        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
            if max_norm > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            if max_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()

        adjust_learning_rate(
            optimizer,
            epoch,
            curr_step=i_batch,
            num_training_steps=num_training_steps,
            args=args,
        )

        metric_logger.update(
            loss=loss_value,
            **loss_dict_reduced_scaled,
        )
        metric_logger.update(lr=optimizer.param_groups[0]["lr"])

    # gather the stats from all processes
    metric_logger.synchronize_between_processes()
    print("Averaged stats:", metric_logger)
    return {
        k: meter.global_avg
        for k, meter in metric_logger.meters.items()
    }


@torch.no_grad()
def evaluate(
    model,
    tokenizer,
    data_loader,
    device: torch.device,
    args,
    split="test",
    dataset_name="chapters"
):
    model.eval()
    metric_logger = MetricLogger(delimiter="  ")
    header = f"{split}:"

    res = {}
    for i_batch, batch_dict in enumerate(
        metric_logger.log_every(data_loader, args.eval_print_freq, header)
    ):
        duration = batch_dict["duration"]
        video = batch_dict["video"].to(device)
        if "input_tokenized" in batch_dict:
            input_tokenized = batch_dict["input_tokenized"].to(device)
        else:
            input_text = batch_dict["input_text"]
            input_tokenized = tokenizer(input_text,
                                        padding="longest",
                                        truncation=True,
                                        max_length=args.max_input_tokens,
                                        return_tensors="pt").to(device)
        with torch.cuda.amp.autocast(enabled=args.fp16):
            output = model.generate(video=video,
                                    input_tokenized=input_tokenized,
                                    use_nucleus_sampling=args.num_beams == 0,
                                    num_beams=args.num_beams,
                                    max_length=args.max_output_tokens,
                                    min_length=1,
                                    top_p=args.top_p,
                                    repetition_penalty=args.repetition_penalty,
                                    length_penalty=args.length_penalty,
                                    num_captions=1,
                                    temperature=1)
        for i, vid in enumerate(batch_dict["video_id"]):
            sequences = output[i].split()
            indexes = [j for j in range(len(sequences) - 1) if sequences[j][:6] == '<time=' and sequences[j + 1][:6] == '<time=']
            last_processed = -2
            res[vid] = []
            for j, idx in enumerate(indexes):  # iterate on predicted events
                if idx == last_processed + 1:  # avoid processing 3 time tokens in a row as 2 separate events
                    continue
                seq = [sequences[k] for k in range(idx + 2, indexes[j + 1] if j < len(indexes) - 1 else len(sequences)) if sequences[k] != '<time=']
                if seq:
                    text = ' '.join(seq)
                else:  # no text
                    continue
                start_re = re.search(r'\<time\=(\d+)\>', sequences[idx])
                assert start_re, sequences[idx]
                start_token = int(start_re.group(1))
                start = float(start_token) * float(duration[i]) / float(args.num_bins - 1)
                end_re = re.search(r'\<time\=(\d+)\>', sequences[idx + 1])
                assert end_re, sequences[idx + 1]
                end_token = int(end_re.group(1))
                end = float(end_token) * float(duration[i]) / float(args.num_bins - 1)
                if end <= start:  # invalid time
                    continue
                res[vid].append({'sentence': text,
                                 'timestamp': [start, end]})
                last_processed = idx

    all_res = dist_util.all_gather(res)
    results = reduce(lambda a, b: a.update(b) or a, all_res, {})
    assert len(results) == len(data_loader.dataset)
    metrics = {}
    if dist_util.is_main_process():
        if args.save_dir:
            pred_path = os.path.join(args.save_dir, dataset_name + f"_{split}_preds.json",)
            json.dump({'results': results}, open(pred_path, "w",))
        else:
            pred_path = {'results': results}
        if dataset_name == "youcook":
            references = [args.youcook_val_json_path]
        elif dataset_name == "vitt":
            references = [args.vitt_test_json_path] if split == "test" else [args.vitt_val_json_path]
        elif dataset_name == "chapters":
            references = [args.chapters_val_json_path] if split == "val" else [args.chapters_test_json_path]
        else:
            raise NotImplementedError
        metrics.update(eval_dvc(pred_path, references, tious=[0.3, 0.5, 0.7, 0.9], max_proposals_per_video=1000, verbose=False, no_lang_eval=False))
        metrics.update(eval_soda(pred_path, references, verbose=False))
        print(metrics)
    metrics = dist_util.all_gather(metrics)
    metrics = reduce(lambda a, b: a.update(b) or a, metrics, {})

    return metrics


def main(args):
    # Init distributed mode
    dist_util.init_distributed_mode(args)

    if args.save_dir and dist_util.is_main_process():
        os.makedirs(args.save_dir, exist_ok=True)
        with open(os.path.join(args.save_dir, "args.json"), "w") as f:
            f.write(json.dumps(vars(args), indent=2))

    device = torch.device(args.device)

    # Fix seeds
    seed = args.seed + dist_util.get_rank()
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    torch.backends.cudnn.benchmark = True

    # Build model
    model = build_vid2seq_model(args, tokenizer=None)
    tokenizer = _get_tokenizer(args.model_name, args.num_bins)
    model.to(device)

    model_without_ddp = model
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu], find_unused_parameters=True)
        model_without_ddp = model.module
    n_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print("number of params:", n_parameters)

    # Set up optimizer
    params_for_optimization = list(p for p in model.parameters() if p.requires_grad)
    optimizer = torch.optim.Adam(
        params_for_optimization,
        lr=args.lr,
        weight_decay=args.weight_decay,
    )
    scaler = torch.cuda.amp.GradScaler() if args.fp16 else None

    # Set up dataloaders
    if not args.eval:
        if "ytt" in args.combine_datasets:
            from dataset import build_yt_dataset
            dataset_train = build_yt_dataset("train", args)
        else:
            dataset_train = build_densevideo_dataset(args.combine_datasets[0], "train", args, tokenizer)
        sampler_train = (
            DistributedSampler(dataset_train)
            if args.distributed
            else torch.utils.data.RandomSampler(dataset_train)
        )
        batch_sampler_train = torch.utils.data.BatchSampler(
            sampler_train, args.batch_size, drop_last=True
        )
        dataloader_train = DataLoader(
            dataset_train,
            batch_sampler=batch_sampler_train,
            collate_fn=dense_video_collate_fn,
            num_workers=args.num_workers,
            pin_memory=True,
        )

    dataset_val = build_densevideo_dataset(args.combine_datasets_val[0], "val" if not args.eval else args.eval_split, args, tokenizer)
    sampler_val = (
        DistributedSampler(dataset_val, shuffle=False)
        if args.distributed
        else torch.utils.data.SequentialSampler(dataset_val)
    )
    dataloader_val = DataLoader(
        dataset_val,
        batch_size=args.batch_size_val,
        sampler=sampler_val,
        collate_fn=dense_video_collate_fn,
        num_workers=args.num_workers,
    )

    # Load pretrained checkpoint
    if args.load:
        if dist_util.is_main_process():
            print("loading from", args.load)
        checkpoint = torch.load(args.load, map_location="cuda:{}".format(args.gpu) if args.distributed else "cuda")
        model_without_ddp.load_state_dict(checkpoint["model"], strict=False)
        if args.resume and not args.eval:
            if "optimizer" in checkpoint:
                optimizer.load_state_dict(checkpoint["optimizer"])
            args.start_epoch = checkpoint["epoch"] + 1

    # Evaluation only
    if args.eval:
        print("start evaluating")
        evaluate(model=model,
                 tokenizer=tokenizer,
                 data_loader=dataloader_val,
                 device=device,
                 args=args,
                 split=args.eval_split,
                 dataset_name=args.combine_datasets_val[0])
        return

    print("Start training")
    start_time = time.time()
    best_epoch = args.start_epoch
    best_acc = 0
    for epoch in range(args.start_epoch, args.epochs):
        if dist_util.is_main_process():
            print(f"Starting epoch {epoch}")
        if args.distributed:
            sampler_train.set_epoch(epoch)
        train_stats = train_one_epoch(
            model=model,
            tokenizer=tokenizer,
            data_loader=dataloader_train,
            optimizer=optimizer,
            device=device,
            epoch=epoch,
            args=args,
            max_norm=args.clip_max_norm,
            scaler=scaler,
        )

        if (epoch + 1) % args.eval_skip == 0:
            val_stats = {}
            for i, item in enumerate(args.combine_datasets_val):
                out = evaluate(model=model,
                               tokenizer=tokenizer,
                               data_loader=dataloader_val,
                               device=device,
                               args=args,
                               split="val",
                               dataset_name=item)
                val_stats.update({item + "_" + k: v for k, v in out.items()})
                if out["CIDEr"] > best_acc:
                    best_epoch = epoch
                    best_acc = out["CIDEr"]

                    if dist_util.is_main_process() and args.save_dir:
                        checkpoint_path = os.path.join(args.save_dir, "best_model.pth")
                        dist_util.save_on_master(
                            {
                                "model": model_without_ddp.state_dict(),
                                "optimizer": optimizer.state_dict(),
                                "epoch": epoch,
                                "args": args,
                            },
                            checkpoint_path,
                        )
                        json.dump({"ep": epoch, **out}, open(os.path.join(args.save_dir, "best_epoch.json"), "w"))
        else:
            val_stats = {}

        log_stats = {
            **{f"train_{k}": v for k, v in train_stats.items()},
            **{f"val_{k}": v for k, v in val_stats.items()},
            "epoch": epoch,
            "n_parameters": n_parameters,
        }

        if args.save_dir and dist_util.is_main_process():
            with open(os.path.join(args.save_dir, "log.txt"), "a") as f:
                f.write(json.dumps(log_stats) + "\n")
            checkpoint_path = os.path.join(args.save_dir, f"ckpt.pth")
            dist_util.save_on_master(
                {
                    "model": model_without_ddp.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "epoch": epoch,
                    "args": args,
                },
                checkpoint_path,
            )
        torch.cuda.empty_cache()

    total_time = time.time() - start_time
    total_time_str = str(datetime.timedelta(seconds=int(total_time)))
    print("Training time {}".format(total_time_str))


if __name__ == "__main__":
    parser = get_args_parser()
    args = parser.parse_args()
    if args.save_dir:
        args.save_dir = os.path.join(args.presave_dir, args.save_dir)
    main(args)
