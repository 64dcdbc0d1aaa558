#!/usr/bin/env python
"""BER / BLER of 5G NR LDPC codes with QAM over AWGN and flat Rayleigh fading.

Mirrors the "Bit-Interleaved Coded Modulation" and "5G Channel Coding" Sionna
tutorials, but in PyTorch.  Monte-Carlo simulation runs batch after batch on
the GPU until `--max-errors` block errors are collected or `--max-iter`
batches have been simulated for each Eb/N0 point.

    python examples/ber_ldpc_awgn.py --k 512 --n 1024 --bits-per-symbol 4 \
        --ebno 0 6 0.5 --batch 20000 --decoder offset-minsum --iters 20 --compile
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from torchsionna import config  # noqa: E402
from torchsionna.channel import AWGN, FlatFadingChannel  # noqa: E402
from torchsionna.fec.ldpc import LDPC5GEncoder, LDPC5GDecoder  # noqa: E402
from torchsionna.mapping import Mapper, Demapper, Constellation  # noqa: E402
from torchsionna.utils import BinarySource, ebnodb2no, count_errors, count_block_errors  # noqa: E402


class CodedSystem(nn.Module):
    """source -> LDPC enc -> mapper -> channel -> demapper -> LDPC dec."""

    def __init__(self, k, n, num_bits_per_symbol, decoder="offset-minsum", iters=20, channel="awgn"):
        super().__init__()
        self.k, self.n = k, n
        self.num_bits_per_symbol = num_bits_per_symbol
        self.coderate = k / n
        self.source = BinarySource()
        self.encoder = LDPC5GEncoder(k, n)
        self.constellation = Constellation("qam", num_bits_per_symbol)
        self.mapper = Mapper(constellation=self.constellation)
        self.demapper = Demapper("app", constellation=self.constellation)
        self.decoder = LDPC5GDecoder(self.encoder, cn_type=decoder, num_iter=iters, hard_out=True)
        self.channel_type = channel
        if channel == "awgn":
            self.channel = AWGN()
        else:
            self.channel = FlatFadingChannel(1, 1, add_awgn=True, return_channel=True)

    @torch.no_grad()
    def forward(self, batch_size, ebno_db):
        no = ebnodb2no(ebno_db, self.num_bits_per_symbol, self.coderate)
        b = self.source([batch_size, self.k])
        c = self.encoder(b)
        x = self.mapper(c)
        if self.channel_type == "awgn":
            y = self.channel(x, no)
            llr = self.demapper(y, no)
        else:
            shp = x.shape
            y, h = self.channel(x.reshape(-1, 1), no)
            y = (y / h[..., 0]).reshape(shp)
            no_eff = (no / (h[..., 0].real ** 2 + h[..., 0].imag ** 2)).reshape(shp)
            llr = self.demapper(y, no_eff)
        b_hat = self.decoder(llr)
        return b, b_hat


def simulate(model, ebno_dbs, batch_size, max_iter, max_errors, log_every=10):
    results = []
    for ebno in ebno_dbs:
        n_bits = n_bit_err = n_blocks = n_block_err = 0
        t0 = time.time()
        for it in range(max_iter):
            b, b_hat = model(batch_size, float(ebno))
            n_bit_err += int(count_errors(b, b_hat))
            n_block_err += int(count_block_errors(b, b_hat))
            n_bits += b.numel()
            n_blocks += b.shape[0]
            if n_block_err >= max_errors:
                break
            if (it + 1) % log_every == 0:
                print("   Eb/N0 %5.2f dB  it %4d  BER %.3e  BLER %.3e" % (
                    ebno, it + 1, n_bit_err / n_bits, n_block_err / n_blocks), flush=True)
        torch.cuda.synchronize()
        dt = time.time() - t0
        ber, bler = n_bit_err / n_bits, n_block_err / n_blocks
        thr = n_bits / dt / 1e6
        print("%6.2f | %.4e | %.4e | %8d | %10d | %7.1f s | %6.1f Mbit/s | %s" % (
            ebno, ber, bler, n_block_err, n_blocks, dt, thr,
            "reached max iter" if n_block_err < max_errors else "reached target block errors"))
        results.append(dict(ebno=float(ebno), ber=ber, bler=bler, blocks=n_blocks, seconds=dt))
        if n_bit_err == 0:
            print("no errors at %.2f dB -- stopping simulation" % ebno)
            break
    return results


def plot_results(result_files, out_png, metric="bler"):
    """Plot BER or BLER curves of several result json files on one log-scale figure."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    for path in result_files:
        with open(path) as f:
            blob = json.load(f)
        a = blob["args"]
        xs = [r["ebno"] for r in blob["results"]]
        ys = [max(r[metric], 1e-7) for r in blob["results"]]
        label = "%s, %d it, k=%d n=%d, %s" % (a["decoder"], a["iters"], a["k"], a["n"], a["channel"])
        ax.semilogy(xs, ys, marker="o", label=label)
    ax.set_xlabel("$E_b/N_0$ [dB]")
    ax.set_ylabel(metric.upper())
    ax.grid(True, which="both", ls=":")
    ax.set_ylim(1e-5, 1)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_png, dpi=150)
    print("saved", out_png)


def uncoded_ber_qam(ebno_db, num_bits_per_symbol):
    """Closed-form approximate BER of Gray-mapped square QAM over AWGN (reference curve)."""
    from scipy.special import erfc
    m = 2 ** num_bits_per_symbol
    ebno = 10 ** (np.asarray(ebno_db) / 10)
    if m == 4:
        return 0.5 * erfc(np.sqrt(ebno))
    k = num_bits_per_symbol
    return (2 / k) * (1 - 1 / np.sqrt(m)) * erfc(np.sqrt(3 * k * ebno / (2 * (m - 1))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=512)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--bits-per-symbol", type=int, default=4)
    ap.add_argument("--ebno", type=float, nargs=3, default=[0.0, 6.0, 0.5], metavar=("START", "STOP", "STEP"))
    ap.add_argument("--channel", choices=["awgn", "rayleigh"], default="awgn")
    ap.add_argument("--decoder", default="offset-minsum", choices=["boxplus", "minsum", "offset-minsum"])
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--batch", type=int, default=20000)
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--max-errors", type=int, default=500)
    ap.add_argument("--precision", choices=["single", "double"], default="single")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--compile", action="store_true", help="torch.compile the whole link (PyTorch >= 2.0)")
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--out", default="results")
    args = ap.parse_args()

    torch.cuda.set_device(args.gpu)
    config.device = "cuda:%d" % args.gpu
    config.precision = args.precision
    config.seed = args.seed
    config.allow_tf32 = False  # TF32 visibly degrades the high-SNR BER floor
    print("torchsionna | %s | torch %s | CUDA %s | %s" % (
        config, torch.__version__, torch.version.cuda, torch.cuda.get_device_name(args.gpu)))

    model = CodedSystem(args.k, args.n, args.bits_per_symbol, args.decoder, args.iters, args.channel)
    model = model.to(config.device)
    if args.compile:
        model = torch.compile(model, mode="max-autotune", fullgraph=False)

    ebnos = np.arange(args.ebno[0], args.ebno[1] + 1e-9, args.ebno[2])
    print("EbNo [dB] |    BER     |    BLER    | bit errs | num blocks | runtime | throughput | status")
    res = simulate(model, ebnos, args.batch, args.max_iter, args.max_errors)
    print(config.memory_report())

    os.makedirs(args.out, exist_ok=True)
    tag = "ldpc_k%d_n%d_qam%d_%s_%s" % (args.k, args.n, 2 ** args.bits_per_symbol, args.channel, args.decoder)
    with open(os.path.join(args.out, tag + ".json"), "w") as f:
        json.dump(dict(args=vars(args), results=res), f, indent=2)


if __name__ == "__main__":
    main()
