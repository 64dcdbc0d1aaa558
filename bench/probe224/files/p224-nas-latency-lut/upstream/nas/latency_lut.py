"""Latency lookup table for hardware-aware evolutionary NAS.

For every candidate block of the (once-for-all style) search space we measure
the forward latency on the target GPU once, store it in a JSON table keyed by
device name, and let the evolutionary search predict the latency of a full
sub-network as the sum of its blocks. Measurements use CUDA graphs to remove
Python/launch overhead, which otherwise dominates for small blocks at batch 1.

    python -m nas.latency_lut --space mbv3 --batch-size 1 --out luts/
"""

import argparse
import itertools
import json
import os
import statistics
from pathlib import Path

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile

from nas.ofa_space import MBConvBlock, SEARCH_SPACES


def device_key() -> str:
    name = torch.cuda.get_device_name(0)
    return name.replace(" ", "_").replace("/", "-")


def pick_batch_sizes(max_bs: int):
    """Scale the list of measured batch sizes with the number of SMs."""
    props = torch.cuda.get_device_properties(0)
    sm_count = props.multi_processor_count
    upper = min(max_bs, 4 * sm_count)
    sizes = [1]
    while sizes[-1] * 2 <= upper:
        sizes.append(sizes[-1] * 2)
    return sizes


def use_channels_last() -> bool:
    major, minor = torch.cuda.get_device_capability()
    # Tensor cores prefer NHWC from Volta on.
    return major >= 7


@torch.inference_mode()
def measure_block(block: nn.Module, input_shape, warmup: int = 20, iters: int = 100, use_graph: bool = True):
    """Median latency (ms) of one block for a given input shape."""
    device = torch.device("cuda")
    block = block.to(device).eval()
    x = torch.randn(*input_shape, device=device)
    if use_channels_last():
        block = block.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)

    # warm-up on a side stream (required before graph capture)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmup):
            block(x)
    torch.cuda.current_stream().wait_stream(s)

    if use_graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = block(x)
        run = g.replay
    else:
        run = lambda: block(x)  # noqa: E731

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    del x
    return statistics.median(times)


def profile_block(block: nn.Module, input_shape, trace_path: str):
    """Optional Chrome trace of a single block, for debugging outliers."""
    block = block.cuda().eval()
    x = torch.randn(*input_shape).cuda()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        with torch.inference_mode():
            for _ in range(10):
                block(x)
    prof.export_chrome_trace(trace_path)
    return prof.key_averages().table(sort_by="cuda_time_total", row_limit=15)


def build_lut(space_name: str, resolution: int, batch_sizes, use_graph: bool):
    space = SEARCH_SPACES[space_name]
    lut = {}
    for stage_idx, stage in enumerate(space.stages):
        h = resolution // stage.stride_before
        for (k, e, se), cin, cout in itertools.product(
            itertools.product(space.kernel_sizes, space.expand_ratios, [False, True]),
            stage.in_channels,
            [stage.out_channels],
        ):
            key = f"s{stage_idx}_k{k}_e{e}_se{int(se)}_cin{cin}_cout{cout}_h{h}"
            block = MBConvBlock(cin, cout, kernel_size=k, expand_ratio=e, stride=stage.stride, use_se=se)
            lut[key] = {str(bs): measure_block(block, (bs, cin, h, h), use_graph=use_graph) for bs in batch_sizes}
            h_out = h // stage.stride
            h = h_out
        print(f"stage {stage_idx}: {len(lut)} entries so far")
    return lut


class LatencyPredictor:
    """Sum-of-blocks latency model backed by a LUT produced by build_lut()."""

    def __init__(self, lut_path: str, batch_size: int = 1):
        with open(lut_path) as f:
            payload = json.load(f)
        self.meta = payload["meta"]
        self.lut = payload["lut"]
        self.bs = str(batch_size)

    def block_latency(self, key: str) -> float:
        entry = self.lut.get(key)
        if entry is None:
            raise KeyError(f"block {key} missing from LUT measured on {self.meta['device']}")
        return entry[self.bs]

    def predict(self, arch) -> float:
        return sum(self.block_latency(k) for k in arch.block_keys())


def constrained_evolution(space, acc_predictor: nn.Module, lat: LatencyPredictor, budget_ms: float,
                          population: int = 100, generations: int = 500, mutate_prob: float = 0.1,
                          parent_ratio: float = 0.25, seed: int = 0):
    """OFA-style evolutionary search with an accuracy predictor and a latency LUT."""
    import random

    rng = random.Random(seed)
    acc_predictor = acc_predictor.cuda().eval()

    def feasible_sample():
        while True:
            a = space.sample(rng)
            if lat.predict(a) <= budget_ms:
                return a

    @torch.no_grad()
    def score(archs):
        feats = torch.stack([space.encode(a) for a in archs]).cuda()
        return acc_predictor(feats).squeeze(-1).float().cpu().tolist()

    pop = [feasible_sample() for _ in range(population)]
    fit = score(pop)
    for gen in range(generations):
        order = sorted(range(len(pop)), key=lambda i: fit[i], reverse=True)
        parents = [pop[i] for i in order[: int(parent_ratio * population)]]
        children = []
        while len(children) < population - len(parents):
            if rng.random() < 0.5:
                child = space.mutate(rng.choice(parents), mutate_prob, rng)
            else:
                child = space.crossover(rng.choice(parents), rng.choice(parents), rng)
            if lat.predict(child) <= budget_ms:
                children.append(child)
        pop = parents + children
        fit = score(pop)
        if gen % 50 == 0:
            best = max(fit)
            print(f"gen {gen}: best predicted acc {best:.4f}")
    i = max(range(len(pop)), key=lambda j: fit[j])
    return pop[i], fit[i], lat.predict(pop[i])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--space", default="mbv3", choices=sorted(SEARCH_SPACES))
    p.add_argument("--resolution", type=int, default=224)
    p.add_argument("--max-batch-size", type=int, default=64)
    p.add_argument("--no-graph", action="store_true")
    p.add_argument("--out", default="luts")
    p.add_argument("--profile-key", default=None)
    args = p.parse_args()

    torch.backends.cudnn.benchmark = True
    os.makedirs(args.out, exist_ok=True)
    dev = device_key()
    batch_sizes = pick_batch_sizes(args.max_batch_size)
    print(f"Building {args.space} latency LUT on {dev} for batch sizes {batch_sizes}")

    lut = build_lut(args.space, args.resolution, batch_sizes, use_graph=not args.no_graph)
    meta = {
        "device": dev,
        "capability": ".".join(map(str, torch.cuda.get_device_capability())),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "cuda_graphs": not args.no_graph,
    }
    path = Path(args.out) / f"{args.space}_{dev}_r{args.resolution}.json"
    with open(path, "w") as f:
        json.dump({"meta": meta, "lut": lut}, f, indent=1)
    print(f"wrote {len(lut)} entries to {path}")


if __name__ == "__main__":
    main()
