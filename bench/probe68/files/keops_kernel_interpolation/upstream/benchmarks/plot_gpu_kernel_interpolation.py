"""
Kernel interpolation / GP posterior mean with KeOps
===================================================

Solve the regularised linear system ``(K_xx + alpha * Id) a = b`` with a conjugate-gradient
solver whose matrix-vector products are symbolic KeOps reductions, then compare wall times with
a dense PyTorch implementation.  Gaussian (RBF) and Laplace kernels, N from 1e3 to 1e6.

Run:  python benchmarks/plot_gpu_kernel_interpolation.py --N 10000 100000 --backend GPU
"""
import argparse
import time

import numpy as np
import torch

import pykeops
from pykeops.torch import Genred, LazyTensor

use_cuda = torch.cuda.is_available()
tensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor
device_id = 0 if use_cuda else -1


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--N", type=int, nargs="+", default=[1000, 10000, 100000])
    p.add_argument("--D", type=int, default=3)
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--sigma", type=float, default=0.25)
    p.add_argument("--kernel", choices=["gaussian", "laplace"], default="gaussian")
    p.add_argument("--backend", default="GPU", choices=["auto", "CPU", "GPU", "GPU_1D", "GPU_2D"])
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    p.add_argument("--rebuild", action="store_true", help="clear the KeOps build folder first")
    return p.parse_args()


def make_data(N, D, dtype):
    x = torch.rand(N, D).type(tensor)
    y = torch.sin(6 * x).sum(-1, keepdim=True) + 0.1 * torch.randn(N, 1).type(tensor)
    return x.to(dtype), y.to(dtype)


###############################################################################
# Kernel matvec with the LazyTensor interface

def lazy_kernel(x, sigma, kind):
    x_i = LazyTensor(x[:, None, :])  # (N, 1, D)
    x_j = LazyTensor(x[None, :, :])  # (1, N, D)
    if kind == "gaussian":
        D_ij = ((x_i - x_j) ** 2).sum(-1)
        return (-D_ij / (2 * sigma ** 2)).exp()
    D_ij = ((x_i - x_j) ** 2).sum(-1).sqrt()
    return (-D_ij / sigma).exp()


###############################################################################
# The same reduction with the lower-level Genred interface, compiled once per dtype

def genred_kernel(D, kind, dtype):
    if kind == "gaussian":
        formula = "Exp(-SqDist(x,y) * g) * b"
    else:
        formula = "Exp(-Sqrt(SqDist(x,y)) * g) * b"
    aliases = [
        "x = Vi({})".format(D),  # First arg:  i-variable of size D
        "y = Vj({})".format(D),  # Second arg: j-variable of size D
        "b = Vj(1)",  # Third arg:  j-variable of size 1
        "g = Pm(1)",  # Fourth arg: scalar parameter
    ]
    return Genred(formula, aliases, reduction_op="Sum", axis=1, dtype=dtype)


def conjugate_gradient(matvec, b, alpha, tol=1e-6, max_iter=500):
    a = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rs_old = (r * r).sum()
    for it in range(max_iter):
        Kp = matvec(p) + alpha * p
        step = rs_old / (p * Kp).sum()
        a += step * p
        r -= step * Kp
        rs_new = (r * r).sum()
        if rs_new.sqrt() < tol:
            break
        p = r + (rs_new / rs_old) * p
        rs_old = rs_new
    return a, it + 1


def dense_solve(x, y, sigma, alpha, kind):
    K = torch.cdist(x, x)
    K = torch.exp(-K ** 2 / (2 * sigma ** 2)) if kind == "gaussian" else torch.exp(-K / sigma)
    K += alpha * torch.eye(x.shape[0], dtype=x.dtype, device=x.device)
    return torch.linalg.solve(K, y)


def run(N, args):
    dtype = getattr(torch, args.dtype)
    x, y = make_data(N, args.D, dtype)
    results = {"N": N}

    K = lazy_kernel(x, args.sigma, args.kernel)
    start = time.time()
    a, iters = conjugate_gradient(lambda v: K @ v, y, args.alpha)
    torch.cuda.synchronize()
    results["lazytensor_s"] = time.time() - start
    results["cg_iters"] = iters

    g = torch.tensor([1.0 / (2 * args.sigma ** 2) if args.kernel == "gaussian" else 1.0 / args.sigma]).type(tensor)
    g = g.to(dtype)
    routine = genred_kernel(args.D, args.kernel, args.dtype)
    start = time.time()
    a2, _ = conjugate_gradient(
        lambda v: routine(x, x, v, g, backend=args.backend, device_id=device_id), y, args.alpha)
    torch.cuda.synchronize()  # Genred launches are asynchronous too
    results["genred_s"] = time.time() - start
    results["max_diff"] = (a - a2).abs().max().item()

    if N <= 20000:
        start = time.time()
        a3 = dense_solve(x, y, args.sigma, args.alpha, args.kernel)
        if use_cuda:
            torch.cuda.synchronize(device=x.device)
        results["dense_s"] = time.time() - start
        results["dense_diff"] = (a - a3).abs().max().item()
    return results


def main():
    args = parse_args()
    if args.rebuild:
        pykeops.clean_pykeops()
    if args.backend.startswith("GPU") and not pykeops.config.gpu_available:
        raise SystemExit("KeOps was built without GPU support (no CUDA toolkit / nvrtc found)")
    print(f"pykeops {pykeops.__version__}, torch {torch.__version__}, cuda={use_cuda}")
    rows = [run(N, args) for N in args.N]
    keys = list(rows[0].keys())
    print(" | ".join(f"{k:>14}" for k in keys))
    for r in rows:
        print(" | ".join(f"{r.get(k, float('nan')):>14.4g}" for k in keys))
    np.save("kernel_interpolation_timings.npy", rows, allow_pickle=True)


if __name__ == "__main__":
    main()
