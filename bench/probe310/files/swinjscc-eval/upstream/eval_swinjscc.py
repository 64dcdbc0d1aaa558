"""Evaluate SwinJSCC / WITT checkpoints over a sweep of channel SNRs and CBRs.

Reports PSNR, MS-SSIM, encoder/decoder latency and GPU utilisation so the
numbers can be put next to the BPG+LDPC baselines in the paper tables.

    python eval_swinjscc.py --trainset DIV2K --testset kodak --channel-type rayleigh \
        --C 96 --multiple-snr 1,4,7,10,13 --model SwinJSCC_w/_SAandRA \
        --checkpoint ./checkpoints/SwinJSCC_w_SAandRA_DIV2K_rayleigh_C96.model
"""
import argparse
import json
import logging
import os
import time
from datetime import datetime

import numpy as np
import torch
import torch.nn as nn
import pynvml
from pytorch_msssim import ms_ssim
from torch.utils.data import DataLoader

from data.datasets import get_test_loader
from net.network import SwinJSCC
from utils import AverageMeter, CalcuPSNR, logger_configuration, seed_torch

parser = argparse.ArgumentParser(description="SwinJSCC evaluation")
parser.add_argument("--trainset", type=str, default="DIV2K", choices=["CIFAR10", "DIV2K"])
parser.add_argument("--testset", type=str, default="kodak", choices=["kodak", "CLIC21", "ffhq"])
parser.add_argument("--distortion-metric", type=str, default="MSE", choices=["MSE", "MS-SSIM"])
parser.add_argument("--model", type=str, default="SwinJSCC_w/_SAandRA")
parser.add_argument("--channel-type", type=str, default="awgn", choices=["awgn", "rayleigh"])
parser.add_argument("--C", type=str, default="96", help="bottleneck dimension(s), comma separated")
parser.add_argument("--multiple-snr", type=str, default="1,4,7,10,13")
parser.add_argument("--model-size", type=str, default="base", choices=["small", "base", "large"])
parser.add_argument("--checkpoint", type=str, required=True)
parser.add_argument("--gpus", type=str, default="0")
parser.add_argument("--profile", action="store_true", help="emit NVTX ranges for nsys")
parser.add_argument("--out", type=str, default="./results")
args = parser.parse_args()

os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus


class Config:
    seed = 42
    pass_channel = True
    CUDA = True
    device = torch.device("cuda:0")
    norm = False
    print_step = 50
    filename = datetime.now().__str__()[:-7]
    workdir = "./history/{}".format(filename)
    log = workdir + "/Log_{}.log".format(filename)
    samples = workdir + "/samples"
    models = workdir + "/models"
    logger = None

    if args.trainset == "CIFAR10":
        image_dims = (3, 32, 32)
        downsample = 2
        encoder_kwargs = dict(img_size=(32, 32), patch_size=2, in_chans=3, embed_dims=[128, 256],
                              depths=[2, 4], num_heads=[4, 8], window_size=2, mlp_ratio=4.0)
    else:
        image_dims = (3, 256, 256)
        downsample = 4
        if args.model_size == "small":
            depths = [2, 2, 2, 2]
        elif args.model_size == "base":
            depths = [2, 2, 6, 2]
        else:
            depths = [2, 2, 18, 2]
        encoder_kwargs = dict(img_size=(256, 256), patch_size=2, in_chans=3,
                              embed_dims=[128, 192, 256, 320], depths=depths,
                              num_heads=[4, 6, 8, 10], window_size=8, mlp_ratio=4.0)
    test_batch_size = 1


def gpu_utilisation(handle):
    util = pynvml.nvmlDeviceGetUtilizationRates(handle)
    mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
    return util.gpu, mem.used / 2 ** 20


def compute_cbr(config, C):
    """Channel bandwidth ratio k/n for a bottleneck of C channels."""
    h, w = config.image_dims[1], config.image_dims[2]
    down = 2 ** config.downsample
    k = (h // down) * (w // down) * C / 2  # complex channel uses
    n = 3 * h * w
    return k / n


def save_reconstruction(x, recon, path):
    """Save original / reconstruction side by side as PNG."""
    import torchvision
    grid = torch.cat([x, recon], dim=-1)
    torchvision.utils.save_image(grid, path)


@torch.no_grad()
def evaluate(net, loader, config, snr, rate, handle):
    net.eval()
    psnr_m, msssim_m, enc_t, util_m = AverageMeter(), AverageMeter(), AverageMeter(), AverageMeter()
    for i, batch in enumerate(loader):
        x = batch[0] if isinstance(batch, (list, tuple)) else batch
        x = x.cuda()
        if args.profile:
            torch.cuda.nvtx.range_push("swinjscc_forward_snr%d" % snr)
        torch.cuda.synchronize()
        t0 = time.time()
        recon, cbr, snr_used, mse, loss_g = net(x, snr, rate)
        torch.cuda.synchronize()
        enc_t.update(time.time() - t0)
        if args.profile:
            torch.cuda.nvtx.range_pop()
        recon = recon.clamp(0.0, 1.0)
        psnr = CalcuPSNR(x * 255.0, recon * 255.0)
        psnr_m.update(psnr.mean().item())
        msssim_m.update(ms_ssim(x, recon, data_range=1.0, size_average=True).item())
        util, _ = gpu_utilisation(handle)
        util_m.update(util)
        if i % config.print_step == 0:
            config.logger.info("[%d/%d] SNR %d  CBR %.4f  PSNR %.3f  MS-SSIM %.4f  %.1f ms" % (
                i, len(loader), snr, cbr, psnr_m.avg, msssim_m.avg, enc_t.avg * 1e3))
    return psnr_m.avg, msssim_m.avg, enc_t.avg, util_m.avg


def main():
    config = Config()
    seed_torch(config.seed)
    os.makedirs(config.workdir, exist_ok=True)
    config.logger = logger_configuration(config, save_log=True)
    logger = config.logger

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    logger.info("GPU: %s" % pynvml.nvmlDeviceGetName(handle))

    net = SwinJSCC(args, config)
    state = torch.load(args.checkpoint, map_location="cuda:0")
    net.load_state_dict(state, strict=True)
    net = net.cuda()
    if len(args.gpus.split(",")) > 1:
        net = nn.DataParallel(net)
    n_params = sum(p.numel() for p in net.parameters())
    logger.info("params: %.2fM" % (n_params / 1e6))

    loader = get_test_loader(args, config)
    snrs = [int(s) for s in args.multiple_snr.split(",")]
    rates = [int(c) for c in args.C.split(",")]

    results = {}
    for rate in rates:
        for snr in snrs:
            psnr, msssim, lat, util = evaluate(net, loader, config, snr, rate, handle)
            results["C%d_SNR%d" % (rate, snr)] = dict(psnr=psnr, msssim=msssim, latency_ms=lat * 1e3, gpu_util=util)
            logger.info("==> C=%d SNR=%d  PSNR %.3f dB  MS-SSIM %.4f (%.2f dB)  latency %.2f ms  util %.0f%%" % (
                rate, snr, psnr, msssim, -10 * np.log10(1 - msssim), lat * 1e3, util))

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "eval_%s_%s.json" % (args.testset, args.channel_type)), "w") as f:
        json.dump(results, f, indent=2)
    pynvml.nvmlShutdown()


if __name__ == "__main__":
    main()
