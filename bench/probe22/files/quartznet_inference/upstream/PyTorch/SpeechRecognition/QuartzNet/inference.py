# Copyright (c) 2021, NVIDIA CORPORATION. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");

import argparse
import math
import os
import random
import time
from heapq import nlargest
from itertools import chain, repeat
from pathlib import Path

import dllogger
import numpy as np
import torch
import torch.distributed as distrib
from dllogger import JSONStreamBackend, StdOutBackend, Verbosity

from common import helpers
from common.dali.data_loader import DaliDataLoader
from common.dataset import AudioDataset, get_data_loader
from common.features import BaseFeatures, FilterbankFeatures
from common.helpers import print_once, process_evaluation_epoch
from quartznet.model import GreedyCTCDecoder, QuartzNet
from quartznet.config import load as config_load


def get_parser():
    parser = argparse.ArgumentParser(description="QuartzNet inference")
    parser.add_argument("--batch_size", default=16, type=int, help="Data batch size")
    parser.add_argument("--steps", default=0, type=int, help="Eval this many steps for every worker")
    parser.add_argument("--warmup_steps", default=0, type=int, help="Burn-in period before measuring latencies")
    parser.add_argument("--model_config", type=str, required=True, help="Relative model config path given dataset folder")
    parser.add_argument("--dataset_dir", type=str, help="Absolute path to dataset folder")
    parser.add_argument("--val_manifests", type=str, nargs="+", help="Relative path to evaluation dataset manifest files")
    parser.add_argument("--ckpt", default=None, type=str, help="Path to model checkpoint")
    parser.add_argument("--amp", "--fp16", action="store_true", help="Use FP16 precision")
    parser.add_argument("--cudnn_benchmark", action="store_true", help="Enable cudnn benchmark")
    parser.add_argument("--cpu", action="store_true", help="Run inference on CPU")
    parser.add_argument("--seed", default=None, type=int, help="Random seed")
    parser.add_argument("--local_rank", default=os.getenv("LOCAL_RANK", 0), type=int, help="GPU id used for distributed training")
    io = parser.add_argument_group("feature and checkpointing setup")
    io.add_argument("--dali_device", type=str, choices=["none", "cpu", "gpu"], default="gpu",
                    help="Use DALI pipeline for fast data processing")
    io.add_argument("--save_predictions", type=str, default=None, help="Save predictions in text form at this location")
    io.add_argument("--torchscript", action="store_true", help="Evaluate with a TorchScripted model")
    io.add_argument("--log_file", type=str, default=None, help="Path to a DLLogger log file")
    return parser


def durs_to_percentiles(durations, ratios):
    durations = np.asarray(durations) * 1000  # in ms
    latency = durations
    latency = latency[5:]
    mean_latency = np.mean(latency)
    latency_worst = nlargest(math.ceil((1 - min(ratios)) * len(latency)), latency)
    latency_ranges = get_percentile_ranges(ratios, latency_worst)
    latency_ranges[0.5] = mean_latency
    return latency_ranges


def get_percentile_ranges(ratios, latency_worst):
    return {r: latency_worst[math.ceil((1 - r) * len(latency_worst)) - 1] for r in ratios}


def main():
    parser = get_parser()
    args = parser.parse_args()

    log_fpath = args.log_file or str(Path(args.output_dir if hasattr(args, "output_dir") else ".", "nvlog_infer.json"))
    dllogger.init(backends=[JSONStreamBackend(Verbosity.DEFAULT, log_fpath, append=True),
                            StdOutBackend(Verbosity.VERBOSE)])
    [dllogger.log("PARAMETER", {k: v}) for k, v in vars(args).items()]

    if args.cpu:
        assert not args.amp
        device = torch.device("cpu")
    else:
        assert torch.cuda.is_available()
        device = torch.device("cuda")
        torch.backends.cudnn.benchmark = args.cudnn_benchmark

    if args.seed is not None:
        torch.manual_seed(args.seed + args.local_rank)
        np.random.seed(args.seed + args.local_rank)
        random.seed(args.seed + args.local_rank)

    # set up distributed training
    multi_gpu = not args.cpu and int(os.environ.get("WORLD_SIZE", 1)) > 1
    if multi_gpu:
        torch.cuda.set_device(args.local_rank)
        distrib.init_process_group(backend="nccl", init_method="env://")
        print_once(f"Inference with {distrib.get_world_size()} GPUs")

    cfg = config_load(args.model_config)
    symbols = helpers.add_ctc_blank(cfg["labels"])

    use_dali = args.dali_device in ("cpu", "gpu")
    dataset_kw, features_kw = cfg["input_val"]["audio_dataset"], cfg["input_val"]["filterbank_features"]
    if use_dali:
        data_loader = DaliDataLoader(gpu_id=args.local_rank or 0, dataset_path=args.dataset_dir,
                                     config_data=dataset_kw, config_features=features_kw,
                                     json_names=args.val_manifests, batch_size=args.batch_size,
                                     pipeline_type="val", device_type=args.dali_device, symbols=symbols)
    else:
        dataset = AudioDataset(args.dataset_dir, args.val_manifests, symbols, **dataset_kw)
        data_loader = get_data_loader(dataset, args.batch_size, multi_gpu=multi_gpu, shuffle=False,
                                      num_workers=4, drop_last=False)

    feat_proc = FilterbankFeatures(**features_kw)
    model = QuartzNet(encoder_kw=cfg["quartznet"]["encoder"], decoder_kw=cfg["quartznet"]["decoder"],
                      n_classes=len(symbols))

    if args.ckpt is not None:
        print(f"Loading the model from {args.ckpt} ...")
        checkpoint = torch.load(args.ckpt, map_location="cpu")
        key = "ema_state_dict" if "ema_state_dict" in checkpoint else "state_dict"
        model.load_state_dict(checkpoint[key], strict=True)

    model.to(device)
    model.eval()
    feat_proc.to(device)
    feat_proc.eval()

    if args.amp:
        model = model.half()

    if args.torchscript:
        greedy_decoder = GreedyCTCDecoder()
        feat_proc, model, greedy_decoder = [torch.jit.script(m) for m in [feat_proc, model, greedy_decoder]]

    if multi_gpu:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])

    agg = {"txts": [], "preds": [], "logits": []}
    dur = {"data": [], "dnn": [], "data+dnn": []}

    looped_loader = chain.from_iterable(repeat(data_loader))
    greedy_decoder = GreedyCTCDecoder()

    sync = lambda: torch.cuda.synchronize() if device.type == "cuda" else None

    steps = args.steps + args.warmup_steps or len(data_loader)
    with torch.no_grad():
        for it, batch in enumerate(looped_loader):
            if it >= steps:
                break

            if use_dali:
                feats, feat_lens, txt, txt_lens = batch
                if feat_proc is not None:
                    feats, feat_lens = feat_proc(feats, feat_lens)
            else:
                batch = [t.cuda(non_blocking=True) for t in batch]
                audio, audio_lens, txt, txt_lens = batch
                feats, feat_lens = feat_proc(audio, audio_lens)

            sync()
            t1 = time.time()

            if args.amp:
                feats = feats.half()

            log_probs, log_prob_lens = model(feats, feat_lens)
            preds = greedy_decoder(log_probs)

            sync()
            t2 = time.time()

            if it >= args.warmup_steps:
                dur["data+dnn"].append(t2 - t1)

            if txt is not None:
                agg["txts"] += helpers.gather_transcripts([txt], [txt_lens], symbols)
            agg["preds"] += helpers.gather_predictions([preds], symbols)
            agg["logits"].append(log_probs)

    wer, _ = process_evaluation_epoch(agg)
    if not multi_gpu or distrib.get_rank() == 0:
        dllogger.log(step=(), data={"eval_wer": 100 * wer})
        for k, v in durs_to_percentiles(dur["data+dnn"], [0.90, 0.95, 0.99]).items():
            dllogger.log(step=(), data={f"latency_{k}": v})
    dllogger.flush()


if __name__ == "__main__":
    main()
