'''
Copyright (C) 2020. Huawei Technologies Co., Ltd. All rights reserved.

This program is free software; you can redistribute it and/or modify
it under the terms of BSD 3-Clause License.

This program is distributed in the hope that it will be useful,
but WITHOUT ANY WARRANTY; without even the implied warranty of
MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE. See the
BSD 3-Clause License for more details.

Evaluate a released AdderNet checkpoint (ResNet-20 / CIFAR-10 or ResNet-50 / ImageNet).
The released .pth files were saved from nn.DataParallel models on GPU.
'''
import argparse
import os

import torch
import torch.backends.cudnn as cudnn
import torchvision.datasets as datasets
import torchvision.transforms as transforms

import resnet20
import resnet50

parser = argparse.ArgumentParser(description='PyTorch AdderNet evaluation')
parser.add_argument('--dataset', type=str, default='cifar10', choices=['cifar10', 'ImageNet'])
parser.add_argument('--data_dir', type=str, help='path to dataset', default='/cache/data/')
parser.add_argument('--model_dir', type=str, help='path to the checkpoint', default='models/ResNet20-AdderNet.pth')
parser.add_argument('-b', '--batch_size', type=int, default=256)
parser.add_argument('-j', '--workers', type=int, default=8)
args, unparsed = parser.parse_known_args()


def main():
    # create model
    if args.dataset == 'cifar10':
        model = resnet20.resnet20()
    elif args.dataset == 'ImageNet':
        model = resnet50.resnet50()
    model = torch.nn.DataParallel(model).cuda()
    checkpoint = torch.load(args.model_dir)
    model.load_state_dict(checkpoint)
    cudnn.benchmark = True

    # create data
    if args.dataset == 'cifar10':
        val_dataset = datasets.CIFAR10(args.data_dir, train=False, transform=transforms.Compose([
            transforms.ToTensor(),
            transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)),
        ]))
    elif args.dataset == 'ImageNet':
        valdir = os.path.join(args.data_dir, 'val')
        val_dataset = datasets.ImageFolder(valdir, transforms.Compose([
            transforms.Resize(256),
            transforms.CenterCrop(224),
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ]))
    val_loader = torch.utils.data.DataLoader(
        val_dataset, batch_size=args.batch_size, shuffle=False,
        num_workers=args.workers, pin_memory=True)

    acc1, acc5 = test(val_loader, model)
    print('Acc@1 {:.3f} Acc@5 {:.3f}'.format(acc1, acc5))


def test(val_loader, model):
    top1, top5, n = 0., 0., 0
    model.eval()
    with torch.no_grad():
        for i, (images, target) in enumerate(val_loader):
            images = images.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)

            output = model(images)
            _, pred = output.topk(5, 1, True, True)
            correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
            top1 += correct[:1].reshape(-1).float().sum().item()
            top5 += correct[:5].reshape(-1).float().sum().item()
            n += images.size(0)
    return 100.0 * top1 / n, 100.0 * top5 / n


if __name__ == '__main__':
    main()
