# coding=utf-8
# Copyright (c) 2020, Huawei Technologies Co., Ltd.  All rights reserved.
"""Measure the inference latency of DynaBERT sub-networks (width_mult x depth_mult) on one GPU.

Used for the latency/accuracy trade-off figure: batch size 1 and 32, sequence length 128,
median of 100 timed runs after warm-up. fp16 is used automatically on Volta or newer GPUs.

    CUDA_VISIBLE_DEVICES=0 python tools/benchmark_latency.py --model_dir output/dynabert/SST-2
"""
import argparse
import json
import os
import statistics

import torch

from transformers import BertConfig, BertForSequenceClassification


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model_dir', type=str, required=True)
    parser.add_argument('--batch_sizes', type=str, default='1,32')
    parser.add_argument('--seq_len', type=int, default=128)
    parser.add_argument('--width_mult_list', type=str, default='0.25,0.5,0.75,1.0')
    parser.add_argument('--depth_mult_list', type=str, default='0.5,0.75,1.0')
    parser.add_argument('--warmup', type=int, default=20)
    parser.add_argument('--iters', type=int, default=100)
    parser.add_argument('--fp32', action='store_true', help='disable fp16 even on tensor-core GPUs')
    parser.add_argument('--output', type=str, default='latency.json')
    return parser.parse_args()


@torch.no_grad()
def time_model(model, input_ids, attention_mask, warmup, iters):
    for _ in range(warmup):
        model(input_ids, attention_mask=attention_mask)
    torch.cuda.synchronize()

    timings = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        model(input_ids, attention_mask=attention_mask)
        end.record()
        torch.cuda.synchronize()  # elapsed_time needs both events to have completed
        timings.append(start.elapsed_time(end))  # milliseconds
    return statistics.median(timings)


def main():
    args = parse_args()
    torch.backends.cudnn.deterministic = True
    device = torch.device('cuda:0')

    props = torch.cuda.get_device_properties(device)
    print('GPU: {} ({:.1f} GB)'.format(props.name, props.total_memory / 1024 ** 3))

    # tensor cores (sm_70+) make half precision worthwhile; older cards stay in fp32
    use_fp16 = not args.fp32 and torch.cuda.get_device_capability(device)[0] >= 7

    config = BertConfig.from_pretrained(args.model_dir)
    config.output_attentions, config.output_hidden_states = False, False
    model = BertForSequenceClassification.from_pretrained(args.model_dir, config=config)
    model.to(device)
    model.eval()
    if use_fp16:
        model.half()

    results = []
    for depth_mult in [float(d) for d in args.depth_mult_list.split(',')]:
        model.apply(lambda m: setattr(m, 'depth_mult', depth_mult))
        for width_mult in [float(w) for w in args.width_mult_list.split(',')]:
            model.apply(lambda m: setattr(m, 'width_mult', width_mult))
            for bs in [int(b) for b in args.batch_sizes.split(',')]:
                input_ids = torch.randint(1000, 20000, (bs, args.seq_len), device=device)
                attention_mask = torch.ones_like(input_ids)
                torch.cuda.reset_peak_memory_stats(device)
                latency = time_model(model, input_ids, attention_mask, args.warmup, args.iters)
                peak_mb = torch.cuda.max_memory_allocated(device) / 1024 ** 2
                results.append({'depth_mult': depth_mult, 'width_mult': width_mult, 'batch_size': bs,
                                'latency_ms': round(latency, 3), 'peak_mem_mb': round(peak_mb, 1),
                                'fp16': use_fp16})
                print('depth {:.2f} width {:.2f} bs {:>3d}: {:8.3f} ms  {:8.1f} MB'.format(
                    depth_mult, width_mult, bs, latency, peak_mb))

    with open(os.path.join(args.model_dir, args.output), 'w') as f:
        json.dump({'device': props.name, 'seq_len': args.seq_len, 'results': results}, f, indent=2)


if __name__ == '__main__':
    main()
