"""
LF-Font
Copyright (c) 2020-present NAVER Corp.
MIT license
"""
from pathlib import Path
from itertools import chain
import random

import numpy as np
import torch
import torch.nn.functional as F
from torchvision import transforms

from .ssim import SSIM, MSSSIM
import utils
from datasets import get_val_dataset
from models import Generator


def torch_eval(val_fn):
    @torch.no_grad()
    def decorated(self, gen, *args, **kwargs):
        gen.eval()
        ret = val_fn(self, gen, *args, **kwargs)
        gen.train()

        return ret

    return decorated


class Evaluator:
    def __init__(self, env, env_get, cfg, logger, writer, batch_size, transform,
                 content_font, use_half=False):

        self.env = env
        self.env_get = env_get
        self.logger = logger
        self.batch_size = batch_size
        self.transform = transform
        self.writer = writer
        self.k_shot = cfg.kshot
        self.content_font = content_font
        self.use_half = use_half
        self.size = cfg.input_size

        self.ssim = SSIM(window_size=11, size_average=True).cuda()
        self.msssim = MSSSIM(weights=[0.45, 0.3, 0.25], window_size=11, size_average=True).cuda()

    def cp_validation(self, gen, cv_loaders, step, phase="fact", reduction='mean',
                      ext_tag=""):
        """ Compare & validation """
        for tag, loader in cv_loaders.items():
            self.comparable_val_saveimg(gen, loader, step, n_row=loader.dataset.n_gen,
                                        phase=phase, tag=f"comparable_{tag}_{ext_tag}",
                                        reduction=reduction)

    @torch_eval
    def comparable_val_saveimg(self, gen, loader, step, n_row, phase="fact", tag='comparable', reduction='mean'):
        compare_batches = self.infer_loader(gen, loader, phase=phase, reduction=reduction)
        comparable_grid = utils.make_comparable_grid(*compare_batches[::-1], nrow=n_row)
        self.writer.add_image(tag, comparable_grid, global_step=step)

        return comparable_grid

    @torch_eval
    def infer_loader(self, gen, loader, phase, reduction="mean"):
        outs = []
        trgs = []

        for i, (in_style_ids, in_comp_ids, in_imgs, trg_style_ids, trg_comp_ids,
                content_imgs, *trg_imgs) in enumerate(loader):

            if self.use_half:
                in_imgs = in_imgs.half()
                content_imgs = content_imgs.half()

            out = gen.infer(in_style_ids, in_comp_ids, in_imgs, trg_style_ids, trg_comp_ids,
                            content_imgs, phase, reduction=reduction)

            batch_size = out.shape[0]
            out_images = out.detach().cpu().numpy().astype(np.float32)
            outs.append(torch.tensor(out_images))
            if trg_imgs:
                trgs.append(trg_imgs[0].detach().cpu())

        ret = (torch.cat(outs).float(),)
        if trgs:
            ret += (torch.cat(trgs).float(),)

        return ret

    @torch_eval
    def ssim_msssim(self, gen, loader, phase="fact", reduction="mean"):
        """SSIM / MS-SSIM / L1 of generated glyphs against the ground truth of the same font."""
        ssims, msssims, l1s = [], [], []
        for (in_style_ids, in_comp_ids, in_imgs, trg_style_ids, trg_comp_ids,
             content_imgs, trg_imgs) in loader:
            in_imgs = in_imgs.cuda()
            content_imgs = content_imgs.cuda()
            trg_imgs = trg_imgs.cuda()
            out = gen.infer(in_style_ids.cuda(), in_comp_ids.cuda(), in_imgs,
                            trg_style_ids.cuda(), trg_comp_ids.cuda(), content_imgs,
                            phase, reduction=reduction)
            out = utils.denormalize(out)
            trg = utils.denormalize(trg_imgs)
            ssims.append(self.ssim(out, trg).item())
            msssims.append(self.msssim(out, trg).item())
            l1s.append(F.l1_loss(out, trg).item())
        return float(np.mean(ssims)), float(np.mean(msssims)), float(np.mean(l1s))

    def save_each_imgs(self, gen, loader, save_dir, phase, reduction='mean'):
        font_name = loader.dataset.fonts[0]
        output_dir = Path(save_dir) / font_name
        output_dir.mkdir(parents=True, exist_ok=True)

        ch_list = loader.dataset.chars
        outs = self.infer_loader(gen, loader, phase=phase, reduction=reduction)[0]
        for char, out in zip(ch_list, outs):
            uni = hex(ord(char))[2:].upper()
            path = output_dir / "inferred_{}.png".format(uni)
            utils.save_tensor_to_image(out, path)


def eval_ckpt():
    from train import setup_language_dependent, setup_data, setup_cv_dset_loader, \
        get_dset_loader

    logger = utils.Logger.get()

    parser = argparse.ArgumentParser()
    parser.add_argument("config_paths", nargs="+", help="path to config.yaml")
    parser.add_argument("--weight", help="path to weight to evaluate.pth")
    parser.add_argument("--result_dir", help="path to save the result file")
    parser.add_argument("--mode", default="eval", help="eval / cv-save / user-study / user-study-save")
    args, left_argv = parser.parse_known_args()

    cfg = Config(*args.config_paths, default="cfgs/defaults.yaml")
    cfg.argv_update(left_argv)
    img_dir = Path(args.result_dir)
    img_dir.mkdir(parents=True, exist_ok=True)

    trn_transform, val_transform = setup_transforms(cfg)

    g_kwargs = cfg.get('g_args', {})
    gen = Generator(1, cfg.C, 1, **g_kwargs).cuda()

    weight = torch.load(args.weight)
    if "generator_ema" in weight:
        weight = weight["generator_ema"]
    gen.load_state_dict(weight)
    logger.info(f"Resumed checkpoint from {args.weight}")
    writer = None

    evaluator = Evaluator(env, env_get, cfg, logger, writer, cfg["batch_size"], val_transform,
                          content_font)

    if args.mode == 'eval':
        data_meta = load_json(cfg.data_meta)
        for font in data_meta["test"]["fonts"]:
            loader = get_val_dataset(font, data_meta, cfg, val_transform)
            evaluator.save_each_imgs(gen, loader, save_dir=img_dir, phase="fact", reduction="mean")
    elif args.mode == 'ssim':
        cv_loaders = setup_cv_dset_loader(env, env_get, cfg, val_transform)
        for tag, loader in cv_loaders.items():
            s, ms, l1 = evaluator.ssim_msssim(gen, loader)
            logger.info(f"[{tag}] SSIM {s:.4f}  MS-SSIM {ms:.4f}  L1 {l1:.4f}")
    else:
        raise ValueError(args.mode)


def setup_transforms(cfg):
    size = cfg.input_size
    tensorize_transform = [transforms.Resize((size, size)), transforms.ToTensor()]
    if cfg.dset_aug.normalize:
        tensorize_transform.append(transforms.Normalize([0.5], [0.5]))
    val_transform = transforms.Compose(tensorize_transform)
    return None, val_transform


if __name__ == "__main__":
    import argparse
    from sconf import Config
    from utils import load_json
    env = env_get = content_font = None
    eval_ckpt()
