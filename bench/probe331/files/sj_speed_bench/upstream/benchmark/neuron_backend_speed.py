"""
Compare the forward+backward speed of multi-step IF/LIF neurons with the ``torch`` and ``cupy`` backends.

    python benchmark/neuron_backend_speed.py --neuron LIF --repeats 64 --out ./bench_lif.csv

The numbers in docs/source/activation_based/cupy_neuron.rst were produced with this script on an A100-SXM4-40GB.
"""
import argparse
import csv
import os

import torch
import torch.nn as nn
from spikingjelly.activation_based import neuron, cuda_utils, functional, surrogate

device = 'cuda:0'
# backends to compare; 'torch' is the reference implementation
BACKENDS = ('torch', 'cupy')


def forward_backward(net: nn.Module, x_seq: torch.Tensor):
    y_seq = net(x_seq)
    y_seq.sum().backward()
    x_seq.grad.zero_()
    functional.reset_net(net)


def forward_only(net: nn.Module, x_seq: torch.Tensor):
    with torch.no_grad():
        net(x_seq)
    functional.reset_net(net)


def build_neuron(kind: str, backend: str, detach_reset: bool, hard_reset: bool):
    v_reset = 0. if hard_reset else None
    if kind == 'IF':
        return neuron.IFNode(v_reset=v_reset, surrogate_function=surrogate.ATan(), detach_reset=detach_reset,
                             step_mode='m', backend=backend)
    elif kind == 'LIF':
        return neuron.LIFNode(tau=2., v_reset=v_reset, surrogate_function=surrogate.ATan(),
                              detach_reset=detach_reset, step_mode='m', backend=backend)
    elif kind == 'PLIF':
        return neuron.ParametricLIFNode(init_tau=2., v_reset=v_reset, surrogate_function=surrogate.ATan(),
                                        detach_reset=detach_reset, step_mode='m', backend=backend)
    raise ValueError(kind)


def main():
    parser = argparse.ArgumentParser(description='neuron backend speed benchmark')
    parser.add_argument('--neuron', default='LIF', choices=['IF', 'LIF', 'PLIF'])
    parser.add_argument('--repeats', default=32, type=int)
    parser.add_argument('--dtype', default='float', choices=['float', 'half'])
    parser.add_argument('--forward-only', action='store_true')
    parser.add_argument('--out', default=None, type=str, help='csv file to write the results to')
    args = parser.parse_args()

    torch.backends.cudnn.benchmark = True
    print(f'PyTorch {torch.__version__}, device: {torch.cuda.get_device_name(device)}')

    rows = []
    fun = forward_only if args.forward_only else forward_backward

    for hard_reset in [True, False]:
        for detach_reset in [True, False]:
            nets = {}
            for backend in BACKENDS:
                net = build_neuron(args.neuron, backend, detach_reset, hard_reset).to(device)
                if args.dtype == 'half':
                    net = net.half()
                nets[backend] = net

            for T in [4, 8, 16, 32, 64]:
                for N in [2 ** 12, 2 ** 14, 2 ** 16, 2 ** 18, 2 ** 20]:
                    x_seq = torch.rand([T, N], device=device, requires_grad=True)
                    if args.dtype == 'half':
                        x_seq = x_seq.half().detach().requires_grad_(True)

                    times = {}
                    for backend, net in nets.items():
                        times[backend] = cuda_utils.cal_fun_t(args.repeats, device, fun, net, x_seq)

                    row = {
                        'neuron': args.neuron,
                        'dtype': args.dtype,
                        'hard_reset': hard_reset,
                        'detach_reset': detach_reset,
                        'T': T,
                        'N': N,
                    }
                    msg = f'hard_reset={hard_reset}, detach_reset={detach_reset}, T={T:3d}, N={N:8d}: '
                    for backend, t in times.items():
                        row[f't_{backend}_ms'] = round(t, 4)
                        msg += f'{backend}={t:8.3f}ms, '
                    if 'torch' in times and len(times) > 1:
                        fastest = min(times, key=times.get)
                        row['speedup'] = round(times['torch'] / times[fastest], 3)
                        msg += f'speedup of {fastest} over torch={row["speedup"]:6.2f}x'
                    print(msg)
                    rows.append(row)
                    del x_seq

            del nets
            torch.cuda.empty_cache()

    if args.out is not None:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, 'w', newline='') as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            writer.writeheader()
            writer.writerows(rows)
        print(f'results written to {args.out}')

    # summary: mean speedup per T
    by_T = {}
    for r in rows:
        if 'speedup' in r:
            by_T.setdefault(r['T'], []).append(r['speedup'])
    for T in sorted(by_T.keys()):
        s = by_T[T]
        print(f'T={T:3d}: mean speedup over the torch backend = {sum(s) / len(s):.2f}x')

if __name__ == '__main__':
    main()
