'''
Copyright (C) 2020. Huawei Technologies Co., Ltd. All rights reserved.

This program is free software; you can redistribute it and/or modify
it under the terms of BSD 3-Clause License.

This program is distributed in the hope that it will be useful,
but WITHOUT ANY WARRANTY; without even the implied warranty of
MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE. See the
BSD 3-Clause License for more details.

Train AdderNet ResNet-20 on CIFAR-10 (400 epochs, cosine lr). ~91.8% top-1 on one V100.
'''
import argparse
import math
import os

import torch
import torch.backends.cudnn as cudnn
import torchvision.transforms as transforms
from torch.autograd import Variable
from torch.utils.data import DataLoader
from torchvision.datasets.cifar import CIFAR10

from resnet20 import resnet20

parser = argparse.ArgumentParser(description='train-addernet')

# Basic model parameters.
parser.add_argument('--data', type=str, default='/cache/data/')
parser.add_argument('--output_dir', type=str, default='/cache/models/')
parser.add_argument('--epochs', type=int, default=400)
parser.add_argument('--batch_size', type=int, default=256)
parser.add_argument('--lr', type=float, default=0.1)
parser.add_argument('--eta', type=float, default=0.2, help='local learning rate scale of adder layers')
parser.add_argument('--gpus', type=str, default='0', help='comma separated GPU ids, e.g. 0,1')
parser.add_argument('--resume', type=str, default='')
args = parser.parse_args()

os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus
os.makedirs(args.output_dir, exist_ok=True)

acc = 0
acc_best = 0

transform_train = transforms.Compose([
    transforms.RandomCrop(32, padding=4),
    transforms.RandomHorizontalFlip(),
    transforms.ToTensor(),
    transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)),
])

transform_test = transforms.Compose([
    transforms.ToTensor(),
    transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)),
])

data_train = CIFAR10(args.data, transform=transform_train, download=True)
data_test = CIFAR10(args.data, train=False, transform=transform_test, download=True)

data_train_loader = DataLoader(data_train, batch_size=args.batch_size, shuffle=True, num_workers=8, pin_memory=True)
data_test_loader = DataLoader(data_test, batch_size=100, num_workers=0)

net = resnet20(eta=args.eta)
if len(args.gpus.split(',')) > 1:
    net = torch.nn.DataParallel(net)
net = net.cuda()
cudnn.benchmark = True

criterion = torch.nn.CrossEntropyLoss().cuda()
optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)

start_epoch = 1
if args.resume:
    ckpt = torch.load(args.resume)
    net.load_state_dict(ckpt['state_dict'])
    optimizer.load_state_dict(ckpt['optimizer'])
    start_epoch = ckpt['epoch'] + 1
    acc_best = ckpt['acc_best']


def adjust_learning_rate(optimizer, epoch):
    """For resnet, the lr starts from 0.1, and is divided by 10 at 80 and 120 epochs"""
    lr = 0.5 * args.lr * (1 + math.cos(float(epoch) / args.epochs * math.pi))
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr


def train(epoch):
    adjust_learning_rate(optimizer, epoch)
    net.train()
    loss_list, batch_list = [], []
    for i, (images, labels) in enumerate(data_train_loader):
        images, labels = Variable(images).cuda(), Variable(labels).cuda()

        optimizer.zero_grad()

        output = net(images)

        loss = criterion(output, labels)

        loss_list.append(loss.data.item())
        batch_list.append(i + 1)

        if i == 1:
            print('Train - Epoch %d, Batch: %d, Loss: %f' % (epoch, i, loss.data.item()))

        loss.backward()
        optimizer.step()


def test():
    global acc, acc_best
    net.eval()
    total_correct = 0
    avg_loss = 0.0
    with torch.no_grad():
        for i, (images, labels) in enumerate(data_test_loader):
            images, labels = images.cuda(), labels.cuda()
            output = net(images)
            avg_loss += criterion(output, labels).sum()
            pred = output.data.max(1)[1]
            total_correct += pred.eq(labels.data.view_as(pred)).sum()

    avg_loss /= len(data_test)
    acc = float(total_correct) / len(data_test)
    if acc_best < acc:
        acc_best = acc
    print('Test Avg. Loss: %f, Accuracy: %f' % (avg_loss.data.item(), acc))


def train_and_test(epoch):
    train(epoch)
    test()
    torch.save({'epoch': epoch, 'state_dict': net.state_dict(), 'optimizer': optimizer.state_dict(),
                'acc_best': acc_best}, os.path.join(args.output_dir, 'checkpoint.pth'))


def main():
    for e in range(start_epoch, args.epochs):
        train_and_test(e)
    torch.save(net, os.path.join(args.output_dir, 'addernet.pt'))
    print('best accuracy: %f' % acc_best)


if __name__ == '__main__':
    main()
