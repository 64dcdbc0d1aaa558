"""
Benchmarks a single feed-forward LIF layer in Norse, BindsNET and GeNN.

For every layer size the network is simulated for ``sequence_length`` steps with Poisson input and
the wall-clock time of the full simulation is recorded. Results are appended to a CSV file that
``norse/benchmark/plot.py`` turns into the figure in the Norse paper.
"""
import gc
import platform
from argparse import ArgumentParser
from collections import namedtuple
from datetime import datetime
import time

import numpy as np
import pandas as pd
import torch

from norse.torch.functional.lif import LIFParameters, LIFFeedForwardState
from norse.torch.module.lif import LIFCell
from norse.torch.functional.encode import poisson_encode

BenchmarkConfig = namedtuple(
    "BenchmarkConfig",
    ["batch_size", "device", "dt", "label", "network_size", "runs", "sequence_length", "start", "stop", "step"],
)

BenchmarkData = namedtuple("BenchmarkData", ["config", "durations", "mean", "std", "peak_memory_mb"])


class NorseLIFBenchmark:
    def __init__(self, config: BenchmarkConfig):
        self.config = config
        p = LIFParameters(v_th=torch.as_tensor(0.35))
        self.layer = LIFCell(p=p, dt=config.dt).to(config.device)
        self.weights = torch.randn(config.network_size, config.network_size, device=config.device) * 0.05

    def run(self, input_spikes: torch.Tensor):
        state = None
        spikes = []
        for ts in range(self.config.sequence_length):
            z = input_spikes[ts].matmul(self.weights)
            z, state = self.layer(z, state)
            spikes.append(z)
        return torch.stack(spikes)


def benchmark(model_fn, config: BenchmarkConfig):
    durations = []
    peak_memory = []
    for _ in range(config.runs):
        gc.collect()
        model = model_fn(config)
        rates = torch.rand(config.batch_size, config.network_size, device=config.device) * 100.0
        input_spikes = poisson_encode(rates, config.sequence_length, f_max=1.0, dt=config.dt)
        if config.device == "cuda":
            torch.cuda.reset_peak_memory_stats()
            torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.no_grad():
            model.run(input_spikes)
        if config.device == "cuda":  # wait for the queued kernels before stopping the clock
            torch.cuda.synchronize(config.device)
            peak_memory.append(torch.cuda.max_memory_allocated() / 2 ** 20)
        durations.append(time.perf_counter() - start)
        del model, input_spikes
    return durations, (max(peak_memory) if peak_memory else 0.0)


def bindsnet_model(config: BenchmarkConfig):
    from bindsnet.network import Network
    from bindsnet.network.nodes import Input, LIFNodes
    from bindsnet.network.topology import Connection

    class BindsNETRunner:
        def __init__(self):
            self.network = Network(batch_size=config.batch_size, dt=config.dt)
            self.network.add_layer(Input(n=config.network_size), name="input")
            self.network.add_layer(LIFNodes(n=config.network_size, thresh=0.35), name="lif")
            self.network.add_connection(
                Connection(self.network.layers["input"], self.network.layers["lif"],
                           w=torch.randn(config.network_size, config.network_size) * 0.05),
                source="input", target="lif",
            )
            self.network.to(config.device)

        def run(self, input_spikes):
            self.network.run(inputs={"input": input_spikes}, time=config.sequence_length)

    return BindsNETRunner()


def genn_model(config: BenchmarkConfig):
    from pygenn.genn_model import GeNNModel, init_var

    class GeNNRunner:
        def __init__(self):
            self.model = GeNNModel("float", f"lif_bench_{config.network_size}", backend="CUDA")
            self.model.dT = config.dt * 1000.0
            lif_params = {"C": 1.0, "TauM": 10.0, "Vrest": 0.0, "Vreset": 0.0, "Vthresh": 0.35,
                          "Ioffset": 0.0, "TauRefrac": 0.0}
            lif_init = {"V": 0.0, "RefracTime": 0.0}
            poisson_init = {"timeStepToSpike": 0.0}
            pre = self.model.add_neuron_population("pre", config.network_size, "PoissonNew",
                                                   {"rate": 100.0}, poisson_init)
            post = self.model.add_neuron_population("post", config.network_size, "LIF", lif_params, lif_init)
            self.model.add_synapse_population(
                "syn", "DENSE_INDIVIDUALG", 0, pre, post,
                "StaticPulse", {}, {"g": init_var("Normal", {"mean": 0.0, "sd": 0.05})}, {}, {},
                "DeltaCurr", {}, {})
            self.model.build()
            self.model.load()

        def run(self, input_spikes):
            while self.model.timestep < config.sequence_length:
                self.model.step_time()

    return GeNNRunner()


def run_benchmark(name, model_fn, config: BenchmarkConfig):
    results = []
    for n in range(config.start, config.stop, config.step):
        cfg = config._replace(network_size=n, label=name)
        try:
            durations, peak_mb = benchmark(model_fn, cfg)
        except RuntimeError as e:  # typically out of memory for the largest sizes
            print(f"{name} n={n}: {e}")
            break
        results.append(BenchmarkData(cfg, durations, np.mean(durations), np.std(durations), peak_mb))
        print(f"{name:>9} n={n:>6}  {np.mean(durations):.4f}s +- {np.std(durations):.4f}  peak {peak_mb:.1f} MiB")
    return results


def collect_metadata(device: str):
    meta = {
        "date": datetime.now().isoformat(),
        "host": platform.node(),
        "torch": torch.__version__,
        "device": device,
    }
    if device == "cuda":
        meta["gpu"] = torch.cuda.get_device_name(0)
        meta["cuda"] = torch.version.cuda
        meta["cudnn"] = torch.backends.cudnn.version()
    return meta


def main(args):
    config = BenchmarkConfig(
        batch_size=args.batch_size,
        device=args.device,
        dt=args.dt,
        label="",
        network_size=args.start,
        runs=args.runs,
        sequence_length=args.sequence_length,
        start=args.start,
        stop=args.stop,
        step=args.step,
    )
    frames = []
    runners = {"norse": NorseLIFBenchmark, "bindsnet": bindsnet_model, "genn": genn_model}
    meta = collect_metadata(args.device)
    for name in args.libraries:
        for r in run_benchmark(name, runners[name], config):
            frames.append({**meta, "label": name, "network_size": r.config.network_size,
                           "mean": r.mean, "std": r.std, "peak_memory_mb": r.peak_memory_mb})
    df = pd.DataFrame(frames)
    df.to_csv(args.output, mode="a", header=not args.append, index=False)
    print(df)


if __name__ == "__main__":
    parser = ArgumentParser("SNN library benchmarks")
    parser.add_argument("--libraries", nargs="+", default=["norse", "bindsnet", "genn"],
                        choices=["norse", "bindsnet", "genn"])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device", type=str, default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--dt", type=float, default=0.001)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sequence-length", type=int, default=1000)
    parser.add_argument("--start", type=int, default=250)
    parser.add_argument("--stop", type=int, default=5001)
    parser.add_argument("--step", type=int, default=250)
    parser.add_argument("--output", type=str, default="benchmark_results.csv")
    parser.add_argument("--append", action="store_true")
    main(parser.parse_args())
