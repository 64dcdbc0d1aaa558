"""SimCLR pre-training used as the warm start for DivideMix / ELR+ ("Contrast to Divide").

The encoder weights saved here are later loaded by Train_cifar.py with --pretrained.

Single GPU:
    python pretrain_simclr.py --dataset cifar100 --batch_size 512 --fp16
Multi GPU:
    python -m torch.distributed.launch --nproc_per_node=4 pretrain_simclr.py --dataset cifar100 \
        --batch_size 256 --sync_bn --fp16
"""
import argparse
import math
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torchvision

from modules.lars import LARS
from modules.transformations import TransformsSimCLR
from PreResNet import ResNet18

try:
    from apex import amp
    from apex.parallel import DistributedDataParallel as ApexDDP
    from apex.parallel import convert_syncbn_model
    APEX_AVAILABLE = True
except ImportError:
    APEX_AVAILABLE = False


parser = argparse.ArgumentParser(description='SimCLR pre-training')
parser.add_argument('--dataset', default='cifar10', choices=['cifar10', 'cifar100'])
parser.add_argument('--data_path', default='./data', type=str)
parser.add_argument('--batch_size', default=512, type=int, help='per-GPU batch size')
parser.add_argument('--epochs', default=800, type=int)
parser.add_argument('--lr', default=0.3, type=float, help='base lr, scaled by batch_size/256')
parser.add_argument('--weight_decay', default=1e-6, type=float)
parser.add_argument('--temperature', default=0.5, type=float)
parser.add_argument('--projection_dim', default=128, type=int)
parser.add_argument('--workers', default=8, type=int)
parser.add_argument('--fp16', action='store_true', help='mixed precision through NVIDIA apex')
parser.add_argument('--opt_level', default='O1', type=str)
parser.add_argument('--sync_bn', action='store_true')
parser.add_argument('--local_rank', default=0, type=int)
parser.add_argument('--out', default='./pretrained', type=str)
parser.add_argument('--seed', default=0, type=int)
args = parser.parse_args()


class SimCLR(nn.Module):
    def __init__(self, encoder, n_features, projection_dim):
        super(SimCLR, self).__init__()
        self.encoder = encoder
        self.n_features = n_features
        self.encoder.linear = nn.Identity()
        self.projector = nn.Sequential(
            nn.Linear(self.n_features, self.n_features, bias=False),
            nn.ReLU(),
            nn.Linear(self.n_features, projection_dim, bias=False),
        )

    def forward(self, x_i, x_j):
        h_i = self.encoder(x_i)
        h_j = self.encoder(x_j)
        z_i = self.projector(h_i)
        z_j = self.projector(h_j)
        return h_i, h_j, z_i, z_j


class GatherLayer(torch.autograd.Function):
    """Gather tensors from all processes, supporting backward propagation."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        output = [torch.zeros_like(input) for _ in range(dist.get_world_size())]
        dist.all_gather(output, input)
        return tuple(output)

    @staticmethod
    def backward(ctx, *grads):
        (input,) = ctx.saved_tensors
        grad_out = torch.zeros_like(input)
        grad_out[:] = grads[dist.get_rank()]
        return grad_out


class NT_Xent(nn.Module):
    def __init__(self, batch_size, temperature, world_size):
        super(NT_Xent, self).__init__()
        self.batch_size = batch_size
        self.temperature = temperature
        self.world_size = world_size

        self.mask = self.mask_correlated_samples(batch_size, world_size)
        self.criterion = nn.CrossEntropyLoss(reduction="sum")
        self.similarity_f = nn.CosineSimilarity(dim=2)

    def mask_correlated_samples(self, batch_size, world_size):
        N = 2 * batch_size * world_size
        mask = torch.ones((N, N), dtype=bool)
        mask = mask.fill_diagonal_(0)
        for i in range(batch_size * world_size):
            mask[i, batch_size * world_size + i] = 0
            mask[batch_size * world_size + i, i] = 0
        return mask

    def forward(self, z_i, z_j):
        N = 2 * self.batch_size * self.world_size

        z = torch.cat((z_i, z_j), dim=0)
        if self.world_size > 1:
            z = torch.cat(GatherLayer.apply(z), dim=0)

        sim = self.similarity_f(z.unsqueeze(1), z.unsqueeze(0)) / self.temperature

        sim_i_j = torch.diag(sim, self.batch_size * self.world_size)
        sim_j_i = torch.diag(sim, -self.batch_size * self.world_size)

        positive_samples = torch.cat((sim_i_j, sim_j_i), dim=0).reshape(N, 1)
        negative_samples = sim[self.mask.to(sim.device)].reshape(N, -1)

        labels = torch.zeros(N, device=positive_samples.device).long()
        logits = torch.cat((positive_samples, negative_samples), dim=1)
        loss = self.criterion(logits, labels)
        loss /= N
        return loss


def main():
    args.distributed = int(os.environ.get('WORLD_SIZE', 1)) > 1
    args.world_size = 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend='nccl', init_method='env://')
        args.world_size = dist.get_world_size()
    is_main = (not args.distributed) or dist.get_rank() == 0

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    dataset_cls = torchvision.datasets.CIFAR10 if args.dataset == 'cifar10' else torchvision.datasets.CIFAR100
    train_dataset = dataset_cls(args.data_path, train=True, download=is_main, transform=TransformsSimCLR(size=32))
    sampler = torch.utils.data.distributed.DistributedSampler(train_dataset) if args.distributed else None
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size, shuffle=(sampler is None),
                                               drop_last=True, num_workers=args.workers, sampler=sampler,
                                               pin_memory=True)

    encoder = ResNet18(num_classes=10)
    n_features = encoder.linear.in_features
    model = SimCLR(encoder, n_features, args.projection_dim).cuda()
    if args.distributed and args.sync_bn:
        model = convert_syncbn_model(model)

    lr = args.lr * args.batch_size * args.world_size / 256
    optimizer = LARS(model.parameters(), lr=lr, weight_decay=args.weight_decay,
                     exclude_from_weight_decay=["batch_normalization", "bias"])

    if args.fp16:
        assert APEX_AVAILABLE, 'install NVIDIA apex (with --cuda_ext) to use --fp16'
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)

    if args.distributed:
        model = ApexDDP(model, delay_allreduce=True)

    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.epochs, eta_min=0, last_epoch=-1)
    criterion = NT_Xent(args.batch_size, args.temperature, args.world_size)

    os.makedirs(args.out, exist_ok=True)
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        loss_epoch = 0.0
        t0 = time.time()
        for step, ((x_i, x_j), _) in enumerate(train_loader):
            x_i = x_i.cuda(non_blocking=True)
            x_j = x_j.cuda(non_blocking=True)

            _, _, z_i, z_j = model(x_i, x_j)
            loss = criterion(z_i, z_j)

            optimizer.zero_grad()
            if args.fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            optimizer.step()

            if args.distributed:
                loss = loss.data.clone()
                dist.all_reduce(loss.div_(args.world_size))
            loss_epoch += loss.item()

            if is_main and step % 50 == 0:
                print('Epoch [%d/%d] step %d/%d loss %.4f' % (epoch, args.epochs, step, len(train_loader),
                                                              loss.item()))
        scheduler.step()

        if is_main:
            print('Epoch %d: avg loss %.4f, lr %.4f, %.0fs' % (epoch, loss_epoch / len(train_loader),
                                                              optimizer.param_groups[0]['lr'], time.time() - t0))
            if (epoch + 1) % 100 == 0 or epoch + 1 == args.epochs:
                net = model.module if hasattr(model, 'module') else model
                torch.save(net.encoder.state_dict(),
                           os.path.join(args.out, '%s_simclr_resnet18_e%d.pth' % (args.dataset, epoch + 1)))


if __name__ == '__main__':
    main()
