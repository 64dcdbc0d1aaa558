# coding=utf-8
"""
Batch inference for CPM-Bee with the pure-PyTorch model (CPMBeeTorch).

    python text_generation.py --config config/cpm-bee-10b.json \
        --ckpt path/to/cpm-bee-10b.pt --input data/test.jsonl --output results.jsonl --gpu 0

For the 10B model in fp16 a single 24G card is enough; with --memory-limit the
script refuses to start when the card does not have enough free memory.
"""
import argparse
import json
import os
import sys
import time

import torch
from tqdm import tqdm

from cpm_live.generation.bee import CPMBeeBeamSearch, CPMBeeRandomSampling
from cpm_live.models import CPMBeeTorch, CPMBeeConfig
from cpm_live.tokenizers import CPMBeeTokenizer

try:
    from opendelta import LoraModel
except ImportError:  # delta-tuning is optional at inference time
    LoraModel = None


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default="config/cpm-bee-10b.json")
    parser.add_argument("--ckpt", type=str, required=True, help="path to the full checkpoint")
    parser.add_argument("--delta", type=str, default=None, help="path to the LoRA weights (optional)")
    parser.add_argument("--input", type=str, required=True)
    parser.add_argument("--output", type=str, default="results.jsonl")
    parser.add_argument("--gpu", type=int, default=0, help="index of the GPU to run on")
    parser.add_argument("--fp16", action="store_true", default=True)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=100)
    parser.add_argument("--beam-size", type=int, default=3)
    parser.add_argument("--sampling", action="store_true", help="use random sampling instead of beam search")
    parser.add_argument("--repetition-penalty", type=float, default=1.1)
    parser.add_argument("--memory-limit", type=float, default=22.0,
                        help="GiB of free device memory required before loading the model")
    return parser.parse_args()


def check_free_memory(gpu: int, need_gib: float):
    free, total = torch.cuda.mem_get_info(gpu)
    free_gib, total_gib = free / 2 ** 30, total / 2 ** 30
    print("GPU %d: %.1f GiB free / %.1f GiB total" % (gpu, free_gib, total_gib))
    if free_gib < need_gib:
        print("Not enough free memory on GPU %d (need %.1f GiB), abort." % (gpu, need_gib))
        sys.exit(1)


def load_model(args):
    config = CPMBeeConfig.from_json_file(args.config)
    model = CPMBeeTorch(config=config)

    if args.delta is not None:
        if LoraModel is None:
            raise RuntimeError("opendelta is required to load delta weights")
        LoraModel(backbone_model=model, modified_modules=["project_q", "project_v"], backend="hf")

    state_dict = torch.load(args.ckpt, map_location="cpu")
    model.load_state_dict(state_dict, strict=False)
    del state_dict

    if args.delta is not None:
        # delta weights were saved directly from the training GPUs
        delta_state = torch.load(args.delta, map_location="cuda:%d" % args.gpu)
        model.load_state_dict(delta_state, strict=False)

    if args.fp16:
        model = model.half()
    model.cuda()
    model.eval()
    return model


def read_inputs(path):
    data = []
    with open(path, "r", encoding="utf-8") as fin:
        for line in fin:
            line = line.strip()
            if not line:
                continue
            data.append(json.loads(line))
    return data


def batched(items, batch_size):
    for i in range(0, len(items), batch_size):
        yield items[i: i + batch_size]


def main():
    args = parse_args()
    torch.cuda.set_device(args.gpu)
    if args.memory_limit > 0:
        check_free_memory(args.gpu, args.memory_limit)

    tokenizer = CPMBeeTokenizer()
    model = load_model(args)
    print("Model loaded, %.2f GiB allocated" % (torch.cuda.memory_allocated() / 2 ** 30))

    if args.sampling:
        generator = CPMBeeRandomSampling(model=model, tokenizer=tokenizer)
    else:
        generator = CPMBeeBeamSearch(model=model, tokenizer=tokenizer)

    data = read_inputs(args.input)
    start = time.time()
    num_done = 0
    with open(args.output, "w", encoding="utf-8") as fout:
        for batch in tqdm(list(batched(data, args.batch_size)), desc="generating"):
            with torch.inference_mode():
                if args.sampling:
                    results = generator.generate(batch, max_length=args.max_length,
                                                 repetition_penalty=args.repetition_penalty)
                else:
                    results = generator.generate(batch, max_length=args.max_length,
                                                 beam_size=args.beam_size,
                                                 repetition_penalty=args.repetition_penalty)
            for res in results:
                fout.write(json.dumps(res, ensure_ascii=False) + "\n")
            num_done += len(batch)
            if num_done % (args.batch_size * 50) == 0:
                torch.cuda.empty_cache()

    torch.cuda.synchronize()
    elapsed = time.time() - start
    print("Generated %d samples in %.1fs (%.2f samples/s)" % (num_done, elapsed, num_done / max(elapsed, 1e-6)))
    print("Peak memory: %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
