import argparse
import textwrap
import tempfile
import contextlib
import itertools
import time
import logging

from typing import Optional

import torch
from torch.utils.benchmark import Timer, Measurement
from torch.utils.benchmark.utils.common import trim_sigfig, select_unit

from e3nn.util.jit import script

from nequip.utils import Config
from nequip.data import AtomicData, AtomicDataDict, dataset_from_config
from nequip.model import model_from_config
from nequip.scripts.deploy import _compile_for_deploy, load_deployed_model
from nequip.scripts.train import default_config, check_code_version
from nequip.utils._global_options import _set_global_options
from nequip.scripts._logger import set_up_script_logger


def main(args=None):
    parser = argparse.ArgumentParser(
        description=textwrap.dedent(
            """Benchmark the approximate MD performance of a given model configuration / dataset pair."""
        )
    )
    parser.add_argument("config", help="configuration file")
    parser.add_argument(
        "--model",
        help="A deployed model to load instead of building a new one from `config`. ",
        type=str,
        default=None,
    )
    parser.add_argument(
        "--profile",
        help="Profile instead of timing, creating and outputing a Chrome trace JSON to the given path.",
        type=str,
        default=None,
    )
    parser.add_argument(
        "--memory-summary",
        help="Print torch.cuda.memory_summary() after running the model",
        action="store_true",
    )
    parser.add_argument(
        "--verbose", help="Logging verbosity level", type=str, default="error"
    )
    parser.add_argument(
        "--device",
        help="Device to run the model on. If not provided, defaults to CUDA if available and CPU otherwise.",
        type=str,
        default=None,
    )
    parser.add_argument(
        "-n",
        help="Number of trials.",
        type=int,
        default=30,
    )
    parser.add_argument(
        "--n-data",
        help="Number of frames to use.",
        type=int,
        default=1,
    )
    parser.add_argument(
        "--timestep",
        help="MD timestep for ns/day esimation, in fs. Defauts to 1fs.",
        type=float,
        default=1,
    )
    parser.add_argument(
        "--no-compile",
        help="Don't compile the model to TorchScript",
        action="store_true",
    )
    parser.add_argument(
        "--pdb",
        help="Run model builders and model under debugger to easily drop to debugger to investigate errors.",
        action="store_true",
    )

    # Parse the args
    args = parser.parse_args(args=args)
    if args.pdb:
        assert args.profile is None

    if args.device is None:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(args.device)

    print(f"Using device: {device}")
    if device.type == "cuda":
        print(
            "WARNING: please note that models running on CUDA are usually limited by a "
            "latency-bound regime rather than a throughput bound regime, so the batch "
            "size does not matter much."
        )
        props = torch.cuda.get_device_properties(device)
        print(
            f"    GPU: {props.name}, SMs: {props.multi_processor_count}, "
            f"compute capability {props.major}.{props.minor}, "
            f"memory {props.total_memory / 1024**3:.1f} GB"
        )

    logger = set_up_script_logger(None, args.verbose)
    logger.info("Loading config...")
    config = Config.from_file(args.config, defaults=default_config)
    _set_global_options(config)
    check_code_version(config)

    # Load dataset to get something to benchmark on
    print("Loading dataset... ")
    dataset_time = time.time()
    dataset = dataset_from_config(config)
    dataset_time = time.time() - dataset_time
    print(f"    loading dataset took {dataset_time:.4f}s")
    print(
        f"    loaded dataset of size {len(dataset)} and sampled --n-data={args.n_data} frames"
    )
    dataset_rng = torch.Generator()
    dataset_rng.manual_seed(config.get("dataset_seed", config.get("seed", 12345)))
    dataset = dataset.index_select(
        torch.randperm(len(dataset), generator=dataset_rng)[: args.n_data]
    )
    datas_list = [
        AtomicData.to_AtomicDataDict(dataset[i].to(device)) for i in range(args.n_data)
    ]
    n_atom: int = len(datas_list[0]["pos"])
    if not all(len(d["pos"]) == n_atom for d in datas_list):
        raise NotImplementedError(
            "nequip-benchmark does not currently handle benchmarking on data frames with variable number of atoms"
        )
    # print some dataset information
    print("    benchmark frames statistics:")
    print(f"         number of atoms: {n_atom}")
    print(f"         number of types: {dataset.type_mapper.num_types}")
    avg_edges = sum(d["edge_index"].shape[1] for d in datas_list) / len(datas_list)
    print(f"          avg. num edges: {avg_edges}")
    avg_neigh = avg_edges / n_atom
    print(f"         avg. neigh/atom: {avg_neigh}")

    # cycle over the datas we loaded
    datas = itertools.cycle(datas_list)

    # short circut
    if args.n == 0:
        print("Got -n 0, so quitting without running benchmark.")
        return
    elif args.n is None:
        args.n = 5 if args.profile else 30

    # Load model:
    if args.model is None:
        print("Building model... ")
        model_time = time.time()
        model = model_from_config(config, initialize=True, dataset=dataset)
        model_time = time.time() - model_time
        print(f"    building model took {model_time:.4f}s")
    else:
        print("Loading model...")
        model, metadata = load_deployed_model(args.model, device=device, freeze=False)
        print("    deployed model has metadata:")
        print(
            "\n".join(
                "        %s: %s" % e for e in metadata.items() if e[0] != "config"
            )
        )
    print(f"    model has {sum(p.numel() for p in model.parameters())} weights")
    print(
        f"    model has {sum(p.numel() for p in model.parameters() if p.requires_grad)} trainable weights"
    )

    model = model.to(device)
    if not args.no_compile:
        print("Compile...")
        compile_time = time.time()
        model = script(model)
        model = _compile_for_deploy(model)
        compile_time = time.time() - compile_time
        print(f"    compilation took {compile_time:.4f}s")

    # Make sure we're warm past compilation
    warmup = config["_jit_bailout_depth"] + 4  # just to be safe...

    if args.profile is not None:

        def trace_handler(p):
            p.export_chrome_trace(args.profile)
            print(f"Wrote profiling trace to `{args.profile}`")

        print("Starting profiling...")
        with torch.profiler.profile(
            activities=[
                torch.profiler.ProfilerActivity.CPU,
                torch.profiler.ProfilerActivity.CUDA,
            ],
            schedule=torch.profiler.schedule(wait=1, warmup=warmup, active=args.n),
            on_trace_ready=trace_handler,
        ) as p:
            for _ in range(1 + warmup + args.n):
                out = model(next(datas).copy())
                out[AtomicDataDict.TOTAL_ENERGY_KEY].item()
                p.step()

        print(p.key_averages(group_by_input_shape=True).table(sort_by="cuda_time_total", row_limit=20))
    elif args.pdb:
        print("Running model under debugger...")
        try:
            for _ in range(args.n):
                model(next(datas).copy())
        except Exception as e:
            print(e)
            import pdb

            pdb.post_mortem()
        print("Done.")
    else:
        print("Warmup...")
        warmup_time = time.time()
        for _ in range(warmup):
            model(next(datas).copy())
        warmup_time = time.time() - warmup_time
        print(f"    {warmup} calls of warmup took {warmup_time:.4f}s")

        print("Benchmarking...")

        # just time
        t = Timer(
            stmt="model(next(datas).copy())['total_energy'].item()",
            globals={"model": model, "datas": datas},
        )
        perloop: Measurement = t.timeit(args.n)

        print(" -- Results --")
        print(
            f"PLEASE NOTE: these are speeds for the MODEL, evaluated on --n-data={args.n_data} configurations kept in memory."
        )
        print(
            "    \\_ MD itself, memory copies, and other overhead will affect real-world performance."
        )
        print()
        trim_time = trim_sigfig(perloop.times[0], perloop.significant_figures)
        time_unit, time_scale = select_unit(trim_time)
        time_str = ("{:.%dg}" % perloop.significant_figures).format(
            trim_time / time_scale
        )
        print(f"The average call took {time_str}{time_unit}")
        print(
            "Assuming linear scaling — which is ALMOST NEVER true in practice, especially on GPU —"
        )
        per_atom_time = trim_time / n_atom
        time_unit_per, time_scale_per = select_unit(per_atom_time)
        print(
            f"    \\_ this comes out to {per_atom_time/time_scale_per:g} {time_unit_per}/atom/call"
        )
        ns_day = (86400.0 / trim_time) * args.timestep * 1e-6
        #     day in s^   s/step^         ^ fs / step      ^ ns / fs
        print(
            f"For this system, at a {args.timestep:.2f}fs timestep, this comes out to {ns_day:.2f} ns/day"
        )

        # explicit event-based timing as a sanity check
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        if device.type == "cuda":  # events only make sense on the GPU stream
            torch.cuda.synchronize(device)
            start.record()
            for _ in range(args.n):
                model(next(datas).copy())
            end.record()
            torch.cuda.synchronize()
            print(f"    event timing: {start.elapsed_time(end) / args.n:.3f} ms/call")

    if args.memory_summary:
        if device.type == "cuda" and torch.cuda.is_initialized():
            print(
                "Memory usage summary:\n" + torch.cuda.memory_summary(device=device)
            )
            print(
                f"    max allocated: {torch.cuda.max_memory_allocated(device) / 1024**2:.1f} MiB"
            )
        else:
            print("--memory-summary is only available for CUDA devices")


if __name__ == "__main__":
    main()
