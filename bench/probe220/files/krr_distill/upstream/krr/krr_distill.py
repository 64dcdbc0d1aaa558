"""Kernel-ridge-regression dataset distillation with a pool of random conv feature extractors
(RFAD / FRePo-style, PyTorch port).

Each outer step draws a few networks from a model pool, embeds the synthetic support set and a real
target batch, solves the KRR system on the support set and back-propagates the target MSE into the
synthetic images and (learnable) labels. The pool members are evaluated together with torch.func
(stack_module_state + vmap) instead of a Python loop.
"""
import argparse
import copy
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap
from torchvision import datasets, transforms


class ConvFeat(nn.Module):
    """ConvNet-3 without the classifier, NTK-style parameterisation, no normalisation."""

    def __init__(self, channel=3, width=128, depth=3, im_size=32):
        super().__init__()
        layers = []
        c = channel
        for _ in range(depth):
            layers += [nn.Conv2d(c, width, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2)]
            c = width
        self.body = nn.Sequential(*layers)
        self.out_dim = width * (im_size // 2 ** depth) ** 2

    def forward(self, x):
        return self.body(x).flatten(1) / np.sqrt(self.out_dim)


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", default="CIFAR10")
    p.add_argument("--data_path", default="./data")
    p.add_argument("--ipc", type=int, default=10)
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--pool_size", type=int, default=16)
    p.add_argument("--models_per_step", type=int, default=4)
    p.add_argument("--batch_real", type=int, default=1024)
    p.add_argument("--lr_img", type=float, default=1e-3)
    p.add_argument("--lr_label", type=float, default=1e-3)
    p.add_argument("--reg", type=float, default=1e-6, help="relative ridge regulariser")
    p.add_argument("--fp64_solve", type=int, default=1, help="solve the KRR system in float64 (stabler)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save_dir", default="./results_krr")
    p.add_argument("--log_every", type=int, default=100)
    return p.parse_args()


def load_cifar(args):
    mean, std = [0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010]
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean, std)])
    if args.dataset == "CIFAR10":
        train = datasets.CIFAR10(args.data_path, train=True, download=True, transform=tf)
        test = datasets.CIFAR10(args.data_path, train=False, download=True, transform=tf)
        n_cls = 10
    else:
        train = datasets.CIFAR100(args.data_path, train=True, download=True, transform=tf)
        test = datasets.CIFAR100(args.data_path, train=False, download=True, transform=tf)
        n_cls = 100
    x = torch.stack([train[i][0] for i in range(len(train))])
    y = torch.tensor(train.targets)
    xt = torch.stack([test[i][0] for i in range(len(test))])
    yt = torch.tensor(test.targets)
    return x, y, xt, yt, n_cls


def krr_predict(f_s, f_t, y_s, reg, fp64):
    # f_s: [M, n_s, d], f_t: [M, n_t, d], y_s: [n_s, C]
    k_ss = f_s @ f_s.transpose(1, 2)
    k_ts = f_t @ f_s.transpose(1, 2)
    n_s = k_ss.shape[-1]
    eye = torch.eye(n_s, device=k_ss.device, dtype=k_ss.dtype)
    lam = reg * torch.diagonal(k_ss, dim1=-2, dim2=-1).mean(-1, keepdim=True).unsqueeze(-1)
    if fp64:
        alpha = torch.linalg.solve(k_ss.double() + lam.double() * eye.double(), y_s.double().expand(k_ss.shape[0], -1, -1))
        alpha = alpha.float()
    else:
        alpha = torch.linalg.solve(k_ss + lam * eye, y_s.expand(k_ss.shape[0], -1, -1))
    return k_ts @ alpha


def main():
    args = get_args()
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    # cuSOLVER is much faster than MAGMA for the many small batched solves below
    torch.backends.cuda.preferred_linalg_library("cusolver")

    x_all, y_all, x_test, y_test, n_cls = load_cifar(args)
    x_all = x_all.to(device)
    y_all = y_all.to(device)
    os.makedirs(args.save_dir, exist_ok=True)

    # ---- synthetic set: real init, learnable (centered one-hot) labels
    idx = torch.cat([torch.where(y_all == c)[0][torch.randperm(int((y_all == c).sum()), device=device)[:args.ipc]] for c in range(n_cls)])
    x_syn = x_all[idx].clone().requires_grad_(True)
    y_syn = (F.one_hot(y_all[idx], n_cls).float() - 1.0 / n_cls).clone().requires_grad_(True)
    opt = torch.optim.Adam([{"params": [x_syn], "lr": args.lr_img}, {"params": [y_syn], "lr": args.lr_label}])

    # ---- model pool; parameters are stacked once so a subset can be evaluated with vmap
    pool = [ConvFeat().to(device) for _ in range(args.pool_size)]
    base = copy.deepcopy(pool[0]).to("meta")

    def fmodel(params, buffers, x):
        return functional_call(base, (params, buffers), (x,))

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    start_evt.record()
    t0 = time.time()
    for step in range(1, args.steps + 1):
        members = np.random.choice(args.pool_size, args.models_per_step, replace=False)
        params, buffers = stack_module_state([pool[i] for i in members])

        b = torch.randint(0, x_all.shape[0], (args.batch_real,), device=device)
        x_t, y_t = x_all[b], F.one_hot(y_all[b], n_cls).float() - 1.0 / n_cls

        f_s = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x_syn)
        with torch.no_grad():
            f_t = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x_t)

        pred = krr_predict(f_s, f_t, y_syn, args.reg, args.fp64_solve)
        loss = 0.5 * ((pred - y_t.unsqueeze(0)) ** 2).sum(-1).mean()

        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

        # re-initialise one pool member now and then (FRePo's "online model pool")
        if step % 50 == 0:
            j = np.random.randint(args.pool_size)
            pool[j] = ConvFeat().to(device)

        if step % args.log_every == 0:
            end_evt.record()
            torch.cuda.synchronize()
            ms = start_evt.elapsed_time(end_evt) / args.log_every
            print("[{:6d}] loss {:.5f}  {:.1f} ms/step  ({:.0f}s total)".format(step, loss.item(), ms, time.time() - t0))
            start_evt.record()

        if step % 2000 == 0 or step == args.steps:
            torch.save({"x": x_syn.detach().cpu(), "y": y_syn.detach().cpu(), "step": step},
                       os.path.join(args.save_dir, "{}_ipc{}_step{}.pt".format(args.dataset, args.ipc, step)))


if __name__ == "__main__":
    main()
