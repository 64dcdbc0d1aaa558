# By Hanrong Ye
# Licensed under the CC BY-NC 4.0 license (https://creativecommons.org/licenses/by-nc/4.0/)

import argparse
import cv2
import os
import numpy as np
import sys
import torch
import pdb
import time
from utils.utils import mkdir_if_missing
from utils.config import create_config
from utils.common_config import get_train_dataset, get_transformations,\
                                get_test_dataset, get_train_dataloader, get_test_dataloader,\
                                get_optimizer, get_model, get_criterion
from utils.logger import Logger
from utils.train_utils import train_phase
from utils.test_utils import test_phase
from evaluation.evaluate_utils import PerformanceMeter

from torch.utils.tensorboard import SummaryWriter
import torch.distributed as dist
import datetime
from termcolor import colored

# DDP
dist.init_process_group(backend='nccl', init_method='env://', timeout=datetime.timedelta(0, 3600*2))

# Parser
parser = argparse.ArgumentParser(description='Vanilla Training')
parser.add_argument('--config_exp',
                    help='Config file for the experiment')
parser.add_argument('--local_rank', default=0, type=int,
                    help='node rank for distributed training')
parser.add_argument('--run_mode',
                    help='Config file for the experiment')
parser.add_argument('--trained_model', default=None,
                    help='Config file for the experiment')
args = parser.parse_args()

print('local rank: %s' % args.local_rank)
torch.cuda.set_device(args.local_rank)

# CUDNN
torch.backends.cudnn.benchmark = True
# opencv
cv2.setNumThreads(0)


def main():
    p = create_config(args.config_exp, args.local_rank)
    if args.local_rank == 0:
        sys.stdout = Logger(os.path.join(p['output_dir'], 'log_file.txt'))
        print(colored(p, 'red'))
        print(colored('Running on %d GPUs, device: %s' % (dist.get_world_size(), torch.cuda.get_device_name(args.local_rank)), 'yellow'))

    # tensorboard
    tb_log_dir = p.root_dir + '/tb_dir'
    p.tb_log_dir = tb_log_dir
    if args.local_rank == 0:
        train_tb_log_dir = tb_log_dir + '/train'
        test_tb_log_dir = tb_log_dir + '/test'
        tb_writer_train = SummaryWriter(train_tb_log_dir)
        tb_writer_test = SummaryWriter(test_tb_log_dir)
        if args.run_mode != 'infer':
            mkdir_if_missing(tb_log_dir)
            mkdir_if_missing(train_tb_log_dir)
            mkdir_if_missing(test_tb_log_dir)
        print(f"Tensorboard dir: {tb_log_dir}")
    else:
        tb_writer_train = None
        tb_writer_test = None

    # Get model
    model = get_model(p)
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.cuda()
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank,
                                                      find_unused_parameters=True)

    # Get criterion
    criterion = get_criterion(p).cuda()

    # Optimizer
    scheduler, optimizer = get_optimizer(p, model)

    # Performance meter init
    performance_meter = PerformanceMeter(p, p.TASKS.NAMES)

    # Transforms
    train_transforms, val_transforms = get_transformations(p)
    if args.run_mode != 'infer':
        train_dataset = get_train_dataset(p, train_transforms)
    test_dataset = get_test_dataset(p, val_transforms)
    if args.run_mode != 'infer':
        train_dataloader = get_train_dataloader(p, train_dataset)
    test_dataloader = get_test_dataloader(p, test_dataset)

    # Train loop
    if args.run_mode != 'infer':
        if args.local_rank == 0:
            print(colored('Train samples %d - Test samples %d' % (len(train_dataset), len(test_dataset)), 'yellow'))
            print(colored('Train transformations:', 'yellow'))
            print(train_transforms)
            print(colored('Val transformations:', 'yellow'))
            print(val_transforms)

        # Resume from checkpoint
        if os.path.exists(p['checkpoint']):
            if args.local_rank == 0:
                print(colored('Restart from checkpoint {}'.format(p['checkpoint']), 'blue'))
            checkpoint = torch.load(p['checkpoint'], map_location='cpu')
            model.load_state_dict(checkpoint['model'])
            optimizer.load_state_dict(checkpoint['optimizer'])
            scheduler.load_state_dict(checkpoint['scheduler'])
            start_epoch = checkpoint['epoch']
            if 'iter_count' in checkpoint.keys():
                iter_count = checkpoint['iter_count']
            else:
                iter_count = 0
        else:
            if args.local_rank == 0:
                print(colored('No checkpoint file at {}'.format(p['checkpoint']), 'blue'))
            start_epoch = 0
            iter_count = 0

        # Main loop
        if args.local_rank == 0:
            print(colored('Starting main loop', 'blue'))

        for epoch in range(start_epoch, p['epochs']):
            train_dataloader.sampler.set_epoch(epoch)
            if args.local_rank == 0:
                print(colored('Epoch %d/%d' % (epoch + 1, p['epochs']), 'yellow'))
                print(colored('-' * 10, 'yellow'))

            # Train
            end_signal, iter_count = train_phase(p, args, train_dataloader, test_dataloader, model, criterion, optimizer,
                                                 scheduler, epoch, tb_writer_train, tb_writer_test, iter_count)

            if end_signal:
                break

        # running eval and save checkpoint
        if args.local_rank == 0:
            curr_result = test_phase(p, test_dataloader, model, criterion, iter_count)
            tb_update_perf(p, tb_writer_test, curr_result, iter_count)
            print(colored('Saving checkpoint ...', 'blue'))
            torch.save({'optimizer': optimizer.state_dict(), 'scheduler': scheduler.state_dict(), 'model': model.state_dict(),
                        'epoch': epoch + 1, 'iter_count': iter_count - 1}, p['checkpoint'])

    else:  # inference only
        ckpt = torch.load(args.trained_model, map_location='cpu')
        if args.local_rank == 0:
            print('Loaded trained model from %s' % args.trained_model)
        model.load_state_dict(ckpt['model'])
        if args.local_rank == 0:
            curr_result = test_phase(p, test_dataloader, model, criterion, 0)


def tb_update_perf(p, tb_writer_test, curr_result, cur_iter):
    if 'semseg' in p.TASKS.NAMES:
        tb_writer_test.add_scalar('perf/semseg_miou', curr_result['semseg']['mIoU'], cur_iter)
    if 'human_parts' in p.TASKS.NAMES:
        tb_writer_test.add_scalar('perf/human_parts_mIoU', curr_result['human_parts']['mIoU'], cur_iter)
    if 'sal' in p.TASKS.NAMES:
        tb_writer_test.add_scalar('perf/sal_maxF', curr_result['sal']['maxF'], cur_iter)
    if 'edge' in p.TASKS.NAMES:
        tb_writer_test.add_scalar('perf/edge_val_loss', curr_result['edge']['loss'], cur_iter)
    if 'normals' in p.TASKS.NAMES:
        tb_writer_test.add_scalar('perf/normals_mean', curr_result['normals']['mean'], cur_iter)
    if 'depth' in p.TASKS.NAMES:
        tb_writer_test.add_scalar('perf/depth_rmse', curr_result['depth']['rmse'], cur_iter)


if __name__ == "__main__":
    main()
