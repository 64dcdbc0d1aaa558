"""MNIST with skorch: a CNN wrapped as a scikit-learn estimator, tuned with GridSearchCV.

Shows the three ways the examples in this folder use a GPU:

1. plain ``NeuralNetClassifier(..., device='cuda')``
2. a mixed-precision variant through ``AccelerateMixin`` (Hugging Face accelerate)
3. reloading the tuned net for CPU inference

    python mnist_gridsearch.py --max-epochs 10 --grid
"""
import argparse

import numpy as np
import torch
from sklearn.datasets import fetch_openml
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.metrics import accuracy_score
from torch import nn
import torch.nn.functional as F

from skorch import NeuralNetClassifier
from skorch.callbacks import Checkpoint, EarlyStopping, EpochScoring, LRScheduler
from skorch.helper import predefined_split
from skorch.dataset import Dataset
from skorch.hf import AccelerateMixin
from accelerate import Accelerator


class Cnn(nn.Module):
    def __init__(self, dropout=0.5):
        super(Cnn, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, kernel_size=3)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=3)
        self.conv2_drop = nn.Dropout2d(p=dropout)
        self.fc1 = nn.Linear(1600, 100) # 1600 = number channels * width * height
        self.fc2 = nn.Linear(100, 10)
        self.fc1_drop = nn.Dropout(p=dropout)

    def forward(self, x):
        x = torch.relu(F.max_pool2d(self.conv1(x), 2))
        x = torch.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))

        # flatten over channel, height and width = 1600
        x = x.view(-1, x.size(1) * x.size(2) * x.size(3))

        x = torch.relu(self.fc1_drop(self.fc1(x)))
        x = torch.softmax(self.fc2(x), dim=-1)
        return x


class AcceleratedNet(AccelerateMixin, NeuralNetClassifier):
    """NeuralNetClassifier whose training step goes through an accelerate.Accelerator."""


def load_mnist():
    mnist = fetch_openml('mnist_784', as_frame=False, cache=False)
    X = mnist.data.astype('float32')
    y = mnist.target.astype('int64')
    X /= 255.0
    XCnn = X.reshape(-1, 1, 28, 28)
    return train_test_split(XCnn, y, test_size=0.25, random_state=42)


def make_net(max_epochs, valid_ds=None, **kwargs):
    callbacks = [
        EpochScoring('accuracy', lower_is_better=False, name='valid_acc', on_train=False),
        LRScheduler(policy='StepLR', step_size=4, gamma=0.5),
        EarlyStopping(patience=3),
    ]
    if valid_ds is not None:
        callbacks.append(Checkpoint(dirname='exp_cnn', monitor='valid_acc_best'))
    return NeuralNetClassifier(
        Cnn,
        max_epochs=max_epochs,
        lr=0.002,
        optimizer=torch.optim.Adam,
        device='cuda',
        iterator_train__shuffle=True,
        iterator_train__num_workers=2,
        iterator_train__pin_memory=True,
        train_split=predefined_split(valid_ds) if valid_ds is not None else None,
        callbacks=callbacks,
        **kwargs,
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--max-epochs', type=int, default=10)
    parser.add_argument('--grid', action='store_true')
    parser.add_argument('--amp', action='store_true')
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.cuda.manual_seed(0)

    X_train, X_test, y_train, y_test = load_mnist()
    valid_ds = Dataset(X_test[:5000], y_test[:5000])

    if args.grid:
        net = make_net(args.max_epochs)
        params = {
            'lr': [0.001, 0.002, 0.005],
            'module__dropout': [0.3, 0.5],
            'batch_size': [64, 128],
        }
        gs = GridSearchCV(net, params, refit=False, cv=3, scoring='accuracy', verbose=2, n_jobs=1)
        gs.fit(X_train, y_train)
        print("best score: {:.3f}, best params: {}".format(gs.best_score_, gs.best_params_))
        best = gs.best_params_
    else:
        best = {'lr': 0.002, 'module__dropout': 0.5, 'batch_size': 128}

    if args.amp:
        accelerator = Accelerator(mixed_precision='fp16')
        net = AcceleratedNet(
            Cnn,
            accelerator=accelerator,
            max_epochs=args.max_epochs,
            lr=best['lr'],
            batch_size=best['batch_size'],
            module__dropout=best['module__dropout'],
            optimizer=torch.optim.Adam,
            device=None,
            train_split=predefined_split(valid_ds),
        )
    else:
        net = make_net(args.max_epochs, valid_ds=valid_ds, batch_size=best['batch_size'],
                       module__dropout=best['module__dropout'])
        net.set_params(lr=best['lr'])
    net.fit(X_train, y_train)

    y_pred = net.predict(X_test)
    print("test accuracy: {:.4f}".format(accuracy_score(y_test, y_pred)))
    net.save_params(f_params='mnist_cnn.pkl', f_optimizer='mnist_cnn_opt.pkl')
    if torch.cuda.is_available():
        print("peak GPU memory: {:.1f} MiB".format(torch.cuda.max_memory_allocated() / 2 ** 20))

    # Reload on the CPU for serving: skorch maps the CUDA tensors in the pickles to `device`.
    cpu_net = NeuralNetClassifier(Cnn, device='cpu', module__dropout=best['module__dropout']).initialize()
    cpu_net.load_params(f_params='mnist_cnn.pkl')
    agree = np.mean(cpu_net.predict(X_test[:1000]) == y_pred[:1000])
    print("cpu/gpu prediction agreement: {:.3f}".format(agree))


if __name__ == '__main__':
    main()
