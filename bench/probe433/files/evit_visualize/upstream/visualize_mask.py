"""Visualise which image patches EViT keeps at each shrinking layer.

    python visualize_mask.py --data-path /path/to/imagenet --model deit_small_patch16_shrink_base \
        --resume ./evit-0.7-fuse.pth --output_dir ./vis --base_keep_rate 0.7 --n_visualization 128
"""
import argparse
import os

import torch
import torch.nn.functional as F
import torchvision
from torchvision import transforms
from timm.data.constants import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD
from timm.models import create_model

import evit  # noqa: F401  (registers the EViT models)
from helpers import get_real_idx, mask, save_img_batch

device = 'cuda:0'


def get_args_parser():
    parser = argparse.ArgumentParser('EViT visualization script', add_help=False)
    parser.add_argument('--batch-size', default=64, type=int)
    parser.add_argument('--model', default='deit_small_patch16_shrink_base', type=str)
    parser.add_argument('--input-size', default=224, type=int)
    parser.add_argument('--base_keep_rate', type=float, default=0.7)
    parser.add_argument('--drop_loc', default='(3, 6, 9)', type=str)
    parser.add_argument('--fuse_token', action='store_true')
    parser.add_argument('--data-path', default='/datasets01/imagenet_full_size/061417/', type=str)
    parser.add_argument('--resume', default='', help='checkpoint to visualise')
    parser.add_argument('--output_dir', default='./vis')
    parser.add_argument('--n_visualization', default=128, type=int)
    parser.add_argument('--num_workers', default=4, type=int)
    return parser


def denormalize(x):
    mean = torch.tensor(IMAGENET_DEFAULT_MEAN, device=x.device).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_DEFAULT_STD, device=x.device).view(1, 3, 1, 1)
    return x * std + mean


@torch.no_grad()
def visualize_mask(data_loader, model, output_dir, n_visualization, fuse_token):
    model.eval()
    patch_size = 16
    n_done = 0
    for images, _ in data_loader:
        images = images.to(device, non_blocking=True)
        B = images.size(0)

        output, idx = model(images, keep_rate=None, get_idx=True)
        idxs = get_real_idx(idx, fuse_token)

        images = denormalize(images)
        save_img_batch(images.cpu(), output_dir, file_name='img_{}', start_idx=n_done)
        for i, idx_i in enumerate(idxs):
            masked_img = mask(images, patch_size=patch_size, idx=idx_i)
            save_img_batch(masked_img.cpu(), output_dir, file_name='img_{}' + f'_l{i}', start_idx=n_done)

        n_done += B
        if n_done >= n_visualization:
            break


def main(args):
    os.makedirs(args.output_dir, exist_ok=True)
    transform = transforms.Compose([
        transforms.Resize(int(args.input_size / 0.875), interpolation=3),
        transforms.CenterCrop(args.input_size),
        transforms.ToTensor(),
        transforms.Normalize(IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD),
    ])
    dataset = torchvision.datasets.ImageFolder(os.path.join(args.data_path, 'val'), transform=transform)
    data_loader = torch.utils.data.DataLoader(
        dataset, batch_size=args.batch_size, shuffle=True,
        num_workers=args.num_workers, pin_memory=True, drop_last=False)

    model = create_model(
        args.model,
        base_keep_rate=args.base_keep_rate,
        drop_loc=eval(args.drop_loc),
        pretrained=False,
        num_classes=1000,
        fuse_token=args.fuse_token,
    )
    checkpoint = torch.load(args.resume, map_location='cpu')
    model.load_state_dict(checkpoint['model'])
    model.to(device)

    visualize_mask(data_loader, model, args.output_dir, args.n_visualization, args.fuse_token)
    print('visualisations written to', args.output_dir)


if __name__ == '__main__':
    parser = argparse.ArgumentParser('EViT visualization script', parents=[get_args_parser()])
    args = parser.parse_args()
    main(args)
