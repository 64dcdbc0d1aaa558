"""
Measure latency, firing rates, synaptic operations (SOPs) and board power of a spiking model.

Theoretical energy follows the usual 45 nm CMOS numbers used in SNN papers
(E_MAC = 4.6 pJ, E_AC = 0.9 pJ): E = E_MAC * FLOPs(first conv) + E_AC * SOPs(rest).
The measured number is the average GPU board power sampled with NVML while the model runs.

    python tools/measure_energy.py --model spikformer_8_512 --ckpt ./checkpoints/spikformer-8-512.pth \
        --T 4 --batch-size 32 --iters 50
"""
import argparse
import json
import threading
import time

import torch
import torch.nn as nn
import pynvml

from spikingjelly.activation_based import functional, monitor, neuron
from models import build_model

E_MAC = 4.6e-12
E_AC = 0.9e-12


class GPUPowerSampler(threading.Thread):
    """Samples the board power draw (W) of one GPU every ``interval`` seconds in a background thread."""

    def __init__(self, device_index: int = 0, interval: float = 0.02):
        super().__init__(daemon=True)
        pynvml.nvmlInit()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
        self.interval = interval
        self.samples = []
        self._stop_event = threading.Event()

    def run(self):
        while not self._stop_event.is_set():
            # milliwatts -> watts
            self.samples.append(pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0)
            time.sleep(self.interval)

    def stop(self):
        self._stop_event.set()
        self.join()
        pynvml.nvmlShutdown()

    @property
    def mean_power(self):
        return sum(self.samples) / max(len(self.samples), 1)


def count_sops(model: nn.Module, x: torch.Tensor):
    """Counts synaptic operations = sum over layers of (input firing rate * MACs of the following layer)."""
    fr_records = {}
    hooks = []
    macs = {}

    def make_hook(name):
        def hook(m, inputs, output):
            x_in = inputs[0]
            fr_records[name] = (x_in != 0).float().mean().item()
            if isinstance(m, nn.Conv2d):
                out_elems = output.numel() / output.shape[0]
                macs[name] = out_elems * m.in_channels * m.kernel_size[0] * m.kernel_size[1] / m.groups
            elif isinstance(m, nn.Linear):
                macs[name] = m.in_features * m.out_features * (output.numel() / output.shape[-1]) / output.shape[0]
        return hook

    for name, m in model.named_modules():
        if isinstance(m, (nn.Conv2d, nn.Linear, nn.Conv1d)):
            hooks.append(m.register_forward_hook(make_hook(name)))

    with torch.no_grad():
        model(x)
    functional.reset_net(model)
    for h in hooks:
        h.remove()

    first = next(iter(macs))
    flops_first = macs[first]
    sops = sum(fr_records[k] * macs[k] for k in macs if k != first)
    return flops_first, sops, fr_records


def main():
    parser = argparse.ArgumentParser(description='SNN energy / latency measurement')
    parser.add_argument('--model', default='spikformer_8_512')
    parser.add_argument('--ckpt', default=None)
    parser.add_argument('--T', default=4, type=int)
    parser.add_argument('--batch-size', default=32, type=int)
    parser.add_argument('--img-size', default=224, type=int)
    parser.add_argument('--iters', default=50, type=int)
    parser.add_argument('--warmup', default=10, type=int)
    parser.add_argument('--device', default='cuda:0')
    parser.add_argument('--cupy', action='store_true', help='use the cupy backend for LIF neurons')
    parser.add_argument('--fp16', action='store_true')
    parser.add_argument('--out', default='energy.json')
    args = parser.parse_args()

    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True

    major, minor = torch.cuda.get_device_capability(device)
    if major >= 8:
        # Ampere and newer: allow TF32 in matmul/conv, as in training
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    gpu_name = torch.cuda.get_device_name(device)
    print(f'Running on {gpu_name} (sm_{major}{minor})')

    model = build_model(args.model, T=args.T)
    if args.ckpt:
        state = torch.load(args.ckpt, map_location='cpu')
        model.load_state_dict(state.get('state_dict', state), strict=False)
    model = model.to(device).eval()
    functional.set_step_mode(model, 'm')
    if args.cupy:
        functional.set_backend(model, 'cupy', instance=neuron.LIFNode)

    x = torch.rand(args.batch_size, 3, args.img_size, args.img_size, device=device)

    # ---- SOPs and firing rates ----------------------------------------------------------------------------
    flops_first, sops, fr = count_sops(model, x[:1])
    e_theory = E_MAC * flops_first + E_AC * sops
    print(f'first-layer MACs {flops_first / 1e9:.3f} G, SOPs {sops / 1e9:.3f} G, '
          f'theoretical energy {e_theory * 1e3:.3f} mJ / image')

    # ---- latency, memory and measured power ---------------------------------------------------------------
    with torch.no_grad(), torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.fp16):
        for _ in range(args.warmup):
            model(x)
            functional.reset_net(model)
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)

        sampler = GPUPowerSampler(device.index or 0)
        sampler.start()
        start_evt = torch.cuda.Event(enable_timing=True)
        end_evt = torch.cuda.Event(enable_timing=True)
        start_evt.record()
        for _ in range(args.iters):
            model(x)
            functional.reset_net(model)
        end_evt.record()
        torch.cuda.synchronize(device)  # wait for the timed iterations before reading the events
        sampler.stop()

    latency_ms = start_evt.elapsed_time(end_evt) / args.iters
    peak_mem_mb = torch.cuda.max_memory_allocated(device) / 2 ** 20
    power_w = sampler.mean_power
    energy_per_img_mj = power_w * latency_ms / args.batch_size

    result = {
        'model': args.model,
        'gpu': gpu_name,
        'T': args.T,
        'batch_size': args.batch_size,
        'latency_ms_per_batch': round(latency_ms, 3),
        'throughput_img_s': round(args.batch_size / latency_ms * 1000, 1),
        'peak_mem_mb': round(peak_mem_mb, 1),
        'mean_power_w': round(power_w, 1),
        'measured_energy_mj_per_img': round(energy_per_img_mj, 3),
        'theoretical_energy_mj_per_img': round(e_theory * 1e3, 4),
        'sops_g': round(sops / 1e9, 4),
        'firing_rates': {k: round(v, 4) for k, v in fr.items()},
    }
    with open(args.out, 'w') as f:
        json.dump(result, f, indent=2)
    print(json.dumps({k: v for k, v in result.items() if k != 'firing_rates'}, indent=2))


if __name__ == '__main__':
    main()
