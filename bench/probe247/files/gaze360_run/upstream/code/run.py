"""Gaze360 temporal model (7-frame ResNet-18 + bidirectional LSTM) with the
pinball (quantile) loss, train / validate / test.

    python code/run.py --source_path /data/gaze360/imgs --train_file train.txt \
        --val_file validation.txt --test_file test.txt
    python code/run.py --test --checkpoint_test gaze360_model.pth.tar
"""
import argparse
import math
import os
import shutil
import time

import numpy as np
import torch
import torch.nn as nn
import torch.backends.cudnn as cudnn
import torchvision.transforms as transforms
import torchvision.models as models

from data_loader import ImagerLoader


parser = argparse.ArgumentParser(description='Gaze360 LSTM')
parser.add_argument('--source_path', default='../imgs/', type=str)
parser.add_argument('--train_file', default='train.txt', type=str)
parser.add_argument('--val_file', default='validation.txt', type=str)
parser.add_argument('--test_file', default='test.txt', type=str)
parser.add_argument('--workers', default=12, type=int)
parser.add_argument('--epochs', default=80, type=int)
parser.add_argument('--batch_size', default=80, type=int)
parser.add_argument('--lr', default=1e-4, type=float)
parser.add_argument('--test', action='store_true')
parser.add_argument('--checkpoint_test', default='gaze360_model.pth.tar', type=str)
parser.add_argument('--resume', default='', type=str)
parser.add_argument('--print_freq', default=20, type=int)
args = parser.parse_args()

best_error = 100  # init with a large value


class GazeLSTM(nn.Module):
    def __init__(self):
        super(GazeLSTM, self).__init__()
        self.img_feature_dim = 256  # the dimension of the CNN feature to represent each frame

        self.base_model = models.resnet18(pretrained=True)

        self.base_model.fc2 = nn.Linear(1000, self.img_feature_dim)

        self.lstm = nn.LSTM(self.img_feature_dim, self.img_feature_dim, bidirectional=True,
                            num_layers=2, batch_first=True)

        # The linear layer that maps the LSTM with the 3 outputs
        self.last_layer = nn.Linear(2 * self.img_feature_dim, 3)

    def forward(self, input):

        base_out = self.base_model(input.view((-1, 3) + input.size()[-2:]))

        base_out = base_out.view(input.size(0), 7, self.img_feature_dim)

        lstm_out, _ = self.lstm(base_out)
        lstm_out = lstm_out[:, 3, :]
        output = self.last_layer(lstm_out).view(-1, 3)

        angular_output = output[:, :2]
        angular_output[:, 0:1] = math.pi * nn.Tanh()(angular_output[:, 0:1])
        angular_output[:, 1:2] = (math.pi / 2) * nn.Tanh()(angular_output[:, 1:2])

        var = math.pi * nn.Sigmoid()(output[:, 2:3])
        var = var.view(-1, 1).expand(var.size(0), 2)

        return angular_output, var


class PinBallLoss(nn.Module):
    def __init__(self):
        super(PinBallLoss, self).__init__()
        self.q1 = 0.1
        self.q9 = 1 - self.q1

    def forward(self, output_o, target_o, var_o):
        q_10 = target_o - (output_o - var_o)
        q_90 = target_o - (output_o + var_o)

        loss_10 = torch.max(self.q1 * q_10, (self.q1 - 1) * q_10)
        loss_90 = torch.max(self.q9 * q_90, (self.q9 - 1) * q_90)

        loss_10 = torch.mean(loss_10)
        loss_90 = torch.mean(loss_90)

        return loss_10 + loss_90


class AverageMeter(object):
    """Computes and stores the average and current value"""

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


def main():
    global args, best_error

    model_v = GazeLSTM()
    model = torch.nn.DataParallel(model_v).cuda()
    model.cuda()

    cudnn.benchmark = True

    image_normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])

    train_loader = torch.utils.data.DataLoader(
        ImagerLoader(args.source_path, args.train_file, transforms.Compose([
            transforms.RandomResizedCrop(size=224, scale=(0.8, 1)), transforms.ToTensor(), image_normalize,
        ])),
        batch_size=args.batch_size, shuffle=True,
        num_workers=args.workers, pin_memory=True)

    val_loader = torch.utils.data.DataLoader(
        ImagerLoader(args.source_path, args.val_file, transforms.Compose([
            transforms.Resize((224, 224)), transforms.ToTensor(), image_normalize,
        ])),
        batch_size=args.batch_size, shuffle=True,
        num_workers=args.workers, pin_memory=True)

    criterion = PinBallLoss().cuda()

    optimizer = torch.optim.Adam(model.parameters(), args.lr)

    if args.test:
        test_loader = torch.utils.data.DataLoader(
            ImagerLoader(args.source_path, args.test_file, transforms.Compose([
                transforms.Resize((224, 224)), transforms.ToTensor(), image_normalize,
            ])),
            batch_size=args.batch_size, shuffle=True,
            num_workers=args.workers, pin_memory=True)
        checkpoint = torch.load(args.checkpoint_test)
        model.load_state_dict(checkpoint['state_dict'])
        angular_error = validate(test_loader, model, criterion)
        print('Angular Error is', angular_error)
        return

    start_epoch = 0
    if args.resume and os.path.isfile(args.resume):
        checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda())
        start_epoch = checkpoint['epoch']
        best_error = checkpoint['best_prec1']
        model.load_state_dict(checkpoint['state_dict'], strict=True)
        print("=> loaded checkpoint '{}' (epoch {})".format(args.resume, checkpoint['epoch']))

    for epoch in range(start_epoch, args.epochs):

        # train for one epoch
        train(train_loader, model, criterion, optimizer, epoch)

        # evaluate on validation set
        angular_error = validate(val_loader, model, criterion)

        # remember best angular error in validation and save checkpoint
        is_best = angular_error < best_error
        best_error = min(angular_error, best_error)
        save_checkpoint({
            'epoch': epoch + 1,
            'state_dict': model.state_dict(),
            'best_prec1': best_error,
        }, is_best)


def train(train_loader, model, criterion, optimizer, epoch):
    global count
    batch_time = AverageMeter()
    data_time = AverageMeter()
    losses = AverageMeter()
    prediction_error = AverageMeter()
    angular = AverageMeter()

    # switch to train mode
    model.train()

    end = time.time()

    for i, (source_frame, target) in enumerate(train_loader):

        # measure data loading time
        data_time.update(time.time() - end)
        source_frame = source_frame.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)

        source_frame_var = torch.autograd.Variable(source_frame)
        target_var = torch.autograd.Variable(target)

        # compute output
        output, ang_error = model(source_frame_var)

        loss = criterion(output, target_var, ang_error)

        angular_error = compute_angular_error(output, target_var)
        pred_error = ang_error[:, 0] * 180 / math.pi
        pred_error = torch.mean(pred_error, 0)

        angular.update(angular_error, source_frame.size(0))

        losses.update(loss.item(), source_frame.size(0))

        prediction_error.update(pred_error, source_frame.size(0))

        # compute gradient and do SGD step
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        # measure elapsed time
        batch_time.update(time.time() - end)
        end = time.time()

        if i % args.print_freq == 0:
            print('Epoch (train): [{0}][{1}/{2}]\t'
                  'Time {batch_time.val:.3f} ({batch_time.avg:.3f})\t'
                  'Data {data_time.val:.3f} ({data_time.avg:.3f})\t'
                  'Loss {loss.val:.4f} ({loss.avg:.4f})\t'
                  'Angular {angular.val:.3f} ({angular.avg:.3f})\t'
                  'Prediction Error {prediction_error.val:.4f} ({prediction_error.avg:.4f})\t'.format(
                      epoch, i, len(train_loader), batch_time=batch_time,
                      data_time=data_time, loss=losses, angular=angular, prediction_error=prediction_error))


def validate(val_loader, model, criterion):
    global count_test
    batch_time = AverageMeter()
    losses = AverageMeter()
    prediction_error = AverageMeter()
    model.eval()
    end = time.time()
    angular = AverageMeter()

    for i, (source_frame, target) in enumerate(val_loader):

        source_frame = source_frame.cuda()
        target = target.cuda()

        with torch.no_grad():
            source_frame_var = torch.autograd.Variable(source_frame)
            target_var = torch.autograd.Variable(target)

            # compute output
            output, ang_error = model(source_frame_var)

            loss = criterion(output, target_var, ang_error)
            angular_error = compute_angular_error(output, target_var)
            pred_error = ang_error[:, 0] * 180 / math.pi
            pred_error = torch.mean(pred_error, 0)

            angular.update(angular_error, source_frame.size(0))
            prediction_error.update(pred_error, source_frame.size(0))

            losses.update(loss.item(), source_frame.size(0))

            batch_time.update(time.time() - end)
            end = time.time()

        print('Epoch: [{0}/{1}]\t'
              'Time {batch_time.val:.3f} ({batch_time.avg:.3f})\t'
              'Loss {loss.val:.4f} ({loss.avg:.4f})\t'
              'Angular {angular.val:.4f} ({angular.avg:.4f})\t'.format(
                  i, len(val_loader), batch_time=batch_time,
                  loss=losses, angular=angular))

    return angular.avg


def save_checkpoint(state, is_best, filename='checkpoint_test.pth.tar'):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, 'model_best_Gaze360.pth.tar')


def spherical2cartesial(x):

    output = torch.zeros(x.size(0), 3)
    output[:, 2] = -torch.cos(x[:, 1]) * torch.cos(x[:, 0])
    output[:, 0] = torch.cos(x[:, 1]) * torch.sin(x[:, 0])
    output[:, 1] = torch.sin(x[:, 1])

    return output


def compute_angular_error(input, target):

    input = spherical2cartesial(input)
    target = spherical2cartesial(target)

    input = input.view(-1, 3, 1)
    target = target.view(-1, 1, 3)
    output_dot = torch.bmm(target, input)
    output_dot = output_dot.view(-1)
    output_dot = torch.acos(output_dot)
    output_dot = output_dot.data
    output_dot = 180 * torch.mean(output_dot) / math.pi
    return output_dot


if __name__ == '__main__':
    main()
