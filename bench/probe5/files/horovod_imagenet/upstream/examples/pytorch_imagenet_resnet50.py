"""
ResNet-50 on ImageNet with Horovod data parallelism.

    horovodrun -np 16 -H server1:8,server2:8 python pytorch_imagenet_resnet50.py \
        --train-dir /data/imagenet/train --val-dir /data/imagenet/val

Learning rate is scaled linearly with the number of workers and warmed up over the first
epochs (Goyal et al., 2017). Gradients are averaged by Horovod's allreduce after each
backward, optionally compressed to fp16 on the wire.
"""
import argparse
import math
import os

import torch
import torch.backends.cudnn as cudnn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data.distributed
from torchvision import datasets, transforms, models
import horovod.torch as hvd
from tqdm import tqdm

parser = argparse.ArgumentParser(description='PyTorch ImageNet Example',
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
parser.add_argument('--train-dir', default=os.path.expanduser('~/imagenet/train'), help='path to training data')
parser.add_argument('--val-dir', default=os.path.expanduser('~/imagenet/validation'), help='path to validation data')
parser.add_argument('--checkpoint-format', default='./checkpoint-{epoch}.pth.tar', help='checkpoint file format')
parser.add_argument('--fp16-allreduce', action='store_true', default=False, help='use fp16 compression during allreduce')
parser.add_argument('--batches-per-allreduce', type=int, default=1,
                    help='number of batches processed locally before executing allreduce across workers')
parser.add_argument('--batch-size', type=int, default=32, help='input batch size for training')
parser.add_argument('--val-batch-size', type=int, default=32, help='input batch size for validation')
parser.add_argument('--epochs', type=int, default=90, help='number of epochs to train')
parser.add_argument('--base-lr', type=float, default=0.0125, help='learning rate for a single device')
parser.add_argument('--warmup-epochs', type=float, default=5, help='number of warmup epochs')
parser.add_argument('--momentum', type=float, default=0.9, help='SGD momentum')
parser.add_argument('--wd', type=float, default=0.00005, help='weight decay')
parser.add_argument('--no-cuda', action='store_true', default=False, help='disables accelerator training')
parser.add_argument('--seed', type=int, default=42, help='random seed')


class Metric(object):
    """Running average of a scalar, averaged over all workers."""

    def __init__(self, name):
        self.name = name
        self.sum = torch.tensor(0.)
        self.n = torch.tensor(0.)

    def update(self, val):
        self.sum += hvd.allreduce(val.detach().cpu(), name=self.name)
        self.n += 1

    @property
    def avg(self):
        return self.sum / self.n


def accuracy(output, target):
    pred = output.max(1, keepdim=True)[1]
    return pred.eq(target.view_as(pred)).cpu().float().mean()


def adjust_learning_rate(optimizer, epoch, batch_idx, steps_per_epoch, world):
    if epoch < args.warmup_epochs:
        epoch += float(batch_idx + 1) / steps_per_epoch
        lr_adj = 1. / world * (epoch * (world - 1) / args.warmup_epochs + 1)
    elif epoch < 30:
        lr_adj = 1.
    elif epoch < 60:
        lr_adj = 1e-1
    elif epoch < 80:
        lr_adj = 1e-2
    else:
        lr_adj = 1e-3
    for param_group in optimizer.param_groups:
        param_group['lr'] = args.base_lr * world * args.batches_per_allreduce * lr_adj


def train(epoch, model, optimizer, train_loader, train_sampler, rank, world):
    model.train()
    train_sampler.set_epoch(epoch)
    train_loss = Metric('train_loss')
    train_accuracy = Metric('train_accuracy')

    with tqdm(total=len(train_loader), desc='Train Epoch     #{}'.format(epoch + 1), disable=rank != 0) as t:
        for batch_idx, (data, target) in enumerate(train_loader):
            adjust_learning_rate(optimizer, epoch, batch_idx, len(train_loader), world)
            if args.cuda:
                data, target = data.cuda(), target.cuda()
            optimizer.zero_grad()
            # split the batch into sub-batches that accumulate before one allreduce
            for i in range(0, len(data), args.batch_size):
                data_batch = data[i:i + args.batch_size]
                target_batch = target[i:i + args.batch_size]
                output = model(data_batch)
                train_accuracy.update(accuracy(output, target_batch))
                loss = F.cross_entropy(output, target_batch)
                train_loss.update(loss)
                loss.div_(math.ceil(float(len(data)) / args.batch_size))
                loss.backward()
            optimizer.step()
            t.set_postfix({'loss': train_loss.avg.item(), 'accuracy': 100. * train_accuracy.avg.item()})
            t.update(1)


def validate(epoch, model, val_loader, rank):
    model.eval()
    val_loss = Metric('val_loss')
    val_accuracy = Metric('val_accuracy')

    with tqdm(total=len(val_loader), desc='Validate Epoch  #{}'.format(epoch + 1), disable=rank != 0) as t:
        with torch.no_grad():
            for data, target in val_loader:
                if args.cuda:
                    data, target = data.cuda(), target.cuda()  # val
                output = model(data)
                val_loss.update(F.cross_entropy(output, target))
                val_accuracy.update(accuracy(output, target))
                t.set_postfix({'loss': val_loss.avg.item(), 'accuracy': 100. * val_accuracy.avg.item()})
                t.update(1)
    return val_accuracy.avg.item()


def main():
    global args
    args = parser.parse_args()
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    allreduce_batch_size = args.batch_size * args.batches_per_allreduce

    hvd.init()
    rank, world = hvd.rank(), hvd.size()
    torch.manual_seed(args.seed)

    if args.cuda:
        # pin each worker to one device
        torch.cuda.set_device(hvd.local_rank())
        torch.cuda.manual_seed(args.seed)
    cudnn.benchmark = True

    torch.set_num_threads(4)
    kwargs = {'num_workers': 4, 'pin_memory': True} if args.cuda else {}

    train_dataset = datasets.ImageFolder(
        args.train_dir,
        transform=transforms.Compose([
            transforms.RandomResizedCrop(224),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
        ]))
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, num_replicas=world, rank=rank)
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=allreduce_batch_size,
                                               sampler=train_sampler, **kwargs)

    val_dataset = datasets.ImageFolder(
        args.val_dir,
        transform=transforms.Compose([
            transforms.Resize(256),
            transforms.CenterCrop(224),
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
        ]))
    val_sampler = torch.utils.data.distributed.DistributedSampler(val_dataset, num_replicas=world, rank=rank)
    val_loader = torch.utils.data.DataLoader(val_dataset, batch_size=args.val_batch_size,
                                             sampler=val_sampler, **kwargs)

    model = models.resnet50()
    if args.cuda:
        model.cuda()

    optimizer = optim.SGD(model.parameters(), lr=(args.base_lr * args.batches_per_allreduce * world),
                          momentum=args.momentum, weight_decay=args.wd)

    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
    optimizer = hvd.DistributedOptimizer(
        optimizer, named_parameters=model.named_parameters(),
        compression=compression,
        backward_passes_per_step=args.batches_per_allreduce)

    # start every worker from rank 0's weights and optimizer state
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)

    best = 0.0
    for epoch in range(args.epochs):
        train(epoch, model, optimizer, train_loader, train_sampler, rank, world)
        acc = validate(epoch, model, val_loader, rank)
        if rank == 0:
            best = max(best, acc)
            torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()},
                       args.checkpoint_format.format(epoch=epoch + 1))
            print(f'epoch {epoch + 1}: val acc {100 * acc:.2f}% (best {100 * best:.2f}%)')


if __name__ == '__main__':
    main()
