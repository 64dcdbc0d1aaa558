"""RDED validation: train a student from scratch on the distilled images, with soft labels
produced on the fly by the observer (teacher) model, and report top-1 on the real val set."""
import math
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms as transforms
from torch.optim.lr_scheduler import LambdaLR

from synthesize.utils import load_model
from validation.utils import (
    ImageFolder,
    RandomResizedCropWithCoords,
    ShufflePatches,
    mix_aug,
    AverageMeter,
    accuracy,
    get_parameters,
)

sharing_strategy = "file_system"
torch.multiprocessing.set_sharing_strategy(sharing_strategy)


def set_worker_sharing_strategy(worker_id: int) -> None:
    torch.multiprocessing.set_sharing_strategy(sharing_strategy)


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def main(args):
    seed_everything(args.seed)

    # TF32 matmuls / convs: ~free speed-up on Ampere for the fp32 student
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    print("=> running on {} x {}".format(torch.cuda.device_count(), torch.cuda.get_device_name(0)))

    # Data loading
    normalize = transforms.Normalize(mean=args.mean_norm, std=args.std_norm)
    train_dataset = ImageFolder(
        classes=args.classes,
        ipc=args.ipc,
        mem=True,
        shuffle=True,
        root=args.syn_data_path,
        transform=transforms.Compose(
            [
                transforms.RandomResizedCrop(
                    size=args.input_size,
                    scale=(1 / args.factor, 1),
                    antialias=True,
                ),
                transforms.RandomHorizontalFlip(),
                transforms.ToTensor(),
                normalize,
            ]
        ),
    )

    train_loader = torch.utils.data.DataLoader(
        train_dataset,
        batch_size=args.re_batch_size,
        shuffle=True,
        num_workers=args.workers,
        pin_memory=True,
        worker_init_fn=set_worker_sharing_strategy,
    )

    val_dataset = ImageFolder(
        classes=args.classes,
        ipc=args.val_ipc,
        mem=True,
        root=args.val_dir,
        transform=transforms.Compose(
            [
                transforms.Resize(args.input_size // 7 * 8, antialias=True),
                transforms.CenterCrop(args.input_size),
                transforms.ToTensor(),
                normalize,
            ]
        ),
    )
    val_loader = torch.utils.data.DataLoader(
        val_dataset,
        batch_size=args.re_batch_size,
        shuffle=False,
        num_workers=args.workers, pin_memory=True,
        worker_init_fn=set_worker_sharing_strategy,
    )
    print("load data successfully")

    # load teacher (observer) and student
    teacher_model = load_model(
        model_name=args.arch_name,
        dataset=args.subset,
        pretrained=True,
        classes=args.classes,
    )
    student_model = load_model(
        model_name=args.stud_name,
        dataset=args.subset,
        pretrained=False,
        classes=args.classes,
    )
    teacher_model = torch.nn.DataParallel(teacher_model).cuda()
    student_model = torch.nn.DataParallel(student_model).cuda()

    teacher_model.eval()
    student_model.train()

    # freeze all layers of the teacher
    for param in teacher_model.parameters():
        param.requires_grad = False

    if args.stud_name.startswith("conv"):
        optimizer = torch.optim.SGD(
            get_parameters(student_model),
            lr=args.sgd_lr,
            momentum=args.momentum,
            weight_decay=args.weight_decay,
        )
    else:
        optimizer = torch.optim.AdamW(
            get_parameters(student_model),
            lr=args.adamw_lr,
            betas=[0.9, 0.999],
            weight_decay=args.adamw_weight_decay,
        )

    scheduler = LambdaLR(
        optimizer,
        lambda step: 0.5 * (1.0 + math.cos(math.pi * step / args.re_epochs / 2))
        if step <= args.re_epochs
        else 0,
        last_epoch=-1,
    )

    best_acc1 = 0
    torch.cuda.reset_peak_memory_stats()
    for epoch in range(args.re_epochs):
        train(epoch, train_loader, teacher_model, student_model, args, optimizer)

        if epoch % 10 == 9 or epoch == args.re_epochs - 1:
            top1 = validate(student_model, val_loader, args, epoch)
            best_acc1 = max(top1, best_acc1)
            print("=> epoch {}: top1 {:.2f} (best {:.2f}), peak mem {:.1f} GB".format(
                epoch, top1, best_acc1, torch.cuda.max_memory_allocated() / 2 ** 30))

        scheduler.step()

    print("Train Finish! Best accuracy is {:.2f}".format(best_acc1))
    with open(os.path.join("./exp", args.exp_name, "result.txt"), "a") as f:
        f.write("{} {} ipc{} top1 {:.2f}\n".format(args.subset, args.stud_name, args.ipc, best_acc1))
    return best_acc1


def train(epoch, train_loader, teacher_model, student_model, args, optimizer):
    objs = AverageMeter()
    top1 = AverageMeter()
    top5 = AverageMeter()

    loss_function_kl = nn.KLDivLoss(reduction="batchmean")
    optimizer.zero_grad()
    t1 = time.time()
    for batch_idx, (images, labels) in enumerate(train_loader):
        images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)

        images, mix_index, mix_lam, mix_bbox = mix_aug(images, args)

        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=args.amp):
            pred_label = student_model(images)

            with torch.no_grad():
                soft_mix_label = teacher_model(images)
                soft_mix_label = F.softmax(soft_mix_label / args.temperature, dim=1)

        pred_label = pred_label.float()
        loss = loss_function_kl(F.log_softmax(pred_label / args.temperature, dim=1), soft_mix_label.float())
        loss = loss / args.re_accum_steps

        loss.backward()
        if batch_idx % args.re_accum_steps == (args.re_accum_steps - 1):
            optimizer.step()
            optimizer.zero_grad()

        prec1, prec5 = accuracy(pred_label, labels, topk=(1, 5))
        n = images.size(0)
        objs.update(loss.item(), n)
        top1.update(prec1.item(), n)
        top5.update(prec5.item(), n)

    print(
        "TRAIN Epoch {}: loss = {:.6f}, top1 = {:.2f}, top5 = {:.2f}, time = {:.1f}s".format(
            epoch, objs.avg, top1.avg, top5.avg, time.time() - t1
        )
    )


def validate(model, val_loader, args, epoch=None):
    objs = AverageMeter()
    top1 = AverageMeter()
    top5 = AverageMeter()
    loss_function = nn.CrossEntropyLoss()

    model.eval()
    t1 = time.time()
    with torch.no_grad():
        for data, target in val_loader:
            target = target.type(torch.LongTensor)
            data, target = data.to("cuda"), target.to("cuda")

            output = model(data)
            loss = loss_function(output, target)

            prec1, prec5 = accuracy(output, target, topk=(1, 5))
            n = data.size(0)
            objs.update(loss.item(), n)
            top1.update(prec1.item(), n)
            top5.update(prec5.item(), n)

    print(
        "TEST Epoch {}: loss = {:.6f}, top1 = {:.2f}, top5 = {:.2f}, time = {:.1f}s".format(
            epoch, objs.avg, top1.avg, top5.avg, time.time() - t1
        )
    )
    model.train()
    return top1.avg


if __name__ == "__main__":
    pass
