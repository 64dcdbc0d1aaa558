import os
import sys
import time
import math
import json
import argparse
import datetime
import numpy as np
from pathlib import Path
from collections import defaultdict

import torch
import torch.backends.cudnn as cudnn
from torch.utils.tensorboard import SummaryWriter

from dust3r.losses import L21
from spann3r.model import Spann3R
from spann3r.datasets import *
from spann3r.loss import Regr3D_t, ConfLoss_t, Regr3D_t_ScaleShiftInv
from spann3r.tools.eval_recon import accuracy, completion

import croco.utils.misc as misc
from croco.utils.misc import NativeScalerWithGradNormCount as NativeScaler


def get_args_parser():
    parser = argparse.ArgumentParser('Spann3R training', add_help=False)
    parser.add_argument('--model', default="Spann3R(dus3r_name='./checkpoints/DUSt3R_ViTLarge_BaseDecoder_224_linear.pth', use_feat=False, mem_pos_enc=False)",
                        type=str, help="string containing the model to build")
    parser.add_argument('--pretrained', default=None, help='path of a starting checkpoint')
    parser.add_argument('--train_criterion', default="ConfLoss_t(Regr3D_t(L21, norm_mode='avg_dis', fix_first=False), alpha=0.4)",
                        type=str, help="train criterion")
    parser.add_argument('--test_criterion', default="Regr3D_t_ScaleShiftInv(L21, gt_scale=True)", type=str, help="test criterion")

    # Datasets
    parser.add_argument('--train_dataset', default="10000 @ Co3d(split='train', ROOT='./data/co3d_preprocessed_50', resolution=224, num_frames=5, mask_bg='rand', transform=ColorJitter)",
                        type=str, help="training set")
    parser.add_argument('--test_dataset', default="1000 @ Co3d(split='test', ROOT='./data/co3d_preprocessed_50', resolution=224, num_frames=5, seed=777)",
                        type=str, help="testing set")

    # Exp
    parser.add_argument('--seed', default=0, type=int, help="Random seed")
    parser.add_argument('--batch_size', default=2, type=int,
                        help="Batch size per GPU (effective batch size is batch_size * accum_iter * # gpus")
    parser.add_argument('--accum_iter', default=1, type=int,
                        help="Accumulate gradient iterations (for increasing the effective batch size under memory constraints)")
    parser.add_argument('--epochs', default=120, type=int, help="Maximum number of epochs for the scheduler")
    parser.add_argument('--weight_decay', type=float, default=0.05, help="weight decay (default: 0.05)")
    parser.add_argument('--lr', type=float, default=5e-5, metavar='LR', help='learning rate (absolute lr)')
    parser.add_argument('--blr', type=float, default=1.5e-4, metavar='LR',
                        help='base learning rate: absolute_lr = base_lr * total_batch_size / 256')
    parser.add_argument('--min_lr', type=float, default=1e-06, metavar='LR',
                        help='lower lr bound for cyclic schedulers that hit 0')
    parser.add_argument('--warmup_epochs', type=int, default=10, metavar='N', help='epochs to warmup LR')
    parser.add_argument('--amp', type=int, default=0,
                        choices=[0, 1], help="Use Automatic Mixed Precision for pretraining")

    # others
    parser.add_argument('--num_workers', default=8, type=int)
    parser.add_argument('--world_size', default=1, type=int, help='number of distributed processes')
    parser.add_argument('--local_rank', default=-1, type=int)
    parser.add_argument('--dist_url', default='env://', help='url used to set up distributed training')

    parser.add_argument('--eval_freq', type=int, default=1, help='Test loss evaluation frequency')
    parser.add_argument('--save_freq', default=1, type=int,
                        help='frequence (number of epochs) to save checkpoint in checkpoint-last.pth')
    parser.add_argument('--keep_freq', default=5, type=int,
                        help='frequence (number of epochs) to save checkpoint in checkpoint-%d.pth')
    parser.add_argument('--print_freq', default=20, type=int,
                        help='frequence (number of iterations) to print infos while training')
    parser.add_argument('--alpha_c2f', type=int, default=1, help='use alpha c2f')

    # output dir
    parser.add_argument('--output_dir', default='./output/spann3r', type=str, help="path where to save the output")
    return parser


def build_loader(dataset, batch_size, num_workers, test=False):
    split = ['Train', 'Test'][test]
    print(f'Building {split} Data loader for dataset: ', dataset)
    dataset = eval(dataset)
    if misc.is_dist_avail_and_initialized():
        sampler = torch.utils.data.DistributedSampler(
            dataset, num_replicas=misc.get_world_size(), rank=misc.get_rank(), shuffle=not test, drop_last=not test)
    elif not test:
        sampler = torch.utils.data.RandomSampler(dataset)
    else:
        sampler = torch.utils.data.SequentialSampler(dataset)

    loader = torch.utils.data.DataLoader(
        dataset,
        sampler=sampler,
        batch_size=batch_size,
        num_workers=num_workers,
        pin_memory=True,
        drop_last=not test,
    )
    print(f"{split} dataset length: ", len(loader))
    return loader


def main(args):
    misc.init_distributed_mode(args)
    global_rank = misc.get_rank()

    print("output_dir: " + args.output_dir)
    if args.output_dir:
        Path(args.output_dir).mkdir(parents=True, exist_ok=True)

    # auto resume
    last_ckpt_fname = os.path.join(args.output_dir, f'checkpoint-last.pth')
    args.resume = last_ckpt_fname if os.path.isfile(last_ckpt_fname) else None

    print('job dir: {}'.format(os.path.dirname(os.path.realpath(__file__))))
    print("{}".format(args).replace(', ', ',\n'))

    device = torch.device(f"cuda:{args.gpu}" if args.distributed else "cuda")

    # fix the seed
    seed = args.seed + misc.get_rank()
    torch.manual_seed(seed)
    np.random.seed(seed)

    cudnn.benchmark = True

    data_loader_train = build_loader(args.train_dataset, args.batch_size, args.num_workers, test=False)
    data_loader_test = {dataset.split('(')[0]: build_loader(dataset, 1, args.num_workers, test=True)
                        for dataset in args.test_dataset.split('+')}

    print('Loading model: {:s}'.format(args.model))
    model = eval(args.model)
    model.to(device)
    model_without_ddp = model

    train_criterion = eval(args.train_criterion).to(device)
    test_criterion = eval(args.test_criterion).to(device)

    if args.pretrained and not args.resume:
        print('Loading pretrained: ', args.pretrained)
        ckpt = torch.load(args.pretrained, map_location=device)
        print(model.load_state_dict(ckpt['model'], strict=False))
        del ckpt

    eff_batch_size = args.batch_size * args.accum_iter * misc.get_world_size()
    print("effective batch size: %d" % eff_batch_size)

    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[args.gpu], find_unused_parameters=True)
        model_without_ddp = model.module

    param_groups = misc.get_parameter_groups(model_without_ddp, args.weight_decay)
    optimizer = torch.optim.AdamW(param_groups, lr=args.lr, betas=(0.9, 0.95))
    loss_scaler = NativeScaler()

    best_so_far = misc.load_model(args=args, model_without_ddp=model_without_ddp,
                                  optimizer=optimizer, loss_scaler=loss_scaler)
    if best_so_far is None:
        best_so_far = float('inf')

    log_writer = SummaryWriter(log_dir=args.output_dir) if global_rank == 0 else None

    print(f"Start training for {args.epochs} epochs")
    start_time = time.time()
    for epoch in range(args.start_epoch, args.epochs + 1):
        if epoch > args.start_epoch and args.save_freq and epoch % args.save_freq == 0:
            misc.save_model(args=args, model_without_ddp=model_without_ddp, optimizer=optimizer,
                            loss_scaler=loss_scaler, epoch=epoch - 1, fname='last', best_so_far=best_so_far)

        new_best = False
        if epoch > 0 and args.eval_freq > 0 and epoch % args.eval_freq == 0:
            for test_name, testset in data_loader_test.items():
                stats = test_one_epoch(model, test_criterion, testset, device, epoch,
                                       log_writer=log_writer, args=args, prefix=test_name)
                if stats['loss_avg'] < best_so_far:
                    best_so_far = stats['loss_avg']
                    new_best = True

        if epoch > args.start_epoch:
            if args.keep_freq and epoch % args.keep_freq == 0:
                misc.save_model(args=args, model_without_ddp=model_without_ddp, optimizer=optimizer,
                                loss_scaler=loss_scaler, epoch=epoch - 1, fname=str(epoch), best_so_far=best_so_far)
            if new_best:
                misc.save_model(args=args, model_without_ddp=model_without_ddp, optimizer=optimizer,
                                loss_scaler=loss_scaler, epoch=epoch - 1, fname='best', best_so_far=best_so_far)
        if epoch >= args.epochs:
            break

        train_one_epoch(model, train_criterion, data_loader_train, optimizer, device, epoch,
                        loss_scaler, log_writer=log_writer, args=args)
        torch.cuda.empty_cache()

    total_time = time.time() - start_time
    print('Training time {}'.format(str(datetime.timedelta(seconds=int(total_time)))))


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, loss_scaler, args, log_writer=None):
    model.train(True)
    metric_logger = misc.MetricLogger(delimiter="  ")
    metric_logger.add_meter('lr', misc.SmoothedValue(window_size=1, fmt='{value:.6f}'))
    header = 'Epoch: [{}]'.format(epoch)
    accum_iter = args.accum_iter

    if hasattr(data_loader, 'sampler') and hasattr(data_loader.sampler, 'set_epoch'):
        data_loader.sampler.set_epoch(epoch)
    if hasattr(data_loader, 'dataset') and hasattr(data_loader.dataset, 'set_epoch'):
        data_loader.dataset.set_epoch(epoch)

    optimizer.zero_grad()

    for data_iter_step, batch in enumerate(metric_logger.log_every(data_loader, args.print_freq, header)):
        epoch_f = epoch + data_iter_step / len(data_loader)
        if data_iter_step % accum_iter == 0:
            misc.adjust_learning_rate(optimizer, epoch_f, args)

        for view in batch:
            for name in 'img pts3d valid_mask camera_pose camera_intrinsics F_matrix corres'.split():
                if name not in view:
                    continue
                view[name] = view[name].to(device, non_blocking=True)

        with torch.cuda.amp.autocast(enabled=bool(args.amp)):
            preds, preds_all = model(batch)
            loss, loss_details = criterion(batch, preds)
            if args.alpha_c2f:
                # coarse-to-fine confidence weighting
                loss = loss + 0.1 * sum(criterion(batch, p)[0] for p in preds_all[:-1]) / max(1, len(preds_all) - 1)

        loss_value = float(loss)
        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value), force=True)
            sys.exit(1)

        loss /= accum_iter
        loss_scaler(loss, optimizer, parameters=model.parameters(),
                    update_grad=(data_iter_step + 1) % accum_iter == 0, clip_grad=1.0)
        if (data_iter_step + 1) % accum_iter == 0:
            optimizer.zero_grad()

        del loss
        del batch

        lr = optimizer.param_groups[0]["lr"]
        metric_logger.update(epoch=epoch_f)
        metric_logger.update(lr=lr)
        metric_logger.update(loss=loss_value, **loss_details)

        if (data_iter_step + 1) % accum_iter == 0 and ((data_iter_step + 1) % (accum_iter * args.print_freq)) == 0:
            loss_value_reduce = misc.all_reduce_mean(loss_value)
            if log_writer is None:
                continue
            epoch_1000x = int(epoch_f * 1000)
            log_writer.add_scalar('train_loss', loss_value_reduce, epoch_1000x)
            log_writer.add_scalar('train_lr', lr, epoch_1000x)
            for name, val in loss_details.items():
                log_writer.add_scalar('train_' + name, val, epoch_1000x)

    metric_logger.synchronize_between_processes()
    print("Averaged stats:", metric_logger)
    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}


@torch.no_grad()
def test_one_epoch(model, criterion, data_loader, device, epoch, args, log_writer=None, prefix='test'):
    model.eval()
    metric_logger = misc.MetricLogger(delimiter="  ")
    metric_logger.meters = defaultdict(lambda: misc.SmoothedValue(window_size=9**9))
    header = 'Test Epoch: [{}]'.format(epoch)

    if hasattr(data_loader, 'sampler') and hasattr(data_loader.sampler, 'set_epoch'):
        data_loader.sampler.set_epoch(epoch)

    for _, batch in enumerate(metric_logger.log_every(data_loader, args.print_freq, header)):
        for view in batch:
            for name in 'img pts3d valid_mask camera_pose camera_intrinsics'.split():
                if name in view:
                    view[name] = view[name].to(device, non_blocking=True)

        preds, _ = model(batch)
        loss, loss_details = criterion(batch, preds)
        metric_logger.update(loss=float(loss), **loss_details)

    metric_logger.synchronize_between_processes()
    print("Averaged stats:", metric_logger)

    results = {f'{k}_avg': meter.global_avg for k, meter in metric_logger.meters.items()}
    if log_writer is not None:
        for name, val in results.items():
            log_writer.add_scalar(prefix + '_' + name, val, 1000 * epoch)
    return results


if __name__ == '__main__':
    args = get_args_parser()
    args = args.parse_args()
    main(args)
