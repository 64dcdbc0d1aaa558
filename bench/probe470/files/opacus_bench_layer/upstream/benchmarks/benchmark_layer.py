# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import argparse
import json
import logging
from typing import Any, Dict, Tuple

import torch
import torch.nn as nn
from layers import LayerFactory
from opacus.grad_sample import GradSampleModule
from opacus.grad_sample.gsm_exp_weights import API_CUTOFF_VERSION
from utils import get_device_info, get_layer_set, reset_peak_memory_stats, save_results


logger = logging.getLogger(__name__)
logging.basicConfig(level=logging.INFO)

# CUDA events measure elapsed time on the device; host-side timers would only
# measure kernel launch latency.
_TIMING_DEVICE = torch.device("cuda:0")


def run_layer_benchmark(
    num_repeats: int,
    forward_only: bool = False,
    create_layer: LayerFactory.create = LayerFactory.create,
    **kwargs,
) -> Tuple[float, Dict[str, int]]:
    """Benchmarks a single layer.

    Args:
        num_repeats: how many times to repeat the forward(/backward) pass
        forward_only: whether to skip the backward pass
        create_layer: factory method that builds the layer under test
        **kwargs: arguments passed to the layer factory

    Returns:
        Average runtime per pass in seconds and a dict of memory statistics
        (in bytes).
    """
    assert torch.cuda.is_available(), "Layer benchmarks need a GPU"
    device = _TIMING_DEVICE

    # setup layer
    layer_fun = create_layer(**kwargs)

    if kwargs.get("gsm_mode"):
        layer_fun.module = GradSampleModule(
            layer_fun.module,
            batch_first=True,
            force_functorch=kwargs["gsm_mode"] == "functorch",
        )

    # move layer to device and get memory statistics
    memory_stats = reset_peak_memory_stats(device)
    assert memory_stats.cur_mem == 0
    layer_fun.to(device=device)
    layer_memory = torch.cuda.memory_allocated(device)

    # warm up: the first pass triggers cuBLAS/cuDNN handle creation
    for _ in range(3):
        layer_fun.forward_only() if forward_only else layer_fun.forward_backward()
    torch.cuda.synchronize(device)

    # reset memory stats and start timing
    memory_stats = reset_peak_memory_stats(device)
    start_event = torch.cuda.Event(enable_timing=True)
    end_event = torch.cuda.Event(enable_timing=True)

    start_event.record()
    for _ in range(num_repeats):
        layer_fun.forward_only() if forward_only else layer_fun.forward_backward()
    end_event.record()
    torch.cuda.synchronize()

    runtime = start_event.elapsed_time(end_event) / 1000.0 / num_repeats
    memory_stats = reset_peak_memory_stats(device)

    return runtime, {
        "layer": layer_memory,
        "max_memory": memory_stats.prev_max_mem,
    }


def main(args) -> None:
    with open(args.config) as config_file:
        config = json.load(config_file)

    for layer in args.layers:
        for batch_size in args.batch_sizes:
            layer_config = config[get_layer_set(layer)]
            results = []
            for run in range(args.num_runs):
                if args.random_seed is not None:
                    torch.manual_seed(args.random_seed + run)
                    torch.cuda.manual_seed_all(args.random_seed + run)

                runtime, memory_stats = run_layer_benchmark(
                    num_repeats=args.num_repeats,
                    forward_only=args.forward_only,
                    layer_name=layer,
                    batch_size=batch_size,
                    gsm_mode=args.gsm_mode,
                    **layer_config,
                )
                logger.info(
                    f"{layer} bs={batch_size} run {run}: "
                    f"{runtime * 1000:.3f} ms/iter, peak {memory_stats['max_memory'] / 2**20:.1f} MiB"
                )
                results.append({"runtime": runtime, "memory_stats": memory_stats})

            if not args.no_save:
                save_results(
                    layer=layer,
                    batch_size=batch_size,
                    num_runs=args.num_runs,
                    num_repeats=args.num_repeats,
                    results=results,
                    config=layer_config,
                    random_seed=args.random_seed,
                    forward_only=args.forward_only,
                    root=args.root,
                    suffix=args.suffix,
                    device_info=get_device_info(_TIMING_DEVICE),
                )


if __name__ == "__main__":
    layers = [
        "linear",
        "gsm_linear",
        "conv",
        "gsm_conv",
        "layernorm",
        "gsm_layernorm",
        "instancenorm",
        "gsm_instancenorm",
        "groupnorm",
        "gsm_groupnorm",
        "embedding",
        "gsm_embedding",
        "mha",
        "dpmha",
        "gsm_dpmha",
        "rnn",
        "dprnn",
        "gsm_dprnn",
        "gru",
        "dpgru",
        "gsm_dpgru",
        "lstm",
        "dplstm",
        "gsm_dplstm",
    ]

    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--layers",
        choices=layers,
        default=layers,
        nargs="+",
    )
    parser.add_argument(
        "--batch_sizes",
        default=[16, 32, 64, 128, 256, 512],
        nargs="+",
        type=int,
    )
    parser.add_argument(
        "--num_runs", default=100, type=int, help="number of benchmarking runs"
    )
    parser.add_argument(
        "--num_repeats",
        default=20,
        type=int,
        help="how many forward/backward passes per run",
    )
    parser.add_argument(
        "--forward_only", action="store_true", help="only run forward passes"
    )
    parser.add_argument(
        "--random_seed",
        type=int,
        help="random seed for the first run of each layer, subsequent runs increase the random seed by 1",
    )
    parser.add_argument(
        "--gsm_mode",
        default="hooks",
        choices=["hooks", "ew", "functorch", "no_op"],
        help="Mode for GradSampleModule",
    )
    parser.add_argument("-c", "--config", default="config.json")
    parser.add_argument(
        "--cont", action="store_true", help="only run missing experiments"
    )
    parser.add_argument(
        "--root",
        type=str,
        default="./results/raw/",
        help="path to directory that benchmark results should be saved in",
    )
    parser.add_argument(
        "--suffix",
        type=str,
        default="",
        help="suffix to append to each result file's name",
    )
    parser.add_argument(
        "--no_save", action="store_true", help="whether to skip saving results"
    )
    args = parser.parse_args()
    main(args)
