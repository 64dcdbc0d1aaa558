"""
ReconFormer: Accelerated MRI Reconstruction Using Recurrent Transformer.

Training / evaluation entry point for fastMRI single-coil knee and the
HPKS dataset.

    python main_recon.py --phase train --dataset fastmri --accelerations 4 \
        --center-fractions 0.08 --gpu 0,1 --bs 4 --lr 1e-4

    python main_recon.py --phase test --dataset fastmri --checkpoint ckpt/best.pth --gpu 0
"""
import argparse
import os
import pathlib
import random
import time
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
from tensorboardX import SummaryWriter
from torch.utils.data import DataLoader
from tqdm import tqdm

from data import transforms as T
from data.mri_data import SliceData
from data.subsample import create_mask_for_mask_type
from models.Recurrent_Transformer import ReconFormer
from utils.evaluate import nmse, psnr, ssim
from utils.save_recon import save_reconstructions


def create_args():
    parser = argparse.ArgumentParser(description="ReconFormer")
    parser.add_argument("--phase", type=str, default="train", choices=["train", "test"])
    parser.add_argument("--dataset", type=str, default="fastmri", choices=["fastmri", "hpks"])
    parser.add_argument("--data-path", type=pathlib.Path, default=pathlib.Path("/data/fastMRI/knee"))
    parser.add_argument("--challenge", type=str, default="singlecoil")
    parser.add_argument("--sample-rate", type=float, default=1.0)
    parser.add_argument("--resolution", type=int, default=320)
    parser.add_argument("--mask-type", type=str, default="random")
    parser.add_argument("--accelerations", nargs="+", default=[4], type=int)
    parser.add_argument("--center-fractions", nargs="+", default=[0.08], type=float)
    # model
    parser.add_argument("--num-iter", type=int, default=5, help="number of recurrent iterations")
    parser.add_argument("--embed-dim", type=int, default=96)
    parser.add_argument("--window-size", type=int, default=8)
    # optimisation
    parser.add_argument("--bs", type=int, default=4, help="batch size (total over all GPUs)")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--lr-step-size", type=int, default=40)
    parser.add_argument("--lr-gamma", type=float, default=0.1)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--num-workers", type=int, default=8)
    # misc
    parser.add_argument("--gpu", type=str, default="0", help="comma separated GPU ids, e.g. 0,1,2,3")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--exp-dir", type=pathlib.Path, default=pathlib.Path("checkpoints"))
    parser.add_argument("--checkpoint", type=str, default=None)
    parser.add_argument("--report-interval", type=int, default=100)
    return parser.parse_args()


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.benchmark = True


def create_datasets(args):
    train_mask = create_mask_for_mask_type(args.mask_type, args.center_fractions, args.accelerations)
    dev_mask = create_mask_for_mask_type(args.mask_type, args.center_fractions, args.accelerations)

    train_data = SliceData(
        root=args.data_path / f"{args.challenge}_train",
        transform=T.DataTransform(train_mask, args.resolution, use_seed=False),
        sample_rate=args.sample_rate,
        challenge=args.challenge,
    )
    dev_data = SliceData(
        root=args.data_path / f"{args.challenge}_val",
        transform=T.DataTransform(dev_mask, args.resolution, use_seed=True),
        sample_rate=args.sample_rate,
        challenge=args.challenge,
    )
    return dev_data, train_data


def create_data_loaders(args):
    dev_data, train_data = create_datasets(args)
    train_loader = DataLoader(
        dataset=train_data,
        batch_size=args.bs,
        shuffle=True,
        num_workers=args.num_workers,
        pin_memory=True,
    )
    dev_loader = DataLoader(
        dataset=dev_data,
        batch_size=1,
        num_workers=args.num_workers,
        pin_memory=True,
    )
    return train_loader, dev_loader


def build_model(args):
    net = ReconFormer(
        in_channels=2,
        out_channels=2,
        num_ch=(args.embed_dim, args.embed_dim, args.embed_dim),
        num_iter=args.num_iter,
        down_scales=(2, 1, 1.5),
        img_size=args.resolution,
        num_heads=(6, 6, 6),
        depths=(2, 1, 1),
        window_sizes=(args.window_size, args.window_size, args.window_size),
        mlp_ratio=2.0,
        resi_connection="1conv",
        use_checkpoint=(False, False, True, True, False, False),
    )
    if torch.cuda.device_count() > 1:
        print(f"Let's use {torch.cuda.device_count()} GPUs!")
        net = nn.DataParallel(net)
    net = net.cuda()
    return net


def train_epoch(args, epoch, model, data_loader, optimizer, writer):
    model.train()
    avg_loss = 0.0
    start_epoch = start_iter = time.perf_counter()
    global_step = epoch * len(data_loader)
    for iter, data in enumerate(tqdm(data_loader, desc=f"epoch {epoch}")):
        und_img, target, und_kspace, mask, mean, std, norm, fname, slice_num = data
        und_img = und_img.cuda().float()
        target = target.cuda().float()
        und_kspace = und_kspace.cuda()
        mask = mask.cuda()

        output = model(und_img, und_kspace, mask)
        loss = nn.functional.l1_loss(output, target)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        avg_loss = 0.99 * avg_loss + 0.01 * loss.item() if iter > 0 else loss.item()
        writer.add_scalar("TrainLoss", loss.item(), global_step + iter)

        if iter % args.report_interval == 0:
            print(
                f"Epoch = [{epoch:3d}/{args.epochs:3d}] "
                f"Iter = [{iter:4d}/{len(data_loader):4d}] "
                f"Loss = {loss.item():.4g} Avg Loss = {avg_loss:.4g} "
                f"Time = {time.perf_counter() - start_iter:.4f}s",
            )
        start_iter = time.perf_counter()
    return avg_loss, time.perf_counter() - start_epoch


def evaluate(args, epoch, model, data_loader, writer):
    model.eval()
    losses = []
    metrics = defaultdict(list)
    start = time.perf_counter()
    with torch.no_grad():
        for iter, data in enumerate(data_loader):
            und_img, target, und_kspace, mask, mean, std, norm, fname, slice_num = data
            und_img, und_kspace, mask = und_img.cuda().float(), und_kspace.cuda(), mask.cuda()
            target = target.float().cuda()

            output = model(und_img, und_kspace, mask)

            mean = mean.unsqueeze(1).unsqueeze(2).cuda()
            std = std.unsqueeze(1).unsqueeze(2).cuda()
            target = T.complex_abs(target.permute(0, 2, 3, 1)) * std + mean
            output = T.complex_abs(output.permute(0, 2, 3, 1)) * std + mean

            losses.append(nn.functional.l1_loss(output, target).item())
            tgt, out = target.cpu().numpy(), output.cpu().numpy()
            metrics["nmse"].append(nmse(tgt, out))
            metrics["psnr"].append(psnr(tgt, out))
            metrics["ssim"].append(ssim(tgt, out))

        writer.add_scalar("Dev_Loss", np.mean(losses), epoch)
        for k, v in metrics.items():
            writer.add_scalar(f"Dev_{k}", np.mean(v), epoch)
    return np.mean(losses), {k: float(np.mean(v)) for k, v in metrics.items()}, time.perf_counter() - start


def save_model(args, exp_dir, epoch, model, optimizer, best_dev_loss, is_new_best):
    state = {
        "epoch": epoch,
        "args": args,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "best_dev_loss": best_dev_loss,
        "exp_dir": exp_dir,
    }
    torch.save(state, exp_dir / "model.pt")
    if is_new_best:
        torch.save(state, exp_dir / "best_model.pt")


def load_model(args, checkpoint_file):
    checkpoint = torch.load(checkpoint_file)
    model = build_model(checkpoint["args"])
    model.load_state_dict(checkpoint["model"])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint, model, optimizer


def run_test(args):
    checkpoint, model, _ = load_model(args, args.checkpoint)
    _, dev_loader = create_data_loaders(args)
    model.eval()
    reconstructions = defaultdict(list)
    with torch.no_grad():
        for data in tqdm(dev_loader, desc="test"):
            und_img, _, und_kspace, mask, mean, std, _, fnames, slices = data
            output = model(und_img.cuda().float(), und_kspace.cuda(), mask.cuda())
            output = T.complex_abs(output.permute(0, 2, 3, 1)).cpu()
            output = output * std.view(-1, 1, 1) + mean.view(-1, 1, 1)
            for i in range(output.shape[0]):
                reconstructions[fnames[i]].append((slices[i].item(), output[i].numpy()))
    reconstructions = {
        fname: np.stack([pred for _, pred in sorted(slice_preds)])
        for fname, slice_preds in reconstructions.items()
    }
    save_reconstructions(reconstructions, args.exp_dir / "reconstructions")


def main(args):
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
    seed_everything(args.seed)
    args.exp_dir.mkdir(parents=True, exist_ok=True)

    if args.phase == "test":
        run_test(args)
        return

    writer = SummaryWriter(log_dir=str(args.exp_dir / "summary"))
    model = build_model(args)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, args.lr_step_size, args.lr_gamma)
    best_dev_loss, start_epoch = 1e9, 0
    train_loader, dev_loader = create_data_loaders(args)

    for epoch in range(start_epoch, args.epochs):
        train_loss, train_time = train_epoch(args, epoch, model, train_loader, optimizer, writer)
        scheduler.step()
        dev_loss, dev_metrics, dev_time = evaluate(args, epoch, model, dev_loader, writer)

        is_new_best = dev_loss < best_dev_loss
        best_dev_loss = min(best_dev_loss, dev_loss)
        save_model(args, args.exp_dir, epoch, model, optimizer, best_dev_loss, is_new_best)
        print(
            f"Epoch = [{epoch:4d}/{args.epochs:4d}] TrainLoss = {train_loss:.4g} "
            f"DevLoss = {dev_loss:.4g} PSNR = {dev_metrics['psnr']:.2f} "
            f"SSIM = {dev_metrics['ssim']:.4f} TrainTime = {train_time:.1f}s DevTime = {dev_time:.1f}s",
        )
    writer.close()


if __name__ == "__main__":
    main(create_args())
