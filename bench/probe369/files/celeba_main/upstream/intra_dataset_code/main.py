import argparse
import os
import shutil
import time
import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.parallel
import torch.backends.cudnn as cudnn
import torch.optim
import torch.utils.data
import torchvision.transforms as transforms

from models import AENet
from dataset import CelebASpoofDataset
from utils import AverageMeter, accuracy, save_checkpoint, adjust_learning_rate
from evaluate import eval_fun

parser = argparse.ArgumentParser(description='CelebA-Spoof AENet training')
parser.add_argument('--data_root', default='../data/CelebA_Spoof/', type=str)
parser.add_argument('--train_list', default='metas/intra_test/train_label.json', type=str)
parser.add_argument('--val_list', default='metas/intra_test/test_label.json', type=str)
parser.add_argument('--arch', default='AENet', type=str)
parser.add_argument('-j', '--workers', default=8, type=int, metavar='N',
                    help='number of data loading workers (default: 8)')
parser.add_argument('--epochs', default=50, type=int, metavar='N')
parser.add_argument('--start-epoch', default=0, type=int, metavar='N')
parser.add_argument('-b', '--batch-size', default=128, type=int, metavar='N')
parser.add_argument('--lr', '--learning-rate', default=0.01, type=float, metavar='LR')
parser.add_argument('--lr_steps', default=[20, 35, 45], type=int, nargs="+")
parser.add_argument('--momentum', default=0.9, type=float, metavar='M')
parser.add_argument('--weight-decay', '--wd', default=5e-4, type=float, metavar='W')
parser.add_argument('--print-freq', '-p', default=20, type=int, metavar='N')
parser.add_argument('--eval-freq', default=1, type=int, metavar='N')
parser.add_argument('--resume', default='', type=str, metavar='PATH',
                    help='path to latest checkpoint (default: none)')
parser.add_argument('--evaluate', dest='evaluate', action='store_true',
                    help='evaluate model on validation set')
parser.add_argument('--snapshot_pref', type=str, default='ckpt/AENet')
parser.add_argument('--loss_weights', default=[1.0, 1.0, 1.0, 0.1, 0.01, 0.01, 0.01, 0.1], type=float, nargs="+",
                    help='live/spoof, spoof type, illumination, environment, depth, reflection ...')

best_prec1 = 0

logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s')
logger = logging.getLogger('AENet')


def main():
    global args, best_prec1
    args = parser.parse_args()

    logger.info('visible GPUs: %s', os.environ.get('CUDA_VISIBLE_DEVICES', 'all'))

    model = AENet(num_classes=2)
    model = torch.nn.DataParallel(model).cuda()

    if args.resume:
        if os.path.isfile(args.resume):
            logger.info("=> loading checkpoint '{}'".format(args.resume))
            checkpoint = torch.load(args.resume)
            args.start_epoch = checkpoint['epoch']
            best_prec1 = checkpoint['best_prec1']
            model.load_state_dict(checkpoint['state_dict'])
            logger.info("=> loaded checkpoint '{}' (epoch {})".format(args.resume, checkpoint['epoch']))
        else:
            logger.info("=> no checkpoint found at '{}'".format(args.resume))

    cudnn.benchmark = True

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])

    train_loader = torch.utils.data.DataLoader(
        CelebASpoofDataset(args.data_root, args.train_list,
                           transform=transforms.Compose([
                               transforms.ToPILImage(),
                               transforms.RandomResizedCrop(224, scale=(0.8, 1.0)),
                               transforms.RandomHorizontalFlip(),
                               transforms.ColorJitter(0.2, 0.2, 0.2),
                               transforms.ToTensor(),
                               normalize,
                           ]), phase='train'),
        batch_size=args.batch_size, shuffle=True,
        num_workers=args.workers, pin_memory=True, drop_last=True)

    val_loader = torch.utils.data.DataLoader(
        CelebASpoofDataset(args.data_root, args.val_list,
                           transform=transforms.Compose([
                               transforms.ToPILImage(),
                               transforms.Resize((224, 224)),
                               transforms.ToTensor(),
                               normalize,
                           ]), phase='test'),
        batch_size=args.batch_size, shuffle=False,
        num_workers=args.workers, pin_memory=True)

    # define loss function (criterion) and optimizer
    criterion = {
        'cls': nn.CrossEntropyLoss().cuda(),
        'depth': nn.MSELoss().cuda(),
        'reflect': nn.MSELoss().cuda(),
    }

    optimizer = torch.optim.SGD(model.parameters(), args.lr,
                                momentum=args.momentum,
                                weight_decay=args.weight_decay)

    if args.evaluate:
        validate(val_loader, model, criterion, 0)
        return

    for epoch in range(args.start_epoch, args.epochs):
        adjust_learning_rate(optimizer, epoch, args.lr, args.lr_steps)

        # train for one epoch
        train(train_loader, model, criterion, optimizer, epoch)

        # evaluate on validation set
        if (epoch + 1) % args.eval_freq == 0 or epoch == args.epochs - 1:
            prec1 = validate(val_loader, model, criterion, (epoch + 1) * len(train_loader))
            torch.cuda.empty_cache()

            # remember best prec@1 and save checkpoint
            is_best = prec1 > best_prec1
            best_prec1 = max(prec1, best_prec1)
            save_checkpoint({
                'epoch': epoch + 1,
                'arch': args.arch,
                'state_dict': model.state_dict(),
                'best_prec1': best_prec1,
            }, is_best, args.snapshot_pref)


def multitask_loss(outputs, targets, criterion, weights):
    cls_live, cls_spoof_type, cls_illum, cls_env, depth_map, reflect_map = outputs
    live_t, spoof_type_t, illum_t, env_t, depth_t, reflect_t = targets
    losses = [
        criterion['cls'](cls_live, live_t),
        criterion['cls'](cls_spoof_type, spoof_type_t),
        criterion['cls'](cls_illum, illum_t),
        criterion['cls'](cls_env, env_t),
        criterion['depth'](depth_map, depth_t),
        criterion['reflect'](reflect_map, reflect_t),
    ]
    total = sum(w * l for w, l in zip(weights, losses))
    return total, losses


def train(train_loader, model, criterion, optimizer, epoch):
    batch_time = AverageMeter()
    data_time = AverageMeter()
    losses = AverageMeter()
    top1 = AverageMeter()

    # switch to train mode
    model.train()

    end = time.time()
    for i, (input, target, spoof_type, illum, env, depth, reflect) in enumerate(train_loader):
        # measure data loading time
        data_time.update(time.time() - end)

        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        aux = [t.cuda(non_blocking=True) for t in (spoof_type, illum, env, depth, reflect)]

        # compute output
        outputs = model(input)
        loss, _ = multitask_loss(outputs, [target] + aux, criterion, args.loss_weights)

        # measure accuracy and record loss
        prec1, = accuracy(outputs[0].data, target, topk=(1,))
        losses.update(loss.item(), input.size(0))
        top1.update(prec1.item(), input.size(0))

        # compute gradient and do SGD step
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        # measure elapsed time
        batch_time.update(time.time() - end)
        end = time.time()

        if i % args.print_freq == 0:
            logger.info('Epoch: [{0}][{1}/{2}], lr: {lr:.5f}\t'
                        'Time {batch_time.val:.3f} ({batch_time.avg:.3f})\t'
                        'Data {data_time.val:.3f} ({data_time.avg:.3f})\t'
                        'Loss {loss.val:.4f} ({loss.avg:.4f})\t'
                        'Prec@1 {top1.val:.3f} ({top1.avg:.3f})'.format(
                            epoch, i, len(train_loader), batch_time=batch_time,
                            data_time=data_time, loss=losses, top1=top1, lr=optimizer.param_groups[-1]['lr']))


def validate(val_loader, model, criterion, iter):
    batch_time = AverageMeter()
    losses = AverageMeter()
    top1 = AverageMeter()

    # switch to evaluate mode
    model.eval()

    probs, labels = [], []
    end = time.time()
    with torch.no_grad():
        for i, (input, target, spoof_type, illum, env, depth, reflect) in enumerate(val_loader):
            input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)

            # compute output
            outputs = model(input)
            loss = criterion['cls'](outputs[0], target)

            prob = torch.softmax(outputs[0], dim=1)[:, 1]
            probs.append(prob.cpu().numpy())
            labels.append(target.cpu().numpy())

            # measure accuracy and record loss
            prec1, = accuracy(outputs[0].data, target, topk=(1,))
            losses.update(loss.item(), input.size(0))
            top1.update(prec1.item(), input.size(0))

            # measure elapsed time
            batch_time.update(time.time() - end)
            end = time.time()

            if i % args.print_freq == 0:
                logger.info('Test: [{0}/{1}]\t'
                            'Time {batch_time.val:.3f} ({batch_time.avg:.3f})\t'
                            'Loss {loss.val:.4f} ({loss.avg:.4f})\t'
                            'Prec@1 {top1.val:.3f} ({top1.avg:.3f})'.format(
                                i, len(val_loader), batch_time=batch_time, loss=losses,
                                top1=top1))

    probs = np.concatenate(probs)
    labels = np.concatenate(labels)
    auc, eer, tpr_at_fpr = eval_fun(probs, labels)
    logger.info('Testing Results: Prec@1 {top1.avg:.3f} Loss {loss.avg:.5f} AUC {auc:.4f} EER {eer:.4f} '
                'TPR@FPR=1e-3 {tpr:.4f}'.format(top1=top1, loss=losses, auc=auc, eer=eer, tpr=tpr_at_fpr))

    return top1.avg


if __name__ == '__main__':
    main()
