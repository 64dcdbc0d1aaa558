"""
AdaContrast: Contrastive Test-Time Adaptation (CVPR 2022) - source training + target adaptation launcher.

    python main_adacontrast.py train_source=false learn=targets \
        data.src_domain=real data.tgt_domain=sketch model_src.arch=resnet50 ...

Multi-GPU training uses one process per GPU (torch.multiprocessing.spawn) with DistributedDataParallel.
"""
import builtins
import logging
import os
import random
import time

import hydra
import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from omegaconf import OmegaConf, open_dict
from torch.nn.parallel import DistributedDataParallel

import wandb
from classifier import Classifier
from image_list import ImageList
from moco.builder import AdaMoCo
from moco.loader import NCropsTransform
from utils import (
    AverageMeter,
    ProgressMeter,
    adjust_learning_rate,
    concat_all_gather,
    get_augmentation,
    get_distances,
    is_master,
    per_class_accuracy,
    remove_wrap_arounds,
    save_checkpoint,
    use_wandb,
)


def setup_distributed(args):
    # reduce the chance of hanging on machines without working P2P between cards
    os.environ.setdefault("NCCL_P2P_DISABLE", "1")
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


@hydra.main(config_path="configs", config_name="root")
def main(args):
    setup_distributed(args)
    if args.seed is not None:
        random.seed(args.seed)
        torch.manual_seed(args.seed)
        cudnn.deterministic = True

    if args.dist_url == "env://" and args.world_size == -1:
        args.world_size = int(os.environ["WORLD_SIZE"])

    args.distributed = args.world_size > 1 or args.multiprocessing_distributed

    ngpus_per_node = torch.cuda.device_count()
    if args.multiprocessing_distributed:
        # Since we have ngpus_per_node processes per node, the total world_size
        # needs to be adjusted accordingly
        args.world_size = ngpus_per_node * args.world_size
        # Use torch.multiprocessing.spawn to launch distributed processes: the
        # main_worker process function
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        # Simply call main_worker function
        main_worker(args.gpu, ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, args):
    with open_dict(args):
        args.gpu = gpu

    # suppress printing if not master
    if args.multiprocessing_distributed and args.gpu != 0:
        def print_pass(*args):
            pass
        builtins.print = print_pass

    if args.gpu is not None:
        print("Use GPU: {} for training".format(args.gpu))

    if args.distributed:
        if args.dist_url == "env://" and args.rank == -1:
            args.rank = int(os.environ["RANK"])
        if args.multiprocessing_distributed:
            # For multiprocessing distributed training, rank needs to be the
            # global rank among all the processes
            args.rank = args.rank * ngpus_per_node + gpu
        dist.init_process_group(
            backend=args.dist_backend,
            init_method=args.dist_url,
            world_size=args.world_size,
            rank=args.rank,
        )

    # init wandb (only on rank 0)
    if use_wandb(args):
        wandb.init(project=args.project, name=args.memo, config=OmegaConf.to_container(args, resolve=True))

    if args.train_source:
        train_source(args)
    else:
        train_target(args)


def build_model(args, src_model, momentum_model):
    if args.distributed:
        # For multiprocessing distributed, DistributedDataParallel constructor
        # should always set the single device scope, otherwise,
        # DistributedDataParallel will use all available devices.
        if args.gpu is not None:
            torch.cuda.set_device(args.gpu)
            src_model.cuda(args.gpu)
            momentum_model.cuda(args.gpu)
            # When using a single GPU per process and per
            # DistributedDataParallel, we need to divide the batch size
            # ourselves based on the total number of GPUs we have
            args.data.batch_size = int(args.data.batch_size / ngpus(args))
            args.data.workers = int((args.data.workers + ngpus(args) - 1) / ngpus(args))
        else:
            src_model.cuda()
            momentum_model.cuda()
    elif args.gpu is not None:
        torch.cuda.set_device(args.gpu)  # single device, no DDP
        src_model = src_model.cuda(args.gpu)
        momentum_model = momentum_model.cuda(args.gpu)
    return src_model, momentum_model


def ngpus(args):
    return max(1, args.world_size // max(1, args.nodes))


def train_target(args):
    # create model
    checkpoint_path = os.path.join(
        args.model_tta.src_log_dir,
        f"best_{args.data.src_domain}_{args.seed}.pth.tar",
    )
    src_model = Classifier(args.model_src, checkpoint_path)
    momentum_model = Classifier(args.model_src, checkpoint_path)
    src_model, momentum_model = build_model(args, src_model, momentum_model)

    model = AdaMoCo(
        src_model,
        momentum_model,
        K=args.model_tta.queue_size,
        m=args.model_tta.m,
        T_moco=args.model_tta.T_moco,
    ).cuda()
    if args.distributed:
        model = DistributedDataParallel(model, device_ids=[args.gpu], find_unused_parameters=True)
    logging.info(f"1 - Created target model")

    val_transform = get_augmentation("test")
    label_file = os.path.join(args.data.image_root, f"{args.data.tgt_domain}_list.txt")
    val_dataset = ImageList(
        image_root=args.data.image_root,
        label_file=label_file,
        transform=val_transform,
    )
    val_sampler = (
        torch.utils.data.distributed.DistributedSampler(val_dataset, shuffle=False) if args.distributed else None
    )
    val_loader = torch.utils.data.DataLoader(
        val_dataset,
        batch_size=256,
        sampler=val_sampler,
        num_workers=2,
        pin_memory=True,
    )
    pseudo_item_list, banks = eval_and_label_dataset(val_loader, model, banks=None, args=args)
    logging.info("2 - Computed initial pseudo labels")

    # Training data
    train_transform = get_augmentation_versions(args)
    train_dataset = ImageList(
        image_root=args.data.image_root,
        label_file=None,  # uses pseudo labels
        transform=train_transform,
        pseudo_item_list=pseudo_item_list,
    )
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset) if args.distributed else None
    train_loader = torch.utils.data.DataLoader(
        train_dataset,
        batch_size=args.data.batch_size,
        shuffle=(train_sampler is None),
        num_workers=args.data.workers,
        pin_memory=True,
        sampler=train_sampler,
        drop_last=False,
    )

    args.learn.full_progress = args.learn.epochs * len(train_loader)
    logging.info("3 - Created train/val loader")

    # define loss function (criterion) and optimizer
    optimizer = torch.optim.SGD(
        model.parameters(),
        lr=args.optim.lr,
        momentum=args.optim.momentum,
        weight_decay=args.optim.weight_decay,
        nesterov=args.optim.nesterov,
    )
    logging.info("4 - Created SGD optimizer")
    logging.info("Start training...")
    for epoch in range(args.learn.start_epoch, args.learn.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)

        # train for one epoch
        train_epoch(train_loader, model, banks, optimizer, epoch, args)
        eval_and_label_dataset(val_loader, model, banks, args)

    if is_master(args):
        filename = f"checkpoint_{epoch:04d}_{args.data.src_domain}-{args.data.tgt_domain}-{args.sub_memo}_{args.seed}.pth.tar"
        save_path = os.path.join(args.log_dir, filename)
        save_checkpoint(model, optimizer, epoch, save_path=save_path)
        logging.info(f"Saved checkpoint {save_path}")


def get_augmentation_versions(args):
    """
    Get a list of augmentations. "w" stands for weak, "s" stands for strong.
    E.g., "wss" stands for one weak, two strong.
    """
    transform_list = []
    for version in args.learn.aug_versions:
        if version == "s":
            transform_list.append(get_augmentation(args.data.aug_type))
        elif version == "w":
            transform_list.append(get_augmentation("plain"))
        else:
            raise NotImplementedError(f"{version} version not implemented.")
    transform = NCropsTransform(transform_list)
    return transform


@torch.no_grad()
def eval_and_label_dataset(dataloader, model, banks, args):
    wandb_dict = dict()

    # make sure to switch to eval mode
    model.eval()

    # run inference
    logits, gt_labels, indices = [], [], []
    features = []
    logging.info("Eval and labeling...")
    iterator = dataloader
    for imgs, labels, idxs in iterator:
        imgs = imgs.cuda(args.gpu, non_blocking=True)

        # (B, D) x (D, K) -> (B, K)
        feats, logits_cls = model(imgs, cls_only=True)

        features.append(feats)
        logits.append(logits_cls)
        gt_labels.append(labels)
        indices.append(idxs)

    features = torch.cat(features)
    logits = torch.cat(logits)
    gt_labels = torch.cat(gt_labels).to("cuda")
    indices = torch.cat(indices).to("cuda")

    if args.distributed:
        # gather results from all ranks
        features = concat_all_gather(features)
        logits = concat_all_gather(logits)
        gt_labels = concat_all_gather(gt_labels)
        indices = concat_all_gather(indices)

        # remove extra wrap-arounds from DDP
        ranks = len(dataloader.dataset) % dist.get_world_size()
        features = remove_wrap_arounds(features, ranks)
        logits = remove_wrap_arounds(logits, ranks)
        gt_labels = remove_wrap_arounds(gt_labels, ranks)
        indices = remove_wrap_arounds(indices, ranks)

    assert len(logits) == len(dataloader.dataset)
    pred_labels = logits.argmax(dim=1)
    accuracy = (pred_labels == gt_labels).float().mean() * 100
    logging.info(f"Accuracy of direct prediction: {accuracy:.2f}")
    wandb_dict["Test Acc"] = accuracy
    if args.data.dataset == "VISDA-C":
        acc_per_class = per_class_accuracy(
            y_true=gt_labels.cpu().numpy(),
            y_pred=pred_labels.cpu().numpy(),
        )
        wandb_dict["Test Avg"] = acc_per_class.mean()
        wandb_dict["Test Per-class"] = acc_per_class

    probs = F.softmax(logits, dim=1)
    rand_idxs = torch.randperm(len(features)).cuda()
    banks = {
        "features": features[rand_idxs][: args.learn.queue_size],
        "probs": probs[rand_idxs][: args.learn.queue_size],
        "ptr": 0,
    }

    # refine predicted labels
    pred_labels, _, acc = refine_predictions(features, probs, banks, args=args, gt_labels=gt_labels)
    wandb_dict["Test Post Acc"] = acc

    pseudo_item_list = []
    for pred_label, idx in zip(pred_labels, indices):
        img_path, _, img_file = dataloader.dataset.item_list[idx]
        pseudo_item_list.append((img_path, int(gt_labels[idx]), img_file))
    logging.info(f"Collected {len(pseudo_item_list)} pseudo labels.")

    if use_wandb(args):
        wandb.log(wandb_dict)

    return pseudo_item_list, banks


@torch.no_grad()
def soft_k_nearest_neighbors(features, features_bank, probs_bank, args):
    pred_probs = []
    for feats in features.split(64):
        distances = get_distances(feats, features_bank, args.learn.dist_type)
        _, idxs = distances.sort()
        idxs = idxs[:, : args.learn.num_neighbors]
        # (64, num_nbrs, num_classes), average over dim=1
        probs = probs_bank[idxs, :].mean(1)
        pred_probs.append(probs)
    pred_probs = torch.cat(pred_probs)
    _, pred_labels = pred_probs.max(dim=1)

    return pred_labels, pred_probs


@torch.no_grad()
def update_labels(banks, idxs, features, logits, args):
    # 1) avoid inconsistency among DDP processes, and
    # 2) have better estimate with more data points
    if args.distributed:
        idxs = concat_all_gather(idxs)
        features = concat_all_gather(features)
        logits = concat_all_gather(logits)

    probs = F.softmax(logits, dim=1)

    start = banks["ptr"]
    end = start + len(idxs)
    idxs_replace = torch.arange(start, end).cuda() % len(banks["features"])
    banks["features"][idxs_replace, :] = features
    banks["probs"][idxs_replace, :] = probs
    banks["ptr"] = end % len(banks["features"])


@torch.no_grad()
def refine_predictions(features, probs, banks, args, gt_labels=None):
    if args.learn.refine_method == "nearest_neighbors":
        feature_bank = banks["features"]
        probs_bank = banks["probs"]
        pred_labels, probs = soft_k_nearest_neighbors(features, feature_bank, probs_bank, args)
    elif args.learn.refine_method is None:
        pred_labels = probs.argmax(dim=1)
    else:
        raise NotImplementedError(f"{args.learn.refine_method} refine method is not implemented.")
    accuracy = None
    if gt_labels is not None:
        accuracy = (pred_labels == gt_labels).float().mean() * 100

    return pred_labels, probs, accuracy


def train_epoch(train_loader, model, banks, optimizer, epoch, args):
    batch_time = AverageMeter("Time", ":6.3f")
    loss_meter = AverageMeter("Loss", ":.4f")
    top1_ins = AverageMeter("SSL-Acc@1", ":6.2f")
    top1_psd = AverageMeter("CLS-Acc@1", ":6.2f")
    progress = ProgressMeter(len(train_loader), [batch_time, loss_meter, top1_ins, top1_psd],
                             prefix=f"Epoch: [{epoch}]")

    # make sure to switch to train mode
    model.train()

    end = time.time()
    zero_tensor = torch.tensor([0.0]).to("cuda")
    for i, data in enumerate(train_loader):
        # unpack and move data
        images, _, idxs = data
        idxs = idxs.to("cuda")
        images_w, images_q, images_k = (
            images[0].to("cuda"),
            images[1].to("cuda"),
            images[2].to("cuda"),
        )

        # per-step scheduler
        step = i + epoch * len(train_loader)
        adjust_learning_rate(optimizer, step, args)

        feats_w, logits_w = model(images_w, cls_only=True)
        with torch.no_grad():
            probs_w = F.softmax(logits_w, dim=1)
            pseudo_labels_w, probs_w = refine_predictions(feats_w, probs_w, banks, args=args)[:2]

        _, logits_q, logits_ins, keys = model(images_q, images_k)
        # update key features and corresponding pseudo labels
        model.module.update_memory(keys, pseudo_labels_w) if args.distributed else model.update_memory(keys, pseudo_labels_w)

        # moco instance discrimination
        loss_ins, accuracy_ins = instance_loss(logits_ins=logits_ins, pseudo_labels=pseudo_labels_w,
                                               mem_labels=model.module.mem_labels if args.distributed else model.mem_labels,
                                               contrast_type=args.learn.contrast_type)
        # classification
        loss_cls, accuracy_psd = classification_loss(logits_w, logits_q, pseudo_labels_w, args)
        # diversification
        loss_div = diversification_loss(logits_w, logits_q, args) if args.learn.eta > 0 else zero_tensor

        loss = args.learn.alpha * loss_cls + args.learn.beta * loss_ins + args.learn.eta * loss_div
        loss_meter.update(loss.item())
        top1_ins.update(accuracy_ins.item(), len(logits_ins))
        top1_psd.update(accuracy_psd.item(), len(logits_w))

        # use slow feature to update neighbor space
        with torch.no_grad():
            feats_w = model.module.momentum_model(images_w, return_feats=True)[0] if args.distributed else model.momentum_model(images_w, return_feats=True)[0]
        update_labels(banks, idxs, feats_w, logits_w, args)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        batch_time.update(time.time() - end)
        end = time.time()
        if i % args.learn.print_freq == 0:
            progress.display(i)


def instance_loss(logits_ins, pseudo_labels, mem_labels, contrast_type):
    # labels: positive key indicators
    labels_ins = torch.zeros(logits_ins.shape[0], dtype=torch.long).cuda()

    # in class_aware mode, do not contrast with same-class samples
    if contrast_type == "class_aware" and pseudo_labels is not None:
        mask = torch.ones_like(logits_ins, dtype=torch.bool)
        mask[:, 1:] = pseudo_labels.reshape(-1, 1) != mem_labels  # (B, K)
        logits_ins = torch.where(mask, logits_ins, torch.tensor([float("-inf")]).cuda())

    loss = F.cross_entropy(logits_ins, labels_ins)
    accuracy = (logits_ins.argmax(dim=1) == labels_ins).float().mean() * 100
    return loss, accuracy


def classification_loss(logits_w, logits_s, target_labels, args):
    if args.learn.ce_sup_type == "weak_weak":
        loss_cls = F.cross_entropy(logits_w, target_labels)
        accuracy = (logits_w.argmax(dim=1) == target_labels).float().mean() * 100
    elif args.learn.ce_sup_type == "weak_strong":
        loss_cls = F.cross_entropy(logits_s, target_labels)
        accuracy = (logits_s.argmax(dim=1) == target_labels).float().mean() * 100
    else:
        raise NotImplementedError(f"{args.learn.ce_sup_type} CE supervision type not implemented.")
    return loss_cls, accuracy


def diversification_loss(logits_w, logits_s, args):
    if args.learn.ce_sup_type == "weak_weak":
        loss_div = div(logits_w)
    elif args.learn.ce_sup_type == "weak_strong":
        loss_div = div(logits_s)
    else:
        loss_div = div(logits_w) + div(logits_s)
    return loss_div


def div(logits, epsilon=1e-8):
    probs = F.softmax(logits, dim=1)
    probs_mean = probs.mean(dim=0)
    loss_div = -torch.sum(-probs_mean * torch.log(probs_mean + epsilon))
    return loss_div


def train_source(args):
    raise NotImplementedError("source training lives in main_source.py in this fork")


if __name__ == "__main__":
    main()
