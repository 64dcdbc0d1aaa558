"""ProMix-style training: progressive clean-sample selection (class-wise small loss +
matched high confidence) on two peer networks, with mixup on the selected set and
consistency on the rest.

    python Train_promix.py --dataset cifar10 --noise_mode cifarn --noise_type worst \
        --gpuid 0 --amp bf16
"""
import argparse
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

import dataloader_cifarn as dataloader
from resnet import PreActResNet18

parser = argparse.ArgumentParser(description='PyTorch CIFAR-N ProMix Training')
parser.add_argument('--batch_size', default=256, type=int, help='train batchsize')
parser.add_argument('--lr', '--learning_rate', default=0.05, type=float, help='initial learning rate')
parser.add_argument('--noise_mode', default='cifarn')
parser.add_argument('--noise_type', default='worst', help='aggre / rand1 / worst / noisy100')
parser.add_argument('--alpha', default=4, type=float, help='parameter for Beta')
parser.add_argument('--T', default=0.5, type=float, help='sharpening temperature')
parser.add_argument('--tau', default=0.99, type=float, help='high-confidence selection threshold')
parser.add_argument('--rho_start', default=0.2, type=float, help='initial selection ratio')
parser.add_argument('--rho_end', default=0.6, type=float, help='final selection ratio')
parser.add_argument('--num_epochs', default=600, type=int)
parser.add_argument('--warmup_epochs', default=10, type=int)
parser.add_argument('--seed', default=1, type=int)
parser.add_argument('--gpuid', default='0', type=str)
parser.add_argument('--num_class', default=10, type=int)
parser.add_argument('--data_path', default='./data/cifar-10-batches-py', type=str)
parser.add_argument('--noise_path', default='./data/CIFAR-10_human.pt', type=str)
parser.add_argument('--dataset', default='cifar10', type=str)
parser.add_argument('--amp', default='fp16', choices=['none', 'fp16', 'bf16'])
parser.add_argument('--num_workers', default=8, type=int)
args = parser.parse_args()

os.environ['CUDA_VISIBLE_DEVICES'] = args.gpuid
random.seed(args.seed)
np.random.seed(args.seed)
torch.manual_seed(args.seed)
torch.cuda.manual_seed_all(args.seed)

# Ampere+: let convolutions and matmuls use TF32
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.backends.cudnn.benchmark = True


def pick_amp_dtype(name):
    if name == 'none':
        return None
    if name == 'bf16':
        major, _ = torch.cuda.get_device_capability()
        if major < 8:
            print('bf16 autocast needs compute capability >= 8.0, falling back to fp16')
            return torch.float16
        return torch.bfloat16
    return torch.float16


amp_dtype = pick_amp_dtype(args.amp)


def autocast():
    return torch.autocast(device_type='cuda', dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None)


def linear_rampup(current, start, end, length):
    if current < start:
        return 0.0
    return float(np.clip((current - start) / length, 0.0, 1.0)) * end


def selection_ratio(epoch):
    frac = min(1.0, max(0.0, (epoch - args.warmup_epochs) / (0.5 * args.num_epochs)))
    return args.rho_start + (args.rho_end - args.rho_start) * frac


@torch.no_grad()
def select_clean(net, eval_loader, noisy_labels, rho):
    """Class-wise small-loss selection + matched high-confidence selection."""
    net.eval()
    n = len(noisy_labels)
    losses = torch.zeros(n)
    conf = torch.zeros(n)
    preds = torch.zeros(n, dtype=torch.long)
    for inputs, targets, index in eval_loader:
        inputs, targets = inputs.cuda(non_blocking=True), targets.cuda(non_blocking=True)
        with autocast():
            logits = net(inputs)
        logits = logits.float()
        losses[index] = F.cross_entropy(logits, targets, reduction='none').cpu()
        prob = logits.softmax(dim=1)
        c, p = prob.max(dim=1)
        conf[index] = c.cpu()
        preds[index] = p.cpu()

    noisy = torch.as_tensor(noisy_labels)
    selected = torch.zeros(n, dtype=torch.bool)
    for k in range(args.num_class):
        idx = (noisy == k).nonzero(as_tuple=True)[0]
        if len(idx) == 0:
            continue
        num = max(1, int(rho * len(idx)))
        small = idx[losses[idx].argsort()[:num]]
        selected[small] = True
    matched = (preds == noisy) & (conf > args.tau)
    selected |= matched
    return selected.numpy()


def train_epoch(epoch, net, peer, optimizer, scaler, labeled_loader, unlabeled_loader):
    net.train()
    peer.eval()
    unlabeled_iter = iter(unlabeled_loader)
    lambda_u = linear_rampup(epoch, args.warmup_epochs, 1.0, 20)
    t0 = time.time()
    for batch_idx, (x1, x2, y) in enumerate(labeled_loader):
        try:
            u1, u2 = next(unlabeled_iter)
        except StopIteration:
            unlabeled_iter = iter(unlabeled_loader)
            u1, u2 = next(unlabeled_iter)

        bs = x1.size(0)
        y_onehot = torch.zeros(bs, args.num_class).scatter_(1, y.view(-1, 1), 1)
        x1, x2, y_onehot = x1.cuda(), x2.cuda(), y_onehot.cuda()
        u1, u2 = u1.cuda(), u2.cuda()

        with torch.no_grad(), autocast():
            pu = (net(u1).float().softmax(1) + net(u2).float().softmax(1)
                  + peer(u1).float().softmax(1) + peer(u2).float().softmax(1)) / 4
            ptu = pu ** (1 / args.T)
            targets_u = (ptu / ptu.sum(dim=1, keepdim=True)).detach()

        l = np.random.beta(args.alpha, args.alpha)
        l = max(l, 1 - l)
        all_inputs = torch.cat([x1, x2], dim=0)
        all_targets = torch.cat([y_onehot, y_onehot], dim=0)
        idx = torch.randperm(all_inputs.size(0), device=all_inputs.device)
        mixed_input = l * all_inputs + (1 - l) * all_inputs[idx]
        mixed_target = l * all_targets + (1 - l) * all_targets[idx]

        with autocast():
            logits_x = net(mixed_input)
            logits_u = net(torch.cat([u1, u2], dim=0))
        Lx = -torch.mean(torch.sum(F.log_softmax(logits_x.float(), dim=1) * mixed_target, dim=1))
        Lu = torch.mean((logits_u.float().softmax(1) - torch.cat([targets_u, targets_u], dim=0)) ** 2)

        prior = torch.ones(args.num_class, device=logits_x.device) / args.num_class
        pred_mean = logits_x.float().softmax(1).mean(0)
        penalty = torch.sum(prior * torch.log(prior / pred_mean))

        loss = Lx + lambda_u * Lu + penalty
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        if batch_idx % 50 == 0:
            sys.stdout.write('\r%s-%s | Epoch [%3d/%3d] Iter[%3d/%3d] Lx %.3f Lu %.3f'
                             % (args.dataset, args.noise_type, epoch, args.num_epochs, batch_idx + 1,
                                len(labeled_loader), Lx.item(), Lu.item()))
            sys.stdout.flush()
    torch.cuda.synchronize()
    return time.time() - t0


def warmup(epoch, net, optimizer, scaler, loader):
    net.train()
    for batch_idx, (inputs, labels, _) in enumerate(loader):
        inputs, labels = inputs.cuda(), labels.cuda()
        with autocast():
            outputs = net(inputs)
            loss = F.cross_entropy(outputs, labels)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


@torch.no_grad()
def test(epoch, net1, net2, test_loader):
    net1.eval()
    net2.eval()
    correct = 0
    total = 0
    for inputs, targets in test_loader:
        inputs = inputs.cuda()
        with autocast():
            outputs = net1(inputs).float() + net2(inputs).float()
        predicted = outputs.argmax(1).cpu()
        total += targets.size(0)
        correct += predicted.eq(targets).sum().item()
    acc = 100. * correct / total
    print('\n| Test Epoch #%d\t Accuracy: %.2f%%' % (epoch, acc))
    return acc


def create_model():
    model = PreActResNet18(num_classes=args.num_class)
    model = model.cuda()
    return model


def main():
    loader = dataloader.cifarn_dataloader(args.dataset, noise_type=args.noise_type, noise_path=args.noise_path,
                                          batch_size=args.batch_size, num_workers=args.num_workers,
                                          root_dir=args.data_path)
    noisy_labels = loader.noisy_labels

    print('| Building net')
    net1 = create_model()
    net2 = create_model()
    optimizer1 = optim.SGD(net1.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    optimizer2 = optim.SGD(net2.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    sched1 = optim.lr_scheduler.CosineAnnealingLR(optimizer1, args.num_epochs, 2e-4)
    sched2 = optim.lr_scheduler.CosineAnnealingLR(optimizer2, args.num_epochs, 2e-4)
    scaler1 = torch.cuda.amp.GradScaler(enabled=(amp_dtype == torch.float16))
    scaler2 = torch.cuda.amp.GradScaler(enabled=(amp_dtype == torch.float16))

    os.makedirs('./checkpoint', exist_ok=True)
    log = open('./checkpoint/%s_%s_promix.txt' % (args.dataset, args.noise_type), 'w')
    test_loader = loader.run('test')
    eval_loader = loader.run('eval_train')
    best = 0.0
    for epoch in range(args.num_epochs):
        torch.cuda.reset_peak_memory_stats()
        if epoch < args.warmup_epochs:
            warm_loader = loader.run('warmup')
            warmup(epoch, net1, optimizer1, scaler1, warm_loader)
            warmup(epoch, net2, optimizer2, scaler2, warm_loader)
        else:
            rho = selection_ratio(epoch)
            sel1 = select_clean(net1, eval_loader, noisy_labels, rho)
            sel2 = select_clean(net2, eval_loader, noisy_labels, rho)
            lab, unlab = loader.run('train', sel2)
            dt1 = train_epoch(epoch, net1, net2, optimizer1, scaler1, lab, unlab)
            lab, unlab = loader.run('train', sel1)
            dt2 = train_epoch(epoch, net2, net1, optimizer2, scaler2, lab, unlab)
            log.write('epoch %d rho %.3f selected %d/%d time %.0fs/%.0fs peak %.1fGB\n'
                      % (epoch, rho, sel1.sum(), sel2.sum(), dt1, dt2, torch.cuda.max_memory_allocated() / 2 ** 30))
        sched1.step()
        sched2.step()
        acc = test(epoch, net1, net2, test_loader)
        log.write('epoch %d acc %.2f\n' % (epoch, acc))
        log.flush()
        if acc > best:
            best = acc
            torch.save({'net1': net1.state_dict(), 'net2': net2.state_dict(), 'epoch': epoch, 'acc': acc},
                       './checkpoint/%s_%s_promix_best.pth' % (args.dataset, args.noise_type))
    print('best test acc %.2f' % best)


if __name__ == '__main__':
    main()
