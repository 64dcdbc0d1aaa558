"""Evaluate a DynamicViT checkpoint on ImageNet val and measure GPU throughput.

    python infer.py --data_path /path/to/ILSVRC2012/ --model deit-s --model_path ./dynamicvit_s.pth --base_rate 0.7
"""
import argparse
import time

import numpy as np
import torch
import torch.backends.cudnn as cudnn
from timm.utils import accuracy, AverageMeter

from datasets import build_transform
from models.dyvit import VisionTransformerDiffPruning
from models.dylvvit import LVViTDiffPruning
import torchvision.datasets as datasets

torch.backends.cudnn.benchmark = True


def get_args_parser():
    parser = argparse.ArgumentParser('DynamicViT evaluation script', add_help=False)
    parser.add_argument('--arch', default='deit_small', type=str, help='Name of model to train')
    parser.add_argument('--input_size', default=224, type=int, help='images input size')
    parser.add_argument('--data_path', default='/data/ImageNet_new/', type=str, help='dataset path')
    parser.add_argument('--model_path', default='', help='resume from checkpoint')
    parser.add_argument('--base_rate', type=float, default=0.7)
    parser.add_argument('--batch_size', default=64, type=int)
    parser.add_argument('--num_workers', default=8, type=int)
    parser.add_argument('--throughput_batch', default=256, type=int)
    parser.add_argument('--fp16', action='store_true', help='measure throughput under autocast')
    return parser


@torch.no_grad()
def throughput(images, model, use_fp16=False):
    model.eval()

    images = images.to('cuda', non_blocking=True)
    batch_size = images.shape[0]
    with torch.cuda.amp.autocast(enabled=use_fp16):
        for i in range(50):
            model(images)
        torch.cuda.synchronize()
        print(f"throughput averaged with 30 times")
        tic1 = time.time()
        for i in range(30):
            model(images)
        torch.cuda.synchronize()  # wait for the timed iterations
        tic2 = time.time()
    print(f"batch_size {batch_size} throughput {30 * batch_size / (tic2 - tic1)}")
    return 30 * batch_size / (tic2 - tic1)


@torch.no_grad()
def validate(val_loader, model):
    top1 = AverageMeter()
    top5 = AverageMeter()
    model.eval()
    end = time.time()
    for i, (images, target) in enumerate(val_loader):
        images = images.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)

        output = model(images)
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        top1.update(acc1.item(), images.size(0))
        top5.update(acc5.item(), images.size(0))

        if i % 20 == 0:
            print('Test: [{0}/{1}]\t'
                  'Time {batch_time:.3f}\t'
                  'Acc@1 {top1.val:.3f} ({top1.avg:.3f})\t'
                  'Acc@5 {top5.val:.3f} ({top5.avg:.3f})'.format(
                      i, len(val_loader), batch_time=time.time() - end, top1=top1, top5=top5))
        end = time.time()
    print(' * Acc@1 {top1.avg:.3f} Acc@5 {top5.avg:.3f}'.format(top1=top1, top5=top5))
    return top1.avg


def main(args):
    cudnn.benchmark = True

    val_transform = build_transform(False, args)
    val_dataset = datasets.ImageFolder(args.data_path + 'val', transform=val_transform)
    val_loader = torch.utils.data.DataLoader(
        val_dataset, batch_size=args.batch_size, shuffle=False,
        num_workers=args.num_workers, pin_memory=True, drop_last=False)

    base_rate = args.base_rate
    KEEP_RATE = [base_rate, base_rate ** 2, base_rate ** 3]

    if args.arch == 'deit_small':
        PRUNING_LOC = [3, 6, 9]
        model = VisionTransformerDiffPruning(
            patch_size=16, embed_dim=384, depth=12, num_heads=6, mlp_ratio=4, qkv_bias=True,
            pruning_loc=PRUNING_LOC, token_ratio=KEEP_RATE
        )
    elif args.arch == 'deit_base':
        PRUNING_LOC = [3, 6, 9]
        model = VisionTransformerDiffPruning(
            patch_size=16, embed_dim=768, depth=12, num_heads=12, mlp_ratio=4, qkv_bias=True,
            pruning_loc=PRUNING_LOC, token_ratio=KEEP_RATE
        )
    elif args.arch == 'lvvit_s':
        PRUNING_LOC = [4, 8, 12]
        model = LVViTDiffPruning(
            patch_size=16, embed_dim=384, depth=16, num_heads=6, mlp_ratio=3.,
            p_emb='4_2', skip_lam=2., return_dense=True, mix_token=True,
            pruning_loc=PRUNING_LOC, token_ratio=KEEP_RATE
        )
    else:
        raise NotImplementedError

    checkpoint = torch.load(args.model_path, map_location='cpu')
    if 'model' in checkpoint:
        checkpoint = checkpoint['model']
    print('## model has been successfully loaded')
    model.load_state_dict(checkpoint)

    model = model.cuda()
    n_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print('number of params:', n_parameters)
    print('running on', torch.cuda.get_device_name(0))

    images = torch.randn(args.throughput_batch, 3, args.input_size, args.input_size)
    throughput(images, model, use_fp16=args.fp16)
    validate(val_loader, model)


if __name__ == '__main__':
    parser = argparse.ArgumentParser('DynamicViT evaluation script', parents=[get_args_parser()])
    args = parser.parse_args()
    main(args)
