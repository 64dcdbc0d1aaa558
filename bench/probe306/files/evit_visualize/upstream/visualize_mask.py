"""
Visualize which image patches EViT keeps at each token-reorganization stage.

    python visualize_mask.py --model deit_small_patch16_shrink_base --keep-rate 0.7 \
        --checkpoint evit_deit_s_0.7.pth --data-path /datasets/imagenet/val --out vis/
"""
import argparse
import os

import torch
import torchvision
from torch.utils.data import DataLoader, Subset
from torchvision import transforms
from timm.models import create_model

import evit  # noqa: F401  (registers the EViT models with timm)
from helpers import get_real_idx, mask, save_img_batch, denormalize


def get_args():
    parser = argparse.ArgumentParser('EViT visualization')
    parser.add_argument('--model', default='deit_small_patch16_shrink_base', type=str)
    parser.add_argument('--checkpoint', required=True, type=str)
    parser.add_argument('--data-path', default='/datasets/imagenet/val', type=str)
    parser.add_argument('--keep-rate', default=0.7, type=float)
    parser.add_argument('--fuse-token', action='store_true')
    parser.add_argument('--batch-size', default=16, type=int)
    parser.add_argument('--num-images', default=64, type=int)
    parser.add_argument('--out', default='vis', type=str)
    return parser.parse_args()


def build_loader(args):
    transform = transforms.Compose([
        transforms.Resize(256, interpolation=transforms.InterpolationMode.BICUBIC),
        transforms.CenterCrop(224),
        transforms.ToTensor(),
        transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    ])
    dataset = torchvision.datasets.ImageFolder(args.data_path, transform=transform)
    g = torch.Generator().manual_seed(0)
    indices = torch.randperm(len(dataset), generator=g)[:args.num_images].tolist()
    return DataLoader(Subset(dataset, indices), batch_size=args.batch_size, shuffle=False,
                      num_workers=4, pin_memory=True)


def main():
    args = get_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"

    model = create_model(args.model, pretrained=False, keep_rate=(args.keep_rate,), fuse_token=args.fuse_token)
    checkpoint = torch.load(args.checkpoint, map_location=device)
    state_dict = checkpoint['model'] if 'model' in checkpoint else checkpoint
    msg = model.load_state_dict(state_dict, strict=False)
    print(msg)
    model = model.to(device).eval()
    patch_size = model.patch_embed.patch_size
    patch_size = patch_size[0] if isinstance(patch_size, (tuple, list)) else patch_size

    os.makedirs(args.out, exist_ok=True)
    loader = build_loader(args)

    start = 0
    for images, _ in loader:
        images = images.cuda(non_blocking=True)
        with torch.no_grad():
            _, idxs = model(images, keep_rate=args.keep_rate, get_idx=True)

        idxs = get_real_idx(idxs, args.fuse_token)
        raw = denormalize(images)
        save_img_batch(raw, args.out, file_name='img{}_input.jpg', start_idx=start)
        for stage, idx in enumerate(idxs):
            masked = mask(raw, idx=idx, patch_size=patch_size)
            save_img_batch(masked, args.out, file_name='img{}_stage%d.jpg' % stage, start_idx=start)
        start += images.size(0)
        print(f'saved {start} / {args.num_images}')


if __name__ == '__main__':
    main()
