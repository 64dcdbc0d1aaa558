"""Fourier-feature PINN for the 1D heat equation with a multi-scale initial condition

    u_t = k u_xx,   (t, x) in [0, 1] x [0, 1]
    u(0, x) = sin(pi x) + 0.5 sin(20 pi x)
    u(t, 0) = u(t, 1) = 0

Follows "On the eigenvector bias of Fourier feature networks" (Wang, Wang, Perdikaris)
and "When and why PINNs fail to train: an NTK perspective" for the adaptive loss
weights. Adam with an exponential schedule, then L-BFGS polishing. Double precision
by default: the NTK trace ratio and the L-BFGS line search both misbehave in fp32.

    python train_heat2d.py --device cuda:0 --iters 40000 --ntk-every 1000
"""
import argparse
import json
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn
from torch.func import functional_call, jacrev, vmap


def get_args():
    parser = argparse.ArgumentParser(description="Fourier-feature PINN, heat equation")
    parser.add_argument("--device", type=str, default="cuda", help="torch device, e.g. cuda, cuda:1, cpu")
    parser.add_argument("--dtype", type=str, default="float64", choices=["float32", "float64"])
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--k", type=float, default=1.0 / (500 * math.pi) ** 2, help="diffusivity")
    parser.add_argument("--sigma-t", type=float, default=1.0, help="Fourier feature scale in t")
    parser.add_argument("--sigma-x", type=float, default=10.0, help="Fourier feature scale in x")
    parser.add_argument("--n-features", type=int, default=100)
    parser.add_argument("--width", type=int, default=200)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--iters", type=int, default=40000)
    parser.add_argument("--lbfgs-iters", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--ntk-every", type=int, default=1000, help="update NTK loss weights every N steps (0 = off)")
    parser.add_argument("--ntk-batch", type=int, default=64)
    parser.add_argument("--out", type=str, default="runs/heat_ff")
    return parser.parse_args()


class FourierFeatures(nn.Module):
    """Separate spatial / temporal random Fourier embeddings (ST-FF)."""

    def __init__(self, n_features, sigma_t, sigma_x):
        super().__init__()
        self.register_buffer("B_t", torch.randn(1, n_features) * sigma_t)
        self.register_buffer("B_x", torch.randn(1, n_features) * sigma_x)

    def forward(self, tx):
        t, x = tx[:, 0:1], tx[:, 1:2]
        ht = torch.cat([torch.cos(2 * math.pi * t @ self.B_t), torch.sin(2 * math.pi * t @ self.B_t)], dim=1)
        hx = torch.cat([torch.cos(2 * math.pi * x @ self.B_x), torch.sin(2 * math.pi * x @ self.B_x)], dim=1)
        return ht, hx


class FFPINN(nn.Module):
    def __init__(self, n_features, width, depth, sigma_t, sigma_x):
        super().__init__()
        self.ff = FourierFeatures(n_features, sigma_t, sigma_x)
        layers = [nn.Linear(2 * n_features, width), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.Tanh()]
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, 1)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, tx):
        ht, hx = self.ff(tx)
        # element-wise product of the two embeddings' hidden states
        return self.head(self.body(ht) * self.body(hx))


def exact_solution(tx, k):
    t, x = tx[:, 0:1], tx[:, 1:2]
    return torch.exp(-k * math.pi ** 2 * t) * torch.sin(math.pi * x) + 0.5 * torch.exp(
        -k * (20 * math.pi) ** 2 * t
    ) * torch.sin(20 * math.pi * x)


def residual(model, tx, k):
    tx = tx.requires_grad_(True)
    u = model(tx)
    du = torch.autograd.grad(u, tx, torch.ones_like(u), create_graph=True)[0]
    u_t, u_x = du[:, 0:1], du[:, 1:2]
    u_xx = torch.autograd.grad(u_x, tx, torch.ones_like(u_x), create_graph=True)[0][:, 1:2]
    return u_t - k * u_xx


def sample_interior(n, device, dtype):
    return torch.rand(n, 2, device=device, dtype=dtype)


def sample_initial(n, device, dtype):
    x = torch.rand(n, 1, device=device, dtype=dtype)
    return torch.cat([torch.zeros_like(x), x], dim=1)


def sample_boundary(n, device, dtype):
    t = torch.rand(n, 1, device=device, dtype=dtype)
    x = torch.randint(0, 2, (n, 1), device=device).to(dtype)
    return torch.cat([t, x], dim=1)


def ntk_trace(model, params, tx, fn):
    """Trace of the empirical NTK block for the quantity ``fn(model, params, x)``
    evaluated point-wise; uses per-sample Jacobians w.r.t. all parameters."""

    def f_single(p, x):
        return fn(p, x.unsqueeze(0)).squeeze()

    jac = vmap(jacrev(f_single), in_dims=(None, 0))(params, tx)
    return sum(j.reshape(j.shape[0], -1).pow(2).sum() for j in jac.values())


def ntk_trace_residual(model, tx, k):
    """Same trace for the PDE residual. autograd.grad inside vmap is not
    supported by torch.func, so loop over the (few) NTK points instead."""
    params = [p for p in model.parameters() if p.requires_grad]
    tr = 0.0
    for i in range(tx.shape[0]):
        r = residual(model, tx[i : i + 1].detach().clone(), k).squeeze()
        g = torch.autograd.grad(r, params, retain_graph=False, allow_unused=True)
        tr = tr + sum(gi.pow(2).sum() for gi in g if gi is not None)
    return tr


def main():
    args = get_args()
    device = torch.device(args.device)
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    torch.set_default_dtype(dtype)

    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    np.random.seed(args.seed)

    # keep full fp32/fp64 accuracy in matmuls and convolutions (no TF32 on Ampere)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "args.json"), "w") as f:
        json.dump(vars(args), f, indent=2)

    model = FFPINN(args.n_features, args.width, args.depth, args.sigma_t, args.sigma_x).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9 ** (1 / 1000))

    lam_ic, lam_bc, lam_r = 1.0, 1.0, 1.0

    def u_fn(p, x):
        return functional_call(model, p, (x,))

    history = []
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    t0 = time.time()
    for it in range(1, args.iters + 1):
        tx_r = sample_interior(args.batch, device, dtype)
        tx_0 = sample_initial(args.batch, device, dtype)
        tx_b = sample_boundary(args.batch, device, dtype)

        loss_r = residual(model, tx_r, args.k).pow(2).mean()
        loss_ic = (model(tx_0) - exact_solution(tx_0, args.k)).pow(2).mean()
        loss_bc = model(tx_b).pow(2).mean()
        loss = lam_r * loss_r + lam_ic * loss_ic + lam_bc * loss_bc

        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()

        if args.ntk_every and it % args.ntk_every == 0:
            params = {k: v.detach() for k, v in model.named_parameters()}
            n = args.ntk_batch
            tr_r = ntk_trace_residual(model, tx_r[:n], args.k)
            tr_ic = ntk_trace(model, params, tx_0[:n], u_fn)
            tr_bc = ntk_trace(model, params, tx_b[:n], u_fn)
            total = tr_r + tr_ic + tr_bc
            lam_r, lam_ic, lam_bc = (total / tr_r).item(), (total / tr_ic).item(), (total / tr_bc).item()

        if it % 100 == 0:
            with torch.no_grad():
                tx_test = sample_interior(4096, device, dtype)
                err = (model(tx_test) - exact_solution(tx_test, args.k)).norm() / exact_solution(tx_test, args.k).norm()
            history.append(dict(it=it, loss=loss.item(), l2=err.item(), lam=[lam_r, lam_ic, lam_bc]))
            print(
                f"[{it:6d}] loss={loss.item():.3e} r={loss_r.item():.3e} ic={loss_ic.item():.3e} "
                f"bc={loss_bc.item():.3e} rel_l2={err.item():.3e} lam=({lam_r:.1f},{lam_ic:.1f},{lam_bc:.1f})"
            )

    # L-BFGS polishing on a fixed set of collocation points
    tx_r = sample_interior(8 * args.batch, device, dtype)
    tx_0 = sample_initial(2 * args.batch, device, dtype)
    tx_b = sample_boundary(2 * args.batch, device, dtype)
    lbfgs = torch.optim.LBFGS(
        model.parameters(),
        lr=1.0,
        max_iter=args.lbfgs_iters,
        history_size=100,
        tolerance_grad=1e-12,
        tolerance_change=1e-14,
        line_search_fn="strong_wolfe",
    )

    def closure():
        lbfgs.zero_grad()
        l = (
            lam_r * residual(model, tx_r, args.k).pow(2).mean()
            + lam_ic * (model(tx_0) - exact_solution(tx_0, args.k)).pow(2).mean()
            + lam_bc * model(tx_b).pow(2).mean()
        )
        l.backward()
        return l

    lbfgs.step(closure)

    if device.type == "cuda":  # wall-clock includes the L-BFGS phase
        torch.cuda.synchronize()
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB")
    elapsed = time.time() - t0

    # evaluate on a 201 x 201 grid and save
    t = torch.linspace(0, 1, 201, device=device, dtype=dtype)
    x = torch.linspace(0, 1, 201, device=device, dtype=dtype)
    T, X = torch.meshgrid(t, x, indexing="ij")
    tx = torch.stack([T.flatten(), X.flatten()], dim=1)
    with torch.no_grad():
        u_pred = model(tx).reshape(201, 201)
        u_true = exact_solution(tx, args.k).reshape(201, 201)
    rel_l2 = (u_pred - u_true).norm() / u_true.norm()
    print(f"final relative L2 error: {rel_l2.item():.3e}  ({elapsed:.0f}s)")

    np.savez(
        os.path.join(args.out, "solution.npz"),
        t=t.cpu().numpy(),
        x=x.cpu().numpy(),
        u_pred=u_pred.cpu().numpy(),
        u_true=u_true.cpu().numpy(),
    )
    torch.save(model.state_dict(), os.path.join(args.out, "model.pt"))
    with open(os.path.join(args.out, "history.json"), "w") as f:
        json.dump(history, f)


if __name__ == "__main__":
    main()
