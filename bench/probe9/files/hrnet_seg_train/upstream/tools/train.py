# ------------------------------------------------------------------------------
# HRNet-W48 semantic segmentation training (Cityscapes / LIP / PASCAL-Context)
# Written by Ke Sun (sunk@mail.ustc.edu.cn), reduced to a single file for this fork.
# ------------------------------------------------------------------------------
import argparse
import functools
import logging
import os
import pprint
import timeit

import numpy as np
import cupy as cp
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.utils.dlpack
from tensorboardX import SummaryWriter

import _init_paths
import models
import datasets
from config import config, update_config
from utils.utils import create_logger, adjust_learning_rate, AverageMeter
from models.sync_bn.inplace_abn.bn import InPlaceABNSync

BatchNorm2d = functools.partial(InPlaceABNSync, activation='none')
BN_MOMENTUM = 0.01

CITYSCAPES_CLASS_WEIGHTS = torch.FloatTensor(
    [0.8373, 0.918, 0.866, 1.0345, 1.0166, 0.9969, 0.9754, 1.0489, 0.8786, 1.0023,
     0.9539, 0.9843, 1.1116, 0.9037, 1.0865, 1.0955, 1.0865, 1.1529, 1.0507]).cuda()


# ----------------------------------------------------------------------------- head using the ABN norm
class SegHead(nn.Module):
    def __init__(self, in_channels, num_classes, final_conv_kernel=1):
        super(SegHead, self).__init__()
        self.last_layer = nn.Sequential(
            nn.Conv2d(in_channels, in_channels, kernel_size=1, stride=1, padding=0),
            BatchNorm2d(in_channels, momentum=BN_MOMENTUM),
            nn.ReLU(inplace=True),
            nn.Conv2d(in_channels, num_classes, kernel_size=final_conv_kernel, stride=1,
                      padding=1 if final_conv_kernel == 3 else 0),
        )

    def forward(self, feats):
        x0_h, x0_w = feats[0].size(2), feats[0].size(3)
        ups = [feats[0]] + [F.interpolate(f, size=(x0_h, x0_w), mode='bilinear', align_corners=False)
                            for f in feats[1:]]
        return self.last_layer(torch.cat(ups, 1))


# ----------------------------------------------------------------------------- losses
class OhemCrossEntropy(nn.Module):
    def __init__(self, ignore_label=-1, thres=0.7, min_kept=100000, weight=None):
        super(OhemCrossEntropy, self).__init__()
        self.thresh = thres
        self.min_kept = max(1, min_kept)
        self.ignore_label = ignore_label
        self.criterion = nn.CrossEntropyLoss(weight=weight, ignore_index=ignore_label, reduction='none')

    def forward(self, score, target, **kwargs):
        ph, pw = score.size(2), score.size(3)
        h, w = target.size(1), target.size(2)
        if ph != h or pw != w:
            score = F.interpolate(input=score, size=(h, w), mode='bilinear', align_corners=False)
        pred = F.softmax(score, dim=1)
        pixel_losses = self.criterion(score, target).contiguous().view(-1)
        mask = target.contiguous().view(-1) != self.ignore_label
        tmp_target = target.clone()
        tmp_target[tmp_target == self.ignore_label] = 0
        pred = pred.gather(1, tmp_target.unsqueeze(1))
        pred, ind = pred.contiguous().view(-1, )[mask].contiguous().sort()
        min_value = pred[min(self.min_kept, pred.numel() - 1)]
        threshold = max(min_value, self.thresh)
        pixel_losses = pixel_losses[mask][ind]
        pixel_losses = pixel_losses[pred < threshold]
        return pixel_losses.mean()


class FullModel(nn.Module):
    """Distribute the loss on multi-gpu to reduce the memory cost in the main gpu."""

    def __init__(self, model, loss):
        super(FullModel, self).__init__()
        self.model = model
        self.loss = loss

    def forward(self, inputs, labels):
        outputs = self.model(inputs)
        loss = self.loss(outputs, labels)
        return torch.unsqueeze(loss, 0), outputs


# ----------------------------------------------------------------------------- metrics
def get_confusion_matrix_gpu(label, pred, size, num_class, ignore=-1):
    """Confusion matrix computed on the GPU with cupy (avoids a device->host copy of full masks)."""
    output = pred.detach()
    seg_pred = torch.argmax(output, dim=1)
    seg_gt = label[:, :size[-2], :size[-1]]
    ignore_index = seg_gt != ignore
    index = (seg_gt[ignore_index] * num_class + seg_pred[ignore_index]).int()
    idx = cp.from_dlpack(torch.utils.dlpack.to_dlpack(index))
    label_count = cp.bincount(idx, minlength=num_class * num_class)
    return torch.utils.dlpack.from_dlpack(label_count.toDlpack()).view(num_class, num_class)


def reduce_tensor(inp):
    world_size = dist.get_world_size() if dist.is_initialized() else 1
    if world_size < 2:
        return inp
    with torch.no_grad():
        reduced_inp = inp.clone()
        dist.reduce(reduced_inp, dst=0)
    return reduced_inp / world_size


# ----------------------------------------------------------------------------- core/function.py
def train(epoch, num_epoch, epoch_iters, base_lr, num_iters, trainloader, optimizer, model, writer_dict):
    model.train()
    batch_time = AverageMeter()
    ave_loss = AverageMeter()
    tic = timeit.default_timer()
    cur_iters = epoch * epoch_iters
    writer = writer_dict['writer']
    global_steps = writer_dict['train_global_steps']
    for i_iter, batch in enumerate(trainloader, 0):
        images, labels, _, _ = batch
        images = images.cuda()
        labels = labels.long().cuda()

        losses, _ = model(images, labels)
        loss = losses.mean()
        reduced_loss = reduce_tensor(loss)

        model.zero_grad()
        loss.backward()
        optimizer.step()

        batch_time.update(timeit.default_timer() - tic)
        tic = timeit.default_timer()
        ave_loss.update(reduced_loss.item())
        lr = adjust_learning_rate(optimizer, base_lr, num_iters, i_iter + cur_iters)
        if i_iter % config.PRINT_FREQ == 0 and (not dist.is_initialized() or dist.get_rank() == 0):
            logging.info('Epoch: [{}/{}] Iter:[{}/{}], Time: {:.2f}, lr: {:.6f}, Loss: {:.6f}'.format(
                epoch, num_epoch, i_iter, epoch_iters, batch_time.average(), lr, ave_loss.average()))
    writer.add_scalar('train_loss', ave_loss.average(), global_steps)
    writer_dict['train_global_steps'] = global_steps + 1


def validate(testloader, model, writer_dict):
    model.eval()
    ave_loss = AverageMeter()
    confusion_matrix = torch.zeros((config.DATASET.NUM_CLASSES, config.DATASET.NUM_CLASSES))
    with torch.no_grad():
        for _, batch in enumerate(testloader):
            image, label, _, _ = batch
            size = label.size()
            image = image.cuda()
            label = label.long().cuda()
            losses, pred = model(image, label)
            pred = F.interpolate(input=pred, size=size[-2:], mode='bilinear', align_corners=False)
            ave_loss.update(losses.mean().item())
            confusion_matrix += get_confusion_matrix_gpu(label, pred, size, config.DATASET.NUM_CLASSES,
                                                         config.TRAIN.IGNORE_LABEL).cpu().float()
    if dist.is_initialized():
        confusion_matrix = confusion_matrix.to(label.device)
        dist.all_reduce(confusion_matrix)
        confusion_matrix = confusion_matrix.cpu()
    confusion_matrix = confusion_matrix.numpy()
    pos = confusion_matrix.sum(1)
    res = confusion_matrix.sum(0)
    tp = np.diag(confusion_matrix)
    IoU_array = (tp / np.maximum(1.0, pos + res - tp))
    mean_IoU = IoU_array.mean()
    writer = writer_dict['writer']
    global_steps = writer_dict['valid_global_steps']
    writer.add_scalar('valid_loss', ave_loss.average(), global_steps)
    writer.add_scalar('valid_mIoU', mean_IoU, global_steps)
    writer_dict['valid_global_steps'] = global_steps + 1
    return ave_loss.average(), mean_IoU, IoU_array


# ----------------------------------------------------------------------------- tools/train.py
def parse_args():
    parser = argparse.ArgumentParser(description='Train segmentation network')
    parser.add_argument('--cfg', help='experiment configure file name', required=True, type=str)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument('opts', help="Modify config options using the command-line", default=None,
                        nargs=argparse.REMAINDER)
    args = parser.parse_args()
    update_config(config, args)
    return args


def main():
    args = parse_args()
    logger, final_output_dir, tb_log_dir = create_logger(config, args.cfg, 'train')
    logger.info(pprint.pformat(args))
    logger.info(config)
    writer_dict = {'writer': SummaryWriter(tb_log_dir), 'train_global_steps': 0, 'valid_global_steps': 0}

    # cudnn related setting
    cudnn.benchmark = config.CUDNN.BENCHMARK
    cudnn.deterministic = config.CUDNN.DETERMINISTIC
    cudnn.enabled = config.CUDNN.ENABLED
    gpus = list(config.GPUS)
    distributed = args.local_rank >= 0
    if distributed:
        device = torch.device('cuda:{}'.format(args.local_rank))
        torch.cuda.set_device(device)
        torch.distributed.init_process_group(backend="nccl", init_method="env://")

    model = eval('models.' + config.MODEL.NAME + '.get_seg_model')(config)

    if distributed:
        batch_size = config.TRAIN.BATCH_SIZE_PER_GPU
    else:
        batch_size = config.TRAIN.BATCH_SIZE_PER_GPU * len(gpus)

    crop_size = (config.TRAIN.IMAGE_SIZE[1], config.TRAIN.IMAGE_SIZE[0])
    train_dataset = eval('datasets.' + config.DATASET.DATASET)(
        root=config.DATASET.ROOT, list_path=config.DATASET.TRAIN_SET, num_samples=None,
        num_classes=config.DATASET.NUM_CLASSES, multi_scale=config.TRAIN.MULTI_SCALE, flip=config.TRAIN.FLIP,
        ignore_label=config.TRAIN.IGNORE_LABEL, base_size=config.TRAIN.BASE_SIZE, crop_size=crop_size,
        downsample_rate=config.TRAIN.DOWNSAMPLERATE, scale_factor=config.TRAIN.SCALE_FACTOR)
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset) if distributed else None
    trainloader = torch.utils.data.DataLoader(train_dataset, batch_size=batch_size,
                                              shuffle=config.TRAIN.SHUFFLE and train_sampler is None,
                                              num_workers=config.WORKERS, pin_memory=True, drop_last=True,
                                              sampler=train_sampler)
    test_dataset = eval('datasets.' + config.DATASET.DATASET)(
        root=config.DATASET.ROOT, list_path=config.DATASET.TEST_SET, num_samples=config.TEST.NUM_SAMPLES,
        num_classes=config.DATASET.NUM_CLASSES, multi_scale=False, flip=False,
        ignore_label=config.TRAIN.IGNORE_LABEL, base_size=config.TEST.BASE_SIZE,
        crop_size=(config.TEST.IMAGE_SIZE[1], config.TEST.IMAGE_SIZE[0]), downsample_rate=1)
    test_sampler = torch.utils.data.distributed.DistributedSampler(test_dataset) if distributed else None
    testloader = torch.utils.data.DataLoader(test_dataset, batch_size=config.TEST.BATCH_SIZE_PER_GPU,
                                             shuffle=False, num_workers=config.WORKERS, pin_memory=True,
                                             sampler=test_sampler)

    criterion = OhemCrossEntropy(ignore_label=config.TRAIN.IGNORE_LABEL, thres=config.LOSS.OHEMTHRES,
                                 min_kept=config.LOSS.OHEMKEEP, weight=CITYSCAPES_CLASS_WEIGHTS)
    model = FullModel(model, criterion)
    if distributed:
        model = model.to(device)
        model = torch.nn.parallel.DistributedDataParallel(
            model, find_unused_parameters=True, device_ids=[args.local_rank], output_device=args.local_rank)
    else:
        model = nn.DataParallel(model, device_ids=gpus).cuda()

    params_dict = dict(model.named_parameters())
    params = [{'params': list(params_dict.values()), 'lr': config.TRAIN.LR}]
    optimizer = torch.optim.SGD(params, lr=config.TRAIN.LR, momentum=config.TRAIN.MOMENTUM,
                                weight_decay=config.TRAIN.WD, nesterov=config.TRAIN.NESTEROV)

    epoch_iters = int(train_dataset.__len__() / config.TRAIN.BATCH_SIZE_PER_GPU / len(gpus))
    best_mIoU = 0
    last_epoch = 0
    if config.TRAIN.RESUME:
        model_state_file = os.path.join(final_output_dir, 'checkpoint.pth.tar')
        if os.path.isfile(model_state_file):
            checkpoint = torch.load(model_state_file, map_location={'cuda:0': 'cpu'})
            best_mIoU = checkpoint['best_mIoU']
            last_epoch = checkpoint['epoch']
            model.module.model.load_state_dict({k.replace('model.', ''): v for k, v in checkpoint['state_dict'].items()
                                                if k.startswith('model.')})
            optimizer.load_state_dict(checkpoint['optimizer'])
            logger.info("=> loaded checkpoint (epoch {})".format(checkpoint['epoch']))

    start = timeit.default_timer()
    end_epoch = config.TRAIN.END_EPOCH
    num_iters = config.TRAIN.END_EPOCH * epoch_iters
    for epoch in range(last_epoch, end_epoch):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        train(epoch, config.TRAIN.END_EPOCH, epoch_iters, config.TRAIN.LR, num_iters, trainloader, optimizer,
              model, writer_dict)
        valid_loss, mean_IoU, IoU_array = validate(testloader, model, writer_dict)
        if args.local_rank <= 0:
            logger.info('=> saving checkpoint to {}'.format(final_output_dir + 'checkpoint.pth.tar'))
            torch.save({'epoch': epoch + 1, 'best_mIoU': best_mIoU, 'state_dict': model.module.state_dict(),
                        'optimizer': optimizer.state_dict()}, os.path.join(final_output_dir, 'checkpoint.pth.tar'))
            if mean_IoU > best_mIoU:
                best_mIoU = mean_IoU
                torch.save(model.module.state_dict(), os.path.join(final_output_dir, 'best.pth'))
            logging.info('Loss: {:.3f}, MeanIU: {: 4.4f}, Best_mIoU: {: 4.4f}'.format(valid_loss, mean_IoU, best_mIoU))
            logging.info(IoU_array)

    end = timeit.default_timer()
    logger.info('Hours: %d' % int((end - start) / 3600))
    logger.info('Done')


if __name__ == '__main__':
    main()
