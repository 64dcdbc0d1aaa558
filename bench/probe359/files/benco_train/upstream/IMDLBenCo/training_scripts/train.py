import os
import json
import time
import types
import inspect
import argparse
import datetime
import numpy as np
from pathlib import Path

import timm.optim.optim_factory as optim_factory
import torch
import torch.backends.cudnn as cudnn
from torch.utils.tensorboard import SummaryWriter

from IMDLBenCo.registry import MODELS, POSTFUNCS
from IMDLBenCo.datasets import ManiDataset, JsonDataset, BalancedDataset
from IMDLBenCo.transforms import get_albu_transforms
from IMDLBenCo.evaluation import PixelF1, ImageF1, PixelAUC
import IMDLBenCo.training_scripts.utils.misc as misc
from IMDLBenCo.training_scripts.tester import test_one_epoch
from IMDLBenCo.training_scripts.trainer import train_one_epoch


def get_args_parser():
    parser = argparse.ArgumentParser('IMDLBenCo training launch!', add_help=True)
    # ++++++++++++TODO++++++++++++++++
    # model name, all the other params are passed to the model via the registry
    parser.add_argument('--model', default=None, type=str,
                        help='The name of applied model', required=True)
    parser.add_argument('--if_predict_label', action='store_true',
                        help='Does the model that can accept labels')
    parser.add_argument('--if_predict_mask', action='store_true')
    # ----Dataset parameters-----
    parser.add_argument('--image_size', default=512, type=int,
                        help='image size of the images in datasets')
    parser.add_argument('--if_padding', action='store_true',
                        help='padding all images to same resolution.')
    parser.add_argument('--if_resizing', action='store_true',
                        help='resize all images to same resolution.')
    parser.add_argument('--edge_mask_width', default=None, type=int,
                        help='Edge broaden size (in pixels) for edge maks generator.')
    parser.add_argument('--data_path', default='/root/Dataset/CASIA2.0/', type=str,
                        help='dataset path, should be our json_dataset or mani_dataset format. Details are in readme.md')
    parser.add_argument('--test_data_path', default='/root/Dataset/CASIA1.0', type=str,
                        help='test dataset path, should be our json_dataset or mani_dataset format. Details are in readme.md')
    # ------------------------------------
    # training related
    parser.add_argument('--batch_size', default=2, type=int,
                        help='Batchsize per GPU')
    parser.add_argument('--test_batch_size', default=2, type=int,
                        help="batch size for testing")
    parser.add_argument('--epochs', default=200, type=int)
    parser.add_argument('--test_period', default=4, type=int,
                        help="how many epoch per testing one time")
    parser.add_argument('--accum_iter', default=16, type=int,
                        help='Accumulate gradient iterations (for increasing the effective batch size under memory constraints)')
    parser.add_argument('--find_unused_parameters', action='store_true',
                        help='find unused parameters in DDP, for some models like ObjectFormer')
    parser.add_argument('--use_amp', action='store_true',
                        help='run forward and loss under autocast')
    parser.add_argument('--bf16', action='store_true',
                        help='use bfloat16 instead of float16 when --use_amp is set')
    parser.add_argument('--no_model_eval', action='store_true',
                        help='Do not use model.eval() during testing.')

    # Optimizer parameters
    parser.add_argument('--weight_decay', type=float, default=0.05,
                        help='weight decay (default: 0.05)')
    parser.add_argument('--lr', type=float, default=None, metavar='LR',
                        help='learning rate (absolute lr)')
    parser.add_argument('--blr', type=float, default=1e-4, metavar='LR',
                        help='base learning rate: absolute_lr = base_lr * total_batch_size / 256')
    parser.add_argument('--min_lr', type=float, default=0., metavar='LR',
                        help='lower lr bound for cyclic schedulers that hit 0')
    parser.add_argument('--warmup_epochs', type=int, default=1, metavar='N',
                        help='epochs to warmup LR')

    parser.add_argument('--output_dir', default='./output_dir',
                        help='path where to save, empty for no saving')
    parser.add_argument('--log_dir', default='./output_dir',
                        help='path where to tensorboard log')
    parser.add_argument('--resume', default='',
                        help='resume from checkpoint')
    parser.add_argument('--seed', default=42, type=int)
    parser.add_argument('--start_epoch', default=0, type=int, metavar='N',
                        help='start epoch')
    parser.add_argument('--num_workers', default=8, type=int)
    parser.add_argument('--pin_mem', action='store_true',
                        help='Pin CPU memory in DataLoader for more efficient (sometimes) transfer to GPU.')
    parser.add_argument('--no_pin_mem', action='store_false', dest='pin_mem')
    parser.set_defaults(pin_mem=True)
    # distributed training parameters
    parser.add_argument('--world_size', default=1, type=int,
                        help='number of distributed processes')
    parser.add_argument('--local_rank', default=-1, type=int)
    parser.add_argument('--dist_on_itp', action='store_true')
    parser.add_argument('--dist_url', default='env://',
                        help='url used to set up distributed training')
    args, remaining_args = parser.parse_known_args()
    # model-specific arguments are forwarded to the registered model's __init__
    model_class = MODELS.get(args.model)
    model_parser = misc.create_argparser(model_class)
    model_args = model_parser.parse_args(remaining_args)
    return args, model_args


def main(args, model_args):
    # init parameters for distributed training
    misc.init_distributed_mode(args)
    torch.multiprocessing.set_sharing_strategy('file_system')
    print('job dir: {}'.format(os.path.dirname(os.path.realpath(__file__))))
    print("=====args:=====")
    print("{}".format(args).replace(', ', ',\n'))
    print("=====Model args:=====")
    print("{}".format(model_args).replace(', ', ',\n'))
    device = torch.device('cuda', args.gpu) if args.distributed else torch.device('cuda')

    # fix the seed for reproducibility
    seed = args.seed + misc.get_rank()
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    np.random.seed(seed)

    cudnn.benchmark = True

    if misc.is_main_process():
        print(f"Running on {torch.cuda.get_device_name(device)} "
              f"({torch.cuda.get_device_properties(device).total_memory / 2**30:.1f} GiB)")

    # ========define the model directly==========
    model = MODELS.get(args.model)
    model_init_params = inspect.signature(model.__init__).parameters
    combined_args = {k: v for k, v in vars(args).items() if k in model_init_params}
    combined_args.update({k: v for k, v in vars(model_args).items() if k in model_init_params})
    model = model(**combined_args)

    # pre-/post-processing bound to the model (e.g. ObjectFormer resizes masks)
    post_function_name = f"{args.model}_post_func".lower()
    post_function = POSTFUNCS.get(post_function_name) if POSTFUNCS.has(post_function_name) else None

    train_transform = get_albu_transforms('train')
    test_transform = get_albu_transforms('test')

    dataset_cls = ManiDataset if os.path.isdir(args.data_path) else JsonDataset
    dataset_train = dataset_cls(
        args.data_path,
        output_size=args.image_size,
        common_transforms=train_transform,
        edge_width=args.edge_mask_width,
        is_padding=args.if_padding,
        is_resizing=args.if_resizing,
        post_funcs=post_function,
    )
    dataset_test = (ManiDataset if os.path.isdir(args.test_data_path) else JsonDataset)(
        args.test_data_path,
        output_size=args.image_size,
        common_transforms=test_transform,
        edge_width=args.edge_mask_width,
        is_padding=args.if_padding,
        is_resizing=args.if_resizing,
        post_funcs=post_function,
    )

    num_tasks = misc.get_world_size()
    global_rank = misc.get_rank()
    sampler_train = torch.utils.data.DistributedSampler(
        dataset_train, num_replicas=num_tasks, rank=global_rank, shuffle=True
    )
    sampler_test = torch.utils.data.DistributedSampler(
        dataset_test, num_replicas=num_tasks, rank=global_rank, shuffle=False, drop_last=True
    )

    if global_rank == 0 and args.log_dir is not None:
        os.makedirs(args.log_dir, exist_ok=True)
        log_writer = SummaryWriter(log_dir=args.log_dir)
    else:
        log_writer = None

    data_loader_train = torch.utils.data.DataLoader(
        dataset_train, sampler=sampler_train,
        batch_size=args.batch_size,
        num_workers=args.num_workers,
        pin_memory=args.pin_mem,
        drop_last=True,
    )
    data_loader_test = torch.utils.data.DataLoader(
        dataset_test, sampler=sampler_test,
        batch_size=args.test_batch_size,
        num_workers=args.num_workers,
        drop_last=True,
    )

    # ========evaluators==========
    evaluator_list = [
        PixelF1(threshold=0.5, mode="origin"),
    ]
    if args.if_predict_label:
        evaluator_list.append(ImageF1(threshold=0.5))

    model.to(device)
    model_without_ddp = model

    eff_batch_size = args.batch_size * args.accum_iter * misc.get_world_size()
    if args.lr is None:  # only base_lr is specified
        args.lr = args.blr * eff_batch_size / 256
    print("base lr: %.2e" % (args.lr * 256 / eff_batch_size))
    print("actual lr: %.2e" % args.lr)
    print("effective batch size: %d" % eff_batch_size)

    if args.distributed:
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu],
                                                          find_unused_parameters=args.find_unused_parameters)
        model_without_ddp = model.module

    args.opt = 'AdamW'
    args.betas = (0.9, 0.999)
    args.momentum = 0.9
    optimizer = optim_factory.create_optimizer(args, model_without_ddp)
    print(optimizer)

    loss_scaler = misc.NativeScalerWithGradNormCount(
        scaler=torch.amp.GradScaler("cuda", enabled=args.use_amp and not args.bf16))
    amp_dtype = torch.bfloat16 if args.bf16 else torch.float16
    autocast_ctx = lambda: torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.use_amp)

    misc.load_model(args=args, model_without_ddp=model_without_ddp, optimizer=optimizer, loss_scaler=loss_scaler)

    print(f"Start training for {args.epochs} epochs")
    start_time = time.time()
    best_evaluate_metric_value = 0
    for epoch in range(args.start_epoch, args.epochs):
        if args.distributed:
            data_loader_train.sampler.set_epoch(epoch)
        train_stats = train_one_epoch(
            model, data_loader_train,
            optimizer, device, epoch, loss_scaler,
            log_writer=log_writer,
            log_per_epoch_count=20,
            autocast_ctx=autocast_ctx,
            args=args
        )

        # saving checkpoint
        if args.output_dir and (epoch % 25 == 0 and epoch != 0 or epoch + 1 == args.epochs):
            misc.save_model(
                args=args, model=model, model_without_ddp=model_without_ddp, optimizer=optimizer,
                loss_scaler=loss_scaler, epoch=epoch)

        optimizer.zero_grad()
        if epoch % args.test_period == 0 or epoch + 1 == args.epochs:
            test_stats = test_one_epoch(
                model,
                data_loader=data_loader_test,
                evaluator_list=evaluator_list,
                device=device,
                epoch=epoch,
                log_writer=log_writer,
                args=args,
                is_test=False,
            )
            evaluate_metric = test_stats.get("pixel-level F1", 0.0)
            if evaluate_metric > best_evaluate_metric_value:
                best_evaluate_metric_value = evaluate_metric
                print(f"Best pixel-level F1 = {best_evaluate_metric_value}")
                if epoch > 35:
                    misc.save_model(
                        args=args, model=model, model_without_ddp=model_without_ddp, optimizer=optimizer,
                        loss_scaler=loss_scaler, epoch=epoch)
            log_stats = {**{f'train_{k}': v for k, v in train_stats.items()},
                         **{f'test_{k}': v for k, v in test_stats.items()},
                         'epoch': epoch,
                         'max_mem_GiB': torch.cuda.max_memory_allocated() / 2 ** 30}
        else:
            log_stats = {**{f'train_{k}': v for k, v in train_stats.items()},
                         'epoch': epoch}

        if args.output_dir and misc.is_main_process():
            if log_writer is not None:
                log_writer.flush()
            with open(os.path.join(args.output_dir, "log.txt"), mode="a", encoding="utf-8") as f:
                f.write(json.dumps(log_stats) + "\n")

    total_time = time.time() - start_time
    total_time_str = str(datetime.timedelta(seconds=int(total_time)))
    print('Training time {}'.format(total_time_str))


if __name__ == '__main__':
    args, model_args = get_args_parser()
    if args.output_dir:
        Path(args.output_dir).mkdir(parents=True, exist_ok=True)
    main(args, model_args)
