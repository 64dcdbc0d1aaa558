"""
HybridSN: Exploring 3-D-2-D CNN Feature Hierarchy for Hyperspectral Image Classification
(Roy, Krishna, Dubey, Chaudhuri, IEEE GRSL 2020) -- PyTorch port of the Keras notebook.

    python HybridSN.py --dataset IP --test_ratio 0.7 --window 25 --gpus 0
    python HybridSN.py --dataset PU --pca 15 --amp
"""
import argparse
import os
import random
import time

import numpy as np
import scipy.io as sio
from sklearn.decomposition import PCA
from sklearn.metrics import (accuracy_score, classification_report,
                             cohen_kappa_score, confusion_matrix)
from sklearn.model_selection import train_test_split

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, Dataset


def parse_args():
    p = argparse.ArgumentParser(description='HybridSN training')
    p.add_argument('--dataset', default='IP', choices=['IP', 'PU', 'SA'])
    p.add_argument('--data_dir', default='./data')
    p.add_argument('--test_ratio', type=float, default=0.7)
    p.add_argument('--window', type=int, default=25)
    p.add_argument('--pca', type=int, default=30, help='number of principal components kept')
    p.add_argument('--epochs', type=int, default=100)
    p.add_argument('--batch', type=int, default=256)
    p.add_argument('--lr', type=float, default=1e-3)
    p.add_argument('--workers', type=int, default=4)
    p.add_argument('--seed', type=int, default=345)
    p.add_argument('--amp', action='store_true', help='mixed precision training')
    p.add_argument('--gpus', default='0', help='comma separated list of GPU ids')
    p.add_argument('--out', default='./checkpoints')
    return p.parse_args()


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------
def load_data(name, root):
    if name == 'IP':
        data = sio.loadmat(os.path.join(root, 'Indian_pines_corrected.mat'))['indian_pines_corrected']
        labels = sio.loadmat(os.path.join(root, 'Indian_pines_gt.mat'))['indian_pines_gt']
    elif name == 'SA':
        data = sio.loadmat(os.path.join(root, 'Salinas_corrected.mat'))['salinas_corrected']
        labels = sio.loadmat(os.path.join(root, 'Salinas_gt.mat'))['salinas_gt']
    elif name == 'PU':
        data = sio.loadmat(os.path.join(root, 'PaviaU.mat'))['paviaU']
        labels = sio.loadmat(os.path.join(root, 'PaviaU_gt.mat'))['paviaU_gt']
    else:
        raise ValueError(name)
    return data, labels


def apply_pca(X, num_components=75):
    newX = np.reshape(X, (-1, X.shape[2]))
    pca = PCA(n_components=num_components, whiten=True)
    newX = pca.fit_transform(newX)
    newX = np.reshape(newX, (X.shape[0], X.shape[1], num_components))
    return newX, pca


def pad_with_zeros(X, margin=2):
    newX = np.zeros((X.shape[0] + 2 * margin, X.shape[1] + 2 * margin, X.shape[2]))
    newX[margin:X.shape[0] + margin, margin:X.shape[1] + margin, :] = X
    return newX


def create_image_cubes(X, y, window_size=5, remove_zero_labels=True):
    margin = int((window_size - 1) / 2)
    zero_padded_X = pad_with_zeros(X, margin=margin)
    # split patches
    patches_data = np.zeros((X.shape[0] * X.shape[1], window_size, window_size, X.shape[2]), dtype=np.float32)
    patches_labels = np.zeros((X.shape[0] * X.shape[1]))
    patch_index = 0
    for r in range(margin, zero_padded_X.shape[0] - margin):
        for c in range(margin, zero_padded_X.shape[1] - margin):
            patch = zero_padded_X[r - margin:r + margin + 1, c - margin:c + margin + 1]
            patches_data[patch_index, :, :, :] = patch
            patches_labels[patch_index] = y[r - margin, c - margin]
            patch_index = patch_index + 1
    if remove_zero_labels:
        patches_data = patches_data[patches_labels > 0, :, :, :]
        patches_labels = patches_labels[patches_labels > 0]
        patches_labels -= 1
    return patches_data, patches_labels


class HSICubes(Dataset):
    """N x 1 x bands x H x W cubes for the 3-D convolutions."""

    def __init__(self, X, y):
        self.x = torch.from_numpy(X.transpose(0, 3, 1, 2)[:, None].astype(np.float32))
        self.y = torch.from_numpy(y.astype(np.int64))

    def __len__(self):
        return self.x.shape[0]

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]


# --------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------
class HybridSN(nn.Module):
    def __init__(self, bands=30, window=25, num_classes=16):
        super().__init__()
        self.conv3d_1 = nn.Sequential(nn.Conv3d(1, 8, kernel_size=(7, 3, 3)), nn.BatchNorm3d(8), nn.ReLU(inplace=True))
        self.conv3d_2 = nn.Sequential(nn.Conv3d(8, 16, kernel_size=(5, 3, 3)), nn.BatchNorm3d(16), nn.ReLU(inplace=True))
        self.conv3d_3 = nn.Sequential(nn.Conv3d(16, 32, kernel_size=(3, 3, 3)), nn.BatchNorm3d(32), nn.ReLU(inplace=True))
        d = bands - 6 - 4 - 2
        s = window - 6
        self.conv2d_4 = nn.Sequential(nn.Conv2d(32 * d, 64, kernel_size=3), nn.BatchNorm2d(64), nn.ReLU(inplace=True))
        self.fc1 = nn.Linear(64 * (s - 2) * (s - 2), 256)
        self.fc2 = nn.Linear(256, 128)
        self.out = nn.Linear(128, num_classes)
        self.dropout = nn.Dropout(p=0.4)

    def forward(self, x):
        x = self.conv3d_1(x)
        x = self.conv3d_2(x)
        x = self.conv3d_3(x)
        b, c, d, h, w = x.shape
        x = x.reshape(b, c * d, h, w)
        x = self.conv2d_4(x)
        x = x.flatten(1)
        x = self.dropout(F.relu(self.fc1(x)))
        x = self.dropout(F.relu(self.fc2(x)))
        return self.out(x)


# --------------------------------------------------------------------------
# train / eval
# --------------------------------------------------------------------------
def train_one_epoch(net, loader, criterion, optimizer, scaler, epoch):
    net.train()
    total_loss, correct, seen = 0.0, 0, 0
    for i, (inputs, labels) in enumerate(loader):
        inputs = inputs.cuda(non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast(enabled=args.amp):
            outputs = net(inputs)
            loss = criterion(outputs, labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        total_loss += loss.item() * inputs.size(0)
        correct += (outputs.argmax(1) == labels).sum().item()
        seen += inputs.size(0)
    print('[Epoch: %d]   [loss avg: %.4f]   [acc: %.4f]' % (epoch + 1, total_loss / seen, correct / seen))
    return total_loss / seen


@torch.no_grad()
def predict(net, loader):
    net.eval()
    y_pred, y_true = [], []
    for x, y in loader:
        x = x.cuda()
        logits = net(x)
        y_pred.append(logits.argmax(1).cpu().numpy())
        y_true.append(y.numpy())
    return np.concatenate(y_pred), np.concatenate(y_true)


def aa_and_each_class_accuracy(cm):
    counter = cm.shape[0]
    list_diag = np.diag(cm)
    list_raw_sum = np.sum(cm, axis=1)
    each_acc = np.nan_to_num(list_diag / list_raw_sum)
    return each_acc, np.mean(each_acc)


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def main():
    seed_everything(args.seed)
    torch.backends.cudnn.benchmark = True
    print('Using GPU: %s' % torch.cuda.get_device_name(0))

    X, y = load_data(args.dataset, args.data_dir)
    print('Hyperspectral data shape: ', X.shape)
    X, pca = apply_pca(X, num_components=args.pca)
    X, y = create_image_cubes(X, y, window_size=args.window)
    print('Data cube X shape: ', X.shape)
    Xtrain, Xtest, ytrain, ytest = train_test_split(X, y, test_size=args.test_ratio,
                                                    random_state=args.seed, stratify=y)
    num_classes = int(y.max()) + 1

    train_loader = DataLoader(HSICubes(Xtrain, ytrain), batch_size=args.batch, shuffle=True,
                              num_workers=args.workers, pin_memory=True, drop_last=False)
    test_loader = DataLoader(HSICubes(Xtest, ytest), batch_size=args.batch, shuffle=False,
                             num_workers=args.workers, pin_memory=True)

    net = HybridSN(bands=args.pca, window=args.window, num_classes=num_classes).cuda()
    n_gpu = torch.cuda.device_count()
    if n_gpu > 1:
        print("Let's use %d GPUs!" % n_gpu)
        net = nn.DataParallel(net)

    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(net.parameters(), lr=args.lr)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    os.makedirs(args.out, exist_ok=True)
    tic = time.time()
    for epoch in range(args.epochs):
        train_one_epoch(net, train_loader, criterion, optimizer, scaler, epoch)
    train_time = time.time() - tic
    print('Finished Training in %.1f s' % train_time)
    state = net.module.state_dict() if isinstance(net, nn.DataParallel) else net.state_dict()
    ckpt = os.path.join(args.out, 'hybridsn_%s.pth' % args.dataset)
    torch.save({'model': state, 'pca_components': args.pca, 'window': args.window,
                'num_classes': num_classes}, ckpt)

    # timed inference on the held-out pixels
    starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    starter.record()
    y_pred, y_true = predict(net, test_loader)
    ender.record()
    torch.cuda.synchronize()
    test_ms = starter.elapsed_time(ender)

    cm = confusion_matrix(y_true, y_pred)
    each_acc, aa = aa_and_each_class_accuracy(cm)
    oa = accuracy_score(y_true, y_pred)
    kappa = cohen_kappa_score(y_true, y_pred)
    print(classification_report(y_true, y_pred, digits=4))
    print('OA %.2f  AA %.2f  Kappa %.2f  (test time %.1f ms)' % (oa * 100, aa * 100, kappa * 100, test_ms))
    with open(os.path.join(args.out, 'report_%s.txt' % args.dataset), 'w') as f:
        f.write('OA {:.4f}\nAA {:.4f}\nKappa {:.4f}\n'.format(oa, aa, kappa))
        f.write('each class: {}\n'.format(np.round(each_acc, 4).tolist()))
        f.write('train time {:.1f}s, test time {:.1f}ms\n'.format(train_time, test_ms))


if __name__ == '__main__':
    args = parse_args()
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus
    main()
