"""ImageNet-1k for class-wise unlearning: FFCV loaders + a DDP/AMP (re)training loop.

Adapted from the FFCV ImageNet example. The .beton files are produced by write_imagenet.py;
`prepare_data` returns the retain / forget ("fog") / val loaders used by main_forget.py.

    python imagenet.py --arch resnet18 --epochs 16 --batch_size 512 --class_to_replace 1,2,3 --data /data/ffcv
"""
import argparse
import os
import time

import numpy as np
import torch as ch
import torch.distributed as dist
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast
from torchvision.models import resnet18, resnet50

from ffcv.fields.basics import IntDecoder
from ffcv.fields.rgb_image import CenterCropRGBImageDecoder, RandomResizedCropRGBImageDecoder
from ffcv.loader import Loader, OrderOption
from ffcv.transforms import NormalizeImage, RandomHorizontalFlip, Squeeze, ToDevice, ToTensor, ToTorchImage

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406]) * 255
IMAGENET_STD = np.array([0.229, 0.224, 0.225]) * 255
DEFAULT_CROP_RATIO = 224 / 256


def get_device():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank() % ch.cuda.device_count()
    return 0


def create_train_loader(path, num_workers, batch_size, distributed, in_memory, indices=None, res=176):
    this_device = f"cuda:{get_device()}"
    decoder = RandomResizedCropRGBImageDecoder((res, res))
    image_pipeline = [
        decoder,
        RandomHorizontalFlip(),
        ToTensor(),
        ToDevice(ch.device(this_device), non_blocking=True),
        ToTorchImage(),
        NormalizeImage(IMAGENET_MEAN, IMAGENET_STD, np.float16),
    ]
    label_pipeline = [
        IntDecoder(),
        ToTensor(),
        Squeeze(),
        ToDevice(ch.device(this_device), non_blocking=True),
    ]
    order = OrderOption.RANDOM if distributed else OrderOption.QUASI_RANDOM
    return Loader(
        path,
        batch_size=batch_size,
        num_workers=num_workers,
        order=order,
        os_cache=in_memory,
        drop_last=True,
        pipelines={"image": image_pipeline, "label": label_pipeline},
        distributed=distributed,
        indices=indices,
    )


def create_val_loader(path, num_workers, batch_size, distributed, indices=None, res=256):
    this_device = get_device()
    res_tuple = (res, res)
    cropper = CenterCropRGBImageDecoder(res_tuple, ratio=DEFAULT_CROP_RATIO)
    image_pipeline = [
        cropper,
        ToTensor(),
        ToDevice(ch.device(this_device), non_blocking=True),
        ToTorchImage(),
        NormalizeImage(IMAGENET_MEAN, IMAGENET_STD, np.float16),
    ]
    label_pipeline = [
        IntDecoder(),
        ToTensor(),
        Squeeze(),
        ToDevice(ch.device(this_device), non_blocking=True),
    ]
    return Loader(
        path,
        batch_size=batch_size,
        num_workers=num_workers,
        order=OrderOption.SEQUENTIAL,
        drop_last=False,
        pipelines={"image": image_pipeline, "label": label_pipeline},
        distributed=distributed,
        indices=indices,
    )


def prepare_data(dataset="imagenet", batch_size=512, train_subset_indices=None, val_subset_indices=None,
                 data_path="/data/imagenet_ffcv", num_workers=12, distributed=False):
    assert dataset == "imagenet"
    train_path = os.path.join(data_path, "train_500_0.50_90.beton")
    val_path = os.path.join(data_path, "val_500_0.50_90.beton")
    loaders = {}
    if train_subset_indices is None:
        loaders["train"] = create_train_loader(train_path, num_workers, batch_size, distributed, in_memory=True)
        loaders["val"] = create_val_loader(val_path, num_workers, batch_size, distributed)
        return loaders
    retain_idx = ch.nonzero(train_subset_indices).flatten().tolist()
    forget_idx = ch.nonzero(1 - train_subset_indices).flatten().tolist()
    val_idx = ch.nonzero(val_subset_indices).flatten().tolist()
    loaders["train"] = create_train_loader(train_path, num_workers, batch_size, distributed, True, indices=retain_idx)
    loaders["fog"] = create_train_loader(train_path, num_workers, batch_size, distributed, True, indices=forget_idx)
    loaders["val"] = create_val_loader(val_path, num_workers, batch_size, distributed, indices=val_idx)
    return loaders


def setup_distributed(gpu, world_size, port=12355):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("nccl", rank=gpu, world_size=world_size)
    ch.cuda.set_device(gpu)


def get_lr_schedule(epochs, steps_per_epoch, lr, warmup=2):
    total = epochs * steps_per_epoch
    warm = warmup * steps_per_epoch
    return np.interp(np.arange(total + 1), [0, warm, total], [lr * 0.1, lr, 0.0])


def train_epoch(model, loader, optimizer, scaler, criterion, lr_schedule, epoch, mask=None):
    model.train()
    iters = len(loader)
    losses = []
    for it, (images, target) in enumerate(loader):
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr_schedule[epoch * iters + it]

        optimizer.zero_grad(set_to_none=True)
        with autocast():
            output = model(images)
            loss = criterion(output, target)

        scaler.scale(loss).backward()
        if mask is not None:
            scaler.unscale_(optimizer)
            for name, param in model.named_parameters():
                if param.grad is not None:
                    param.grad *= mask[name.replace("module.", "")]
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.detach())
    return ch.stack(losses).mean().item()


def evaluate(model, loader, lr_tta=True):
    model.eval()
    correct = 0
    total = 0
    with ch.no_grad():
        with autocast():
            for images, target in loader:
                output = model(images)
                if lr_tta:
                    output += model(ch.flip(images, dims=[3]))
                correct += (output.argmax(1) == target).sum().item()
                total += target.shape[0]
    stats = ch.tensor([correct, total], dtype=ch.float64).cuda()
    if dist.is_initialized():
        dist.all_reduce(stats)
    return (100.0 * stats[0] / stats[1]).item()


def main_worker(gpu, world_size, args):
    distributed = world_size > 1
    if distributed:
        setup_distributed(gpu, world_size)
    ch.backends.cudnn.benchmark = True

    train_ys = ch.load(os.path.join(args.data, "train_ys.pth"))
    val_ys = ch.load(os.path.join(args.data, "val_ys.pth"))
    train_subset = ch.ones_like(train_ys)
    val_subset = ch.ones_like(val_ys)
    for c in args.class_to_replace:
        train_subset[train_ys == c] = 0
        val_subset[val_ys == c] = 0
    loaders = prepare_data("imagenet", args.batch_size, train_subset, val_subset,
                           data_path=args.data, num_workers=args.workers, distributed=distributed)

    model = {"resnet18": resnet18, "resnet50": resnet50}[args.arch](num_classes=1000)
    model = model.to(memory_format=ch.channels_last)
    model = model.cuda(gpu)
    if distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[gpu])

    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = ch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-5, nesterov=True)
    scaler = GradScaler()
    lr_schedule = get_lr_schedule(args.epochs, len(loaders["train"]), args.lr)

    for epoch in range(args.epochs):
        t0 = time.time()
        loss = train_epoch(model, loaders["train"], optimizer, scaler, criterion, lr_schedule, epoch)
        if gpu == 0:
            print(f"epoch {epoch}: loss {loss:.3f} ({time.time() - t0:.0f}s)")
    retain_acc = evaluate(model, loaders["val"])
    forget_acc = evaluate(model, loaders["fog"], lr_tta=False)
    if gpu == 0:
        print(f"val (retain classes) {retain_acc:.2f}  forget {forget_acc:.2f}")
        os.makedirs(args.save_dir, exist_ok=True)
        ch.save(model.state_dict(), os.path.join(args.save_dir, f"retrain_{args.arch}.pth.tar"))
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="resnet18")
    parser.add_argument("--data", default="/data/imagenet_ffcv")
    parser.add_argument("--save_dir", default="results/imagenet")
    parser.add_argument("--epochs", type=int, default=16)
    parser.add_argument("--batch_size", type=int, default=512)
    parser.add_argument("--lr", type=float, default=1.7)
    parser.add_argument("--workers", type=int, default=12)
    parser.add_argument("--class_to_replace", type=lambda s: [int(x) for x in s.split(",")], default=[1])
    args = parser.parse_args()

    world_size = ch.cuda.device_count()
    if world_size > 1:
        ch.multiprocessing.spawn(main_worker, args=(world_size, args), nprocs=world_size, join=True)
    else:
        main_worker(0, 1, args)
