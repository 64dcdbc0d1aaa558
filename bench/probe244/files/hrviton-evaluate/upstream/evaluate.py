"""Evaluate try-on results (paired setting: SSIM / LPIPS, unpaired setting: FID / KID).

    python evaluate.py --gt_dir ./data/zalando-hd-resize/test/image --pred_dir ./Output/test_paired --paired
    python evaluate.py --gt_dir ./data/zalando-hd-resize/test/image --pred_dir ./Output/test_unpaired

All metric networks (AlexNet-LPIPS, InceptionV3) run on the first visible GPU.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from tqdm import tqdm
from torchvision import transforms

import lpips
from pytorch_msssim import ssim
from torchmetrics.image.fid import FrechetInceptionDistance
from torchmetrics.image.kid import KernelInceptionDistance


def get_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument('--gt_dir', type=str, required=True)
    parser.add_argument('--pred_dir', type=str, required=True)
    parser.add_argument('--paired', action='store_true')
    parser.add_argument('--batch_size', type=int, default=16)
    parser.add_argument('--height', type=int, default=1024)
    parser.add_argument('--width', type=int, default=768)
    parser.add_argument('--gpu', type=int, default=0)
    return parser.parse_args()


class PairDataset(torch.utils.data.Dataset):
    def __init__(self, gt_dir, pred_dir, height, width, paired):
        self.gt_dir = gt_dir
        self.pred_dir = pred_dir
        self.paired = paired
        self.pred_names = sorted(f for f in os.listdir(pred_dir) if f.endswith(('.png', '.jpg')))
        self.gt_names = sorted(f for f in os.listdir(gt_dir) if f.endswith(('.png', '.jpg')))
        self.transform = transforms.Compose([transforms.Resize((height, width)), transforms.ToTensor()])

    def __len__(self):
        return len(self.pred_names)

    def __getitem__(self, idx):
        pred_name = self.pred_names[idx]
        # paired outputs are named <person>_<cloth>.png with person == cloth
        gt_name = pred_name.split('_')[0] + '_00.jpg' if self.paired else self.gt_names[idx % len(self.gt_names)]
        pred = self.transform(Image.open(os.path.join(self.pred_dir, pred_name)).convert('RGB'))
        gt = self.transform(Image.open(os.path.join(self.gt_dir, gt_name)).convert('RGB'))
        return pred, gt


@torch.no_grad()
def evaluate_paired(opt, loader, device):
    lpips_model = lpips.LPIPS(net='alex').cuda()
    lpips_model.eval()

    ssim_scores, lpips_scores = [], []
    for pred, gt in tqdm(loader):
        pred = pred.cuda(non_blocking=True)
        gt = gt.cuda(non_blocking=True)
        ssim_scores.append(ssim(pred, gt, data_range=1.0, size_average=False).cpu())
        # lpips expects [-1, 1]
        lpips_scores.append(lpips_model(pred * 2 - 1, gt * 2 - 1).flatten().cpu())

    ssim_score = torch.cat(ssim_scores).mean().item()
    lpips_score = torch.cat(lpips_scores).mean().item()
    print(f"SSIM: {ssim_score:.4f}  LPIPS: {lpips_score:.4f}")
    return {'ssim': ssim_score, 'lpips': lpips_score}


@torch.no_grad()
def evaluate_unpaired(opt, loader, device):
    fid = FrechetInceptionDistance(feature=2048, normalize=True).to(device)
    kid = KernelInceptionDistance(subset_size=100, normalize=True).to(device)

    for pred, gt in tqdm(loader):
        pred = pred.to(device)
        gt = gt.to(device)
        # the inception nets expect 299x299
        pred = F.interpolate(pred, size=(299, 299), mode='bilinear', align_corners=False)
        gt = F.interpolate(gt, size=(299, 299), mode='bilinear', align_corners=False)
        fid.update(gt, real=True)
        fid.update(pred, real=False)
        kid.update(gt, real=True)
        kid.update(pred, real=False)

    fid_score = fid.compute().item()
    kid_mean, kid_std = kid.compute()
    print(f"FID: {fid_score:.3f}  KID: {kid_mean.item() * 1000:.3f} +- {kid_std.item() * 1000:.3f} (x1e-3)")
    return {'fid': fid_score, 'kid': kid_mean.item()}


def main():
    opt = get_opt()
    torch.cuda.set_device(opt.gpu)
    device = torch.device('cuda', opt.gpu)
    print(f"evaluating on {torch.cuda.get_device_name(opt.gpu)}")

    dataset = PairDataset(opt.gt_dir, opt.pred_dir, opt.height, opt.width, opt.paired)
    loader = torch.utils.data.DataLoader(dataset, batch_size=opt.batch_size, shuffle=False,
                                         num_workers=8, pin_memory=True)

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    if opt.paired:
        scores = evaluate_paired(opt, loader, device)
    else:
        scores = evaluate_unpaired(opt, loader, device)
    end.record()
    torch.cuda.synchronize()
    print(f"{len(dataset)} images in {start.elapsed_time(end) / 1000:.1f}s")

    with open(os.path.join(opt.pred_dir, '..', 'metrics_%s.txt' % ('paired' if opt.paired else 'unpaired')), 'w') as f:
        for k, v in scores.items():
            f.write(f"{k}: {v}\n")
        f.write(f"time: {time.strftime('%Y-%m-%d %H:%M:%S')}\n")


if __name__ == '__main__':
    main()
