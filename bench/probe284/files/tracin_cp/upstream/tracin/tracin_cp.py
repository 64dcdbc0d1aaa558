"""TracIn-CP: influence of training examples on test predictions.

    TracInCP(z, z') = sum_i  eta_i * < grad L(w_i, z), grad L(w_i, z') >

over saved checkpoints w_i (Pruthi et al., NeurIPS 2020).  We restrict the
gradients to the parameters named in `cfg.tracin.layers` (the last fc layer by
default), which is what the paper does for ResNets and keeps the per-example
gradient small enough to hold the whole test set's gradients on the GPU.

    python -m tracin.tracin_cp --config configs/tracin_cifar10.yaml
"""
import argparse
import glob
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader
from tqdm import tqdm

from tracin.data import get_datasets
from tracin.models import get_model


def load_checkpoint(model, path, device="cuda"):
    state = torch.load(path, map_location=device)
    model.load_state_dict(state["model"])
    return state.get("lr", 1.0), state.get("epoch", -1)


def selected_params(model, layers):
    params = []
    for name, p in model.named_parameters():
        if any(name.startswith(l) for l in layers):
            params.append(p)
        else:
            p.requires_grad_(False)
    assert params, f"no parameter matched {layers}"
    return params


def per_example_grads(model, params, x, y):
    """Python loop over the batch; the fc-only gradient is tiny so this is
    not the bottleneck (the forward pass is)."""
    out = model(x)
    losses = F.cross_entropy(out, y, reduction="none")
    grads = []
    for i in range(x.shape[0]):
        g = torch.autograd.grad(losses[i], params, retain_graph=(i < x.shape[0] - 1))
        grads.append(torch.cat([t.reshape(-1) for t in g]))
    return torch.stack(grads)


def collect_grads(model, params, loader, device, desc):
    chunks = []
    for x, y, *_ in tqdm(loader, desc=desc, leave=False):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        chunks.append(per_example_grads(model, params, x, y).detach())
    return torch.cat(chunks)


def tracin_cp(cfg, ckpt_paths, train_set, test_set):
    device = torch.device(cfg.get("device", "cuda"))
    model = get_model(cfg["model"]["arch"], num_classes=cfg["model"]["num_classes"]).to(device)
    model.eval()
    tcfg = cfg["tracin"]
    train_loader = DataLoader(train_set, batch_size=tcfg["batch_size"], shuffle=False,
                              num_workers=cfg["data"]["num_workers"], pin_memory=cfg["data"]["pin_memory"])
    test_loader = DataLoader(test_set, batch_size=tcfg["batch_size"], shuffle=False,
                             num_workers=cfg["data"]["num_workers"], pin_memory=cfg["data"]["pin_memory"])

    influence = torch.zeros(len(train_set), len(test_set))
    for ck in ckpt_paths:
        t0 = time.time()
        lr, epoch = load_checkpoint(model, ck, device=device)
        params = selected_params(model, tcfg["layers"])
        g_test = collect_grads(model, params, test_loader, device, f"test grads ep{epoch}")  # (T, P), stays on GPU
        offset = 0
        for step, (x, y, *_) in enumerate(tqdm(train_loader, desc=f"train grads ep{epoch}", leave=False)):
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            g_tr = per_example_grads(model, params, x, y)
            influence[offset:offset + x.shape[0]] += (lr * g_tr @ g_test.T).cpu()
            offset += x.shape[0]
            if tcfg.get("empty_cache_every") and step % tcfg["empty_cache_every"] == 0:
                torch.cuda.empty_cache()
        del g_test
        torch.cuda.synchronize()
        print(f"[tracin] {os.path.basename(ck)}: lr={lr:.4g} {time.time() - t0:.0f}s "
              f"gpu-mem={torch.cuda.memory_allocated() / 2**30:.2f}GiB", flush=True)
    return influence


def self_influence(cfg, ckpt_paths, train_set):
    """TracIn self-influence: sum_i eta_i ||grad L(w_i, z)||^2, used to rank
    likely mislabeled training examples."""
    device = torch.device(cfg.get("device") or "cuda")
    model = get_model(cfg["model"]["arch"], num_classes=cfg["model"]["num_classes"]).to(device)
    model.eval()
    loader = DataLoader(train_set, batch_size=cfg["tracin"]["batch_size"], shuffle=False,
                        num_workers=cfg["data"]["num_workers"])
    scores = torch.zeros(len(train_set), device=device)
    for ck in ckpt_paths:
        lr, _ = load_checkpoint(model, ck, device=device)
        params = selected_params(model, cfg["tracin"]["layers"])
        offset = 0
        for x, y, *_ in tqdm(loader, leave=False):
            x, y = x.to(device), y.to(device)
            g = per_example_grads(model, params, x, y)
            scores[offset:offset + x.shape[0]] += lr * (g * g).sum(1)
            offset += x.shape[0]
    return scores.cpu()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", required=True)
    p.add_argument("--mode", choices=["cp", "self"], default="cp")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    torch.manual_seed(cfg.get("seed", 0))

    ckpts = sorted(glob.glob(os.path.join(cfg["train"]["ckpt_dir"], "*.pt")))
    ckpts = [c for c in ckpts if int(c.split("_ep")[-1].split(".")[0]) in cfg["tracin"]["checkpoint_epochs"]]
    train_set, test_set = get_datasets(cfg["data"]["root"], augment=False)
    if cfg["tracin"].get("num_test"):
        test_set = torch.utils.data.Subset(test_set, range(cfg["tracin"]["num_test"]))

    out = args.out or os.path.join(cfg["train"]["ckpt_dir"], f"tracin_{args.mode}.npy")
    if args.mode == "cp":
        infl = tracin_cp(cfg, ckpts, train_set, test_set)
        np.save(out, infl.numpy())
        top = torch.topk(infl[:, 0], 10).indices.tolist()
        print("proponents of test[0]:", top)
    else:
        s = self_influence(cfg, ckpts, train_set)
        np.save(out, s.numpy())
        print("highest self-influence:", torch.argsort(s, descending=True)[:20].tolist())


if __name__ == "__main__":
    main()
