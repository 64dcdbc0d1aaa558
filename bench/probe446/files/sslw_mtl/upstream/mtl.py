"""
Multi-task self-supervised pre-training on UK-Biobank wrist accelerometry
(arrow of time, permutation, time warping; optionally scaling) with a ResNet-V2 encoder.

Usage:
    python mtl.py data=ukb task=all model=resnet augmentation=all runtime.gpu=0
    python mtl.py runtime.multiprocessing_distributed=true runtime.dist_url=tcp://127.0.0.1:23456
"""
import os
import time
import warnings
import logging

import hydra
import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from omegaconf import OmegaConf
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter
from torchvision import transforms

from sslearning.data.data_loader import SSL_dataset, subject_collate_mtl, worker_init_fn
from sslearning.data.datautils import RandomSwitchAxis, RotationAxis
from sslearning.models.accNet import Resnet
from sslearning.scores import compute_mtl_acc

warnings.filterwarnings('ignore')
log = logging.getLogger(__name__)

cuda = torch.cuda.is_available()
now = time.strftime('%Y-%m-%d_%H-%M-%S')


def set_seed(my_seed=0):
    np.random.seed(my_seed)
    torch.manual_seed(my_seed)


def compute_loss(cfg, aot_y, scale_y, permute_y, time_w_y, aot_y_pred, scale_y_pred, permute_y_pred,
                 time_w_h_pred, criterion):
    total_loss = 0
    if cfg.task.arrow_of_time:
        total_loss += criterion(aot_y_pred, aot_y)
    if cfg.task.scale:
        total_loss += criterion(scale_y_pred, scale_y)
    if cfg.task.permutation:
        total_loss += criterion(permute_y_pred, permute_y)
    if cfg.task.time_warped:
        total_loss += criterion(time_w_h_pred, time_w_y)
    return total_loss


def evaluate_model(model, data_loader, cfg, criterion, gpu):
    model.eval()
    losses, aot_accs, scale_accs, permute_accs, time_w_accs = [], [], [], [], []
    with torch.no_grad():
        for i, (my_X, aot_y, scale_y, permute_y, time_w_y) in enumerate(data_loader):
            my_X = my_X.cuda(gpu, non_blocking=True)
            aot_y = aot_y.cuda(gpu, non_blocking=True)
            scale_y = scale_y.cuda(gpu, non_blocking=True)
            permute_y = permute_y.cuda(gpu, non_blocking=True)
            time_w_y = time_w_y.cuda(gpu, non_blocking=True)

            aot_h, scale_h, permute_h, time_w_h = model(my_X.float())
            loss = compute_loss(cfg, aot_y, scale_y, permute_y, time_w_y, aot_h, scale_h, permute_h, time_w_h,
                                criterion)
            losses.append(loss.item())
            aot_acc, scale_acc, permute_acc, time_w_acc = compute_mtl_acc(
                cfg, aot_y, scale_y, permute_y, time_w_y, aot_h, scale_h, permute_h, time_w_h)
            aot_accs.append(aot_acc)
            scale_accs.append(scale_acc)
            permute_accs.append(permute_acc)
            time_w_accs.append(time_w_acc)
    model.train()
    return np.mean(losses), np.mean(aot_accs), np.mean(scale_accs), np.mean(permute_accs), np.mean(time_w_accs)


@hydra.main(config_path='conf', config_name='config_mtl')
def main(cfg):
    log.info(OmegaConf.to_yaml(cfg))
    if cfg.runtime.seed is not None:
        set_seed(cfg.runtime.seed)
        warnings.warn('You have chosen to seed training. This will turn on the CUDNN deterministic setting, '
                      'which can slow down your training considerably!')

    if cfg.runtime.dist_url == 'env://' and cfg.runtime.world_size == -1:
        cfg.runtime.world_size = int(os.environ['WORLD_SIZE'])

    cfg.runtime.distributed = cfg.runtime.world_size > 1 or cfg.runtime.multiprocessing_distributed

    ngpus_per_node = torch.cuda.device_count()
    if cfg.runtime.multiprocessing_distributed:
        # Since we have ngpus_per_node processes per node, the total world_size
        # needs to be adjusted accordingly
        cfg.runtime.world_size = ngpus_per_node * cfg.runtime.world_size
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, cfg))
    else:
        main_worker(cfg.runtime.gpu, ngpus_per_node, cfg)


def main_worker(gpu, ngpus_per_node, cfg):
    cfg.runtime.gpu = gpu
    if cfg.runtime.gpu is not None:
        log.info('Use GPU: {} for training'.format(cfg.runtime.gpu))

    if cfg.runtime.distributed:
        if cfg.runtime.dist_url == 'env://' and cfg.runtime.rank == -1:
            cfg.runtime.rank = int(os.environ['RANK'])
        if cfg.runtime.multiprocessing_distributed:
            # For multiprocessing distributed training, rank needs to be the
            # global rank among all the processes
            cfg.runtime.rank = cfg.runtime.rank * ngpus_per_node + gpu
        dist.init_process_group(backend=cfg.runtime.dist_backend, init_method=cfg.runtime.dist_url,
                                world_size=cfg.runtime.world_size, rank=cfg.runtime.rank)

    main_process = not cfg.runtime.multiprocessing_distributed or cfg.runtime.rank % ngpus_per_node == 0

    # ------------------------------------------------------------------ model
    model = Resnet(output_size=cfg.data.output_size, is_mtl=True, resnet_version=cfg.model.resnet_version,
                   epoch_len=cfg.dataloader.epoch_len)
    if cfg.runtime.sync_bn and cfg.runtime.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)

    if cfg.runtime.distributed:
        # For multiprocessing distributed, DistributedDataParallel constructor
        # should always set the single device scope, otherwise,
        # DistributedDataParallel will use all available devices.
        if cfg.runtime.gpu is not None:
            torch.cuda.set_device(cfg.runtime.gpu)
            model.cuda(cfg.runtime.gpu)
            cfg.data.batch_subject_num = int(cfg.data.batch_subject_num / ngpus_per_node)
            cfg.dataloader.num_workers = int((cfg.dataloader.num_workers + ngpus_per_node - 1) / ngpus_per_node)
            model = nn.parallel.DistributedDataParallel(model, device_ids=[cfg.runtime.gpu],
                                                        find_unused_parameters=True)
        else:
            model.cuda()
            model = nn.parallel.DistributedDataParallel(model, find_unused_parameters=True)
    elif cfg.runtime.gpu is not None:
        torch.cuda.set_device(gpu)
        model = model.cuda(cfg.runtime.gpu)

    criterion = nn.CrossEntropyLoss().cuda(cfg.runtime.gpu)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.runtime.lr, amsgrad=True)
    torch.backends.cudnn.benchmark = True

    # ------------------------------------------------------------------ resume
    start_epoch = 0
    if cfg.runtime.resume and os.path.isfile(cfg.runtime.resume):
        log.info("=> loading checkpoint '{}'".format(cfg.runtime.resume))
        # Map model to be loaded to specified single gpu.
        loc = 'cuda:{}'.format(cfg.runtime.gpu)
        checkpoint = torch.load(cfg.runtime.resume, map_location=loc)
        start_epoch = checkpoint['epoch']
        model.load_state_dict(checkpoint['state_dict'])
        optimizer.load_state_dict(checkpoint['optimizer'])
        log.info("=> loaded checkpoint '{}' (epoch {})".format(cfg.runtime.resume, checkpoint['epoch']))

    # ------------------------------------------------------------------ data
    my_transform = None
    if cfg.augmentation.axis_switch and cfg.augmentation.rotation:
        my_transform = transforms.Compose([RandomSwitchAxis(), RotationAxis()])
    elif cfg.augmentation.axis_switch:
        my_transform = RandomSwitchAxis()
    elif cfg.augmentation.rotation:
        my_transform = RotationAxis()

    train_dataset = SSL_dataset(cfg.data.data_root, cfg.data.train_file_list, cfg, transform=my_transform)
    test_dataset = SSL_dataset(cfg.data.data_root, cfg.data.test_file_list, cfg, transform=my_transform)

    if cfg.runtime.distributed:
        train_sampler = DistributedSampler(train_dataset)
    else:
        train_sampler = None

    train_loader = DataLoader(train_dataset,
                              batch_size=cfg.data.batch_subject_num,
                              shuffle=(train_sampler is None),
                              sampler=train_sampler,
                              num_workers=cfg.dataloader.num_workers,
                              collate_fn=subject_collate_mtl,
                              worker_init_fn=worker_init_fn,
                              pin_memory=True)
    test_loader = DataLoader(test_dataset,
                             batch_size=cfg.data.batch_subject_num,
                             shuffle=False,
                             num_workers=cfg.dataloader.num_workers,
                             collate_fn=subject_collate_mtl,
                             worker_init_fn=worker_init_fn)

    writer = SummaryWriter(os.path.join(cfg.model.log_path, now)) if main_process else None
    scaler = torch.cuda.amp.GradScaler()

    # ------------------------------------------------------------------ train
    for epoch in range(start_epoch, cfg.runtime.num_epoch):
        if cfg.runtime.distributed:
            train_sampler.set_epoch(epoch)
        model.train()
        train_losses = []
        epoch_start = time.time()
        for i, (my_X, aot_y, scale_y, permute_y, time_w_y) in enumerate(train_loader):
            my_X = my_X.cuda(cfg.runtime.gpu, non_blocking=True)
            aot_y = aot_y.cuda(cfg.runtime.gpu, non_blocking=True)
            scale_y = scale_y.cuda(cfg.runtime.gpu, non_blocking=True)
            permute_y = permute_y.cuda(cfg.runtime.gpu, non_blocking=True)
            time_w_y = time_w_y.cuda(cfg.runtime.gpu, non_blocking=True)

            optimizer.zero_grad()
            with torch.cuda.amp.autocast():
                aot_h, scale_h, permute_h, time_w_h = model(my_X.float())
                loss = compute_loss(cfg, aot_y, scale_y, permute_y, time_w_y, aot_h, scale_h, permute_h,
                                    time_w_h, criterion)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            train_losses.append(loss.item())

            if i % 100 == 0 and main_process:
                log.info('epoch {} iter {} loss {:.4f} max mem {:.1f} GB'.format(
                    epoch, i, loss.item(), torch.cuda.max_memory_allocated() / 1e9))

        if main_process:
            test_loss, aot_acc, scale_acc, permute_acc, time_w_acc = evaluate_model(model, test_loader, cfg,
                                                                                    criterion, cfg.runtime.gpu)
            writer.add_scalar('loss/train', np.mean(train_losses), epoch)
            writer.add_scalar('loss/test', test_loss, epoch)
            writer.add_scalar('acc/aot', aot_acc, epoch)
            writer.add_scalar('acc/permute', permute_acc, epoch)
            writer.add_scalar('acc/time_w', time_w_acc, epoch)
            log.info('epoch {} done in {:.1f}s | train {:.4f} | test {:.4f} | aot {:.3f} permute {:.3f} '
                     'time_w {:.3f}'.format(epoch, time.time() - epoch_start, np.mean(train_losses), test_loss,
                                            aot_acc, permute_acc, time_w_acc))
            torch.save({'epoch': epoch + 1,
                        'state_dict': model.state_dict(),
                        'optimizer': optimizer.state_dict()},
                       os.path.join(cfg.model.model_path, 'mtl_{}_epoch{}.mdl'.format(now, epoch)))

    if cfg.runtime.distributed:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
