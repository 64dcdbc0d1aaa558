# *****************************************************************************
#  Copyright (c) 2020, NVIDIA CORPORATION.  All rights reserved.
#
#  Redistribution and use in source and binary forms, with or without
#  modification, are permitted provided that the conditions in LICENSE are met.
# *****************************************************************************

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
from scipy.io.wavfile import write

import dllogger as DLLogger
from dllogger import StdOutBackend, JSONStreamBackend, Verbosity

import models
from common.text.text_processing import TextProcessing


def parse_args(parser):
    parser.add_argument("-i", "--input", type=str, required=True, help="Full path to the input text")
    parser.add_argument("-o", "--output", default=None, help="Output folder to save audio")
    parser.add_argument("--fastpitch", type=str, help="Full path to the generator checkpoint file")
    parser.add_argument("--waveglow", type=str, default=None, help="Full path to the WaveGlow model checkpoint file")
    parser.add_argument("-bs", "--batch-size", type=int, default=64)
    parser.add_argument("--warmup-steps", type=int, default=0, help="Warmup iterations before measuring performance")
    parser.add_argument("--repeats", type=int, default=1, help="Repeat inference for benchmarking")
    parser.add_argument("--amp", action="store_true", help="Inference with AMP")
    parser.add_argument("--cuda", action="store_true", help="Run inference on a GPU using CUDA")
    parser.add_argument("--cudnn-benchmark", action="store_true", help="Enable cudnn benchmark mode")
    parser.add_argument("--torchscript", action="store_true", help="Apply TorchScript")
    parser.add_argument("--nvtx", action="store_true", help="Annotate phases with NVTX ranges for nsys")
    parser.add_argument("--profile", action="store_true", help="Capture a CUDA profiler window (nsys -c cudaProfilerApi)")
    parser.add_argument("--log-file", type=str, default=None, help="Path to a DLLogger log file")
    return parser


def load_and_setup_model(model_name, parser, checkpoint, amp, device, forward_is_infer=False, jitable=False):
    model_parser = models.parse_model_args(model_name, parser, add_help=False)
    model_args, model_unk_args = model_parser.parse_known_args()
    model_config = models.get_model_config(model_name, model_args)
    model = models.get_model(model_name, model_config, device, forward_is_infer=forward_is_infer, jitable=jitable)

    if checkpoint is not None:
        checkpoint_data = torch.load(checkpoint, map_location=device)
        sd = checkpoint_data.get("state_dict", checkpoint_data)
        sd = {k.replace("module.", "", 1): v for k, v in sd.items()}
        model.load_state_dict(sd, strict=False)

    if amp:
        model.half()
    model.eval()
    return model.to(device)


class MeasureTime(list):
    def __init__(self, *args, cuda=True, **kwargs):
        super(MeasureTime, self).__init__(*args, **kwargs)
        self.cuda = cuda

    def __enter__(self):
        if self.cuda:
            torch.cuda.synchronize()
        self.t0 = time.perf_counter()

    def __exit__(self, exc_type, exc_value, exc_traceback):
        if self.cuda:
            torch.cuda.current_stream().synchronize()
        self.append(time.perf_counter() - self.t0)


def main():
    parser = argparse.ArgumentParser(description="PyTorch FastPitch Inference", allow_abbrev=False)
    parser = parse_args(parser)
    args, unk_args = parser.parse_known_args()

    log_fpath = args.log_file or str(Path(args.output or ".", "nvlog_infer.json"))
    DLLogger.init(backends=[JSONStreamBackend(Verbosity.DEFAULT, log_fpath), StdOutBackend(Verbosity.VERBOSE)])
    for k, v in vars(args).items():
        DLLogger.log(step="PARAMETER", data={k: v})

    torch.backends.cudnn.benchmark = args.cudnn_benchmark

    device = torch.device("cuda" if args.cuda else "cpu")

    if args.cuda and torch.cuda.get_device_capability(device)[0] >= 8:
        # Ampere and newer: allow TF32 in matmuls
        torch.backends.cuda.matmul.allow_tf32 = True

    generator = load_and_setup_model("FastPitch", parser, args.fastpitch, args.amp, device,
                                     forward_is_infer=True, jitable=args.torchscript)
    if args.torchscript:
        generator = torch.jit.script(generator)

    tp = TextProcessing("english_basic", ["english_cleaners_v2"])
    with open(args.input) as f:
        lines = [l.strip() for l in f if l.strip()]
    batches = [lines[i:i + args.batch_size] for i in range(0, len(lines), args.batch_size)]

    gen_measures = MeasureTime(cuda=args.cuda)
    all_frames = 0

    if args.profile:
        torch.cuda.profiler.start()

    for rep in range(args.warmup_steps + args.repeats):
        for b in batches:
            texts = [torch.LongTensor(tp.encode_text(t)) for t in b]
            lens = torch.LongTensor([len(t) for t in texts])
            padded = torch.nn.utils.rnn.pad_sequence(texts, batch_first=True)
            padded, lens = padded.to(device), lens.to(device)
            if args.nvtx:
                torch.cuda.nvtx.range_push(f"fastpitch_batch_{rep}")
            with torch.no_grad(), gen_measures:
                mel, mel_lens, *_ = generator(padded, lens)
            if args.nvtx:
                torch.cuda.nvtx.range_pop()
            if rep >= args.warmup_steps:
                all_frames += mel.size(0) * mel.size(2)

    if args.profile:
        torch.cuda.profiler.stop()

    gen_latency = sum(gen_measures[args.warmup_steps * len(batches):]) or 1e-9
    DLLogger.log(step=(), data={"generator_frames/s": all_frames / gen_latency,
                                "generator_latency": gen_latency,
                                "max_mem_GiB": torch.cuda.max_memory_allocated() / 2 ** 30 if args.cuda else 0})
    DLLogger.flush()


if __name__ == "__main__":
    main()
