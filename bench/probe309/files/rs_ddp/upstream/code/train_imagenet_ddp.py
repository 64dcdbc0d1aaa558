"""Multi-GPU (DistributedDataParallel) Gaussian-augmented training of an
ImageNet base classifier for randomized smoothing.

Launch with torchrun (one process per GPU):

    torchrun --nproc_per_node=8 code/train_imagenet_ddp.py resnet50 out/imagenet_sigma050 --noise_sd 0.5

or run it without torchrun on a single node, in which case it spawns one
process per visible GPU itself.
"""
import argparse
import datetime
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn import CrossEntropyLoss
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision.models import resnet50

from datasets import get_dataset, get_normalize_layer
from train_utils import AverageMeter, accuracy, init_logfile, log

try:
    from apex.optimizers import FusedSGD
except ImportError:
    FusedSGD = None

parser = argparse.ArgumentParser(description='DDP Gaussian-augmented ImageNet training')
parser.add_argument('arch', type=str, choices=['resnet50'])
parser.add_argument('outdir', type=str, help='folder to save model and training log')
parser.add_argument('--workers', default=8, type=int, help='data loading workers per GPU')
parser.add_argument('--epochs', default=90, type=int)
parser.add_argument('--batch', default=64, type=int, help='batch size per GPU')
parser.add_argument('--lr', default=0.1, type=float, help='learning rate for a global batch of 256')
parser.add_argument('--momentum', default=0.9, type=float)
parser.add_argument('--weight-decay', '--wd', default=1e-4, type=float, dest='weight_decay')
parser.add_argument('--noise_sd', default=0.5, type=float, help='std of the Gaussian augmentation')
parser.add_argument('--amp', action='store_true', help='mixed precision (bf16 on Ampere+, fp16 otherwise)')
parser.add_argument('--fused_sgd', action='store_true', help='use apex FusedSGD if available')
parser.add_argument('--channels_last', action='store_true', help='NHWC memory format (faster convs with cuDNN)')
parser.add_argument('--print-freq', default=50, type=int)
parser.add_argument('--resume', default='', type=str)
args = parser.parse_args()


def setup_distributed(local_rank, world_size):
    os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
    os.environ.setdefault('MASTER_PORT', '29500')
    os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend='nccl', init_method='env://',
                            world_size=world_size, rank=int(os.environ.get('RANK', local_rank)),
                            timeout=datetime.timedelta(minutes=30))


def pick_amp_dtype(local_rank):
    if not args.amp:
        return None
    major, _ = torch.cuda.get_device_capability(local_rank)
    return torch.bfloat16 if major >= 8 else torch.float16


def reduce_tensor(t):
    rt = t.clone()
    if dist.get_backend() == 'nccl':
        # NCCL can only reduce tensors that live on the current GPU
        rt = rt.cuda()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt


def build_model(local_rank):
    model = torch.nn.Sequential(get_normalize_layer('imagenet'), resnet50(weights=None))
    model = model.cuda(local_rank)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    return model


def train_one_epoch(loader, model, criterion, optimizer, scaler, amp_dtype, epoch, local_rank):
    batch_time, losses, top1 = AverageMeter(), AverageMeter(), AverageMeter()
    model.train()
    end = time.time()
    for i, (inputs, targets) in enumerate(loader):
        inputs = inputs.cuda(local_rank, non_blocking=True)
        targets = targets.cuda(local_rank, non_blocking=True)
        if args.channels_last:
            inputs = inputs.contiguous(memory_format=torch.channels_last)

        # Gaussian data augmentation with the same sigma used for certification
        inputs = inputs + torch.randn_like(inputs) * args.noise_sd

        with torch.cuda.amp.autocast(enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):
            outputs = model(inputs)
            loss = criterion(outputs, targets)

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        acc1, _ = accuracy(outputs, targets, topk=(1, 5))
        losses.update(loss.item(), inputs.size(0))
        top1.update(acc1.item(), inputs.size(0))
        batch_time.update(time.time() - end)
        end = time.time()

        if i % args.print_freq == 0 and local_rank == 0:
            print(f'Epoch [{epoch}][{i}/{len(loader)}] time {batch_time.avg:.3f} '
                  f'loss {losses.avg:.4f} acc@1 {top1.avg:.2f}')
    return losses.avg, top1.avg


@torch.no_grad()
def evaluate(loader, model, criterion, local_rank):
    model.eval()
    correct = torch.zeros(1, device=f'cuda:{local_rank}')
    total = torch.zeros(1, device=f'cuda:{local_rank}')
    loss_sum = torch.zeros(1, device=f'cuda:{local_rank}')
    for inputs, targets in loader:
        inputs, targets = inputs.cuda(local_rank, non_blocking=True), targets.cuda(local_rank, non_blocking=True)
        inputs = inputs + torch.randn_like(inputs) * args.noise_sd
        outputs = model(inputs)
        loss_sum += criterion(outputs, targets) * inputs.size(0)
        correct += (outputs.argmax(1) == targets).sum()
        total += inputs.size(0)
    stats = reduce_tensor(torch.cat([loss_sum, correct, total]).cpu())
    return (stats[0] / stats[2]).item(), (100.0 * stats[1] / stats[2]).item()


def main_worker(local_rank, world_size):
    setup_distributed(local_rank, world_size)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True  # training only; certification runs in fp32

    train_dataset = get_dataset('imagenet', 'train')
    test_dataset = get_dataset('imagenet', 'test')
    train_sampler = DistributedSampler(train_dataset, shuffle=True)
    test_sampler = DistributedSampler(test_dataset, shuffle=False)
    train_loader = DataLoader(train_dataset, batch_size=args.batch, sampler=train_sampler,
                              num_workers=args.workers, pin_memory=True, persistent_workers=True)
    test_loader = DataLoader(test_dataset, batch_size=args.batch, sampler=test_sampler,
                             num_workers=args.workers, pin_memory=True)

    model = build_model(local_rank)
    criterion = CrossEntropyLoss().cuda(local_rank)
    lr = args.lr * args.batch * world_size / 256
    if args.fused_sgd and FusedSGD is not None:
        optimizer = FusedSGD(model.parameters(), lr=lr, momentum=args.momentum,
                             weight_decay=args.weight_decay)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=args.momentum,
                                    weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    amp_dtype = pick_amp_dtype(local_rank)
    scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f'cuda:{local_rank}')
        model.module.load_state_dict(ckpt['state_dict'])
        optimizer.load_state_dict(ckpt['optimizer'])
        start_epoch = ckpt['epoch']

    logfile = os.path.join(args.outdir, 'log.txt')
    if local_rank == 0:
        os.makedirs(args.outdir, exist_ok=True)
        init_logfile(logfile, 'epoch\ttime\tlr\ttrain loss\ttrain acc\ttest loss\ttest acc')

    for epoch in range(start_epoch, args.epochs):
        train_sampler.set_epoch(epoch)
        before = time.time()
        train_loss, train_acc = train_one_epoch(train_loader, model, criterion, optimizer,
                                                scaler, amp_dtype, epoch, local_rank)
        test_loss, test_acc = evaluate(test_loader, model, criterion, local_rank)
        scheduler.step()
        if local_rank == 0:
            log(logfile, '{}\t{:.3}\t{:.3}\t{:.3}\t{:.3}\t{:.3}\t{:.3}'.format(
                epoch, time.time() - before, scheduler.get_last_lr()[0],
                train_loss, train_acc, test_loss, test_acc))
            # Save without the DDP wrapper so that certify.py can load it directly.
            torch.save({'epoch': epoch + 1, 'arch': args.arch,
                        'state_dict': model.module.state_dict(),
                        'optimizer': optimizer.state_dict()},
                       os.path.join(args.outdir, 'checkpoint.pth.tar'))
            print(torch.cuda.memory_summary(local_rank, abbreviated=True))
        dist.barrier()

    dist.destroy_process_group()


if __name__ == '__main__':
    if 'LOCAL_RANK' in os.environ:
        main_worker(int(os.environ['LOCAL_RANK']), int(os.environ['WORLD_SIZE']))
    else:
        n_gpus = torch.cuda.device_count()
        os.environ['WORLD_SIZE'] = str(n_gpus)
        mp.spawn(main_worker, args=(n_gpus,), nprocs=n_gpus, join=True)
