"""CamVid semantic segmentation with a fastai dynamic U-Net.

Reproduces the lesson-3 CamVid result (~92% foreground accuracy) with fastai v2:

    python camvid_unet.py --arch resnet34 --size 360,480 --epochs 12 --gpu 0
    python camvid_unet.py --export-only --weights models/stage-2   # rebuild the pkl for the demo app

Notes
-----
* Images are 720x960; we train at half resolution first and then at full resolution
  ("progressive resizing").  Full-res needs ~14GB with bs=4 in fp16.
* `acc_camvid` ignores the `Void` class, like the paper.
"""
import argparse
import os
from pathlib import Path

import numpy as np
import torch
from fastai.vision.all import *

CODES_FILE = 'codes.txt'


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--arch', default='resnet34')
    p.add_argument('--size', default='360,480', help='first-stage size, "h,w"')
    p.add_argument('--bs', type=int, default=8)
    p.add_argument('--epochs', type=int, default=12)
    p.add_argument('--lr', type=float, default=3e-3)
    p.add_argument('--gpu', type=int, default=0)
    p.add_argument('--fp16', action='store_true', default=True)
    p.add_argument('--channels-last', action='store_true',
                   help='NHWC memory format; ~15%% faster convs on Ampere with AMP')
    p.add_argument('--export-only', action='store_true')
    p.add_argument('--weights', default=None)
    return p.parse_args()


def label_func(fn, path_lbl):
    return path_lbl/f"{fn.stem}_P{fn.suffix}"


def acc_camvid(inp, targ, void_code):
    targ = targ.squeeze(1)
    mask = targ != void_code
    return (inp.argmax(dim=1)[mask]==targ[mask]).float().mean()


def get_dls(path, codes, size, bs, device):
    path_lbl, path_img = path/'labels', path/'images'
    fnames = get_image_files(path_img)
    valid_fns = set((path/'valid.txt').read_text().split('\n'))
    return SegmentationDataLoaders.from_label_func(
        path, bs=bs, fnames=fnames,
        label_func=partial(label_func, path_lbl=path_lbl),
        codes=codes,
        valid_pct=None, splitter=FuncSplitter(lambda o: o.name in valid_fns),
        item_tfms=Resize(size),
        batch_tfms=[*aug_transforms(size=size, max_warp=0.), Normalize.from_stats(*imagenet_stats)],
        device=device)


def show_segmentation_stats(learn, dl, n_classes):
    "Per-class IoU on the validation set"
    inter = torch.zeros(n_classes, device=learn.dls.device)
    union = torch.zeros(n_classes, device=learn.dls.device)
    learn.model.eval()
    with torch.no_grad():
        for xb, yb in dl:
            pred = learn.model(xb).argmax(dim=1)
            yb = yb.squeeze(1)
            for c in range(n_classes):
                p, t = pred == c, yb == c
                inter[c] += (p & t).sum()
                union[c] += (p | t).sum()
    iou = (inter / union.clamp_min(1)).cpu().numpy()
    return iou


def main():
    args = parse_args()
    torch.backends.cudnn.benchmark = True
    torch.cuda.set_device(args.gpu)
    device = torch.device("cuda:0")

    path = untar_data(URLs.CAMVID)
    codes = np.loadtxt(path/CODES_FILE, dtype=str)
    void_code = int(np.where(codes == 'Void')[0][0])
    metric = partial(acc_camvid, void_code=void_code)
    metric.__name__ = 'acc_camvid'

    size = tuple(int(s) for s in args.size.split(','))
    dls = get_dls(path, codes, size, args.bs, device)

    learn = unet_learner(dls, getattr(models, args.arch), metrics=metric,
                         self_attention=True, act_cls=Mish, opt_func=ranger)
    if args.fp16: learn = learn.to_fp16()
    if args.channels_last: learn = learn.to_channelslast()

    if args.weights:
        learn.load(args.weights, device=device)
    if args.export_only:
        learn.export('camvid_unet.pkl')
        return

    learn.fit_flat_cos(args.epochs, slice(args.lr))
    learn.save('stage-1')
    learn.unfreeze()
    lrs = slice(args.lr/400, args.lr/4)
    learn.fit_flat_cos(args.epochs, lrs)
    learn.save('stage-2')

    # ## Going big: full resolution, smaller batch
    del learn
    torch.cuda.empty_cache()
    full = (720, 960)
    dls = get_dls(path, codes, full, max(1, args.bs//2), device)
    learn = unet_learner(dls, getattr(models, args.arch), metrics=metric,
                         self_attention=True, act_cls=Mish, opt_func=ranger).to_fp16()
    learn.load('stage-2', device=device)
    learn.fit_flat_cos(max(1, args.epochs//2), slice(1e-3))
    learn.unfreeze()
    learn.fit_flat_cos(max(1, args.epochs//2), slice(1e-6, 1e-4))
    learn.save('stage-2-big')

    iou = show_segmentation_stats(learn, dls.valid, len(codes))
    for c, v in zip(codes, iou): print(f"{c:>20}: {v:.3f}")
    print(f"peak GPU memory: {torch.cuda.max_memory_reserved()/2**30:.1f} GiB")
    learn.export('camvid_unet_big.pkl')


if __name__ == '__main__':
    main()
