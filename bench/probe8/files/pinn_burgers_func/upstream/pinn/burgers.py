"""Physics-informed neural network for the viscous Burgers equation.

    u_t + u u_x - (0.01 / pi) u_xx = 0,   x in [-1, 1], t in [0, 1]
    u(0, x) = -sin(pi x),  u(t, -1) = u(t, 1) = 0

Derivatives are taken per collocation point with torch.func (jacrev inside vmap), which keeps
the residual code close to the maths. Training: Adam warm-up, then L-BFGS.
"""
import argparse
import json
import math
import os
import time
from typing import Dict, Tuple

import numpy as np
import scipy.io
import torch
import torch.nn as nn
from torch.func import functional_call, jacrev, vmap

torch.set_default_dtype(torch.float64)

NU = 0.01 / math.pi


def seed_everything(seed: int):
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True


class FourierFeatures(nn.Module):
    def __init__(self, in_dim: int, n_feat: int, scale: float = 1.0):
        super().__init__()
        self.register_buffer("B", torch.randn(in_dim, n_feat) * scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        proj = 2.0 * math.pi * x @ self.B
        return torch.cat([torch.sin(proj), torch.cos(proj)], dim=-1)


class MLP(nn.Module):
    def __init__(self, in_dim=2, out_dim=1, width=64, depth=6, n_fourier=0):
        super().__init__()
        self.ff = FourierFeatures(in_dim, n_fourier) if n_fourier > 0 else None
        d = 2 * n_fourier if n_fourier > 0 else in_dim
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        layers.append(nn.Linear(d, out_dim))
        self.net = nn.Sequential(*layers)
        for m in self.net:
            if isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, xt: torch.Tensor) -> torch.Tensor:
        if self.ff is not None:
            xt = self.ff(xt)
        return self.net(xt)


def make_residual(model: nn.Module):
    """Returns r(params, xt_batch) -> residual per point, using per-sample Jacobians."""

    def u_fn(params: Dict[str, torch.Tensor], xt: torch.Tensor) -> torch.Tensor:
        return functional_call(model, params, (xt.unsqueeze(0),)).squeeze()

    du = jacrev(u_fn, argnums=1)
    d2u = jacrev(jacrev(u_fn, argnums=1), argnums=1)

    def residual(params, xt):
        u = u_fn(params, xt)
        grad = du(params, xt)
        hess = d2u(params, xt)
        u_x, u_t = grad[0], grad[1]
        u_xx = hess[0, 0]
        return u_t + u * u_x - NU * u_xx

    return vmap(residual, in_dims=(None, 0))


def boundary_flux(model: nn.Module, xt: torch.Tensor) -> torch.Tensor:
    """du/dx on the boundary, via plain autograd (used only for monitoring)."""
    xt = xt.clone().requires_grad_(True)
    u = model(xt)
    (g,) = torch.autograd.grad(u.sum(), xt, create_graph=False)
    return g[:, 0]


def sample_collocation(n_f: int, n_b: int, n_0: int, device) -> Tuple[torch.Tensor, ...]:
    lb = np.array([-1.0, 0.0])
    ub = np.array([1.0, 1.0])
    # Latin-hypercube-ish interior points
    xt_f = lb + (ub - lb) * np.random.rand(n_f, 2)
    t_b = np.random.rand(n_b, 1)
    xt_b = np.vstack([np.hstack([-np.ones_like(t_b), t_b]), np.hstack([np.ones_like(t_b), t_b])])
    x_0 = np.random.uniform(-1.0, 1.0, size=(n_0, 1))
    xt_0 = np.hstack([x_0, np.zeros_like(x_0)])
    u_0 = -np.sin(np.pi * x_0)
    to = lambda a: torch.from_numpy(a).to(device)
    return to(xt_f), to(xt_b), to(xt_0), to(u_0)


def load_reference(path: str):
    data = scipy.io.loadmat(path)
    t = data["t"].flatten()[:, None]
    x = data["x"].flatten()[:, None]
    usol = np.real(data["usol"]).T
    X, T = np.meshgrid(x, t)
    xt = np.hstack([X.flatten()[:, None], T.flatten()[:, None]])
    return xt, usol.flatten()[:, None], usol.shape


def relative_l2(model: nn.Module, xt_ref: torch.Tensor, u_ref: torch.Tensor) -> float:
    with torch.no_grad():
        pred = model(xt_ref)
    return float(torch.linalg.norm(pred - u_ref) / torch.linalg.norm(u_ref))


def train(args):
    seed_everything(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = MLP(width=args.width, depth=args.depth, n_fourier=args.fourier).to(device)
    residual_fn = make_residual(model)
    xt_f, xt_b, xt_0, u_0 = sample_collocation(args.n_f, args.n_b, args.n_0, device)
    xt_ref, u_ref, shape = load_reference(args.data)
    xt_ref = torch.from_numpy(xt_ref).to(device)
    u_ref = torch.from_numpy(u_ref).to(device)

    def loss_fn():
        params = dict(model.named_parameters())
        r = residual_fn(params, xt_f)
        loss_r = (r ** 2).mean()
        loss_b = (model(xt_b) ** 2).mean()
        loss_0 = ((model(xt_0) - u_0) ** 2).mean()
        return loss_r + args.w_bc * (loss_b + loss_0), (loss_r.item(), loss_b.item(), loss_0.item())

    history = []
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9995)
    t0 = time.time()
    for it in range(args.adam_iters):
        opt.zero_grad(set_to_none=True)
        loss, parts = loss_fn()
        loss.backward()
        opt.step()
        sched.step()
        if it % 500 == 0:
            err = relative_l2(model, xt_ref, u_ref)
            history.append({"it": it, "loss": loss.item(), "parts": parts, "rel_l2": err})
            print(f"[adam {it:6d}] loss={loss.item():.3e} r={parts[0]:.2e} bc={parts[1]:.2e} "
                  f"ic={parts[2]:.2e} rel_l2={err:.3e} ({time.time() - t0:.0f}s)")

    lbfgs = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=args.lbfgs_iters, max_eval=None,
                              history_size=50, tolerance_grad=1e-9, tolerance_change=1e-12,
                              line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad()
        loss, _ = loss_fn()
        loss.backward()
        return loss

    lbfgs.step(closure)
    err = relative_l2(model, xt_ref, u_ref)
    print(f"[lbfgs] rel_l2={err:.3e}")
    flux = boundary_flux(model, xt_b)
    history.append({"it": "lbfgs", "rel_l2": err, "max_boundary_flux": float(flux.abs().max())})

    os.makedirs(args.out, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.out, "pinn_burgers.pt"))
    with open(os.path.join(args.out, "history.json"), "w") as fh:
        json.dump(history, fh, indent=1)
    with torch.no_grad():
        pred = model(xt_ref).cpu().numpy().reshape(shape)
    np.save(os.path.join(args.out, "prediction.npy"), pred)
    return err


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/burgers_shock.mat")
    p.add_argument("--out", default="runs/burgers")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--depth", type=int, default=6)
    p.add_argument("--fourier", type=int, default=0)
    p.add_argument("--n_f", type=int, default=10000)
    p.add_argument("--n_b", type=int, default=200)
    p.add_argument("--n_0", type=int, default=200)
    p.add_argument("--w_bc", type=float, default=10.0)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--adam_iters", type=int, default=20000)
    p.add_argument("--lbfgs_iters", type=int, default=5000)
    return p.parse_args()


if __name__ == "__main__":
    train(parse_args())
