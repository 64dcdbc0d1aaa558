"""
MX-Font
Copyright (c) 2021-present NAVER Corp.
MIT license

Generate unseen characters of unseen fonts from a handful of reference glyphs.

    python eval.py cfgs/eval.yaml --weight generator.pth --result_dir results/
"""

import argparse
from pathlib import Path
from PIL import Image

import torch
from sconf import Config
from torchvision import transforms

from utils import save_tensor_to_image
from datasets import load_lmdb, read_data_from_lmdb, get_fact_test_dataset
from models import Generator
from torch.utils.data import DataLoader

TRANSFORM = transforms.Compose([
    transforms.Resize((128, 128)),
    transforms.ToTensor(),
    transforms.Normalize([0.5], [0.5])
])


def eval_ckpt():
    parser = argparse.ArgumentParser()
    parser.add_argument("config_paths", nargs="+", help="path to config.yaml")
    parser.add_argument("--weight", help="path to weight to evaluate.pth")
    parser.add_argument("--result_dir", help="path to save the result file")
    parser.add_argument("--n_ref", type=int, default=4, help="number of reference glyphs per font")
    parser.add_argument("--batch_size", type=int, default=32)
    args, left_argv = parser.parse_known_args()

    cfg = Config(*args.config_paths, default="cfgs/defaults.yaml")
    cfg.argv_update(left_argv)
    img_dir = Path(args.result_dir)
    img_dir.mkdir(parents=True, exist_ok=True)

    g_kwargs = cfg.get('g_args', {})
    gen = Generator(1, cfg.C, 1, **g_kwargs).cuda()

    weight = torch.load(args.weight, map_location="cuda:0")
    if "generator_ema" in weight:
        weight = weight["generator_ema"]
    gen.load_state_dict(weight)
    gen.eval()

    env = load_lmdb(cfg.data_path)
    env_get = lambda env, x, y, transform: transform(read_data_from_lmdb(env, f'{x}_{y}')['img'])

    test_dset, test_loader = get_fact_test_dataset(env, env_get, cfg.dset.test,
                                                   transform=TRANSFORM, n_ref=args.n_ref,
                                                   batch_size=args.batch_size, num_workers=0)

    n_done = 0
    with torch.no_grad():
        for batch in test_loader:
            style_imgs = batch["ref_imgs"].cuda()
            char_imgs = batch["source_imgs"].unsqueeze(1).cuda()

            out = gen.gen_from_style_char(style_imgs, char_imgs)
            fonts = batch["fonts"]
            chars = batch["chars"]

            for image, font, char in zip(refine(out), fonts, chars):
                (img_dir / font).mkdir(parents=True, exist_ok=True)
                path = img_dir / font / f"{char}.png"
                save_tensor_to_image(image, path)
                n_done += 1

    print(f"{n_done} glyphs written to {img_dir}")


def refine(imgs):
    """[-1, 1] -> [0, 1] and clamp; runs on whatever device the tensor lives on."""
    return ((imgs + 1.0) / 2.0).clamp(0.0, 1.0)


def gen_one(gen, ref_paths, source_path, device="cuda"):
    """Single-character helper used from notebooks."""
    refs = torch.stack([TRANSFORM(Image.open(p).convert("L")) for p in ref_paths]).unsqueeze(0).to(device)
    src = TRANSFORM(Image.open(source_path).convert("L")).unsqueeze(0).unsqueeze(0).to(device)
    with torch.no_grad():
        out = gen.gen_from_style_char(refs, src)
    return refine(out)[0].cpu()


if __name__ == "__main__":
    eval_ckpt()
