"""
Train the FaceForensics++ baselines (Xception / ResNet / MesoNet) on face crops.

Expected layout of --train_list / --val_list: one "relative/path.png label" per line.

    python train_CNN.py --name xception_c23 --train_list data_list/ff_all_c23_train.txt \
        --val_list data_list/ff_all_c23_val.txt --model xception --gpu_id 0,1 --batch_size 64
"""
import argparse
import os
import shutil
import time

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim import lr_scheduler
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms
from PIL import Image
from tensorboardX import SummaryWriter

from network.models import model_selection
from dataset.transform import xception_default_data_transforms


class FFList(Dataset):
    def __init__(self, txt_path, root, transform=None):
        self.root = root
        self.transform = transform
        with open(txt_path, 'r') as f:
            lines = [l.strip().split() for l in f if l.strip()]
        self.items = [(p, int(y)) for p, y in lines]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        path, label = self.items[idx]
        img = Image.open(os.path.join(self.root, path)).convert('RGB')
        if self.transform is not None:
            img = self.transform(img)
        return img, label


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def save_checkpoint(state, is_best, out_dir, filename='checkpoint.pth.tar'):
    path = os.path.join(out_dir, filename)
    torch.save(state, path)
    if is_best:
        shutil.copyfile(path, os.path.join(out_dir, 'model_best.pth.tar'))


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--name', '-n', type=str, default='xception_c23')
    parser.add_argument('--root', type=str, default='/data/ff++/faces')
    parser.add_argument('--train_list', '-tl', type=str, default='./data_list/ff_all_c23_train.txt')
    parser.add_argument('--val_list', '-vl', type=str, default='./data_list/ff_all_c23_val.txt')
    parser.add_argument('--batch_size', '-bz', type=int, default=64)
    parser.add_argument('--epoches', '-e', type=int, default=20)
    parser.add_argument('--model', '-m', type=str, default='xception')
    parser.add_argument('--lr', type=float, default=2e-4)
    parser.add_argument('--workers', type=int, default=8)
    parser.add_argument('--gpu_id', type=str, default='0', help='comma separated GPU ids, e.g. 0,1')
    parser.add_argument('--continue_train', action='store_true')
    parser.add_argument('--model_path', '-mp', type=str, default='./output/xception_c23/checkpoint.pth.tar')
    parser.add_argument('--out', type=str, default='./output')
    parser.add_argument('--print_freq', type=int, default=100)
    return parser.parse_args()


def main():
    args = parse_args()
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_id
    torch.backends.cudnn.benchmark = True

    output_path = os.path.join(args.out, args.name)
    os.makedirs(output_path, exist_ok=True)
    writer = SummaryWriter(os.path.join(output_path, 'tb'))

    train_dataset = FFList(args.train_list, args.root, transform=xception_default_data_transforms['train'])
    val_dataset = FFList(args.val_list, args.root, transform=xception_default_data_transforms['val'])
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True, drop_last=False,
                              num_workers=args.workers, pin_memory=True)
    val_loader = DataLoader(val_dataset, batch_size=args.batch_size, shuffle=False, drop_last=False,
                            num_workers=args.workers // 2, pin_memory=True)
    train_dataset_size = len(train_dataset)
    val_dataset_size = len(val_dataset)

    model, image_size, *_ = model_selection(modelname=args.model, num_out_classes=2, dropout=0.5)
    start_epoch = 0
    best_acc = 0.0
    if args.continue_train:
        checkpoint = torch.load(args.model_path)
        model.load_state_dict(checkpoint['state_dict'])
        start_epoch = checkpoint['epoch']
        best_acc = checkpoint.get('best_acc', 0.0)
        print('=> resumed from {} (epoch {})'.format(args.model_path, start_epoch))

    model = model.cuda()
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-08)
    scheduler = lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
    if len(args.gpu_id.split(',')) > 1:
        model = nn.DataParallel(model)

    iteration = 0
    for epoch in range(start_epoch, args.epoches):
        print('Epoch {}/{}'.format(epoch + 1, args.epoches))
        print('-' * 10)
        model.train()
        train_loss = 0.0
        train_corrects = 0.0
        batch_time = AverageMeter()
        end = time.time()
        for (image, labels) in train_loader:
            iter_loss = 0.0
            iter_corrects = 0.0
            image = image.cuda(non_blocking=True)
            labels = torch.cuda.LongTensor(labels.numpy())
            optimizer.zero_grad()
            outputs = model(image)
            _, preds = torch.max(outputs.data, 1)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            iter_loss = loss.data.item()
            train_loss += iter_loss
            iter_corrects = torch.sum(preds == labels.data).to(torch.float32)
            train_corrects += iter_corrects
            iteration += 1
            batch_time.update(time.time() - end)
            end = time.time()
            if not (iteration % args.print_freq):
                print('iteration {} train loss: {:.4f} Acc: {:.4f} ({:.3f}s/it)'.format(
                    iteration, iter_loss / args.batch_size, iter_corrects / args.batch_size, batch_time.avg))
                writer.add_scalar('train/loss', iter_loss / args.batch_size, iteration)
        epoch_loss = train_loss / train_dataset_size
        epoch_acc = train_corrects / train_dataset_size
        print('epoch train loss: {:.4f} Acc: {:.4f}'.format(epoch_loss, epoch_acc))

        model.eval()
        val_loss = 0.0
        val_corrects = 0.0
        with torch.no_grad():
            for (image, labels) in val_loader:
                image = image.cuda()
                labels = labels.cuda()
                outputs = model(image)
                _, preds = torch.max(outputs.data, 1)
                loss = criterion(outputs, labels)
                val_loss += loss.data.item()
                val_corrects += torch.sum(preds == labels.data).to(torch.float32)
            epoch_loss = val_loss / val_dataset_size
            epoch_acc = val_corrects / val_dataset_size
            print('epoch val loss: {:.4f} Acc: {:.4f}'.format(epoch_loss, epoch_acc))
            writer.add_scalar('val/loss', epoch_loss, epoch)
            writer.add_scalar('val/acc', epoch_acc, epoch)
        is_best = epoch_acc > best_acc
        if is_best:
            best_acc = epoch_acc
        scheduler.step()
        state_dict = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
        save_checkpoint({'epoch': epoch + 1, 'state_dict': state_dict, 'best_acc': float(best_acc)},
                        is_best, output_path)
        torch.cuda.empty_cache()
    print('Best val Acc: {:.4f}'.format(best_acc))
    writer.close()


if __name__ == '__main__':
    main()
