# ------------------------------------------------------------------------------
# CAT-Net: Compression Artifact Tracing Network
# Training entry point. Adapted from HRNet-Semantic-Segmentation (pytorch-v1.1).
# ------------------------------------------------------------------------------
import sys, os
path = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
if path not in sys.path:
    sys.path.insert(0, path)

import argparse
import pprint
import shutil
import logging
import time
import timeit

import numpy as np

import torch
import torch.nn as nn
import torch.backends.cudnn as cudnn
import torch.optim
from torch.utils.data import DataLoader
from tensorboardX import SummaryWriter

from lib import models
from lib.config import config
from lib.config import update_config
from lib.core.criterion import CrossEntropy, OhemCrossEntropy
from lib.core.function import train, validate
from lib.utils.modelsummary import get_model_summary
from lib.utils.utils import create_logger, FullModel, get_rank

from Splicing.data.data_core import SplicingDataset as splicing_dataset


def parse_args():
    parser = argparse.ArgumentParser(description='Train CAT-Net')

    parser.add_argument('--cfg',
                        help='experiment configure file name',
                        required=True,
                        type=str)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument('opts',
                        help="Modify config options using the command-line",
                        default=None,
                        nargs=argparse.REMAINDER)

    args = parser.parse_args()
    update_config(config, args)

    return args


def main():
    args = parse_args()

    logger, final_output_dir, tb_log_dir = create_logger(
        config, args.cfg, 'train')

    logger.info(pprint.pformat(args))
    logger.info(config)

    writer_dict = {
        'writer': SummaryWriter(tb_log_dir),
        'train_global_steps': 0,
        'valid_global_steps': 0,
    }

    # cudnn related setting
    cudnn.benchmark = config.CUDNN.BENCHMARK
    cudnn.deterministic = config.CUDNN.DETERMINISTIC
    cudnn.enabled = config.CUDNN.ENABLED
    gpus = list(config.GPUS)
    distributed = args.local_rank >= 0
    if distributed:
        device = torch.device('cuda:{}'.format(args.local_rank))
        torch.cuda.set_device(device)
        torch.distributed.init_process_group(
            backend="nccl", init_method="env://",
        )

    # build model
    model = eval('models.' + config.MODEL.NAME +
                 '.get_seg_model')(config)

    if get_rank() == 0:
        # copy model file
        this_dir = os.path.dirname(__file__)
        models_dst_dir = os.path.join(final_output_dir, 'models')
        if os.path.exists(models_dst_dir):
            shutil.rmtree(models_dst_dir)
        shutil.copytree(os.path.join(this_dir, '../lib/models'), models_dst_dir)

    # prepare data
    crop_size = (config.TRAIN.IMAGE_SIZE[1], config.TRAIN.IMAGE_SIZE[0])
    if config.DATASET.DATASET == 'splicing_dataset':
        train_dataset = splicing_dataset(crop_size=crop_size, grid_crop=True,
                                         blocks=('RGB', 'DCTvol', 'qtable'),
                                         mode='train', DCT_channels=1,
                                         read_from_jpeg=True, class_weight=[0.5, 2.5])
        valid_dataset = splicing_dataset(crop_size=None, grid_crop=True,
                                         blocks=('RGB', 'DCTvol', 'qtable'),
                                         mode='valid', DCT_channels=1,
                                         read_from_jpeg=True)
    else:
        raise ValueError("Not supported dataset type.")

    if distributed:
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
    else:
        train_sampler = None

    trainloader = DataLoader(
        train_dataset,
        batch_size=config.TRAIN.BATCH_SIZE_PER_GPU * len(gpus),
        shuffle=config.TRAIN.SHUFFLE and train_sampler is None,
        num_workers=config.WORKERS,
        pin_memory=True,
        drop_last=True,
        sampler=train_sampler)

    validloader = DataLoader(
        valid_dataset,
        batch_size=1,
        shuffle=False,
        num_workers=config.WORKERS,
        pin_memory=config.PIN_MEMORY)

    # criterion
    if config.LOSS.USE_OHEM:
        criterion = OhemCrossEntropy(ignore_label=config.TRAIN.IGNORE_LABEL,
                                     thres=config.LOSS.OHEMTHRES,
                                     min_kept=config.LOSS.OHEMKEEP,
                                     weight=train_dataset.class_weights)
    else:
        criterion = CrossEntropy(ignore_label=config.TRAIN.IGNORE_LABEL,
                                 weight=train_dataset.class_weights)

    model = FullModel(model, criterion)
    if distributed:
        model = model.to(device)
        model = torch.nn.parallel.DistributedDataParallel(
            model,
            find_unused_parameters=True,
            device_ids=[args.local_rank],
            output_device=args.local_rank)
    else:
        model = nn.DataParallel(model, device_ids=gpus).cuda()

    # optimizer
    logger.info(f"# params with requires_grad = {len([c for c in model.parameters() if c.requires_grad])}, "
                f"# params freezed = {len([c for c in model.parameters() if not c.requires_grad])}")
    if config.TRAIN.OPTIMIZER == 'sgd':
        optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()),
                                    lr=config.TRAIN.LR,
                                    momentum=config.TRAIN.MOMENTUM,
                                    weight_decay=config.TRAIN.WD,
                                    nesterov=config.TRAIN.NESTEROV,
                                    )
    else:
        raise ValueError('Only Support SGD optimizer')

    epoch_iters = int(train_dataset.__len__() /
                      config.TRAIN.BATCH_SIZE_PER_GPU / len(gpus))
    best_p_mIoU = 0
    last_epoch = 0
    if config.TRAIN.RESUME:
        model_state_file = os.path.join(final_output_dir,
                                        'checkpoint.pth.tar')
        if os.path.isfile(model_state_file):
            checkpoint = torch.load(model_state_file,
                                    map_location=lambda storage, loc: storage)
            best_p_mIoU = checkpoint['best_p_mIoU']
            last_epoch = checkpoint['epoch']
            model.module.model.load_state_dict(checkpoint['state_dict'])
            optimizer.load_state_dict(checkpoint['optimizer'])
            logger.info("=> loaded checkpoint (epoch {})"
                        .format(checkpoint['epoch']))

    start = timeit.default_timer()
    end_epoch = config.TRAIN.END_EPOCH + config.TRAIN.EXTRA_EPOCH
    num_iters = config.TRAIN.END_EPOCH * epoch_iters
    extra_iters = config.TRAIN.EXTRA_EPOCH * epoch_iters

    for epoch in range(last_epoch, end_epoch):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        # the grid-aligned crop is re-drawn every epoch
        train_dataset.shuffle()
        train(config, epoch, config.TRAIN.END_EPOCH,
              epoch_iters, config.TRAIN.LR, num_iters,
              trainloader, optimizer, model, writer_dict)

        torch.cuda.empty_cache()

        if epoch % 10 == 0 or (epoch >= 80 and epoch % 5 == 0) or epoch >= 120:
            valid_loss, mean_IoU, IoU_array, pixel_acc, mean_acc, confusion_matrix, avg_p_mIoU = \
                validate(config, validloader, model, writer_dict, "valid")

            torch.cuda.empty_cache()  # release validation buffers before saving
            writer_dict['writer'].flush()

            if get_rank() == 0:
                if avg_p_mIoU > best_p_mIoU:
                    best_p_mIoU = avg_p_mIoU
                    torch.save({
                        'epoch': epoch + 1,
                        'best_p_mIoU': best_p_mIoU,
                        'state_dict': model.module.model.state_dict(),
                        'optimizer': optimizer.state_dict(),
                    }, os.path.join(final_output_dir, 'best.pth.tar'))
                    logger.info("best.pth.tar updated.")

                msg = '(Valid) Loss: {:.3f}, MeanIU: {: 4.4f}, Best_p_mIoU: {: 4.4f}, avg_p_mIoU: {: 4.4f}, Pixel_Acc: {: 4.4f}, Mean_Acc: {: 4.4f}'.format(
                    valid_loss, mean_IoU, best_p_mIoU, avg_p_mIoU, pixel_acc, mean_acc)
                logging.info(msg)
                logging.info(IoU_array)
                logging.info("confusion_matrix:")
                logging.info(confusion_matrix)
        else:
            logging.info("Skip validation.")

        if get_rank() == 0:
            logger.info('=> saving checkpoint to {}'.format(
                final_output_dir + 'checkpoint.pth.tar'))
            torch.save({
                'epoch': epoch + 1,
                'best_p_mIoU': best_p_mIoU,
                'state_dict': model.module.model.state_dict(),
                'optimizer': optimizer.state_dict(),
            }, os.path.join(final_output_dir, 'checkpoint.pth.tar'))

    if get_rank() == 0:
        torch.save(model.module.model.state_dict(),
                   os.path.join(final_output_dir, 'final_state.pth'))

        writer_dict['writer'].close()
        end = timeit.default_timer()
        logger.info('Hours: %d' % np.int32((end - start) / 3600))
        logger.info('Done')


if __name__ == '__main__':
    main()
