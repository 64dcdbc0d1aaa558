import os
import time

import torch
import torch.optim as optim
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from torchvision import transforms

from datasets import dataset_factory
from datasets.augmentation import (
    ShuffleSequence, SelectSequenceCenter, ToTensor, MultiInput, MirrorPoses,
    FlipSequence, RandomSelectSequence, PointNoise, JointNoise, TwoNoiseTransform,
)
from datasets.graph import Graph
from evaluate import evaluate, _evaluate_casia_b
from losses import SupConLoss
from common import (
    parse_option, setup_environment, get_model, get_trainer, load_checkpoint, save_model,
    count_parameters, seed_everything,
)
from utils import AverageMeter


def train(train_loader, model, criterion, optimizer, scheduler, scaler, epoch, opt):
    """one epoch training"""
    model.train()

    batch_time = AverageMeter()
    data_time = AverageMeter()
    losses = AverageMeter()

    end = time.time()
    for idx, (points, target) in enumerate(train_loader):
        data_time.update(time.time() - end)

        points = torch.cat([points[0], points[1]], dim=0)
        labels = target[0]

        if torch.cuda.is_available():
            points = points.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
        bsz = labels.shape[0]

        with torch.cuda.amp.autocast(enabled=opt.use_amp):
            # compute loss
            features = model(points)
            f1, f2 = torch.split(features, [bsz, bsz], dim=0)
            features = torch.cat([f1.unsqueeze(1), f2.unsqueeze(1)], dim=1)
            loss = criterion(features, labels)

        # update metric
        losses.update(loss.item(), bsz)

        # SGD
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scheduler.step()
        scaler.update()
        optimizer.zero_grad()

        # measure elapsed time
        batch_time.update(time.time() - end)
        end = time.time()

        # print info
        if (idx + 1) % opt.log_interval == 0:
            print(
                f"Train: [{epoch}][{idx + 1}/{len(train_loader)}]\t"
                f"BT {batch_time.val:.3f} ({batch_time.avg:.3f})\t"
                f"DT {data_time.val:.3f} ({data_time.avg:.3f})\t"
                f"loss {losses.val:.3f} ({losses.avg:.3f})"
            )

    return losses.avg


def main(opt):
    opt = setup_environment(opt)
    graph = Graph("coco")

    # Dataset
    transform = transforms.Compose(
        [
            MirrorPoses(opt.mirror_probability),
            FlipSequence(opt.flip_probability),
            RandomSelectSequence(opt.sequence_length),
            ShuffleSequence(opt.shuffle),
            PointNoise(std=opt.point_noise_std),
            JointNoise(std=opt.joint_noise_std),
            MultiInput(graph.connect_joint, opt.use_multi_branch if hasattr(opt, "use_multi_branch") else False),
            ToTensor()
        ],
    )

    dataset_class = dataset_factory(opt.dataset)
    dataset = dataset_class(
        opt.train_data_path,
        train=True,
        sequence_length=opt.sequence_length,
        transform=TwoNoiseTransform(transform),
    )

    dataset_valid = dataset_class(
        opt.valid_data_path,
        sequence_length=opt.sequence_length,
        transform=transforms.Compose(
            [
                SelectSequenceCenter(opt.sequence_length),
                MultiInput(graph.connect_joint, False),
                ToTensor()
            ]
        ),
    )

    train_loader = DataLoader(
        dataset,
        batch_size=opt.batch_size,
        num_workers=opt.num_workers,
        pin_memory=True,
        shuffle=True,
    )

    val_loader = DataLoader(dataset_valid, batch_size=opt.batch_size_validation, num_workers=opt.num_workers, pin_memory=True)

    # Model & criterion
    model = get_model(graph, opt)
    criterion = SupConLoss(temperature=opt.temp)

    print("# parameters: ", count_parameters(model))

    if opt.cuda:
        model.cuda()
        criterion.cuda()

    if opt.cuda and torch.cuda.device_count() > 1:
        print(f"Using {torch.cuda.device_count()} GPUs with DataParallel")
        model = torch.nn.DataParallel(model)

    optimizer, scheduler = get_trainer(model, opt, len(train_loader))
    scaler = torch.cuda.amp.GradScaler(enabled=opt.use_amp)

    load_checkpoint(model, optimizer, scheduler, scaler, opt)

    # Tensorboard
    writer = SummaryWriter(log_dir=opt.tb_path if hasattr(opt, "tb_path") else None)

    best_acc = 0
    loss = 0
    for epoch in range(opt.start_epoch, opt.epochs + 1):
        # train for one epoch
        time1 = time.time()
        loss = train(
            train_loader, model, criterion, optimizer, scheduler, scaler, epoch, opt
        )

        time2 = time.time()
        print(f"epoch {epoch}, total time {time2 - time1:.2f}")

        # tensorboard logger
        writer.add_scalar("loss/train", loss, epoch)
        writer.add_scalar("learning_rate", optimizer.param_groups[0]["lr"], epoch)

        # evaluation
        result, accuracy_avg, sub_accuracies, dataframe = evaluate(
            val_loader, model, opt.evaluation_fn if hasattr(opt, "evaluation_fn") else _evaluate_casia_b,
            use_flip=True
        )
        writer.add_text("accuracy/validation", dataframe.to_markdown(), epoch)
        writer.add_scalar("accuracy/validation", accuracy_avg, epoch)
        for key, sub_accuracy in sub_accuracies.items():
            writer.add_scalar(f"accuracy/validation/{key}", sub_accuracy, epoch)

        print(f"epoch {epoch}, avg accuracy {accuracy_avg:.4f}")
        is_best = accuracy_avg > best_acc
        if is_best:
            best_acc = accuracy_avg

        if is_best or epoch % opt.save_interval == 0:
            save_file = os.path.join(opt.model_path, f"ckpt_epoch_{'best' if is_best else epoch}.pth")
            save_model(model, optimizer, scheduler, scaler, opt, opt.epochs, save_file)

    # save the last model
    save_file = os.path.join(opt.model_path, "last.pth")
    save_model(model, optimizer, scheduler, scaler, opt, opt.epochs, save_file)

    print(f"best accuracy: {best_acc*100:.2f}")


if __name__ == "__main__":
    import datetime

    opt = parse_option()
    seed_everything(0)

    date = datetime.datetime.now().strftime("%Y-%m-%d_%H:%M:%S")
    opt.exp_name = opt.exp_name or f"{opt.network_name}_{opt.dataset}_{date}"
    main(opt)
