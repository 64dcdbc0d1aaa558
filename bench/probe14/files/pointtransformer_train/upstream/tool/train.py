import argparse
import os
import random
import shutil
import time

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.parallel
import torch.optim
import torch.optim.lr_scheduler as lr_scheduler
import torch.utils.data

from util import config
from util.common_util import AverageMeter, intersectionAndUnionGPU, find_free_port
from util.data_util import collate_fn
from util.s3dis import S3DIS


def get_parser():
    parser = argparse.ArgumentParser(description="PyTorch Point Cloud Semantic Segmentation")
    parser.add_argument("--config", type=str, default="config/s3dis/s3dis_pointtransformer_repro.yaml")
    parser.add_argument("opts", default=None, nargs=argparse.REMAINDER)
    args = parser.parse_args()
    cfg = config.load_cfg_from_cfg_file(args.config)
    if args.opts is not None:
        cfg = config.merge_cfg_from_list(cfg, args.opts)
    cfg.setdefault("dist_backend", "nccl")
    cfg.setdefault("dist_url", "tcp://127.0.0.1:6789")
    return cfg


def worker_init_fn(worker_id):
    random.seed(args.manual_seed + worker_id)


def main_process():
    return not args.multiprocessing_distributed or (
        args.multiprocessing_distributed and args.rank % args.ngpus_per_node == 0
    )


def main():
    args = get_parser()
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(x) for x in args.train_gpu)

    if args.manual_seed is not None:
        random.seed(args.manual_seed)
        np.random.seed(args.manual_seed)
        torch.manual_seed(args.manual_seed)
        torch.cuda.manual_seed(args.manual_seed)
        torch.cuda.manual_seed_all(args.manual_seed)
        cudnn.benchmark = False
        cudnn.deterministic = True
    if args.dist_url == "env://" and args.world_size == -1:
        args.world_size = int(os.environ["WORLD_SIZE"])
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    args.ngpus_per_node = len(args.train_gpu)
    if len(args.train_gpu) == 1:
        args.sync_bn = False
        args.distributed = False
        args.multiprocessing_distributed = False

    if args.multiprocessing_distributed:
        port = find_free_port()
        args.dist_url = f"tcp://127.0.0.1:{port}"
        args.world_size = args.ngpus_per_node * args.world_size
        mp.spawn(main_worker, nprocs=args.ngpus_per_node, args=(args.ngpus_per_node, args))
    else:
        main_worker(args.train_gpu, args.ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, argss):
    global args, best_iou
    args, best_iou = argss, 0
    if args.distributed:
        if args.dist_url == "env://" and args.rank == -1:
            args.rank = int(os.environ["RANK"])
        if args.multiprocessing_distributed:
            args.rank = args.rank * ngpus_per_node + gpu
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                world_size=args.world_size, rank=args.rank)

    from model.pointtransformer.pointtransformer_seg import pointtransformer_seg_repro as Model
    model = Model(c=args.fea_dim, k=args.classes)
    if args.sync_bn:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    criterion = nn.CrossEntropyLoss(ignore_index=args.ignore_label).cuda()

    optimizer = torch.optim.SGD(model.parameters(), lr=args.base_lr, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    scheduler = lr_scheduler.MultiStepLR(optimizer, milestones=[int(args.epochs * 0.6), int(args.epochs * 0.8)],
                                         gamma=0.1)

    if args.distributed:
        torch.cuda.set_device(gpu)
        args.batch_size = int(args.batch_size / ngpus_per_node)
        args.workers = int((args.workers + ngpus_per_node - 1) / ngpus_per_node)
        model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[gpu])
    else:
        model = torch.nn.DataParallel(model.cuda())

    if args.weight:
        if os.path.isfile(args.weight):
            checkpoint = torch.load(args.weight)
            model.load_state_dict(checkpoint["state_dict"])
    if args.resume:
        if os.path.isfile(args.resume):
            checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda())
            args.start_epoch = checkpoint["epoch"]
            model.load_state_dict(checkpoint["state_dict"], strict=True)
            optimizer.load_state_dict(checkpoint["optimizer"])
            scheduler.load_state_dict(checkpoint["scheduler"])
            best_iou = checkpoint["best_iou"]

    train_data = S3DIS(split="train", data_root=args.data_root, test_area=args.test_area,
                       voxel_size=args.voxel_size, voxel_max=args.voxel_max, shuffle_index=True, loop=args.loop)
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_data) if args.distributed else None
    train_loader = torch.utils.data.DataLoader(
        train_data, batch_size=args.batch_size, shuffle=(train_sampler is None), num_workers=args.workers,
        pin_memory=True, sampler=train_sampler, drop_last=True, collate_fn=collate_fn,
    )

    for epoch in range(args.start_epoch, args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        loss_train, mIoU_train = train(train_loader, model, criterion, optimizer, epoch)
        scheduler.step()
        if main_process() and (epoch + 1) % args.save_freq == 0:
            filename = args.save_path + "/model/model_last.pth"
            torch.save({"epoch": epoch + 1, "state_dict": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "best_iou": best_iou}, filename)


def train(train_loader, model, criterion, optimizer, epoch):
    loss_meter, intersection_meter, union_meter = AverageMeter(), AverageMeter(), AverageMeter()
    model.train()
    end = time.time()
    for i, (coord, feat, target, offset) in enumerate(train_loader):
        coord, feat, target, offset = (coord.cuda(non_blocking=True), feat.cuda(non_blocking=True),
                                       target.cuda(non_blocking=True), offset.cuda(non_blocking=True))
        output = model([coord, feat, offset])
        if target.shape[-1] == 1:
            target = target[:, 0]  # for cls
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        output = output.max(1)[1]
        n = coord.size(0)
        if args.multiprocessing_distributed:
            loss *= n
            count = target.new_tensor([n], dtype=torch.long)
            dist.all_reduce(loss), dist.all_reduce(count)
            n = count.item()
            loss /= n
        intersection, union, target = intersectionAndUnionGPU(output, target, args.classes, args.ignore_label)
        if args.multiprocessing_distributed:
            dist.all_reduce(intersection), dist.all_reduce(union)
        intersection, union = intersection.cpu().numpy(), union.cpu().numpy()
        intersection_meter.update(intersection), union_meter.update(union)
        loss_meter.update(loss.item(), n)
        if main_process() and (i + 1) % args.print_freq == 0:
            print(f"Epoch: [{epoch + 1}/{args.epochs}][{i + 1}/{len(train_loader)}] "
                  f"Loss {loss_meter.val:.4f} ({time.time() - end:.2f}s) "
                  f"mem {torch.cuda.max_memory_allocated() / 1024 ** 3:.1f}G")
        end = time.time()
    iou_class = intersection_meter.sum / (union_meter.sum + 1e-10)
    return loss_meter.avg, np.mean(iou_class)


if __name__ == "__main__":
    import gc

    gc.collect()
    main()
