"""Wrap a PyTorch CNN in skorch so cleanlab's CleanLearning can treat it as any sklearn classifier.

CleanLearning runs its own cross-validation internally (cv_n_folds), fits the model on
every fold, estimates the noise matrix, prunes the detected label issues and re-fits on
the cleaned data.

    python skorch_cleanlearning.py --dataset fashion_mnist --noise 0.3 --gpu
"""
import argparse
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import accuracy_score
from skorch import NeuralNetClassifier
from skorch.callbacks import EarlyStopping, LRScheduler
from torchvision import datasets

from cleanlab.classification import CleanLearning
from cleanlab.benchmarking.noise_generation import generate_noise_matrix_from_trace, generate_noisy_labels

warnings.filterwarnings('ignore', category=UserWarning)


class SmallCNN(nn.Module):
    def __init__(self, num_classes=10, dropout=0.25):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(64)
        self.fc1 = nn.Linear(64 * 7 * 7, 128)
        self.fc2 = nn.Linear(128, num_classes)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = x.view(-1, 1, 28, 28)
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = self.dropout(x.flatten(1))
        x = self.dropout(F.relu(self.fc1(x)))
        return self.fc2(x)


def load(dataset, root='./data'):
    cls = {'mnist': datasets.MNIST, 'fashion_mnist': datasets.FashionMNIST}[dataset]
    tr = cls(root, train=True, download=True)
    te = cls(root, train=False, download=True)
    X_tr = (tr.data.numpy().astype(np.float32) / 255.0 - 0.5) / 0.5
    X_te = (te.data.numpy().astype(np.float32) / 255.0 - 0.5) / 0.5
    return X_tr.reshape(len(X_tr), -1), tr.targets.numpy(), X_te.reshape(len(X_te), -1), te.targets.numpy()


def make_net(use_gpu, max_epochs=15, lr=0.05, batch_size=256):
    return NeuralNetClassifier(
        SmallCNN,
        criterion=nn.CrossEntropyLoss,
        optimizer=torch.optim.SGD,
        optimizer__momentum=0.9,
        optimizer__weight_decay=5e-4,
        lr=lr,
        batch_size=batch_size,
        max_epochs=max_epochs,
        train_split=None,
        iterator_train__shuffle=True,
        iterator_train__num_workers=4,
        callbacks=[LRScheduler(policy=torch.optim.lr_scheduler.CosineAnnealingLR, T_max=max_epochs)],
        device='cuda' if use_gpu else 'cpu',
        verbose=0,
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--dataset', default='fashion_mnist', choices=['mnist', 'fashion_mnist'])
    ap.add_argument('--noise', type=float, default=0.3, help='fraction of flipped labels')
    ap.add_argument('--folds', type=int, default=5)
    ap.add_argument('--epochs', type=int, default=15)
    ap.add_argument('--gpu', action='store_true')
    ap.add_argument('--seed', type=int, default=0)
    args = ap.parse_args()

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    use_gpu = args.gpu and torch.cuda.is_available()
    if args.gpu and not use_gpu:
        print('--gpu given but CUDA is not available; running on CPU')

    X_tr, y_tr, X_te, y_te = load(args.dataset)
    K = 10
    noise_matrix = generate_noise_matrix_from_trace(K, trace=K * (1 - args.noise), py=np.bincount(y_tr) / len(y_tr),
                                                    valid_noise_matrix=True, seed=args.seed)
    y_noisy = generate_noisy_labels(y_tr, noise_matrix)
    print('actual noise rate: %.3f' % (y_noisy != y_tr).mean())

    # baseline: train on the noisy labels directly
    baseline = make_net(use_gpu, max_epochs=args.epochs)
    baseline.fit(X_tr, y_noisy)
    print('baseline test acc: %.4f' % accuracy_score(y_te, baseline.predict(X_te)))

    # CleanLearning: cross-validated pred_probs -> find issues -> prune -> refit
    cl = CleanLearning(make_net(use_gpu, max_epochs=args.epochs), cv_n_folds=args.folds, seed=args.seed)
    cl.fit(X_tr, y_noisy)
    issues = cl.get_label_issues()
    flagged = issues['is_label_issue'].values
    truly = y_noisy != y_tr
    print('flagged %d / %d, precision %.3f, recall %.3f'
          % (flagged.sum(), len(flagged), truly[flagged].mean(), flagged[truly].mean()))
    print('CleanLearning test acc: %.4f' % accuracy_score(y_te, cl.predict(X_te)))


if __name__ == '__main__':
    main()
