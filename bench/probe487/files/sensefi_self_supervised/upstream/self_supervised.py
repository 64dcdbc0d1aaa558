import argparse
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from dataset import CSI_Dataset
from self_supervised_model import CSI_AutoFi_Encoder, Classifier, EMA


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def augment(x, sigma=0.05, p_mask=0.1):
    """Two random views of the same CSI amplitude window."""
    noise = torch.randn_like(x) * sigma
    mask = (torch.rand(x.shape[0], 1, x.shape[2], 1, device=x.device) > p_mask).float()
    return x + noise, x * mask


def parallel_loss(z1, z2, temperature=0.5):
    """Symmetric InfoNCE between the two views of a batch."""
    z1 = F.normalize(z1, dim=1)
    z2 = F.normalize(z2, dim=1)
    logits = z1 @ z2.t() / temperature
    targets = torch.arange(z1.size(0), device=z1.device)
    return 0.5 * (F.cross_entropy(logits, targets) + F.cross_entropy(logits.t(), targets))


def pretrain(encoder, ema, loader, epochs, lr, log_every=20):
    opt = torch.optim.Adam(encoder.parameters(), lr=lr)
    encoder.train()
    for epoch in range(epochs):
        t0 = time.time()
        total = 0.0
        for i, (x, _) in enumerate(loader):
            x = x.cuda(non_blocking=True)
            v1, v2 = augment(x)
            z1 = encoder(v1)
            with torch.no_grad():
                z2 = ema.model(v2)
            loss = parallel_loss(z1, z2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            ema.update(encoder)
            total += loss.item()
            if i % log_every == 0:
                print('[pretrain] epoch %d iter %d loss %.4f' % (epoch, i, loss.item()))
        torch.cuda.synchronize()
        print('[pretrain] epoch %d mean loss %.4f (%.1fs)' % (epoch, total / max(1, len(loader)), time.time() - t0))


def finetune(encoder, clf, loader, epochs, lr):
    params = list(clf.parameters())
    opt = torch.optim.Adam(params, lr=lr)
    encoder.eval()
    clf.train()
    for epoch in range(epochs):
        correct, seen = 0, 0
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            with torch.no_grad():
                feat = encoder(x)
            out = clf(feat)
            loss = F.cross_entropy(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            correct += (out.argmax(1) == y).sum().item()
            seen += y.numel()
        print('[finetune] epoch %d acc %.4f' % (epoch, correct / max(1, seen)))


@torch.no_grad()
def evaluate(encoder, clf, loader):
    encoder.eval()
    clf.eval()
    correct, seen = 0, 0
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        out = clf(encoder(x))
        correct += (out.argmax(1) == y).sum().item()
        seen += y.numel()
    return correct / max(1, seen)


def main():
    parser = argparse.ArgumentParser('Self-supervised learning on NTU-Fi')
    parser.add_argument('--root', default='./Data/')
    parser.add_argument('--dataset', default='NTU-Fi_HAR', choices=['NTU-Fi_HAR', 'NTU-Fi-HumanID'])
    parser.add_argument('--gpu', default=0, type=int, help='GPU id to use')
    parser.add_argument('--pretrain_epochs', default=100, type=int)
    parser.add_argument('--finetune_epochs', default=50, type=int)
    parser.add_argument('--batch_size', default=64, type=int)
    parser.add_argument('--workers', default=4, type=int)
    parser.add_argument('--lr', default=1e-3, type=float)
    parser.add_argument('--seed', default=0, type=int)
    parser.add_argument('--save', default='./checkpoints/autofi.pth')
    args = parser.parse_args()

    set_seed(args.seed)
    torch.cuda.set_device(args.gpu)
    print('Use GPU: {} ({})'.format(args.gpu, torch.cuda.get_device_name(args.gpu)))

    num_classes = 6 if args.dataset == 'NTU-Fi_HAR' else 14
    unlabeled = CSI_Dataset(os.path.join(args.root, args.dataset, 'train_amp/'))
    labeled = CSI_Dataset(os.path.join(args.root, args.dataset, 'train_amp/'), few_shot=True, k=5)
    test_set = CSI_Dataset(os.path.join(args.root, args.dataset, 'test_amp/'))

    pre_loader = DataLoader(unlabeled, batch_size=args.batch_size, shuffle=True, drop_last=True,
                            num_workers=args.workers, pin_memory=True)
    ft_loader = DataLoader(labeled, batch_size=16, shuffle=True, num_workers=args.workers, pin_memory=True)
    test_loader = DataLoader(test_set, batch_size=128, shuffle=False, num_workers=args.workers)

    encoder = CSI_AutoFi_Encoder().cuda()
    ema = EMA(encoder, decay=0.99)
    clf = Classifier(encoder.out_dim, num_classes).cuda()

    pretrain(encoder, ema, pre_loader, args.pretrain_epochs, args.lr)
    finetune(encoder, clf, ft_loader, args.finetune_epochs, args.lr)
    acc = evaluate(encoder, clf, test_loader)
    print('test accuracy: %.4f' % acc)
    print('peak GPU memory: %.1f MB' % (torch.cuda.max_memory_allocated() / 2 ** 20))

    os.makedirs(os.path.dirname(args.save), exist_ok=True)
    torch.save({'encoder': encoder.state_dict(), 'classifier': clf.state_dict(), 'acc': acc}, args.save)


if __name__ == '__main__':
    main()
