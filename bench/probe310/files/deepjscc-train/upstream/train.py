"""Deep JSCC for wireless image transmission -- training script.

Implements the autoencoder of Bourtsoulatze, Kurka & Gunduz, "Deep Joint
Source-Channel Coding for Wireless Image Transmission" (IEEE TCCN 2019), with
an AWGN / slow Rayleigh fading channel layer between encoder and decoder and
optional OFDM (see models/ofdm.py).

    python train.py --config configs/cifar10_awgn.json --gpu 0,1
    python train.py --config configs/cifar10_awgn.json --channel rayleigh --snr 10 --ratio 1/6
"""
import argparse
import json
import os
import time
from fractions import Fraction

import numpy as np
import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter

from models.deepjscc import DeepJSCC, ratio2filtersize
from models.channel import Channel
from utils import AverageMeter, image_psnr, save_ckpt, load_ckpt


def get_args():
    parser = argparse.ArgumentParser(description="Deep JSCC")
    parser.add_argument("--config", type=str, default="configs/cifar10_awgn.json")
    parser.add_argument("--channel", type=str, default=None, choices=["awgn", "rayleigh", "ofdm"])
    parser.add_argument("--snr", type=float, default=None, help="training SNR (dB)")
    parser.add_argument("--ratio", type=str, default=None, help="bandwidth ratio k/n, e.g. 1/6")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--gpu", type=str, default="0", help="comma separated list of GPU ids")
    parser.add_argument("--resume", type=str, default="")
    parser.add_argument("--out", type=str, default="./out")
    return parser.parse_args()


def load_config(args):
    with open(args.config) as f:
        cfg = json.load(f)
    for k in ("channel", "snr", "ratio", "epochs"):
        v = getattr(args, k)
        if v is not None:
            cfg[k] = v
    cfg["ratio"] = float(Fraction(cfg["ratio"])) if isinstance(cfg["ratio"], str) else cfg["ratio"]
    return cfg


def get_loaders(cfg):
    tf_train = T.Compose([T.RandomHorizontalFlip(), T.RandomCrop(32, padding=4), T.ToTensor()])
    tf_test = T.Compose([T.ToTensor()])
    if cfg["dataset"] == "cifar10":
        train_set = torchvision.datasets.CIFAR10(cfg["data_root"], train=True, download=True, transform=tf_train)
        test_set = torchvision.datasets.CIFAR10(cfg["data_root"], train=False, download=True, transform=tf_test)
    else:
        train_set = torchvision.datasets.ImageFolder(os.path.join(cfg["data_root"], "train"), transform=tf_train)
        test_set = torchvision.datasets.ImageFolder(os.path.join(cfg["data_root"], "val"), transform=tf_test)
    train_loader = DataLoader(train_set, batch_size=cfg["batch_size"], shuffle=True,
                              num_workers=cfg["num_workers"], pin_memory=True, drop_last=True)
    test_loader = DataLoader(test_set, batch_size=cfg["batch_size"], shuffle=False,
                             num_workers=cfg["num_workers"], pin_memory=True)
    return train_loader, test_loader


def train_one_epoch(model, loader, optimizer, criterion, device, epoch, writer, cfg):
    model.train()
    meter = AverageMeter()
    t0 = time.time()
    for it, (images, _) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        if cfg.get("snr_range"):
            lo, hi = cfg["snr_range"]
            snr = float(np.random.uniform(lo, hi))
        else:
            snr = cfg["snr"]
        out = model(images, snr)
        loss = criterion(out, images)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(loss.item(), images.size(0))
        if it % cfg["log_interval"] == 0:
            step = epoch * len(loader) + it
            writer.add_scalar("train/mse", loss.item(), step)
            print("epoch %d it %d/%d  mse %.5f  %.2f it/s" % (
                epoch, it, len(loader), meter.avg, (it + 1) / (time.time() - t0)))
    return meter.avg


@torch.no_grad()
def evaluate(model, loader, device, snr):
    model.eval()
    psnr = AverageMeter()
    for images, _ in loader:
        images = images.to(device)
        out = model(images, snr)
        psnr.update(image_psnr(out.clamp(0, 1), images).mean().item(), images.size(0))
    return psnr.avg


@torch.no_grad()
def benchmark(model, device, batch=64, iters=200):
    """Encoder+channel+decoder latency and peak memory at batch size `batch`."""
    model.eval()
    x = torch.rand(batch, 3, 32, 32, device=device)
    for _ in range(20):
        model(x, 10.0)
    torch.cuda.reset_peak_memory_stats(device)
    starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        starter.record()
        model(x, 10.0)
        ender.record()
        torch.cuda.synchronize(device)
        times.append(starter.elapsed_time(ender))
    times = np.array(times)
    print("latency: mean %.3f ms  p50 %.3f ms  p99 %.3f ms  | peak mem %.1f MB" % (
        times.mean(), np.percentile(times, 50), np.percentile(times, 99),
        torch.cuda.max_memory_allocated(device) / 2 ** 20))
    return times.mean()


def main():
    args = get_args()
    cfg = load_config(args)
    gpu_ids = [int(g) for g in args.gpu.split(",") if g != ""]

    torch.manual_seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    if cfg["device"] == "cuda":
        torch.cuda.set_device(gpu_ids[0])
        device = torch.device("cuda", gpu_ids[0])
    else:
        device = torch.device("cpu")

    c = ratio2filtersize(torch.ones(1, 3, 32, 32), cfg["ratio"])
    channel = Channel(cfg["channel"], cfg.get("ofdm"))
    model = DeepJSCC(c=c, channel=channel)
    model = model.to(device)
    if len(gpu_ids) > 1:
        model = nn.DataParallel(model, device_ids=gpu_ids, output_device=gpu_ids[0])
        print("=> DataParallel on GPUs", gpu_ids)

    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"])
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=cfg["lr_step"], gamma=0.5)

    start_epoch = 0
    if args.resume:
        start_epoch = load_ckpt(args.resume, model, optimizer, scheduler, map_location=device)

    run_name = "%s_%s_snr%g_r%.3f" % (cfg["dataset"], cfg["channel"], cfg["snr"], cfg["ratio"])
    out_dir = os.path.join(args.out, run_name)
    os.makedirs(out_dir, exist_ok=True)
    writer = SummaryWriter(os.path.join(out_dir, "tb"))

    train_loader, test_loader = get_loaders(cfg)
    best = 0.0
    for epoch in range(start_epoch, cfg["epochs"]):
        loss = train_one_epoch(model, train_loader, optimizer, criterion, device, epoch, writer, cfg)
        scheduler.step()
        if (epoch + 1) % cfg["eval_interval"] == 0:
            psnr = evaluate(model, test_loader, device, cfg["snr"])
            writer.add_scalar("test/psnr", psnr, epoch)
            print("==> epoch %d  train mse %.5f  test PSNR %.2f dB" % (epoch, loss, psnr))
            if psnr > best:
                best = psnr
                save_ckpt(os.path.join(out_dir, "best.pth"), model, optimizer, scheduler, epoch)
        save_ckpt(os.path.join(out_dir, "last.pth"), model, optimizer, scheduler, epoch)

    # sweep the test SNR to get the PSNR-vs-SNR curve of this model
    curve = {}
    for snr in cfg.get("test_snrs", [0, 5, 10, 15, 20]):
        curve[snr] = evaluate(model, test_loader, device, snr)
        print("test SNR %5.1f dB -> PSNR %.2f dB" % (snr, curve[snr]))
    with open(os.path.join(out_dir, "psnr_curve.json"), "w") as f:
        json.dump(curve, f, indent=2)
    writer.close()


if __name__ == "__main__":
    main()
