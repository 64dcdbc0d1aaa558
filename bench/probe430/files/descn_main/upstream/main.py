# -*- coding: utf-8 -*-
"""
Train / evaluate DESCN and the TARNet / CFR / X-learner style baselines on the
Lazada uplift dataset or on the synthetic ACIC-style benchmark.

    python main.py --config configs/descn_lzd.json --gpu 0
"""
import argparse
import logging
import os
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

from models.descn import build_descn, descn_loss
from util.util import Config, Timer, evaluate_uplift, load_data, set_seed, wrap_tensor

logging.basicConfig(
    format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    level=logging.INFO,
    stream=sys.stdout,
)
logger = logging.getLogger("descn")


def parse_args():
    parser = argparse.ArgumentParser(description="DESCN uplift modelling")
    parser.add_argument("--config", type=str, default="configs/descn_lzd.json")
    parser.add_argument("--gpu", type=int, default=0, help="GPU id, -1 for CPU")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--output_dir", type=str, default="./results")
    parser.add_argument("--eval_only", action="store_true")
    parser.add_argument("--ckpt", type=str, default="")
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--epochs", type=int, default=None)
    return parser.parse_args()


def make_loader(x, t, y, batch_size, shuffle, use_gpu, num_workers=4):
    ds = TensorDataset(torch.from_numpy(x), torch.from_numpy(t), torch.from_numpy(y))
    return DataLoader(
        ds,
        batch_size=batch_size,
        shuffle=shuffle,
        num_workers=num_workers,
        pin_memory=use_gpu,
        drop_last=False,
        persistent_workers=num_workers > 0,
    )


@torch.no_grad()
def predict(model, loader, device):
    model.eval()
    uplift, prpsy, ys, ts = [], [], [], []
    for xb, tb, yb in loader:
        xb = xb.to(device, non_blocking=True)
        out = model(xb)
        p_prpsy, p_mu1, p_mu0 = out[6], out[7], out[8]
        uplift.append((p_mu1 - p_mu0).squeeze(-1).cpu().numpy())
        prpsy.append(p_prpsy.squeeze(-1).cpu().numpy())
        ys.append(yb.numpy())
        ts.append(tb.numpy())
    return (np.concatenate(uplift), np.concatenate(prpsy),
            np.concatenate(ys), np.concatenate(ts))


def train_one_epoch(model, loader, optimizer, cfg, device, epoch):
    model.train()
    total, n_batches = 0.0, 0
    parts_sum = {}
    for step, (xb, tb, yb) in enumerate(loader):
        xb = xb.to(device, non_blocking=True)
        tb = tb.to(device, non_blocking=True)
        yb = yb.to(device, non_blocking=True)

        outputs = model(xb)
        loss, parts = descn_loss(outputs, tb, yb, cfg)

        # l2 on all non-bias parameters, as in the TF reference code
        if cfg.reg_l2 > 0:
            l2 = sum(torch.sum(p ** 2) for n, p in model.named_parameters() if "bias" not in n)
            loss = loss + cfg.reg_l2 * l2

        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.clip_grad > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_grad)
        optimizer.step()

        total += loss.item()
        n_batches += 1
        for k, v in parts.items():
            parts_sum[k] = parts_sum.get(k, 0.0) + v

        if step % cfg.log_step == 0:
            logger.info("epoch %d step %d loss %.5f %s", epoch, step, loss.item(),
                        " ".join("%s=%.4f" % (k, v) for k, v in parts.items()))
    return total / max(n_batches, 1), {k: v / max(n_batches, 1) for k, v in parts_sum.items()}


def main():
    args = parse_args()
    cfg = Config(args.config)
    if args.lr is not None:
        cfg.update(lr=args.lr)
    if args.epochs is not None:
        cfg.update(epochs=args.epochs)
    seed = args.seed if args.seed is not None else cfg.seed

    use_gpu = args.gpu >= 0 and torch.cuda.is_available() and cfg.use_gpu
    if use_gpu:
        torch.cuda.set_device(args.gpu)
    device = torch.device("cuda:{}".format(args.gpu) if use_gpu else "cpu")
    logger.info("device: %s (%s)", device,
                torch.cuda.get_device_name(args.gpu) if use_gpu else "cpu")
    set_seed(seed, use_gpu)

    os.makedirs(args.output_dir, exist_ok=True)
    run_name = "{}_{}_seed{}".format(cfg.model_name, cfg.dataset, seed)
    ckpt_path = args.ckpt or os.path.join(args.output_dir, run_name + ".pt")

    x_tr, t_tr, y_tr = load_data(cfg.train_path)
    x_va, t_va, y_va = load_data(cfg.valid_path)
    x_te, t_te, y_te = load_data(cfg.test_path)

    train_loader = make_loader(x_tr, t_tr, y_tr, cfg.batch_size, True, use_gpu, cfg.num_workers)
    valid_loader = make_loader(x_va, t_va, y_va, cfg.eval_batch_size, False, use_gpu, cfg.num_workers)
    test_loader = make_loader(x_te, t_te, y_te, cfg.eval_batch_size, False, use_gpu, cfg.num_workers)

    model = build_descn(x_tr.shape[1], cfg, device)
    logger.info("model has %d parameters", sum(p.numel() for p in model.parameters()))

    if args.eval_only:
        state = torch.load(ckpt_path, map_location=device)
        model.load_state_dict(state["model"])
        uplift, prpsy, ys, ts = predict(model, test_loader, device)
        logger.info("test: %s", evaluate_uplift(ys, uplift, ts, prpsy))
        return

    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=cfg.decay_step, gamma=cfg.decay_rate)

    best_qini, bad_epochs = -np.inf, 0
    for epoch in range(cfg.epochs):
        with Timer("epoch %d" % epoch, use_gpu=use_gpu):
            train_loss, parts = train_one_epoch(model, train_loader, optimizer, cfg, device, epoch)
        scheduler.step()

        uplift, prpsy, ys, ts = predict(model, valid_loader, device)
        metrics = evaluate_uplift(ys, uplift, ts, prpsy)
        logger.info("epoch %d train_loss %.5f valid %s", epoch, train_loss, metrics)
        if use_gpu:
            logger.info("gpu mem: allocated %.1fMB, reserved %.1fMB",
                        torch.cuda.memory_allocated(device) / 2 ** 20,
                        torch.cuda.memory_reserved(device) / 2 ** 20)

        if metrics["qini"] > best_qini:
            best_qini, bad_epochs = metrics["qini"], 0
            torch.save({"model": model.state_dict(), "epoch": epoch, "cfg": cfg.__dict__}, ckpt_path)
        else:
            bad_epochs += 1
            if bad_epochs >= cfg.patience:
                logger.info("early stop at epoch %d", epoch)
                break

    state = torch.load(ckpt_path, map_location="cpu")
    model.load_state_dict(state["model"])
    model.to(device)
    uplift, prpsy, ys, ts = predict(model, test_loader, device)
    res = evaluate_uplift(ys, uplift, ts, prpsy)
    logger.info("best valid qini %.5f, test %s", best_qini, res)

    with open(os.path.join(args.output_dir, run_name + ".txt"), "w") as f:
        f.write("{}\n".format(time.strftime("%Y-%m-%d %H:%M:%S")))
        for k, v in res.items():
            f.write("{}\t{:.6f}\n".format(k, v))

    # a quick single-batch tensor sanity check of the wrapper utilities
    sample = wrap_tensor(x_te[:8], use_gpu)
    logger.info("sanity batch on %s: %s", sample.device, tuple(sample.shape))


if __name__ == "__main__":
    main()
