"""
Deep Bayesian Active Learning with Image Data (Gal, Islam & Ghahramani, 2017),
reproduced with modAL + skorch.

Acquisition functions (max entropy, BALD) are computed from T stochastic forward
passes with dropout switched on (MC dropout). The pool-based query loop follows the
usual ALiPy / modAL pattern: query -> oracle label -> teach -> remove from pool.
"""
import argparse

import numpy as np
import torch
from scipy.stats import mode
from skorch import NeuralNetClassifier
from torch import nn
from torch.utils.data import DataLoader
from torchvision.datasets import MNIST
from torchvision.transforms import ToTensor

from modAL.models import ActiveLearner

device = "cuda" if torch.cuda.is_available() else "cpu"


class CNN(nn.Module):
    def __init__(self,):
        super(CNN, self).__init__()
        self.convs = nn.Sequential(
            nn.Conv2d(1, 32, 4),
            nn.ReLU(),
            nn.Conv2d(32, 32, 4),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Dropout(0.25),
        )
        self.fcs = nn.Sequential(
            nn.Linear(11 * 11 * 32, 128),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(128, 10),
        )

    def forward(self, x):
        out = x
        out = self.convs(out)
        out = out.view(-1, 11 * 11 * 32)
        out = self.fcs(out)
        return out


def mc_predictions(learner, X, T=100):
    """T stochastic forward passes with dropout enabled -> [T, N, C] probabilities."""
    with torch.no_grad():
        X_t = torch.as_tensor(X, device=device)
        outputs = np.stack(
            [
                torch.softmax(learner.estimator.forward(X_t, training=True), dim=-1).cpu().numpy()
                for _ in range(T)
            ]
        )
    return outputs


def max_entropy(learner, X, n_instances=1, T=100):
    random_subset = np.random.choice(range(len(X)), size=2000, replace=False)
    outputs = mc_predictions(learner, X[random_subset], T)
    pc = outputs.mean(axis=0)
    acquisition = (-pc * np.log(pc + 1e-10)).sum(axis=-1)
    idx = (-acquisition).argsort()[:n_instances]
    query_idx = random_subset[idx]
    return query_idx, X[query_idx]


def bald(learner, X, n_instances=1, T=100):
    random_subset = np.random.choice(range(len(X)), size=2000, replace=False)
    outputs = mc_predictions(learner, X[random_subset], T)
    pc = outputs.mean(axis=0)
    H = (-pc * np.log(pc + 1e-10)).sum(axis=-1)
    E_H = -np.mean(np.sum(outputs * np.log(outputs + 1e-10), axis=-1), axis=0)  # [batch size]
    acquisition = H - E_H
    idx = (-acquisition).argsort()[:n_instances]
    query_idx = random_subset[idx]
    return query_idx, X[query_idx]


def var_ratios(learner, X, n_instances=1, T=100):
    random_subset = np.random.choice(range(len(X)), size=2000, replace=False)
    outputs = mc_predictions(learner, X[random_subset], T)
    preds = np.argmax(outputs, axis=-1)
    _, count = mode(preds, axis=0, keepdims=False)
    acquisition = (1 - count / preds.shape[0]).reshape((-1,))
    idx = (-acquisition).argsort()[:n_instances]
    query_idx = random_subset[idx]
    return query_idx, X[query_idx]


def uniform(learner, X, n_instances=1):
    query_idx = np.random.choice(range(len(X)), size=n_instances, replace=False)
    return query_idx, X[query_idx]


STRATEGIES = {"entropy": max_entropy, "bald": bald, "var_ratios": var_ratios, "uniform": uniform}


def load_mnist():
    mnist_train = MNIST(".", train=True, download=True, transform=ToTensor())
    mnist_test = MNIST(".", train=False, download=True, transform=ToTensor())
    traindataloader = DataLoader(mnist_train, shuffle=True, batch_size=60000)
    testdataloader = DataLoader(mnist_test, shuffle=True, batch_size=10000)
    X_train, y_train = next(iter(traindataloader))
    X_test, y_test = next(iter(testdataloader))
    X_test, y_test = X_test.numpy(), y_test.numpy()
    X_train, y_train = X_train.numpy(), y_train.numpy()
    X_train = X_train.reshape(60000, 1, 28, 28)
    X_test = X_test.reshape(10000, 1, 28, 28)
    return X_train, y_train, X_test, y_test


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", default="bald", choices=sorted(STRATEGIES))
    parser.add_argument("--n-queries", type=int, default=100)
    parser.add_argument("--query-size", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)

    X_train, y_train, X_test, y_test = load_mnist()

    initial_idx = np.array([], dtype=int)
    for i in range(10):
        idx = np.random.choice(np.where(y_train == i)[0], size=2, replace=False)
        initial_idx = np.concatenate((initial_idx, idx))

    X_initial = X_train[initial_idx]
    y_initial = y_train[initial_idx]

    X_pool = np.delete(X_train, initial_idx, axis=0)
    y_pool = np.delete(y_train, initial_idx, axis=0)

    cnn = NeuralNetClassifier(
        CNN,
        max_epochs=50,
        batch_size=128,
        lr=0.001,
        optimizer=torch.optim.Adam,
        criterion=torch.nn.CrossEntropyLoss,
        train_split=None,
        verbose=0,
        device=device,
    )

    learner = ActiveLearner(
        estimator=cnn,
        X_training=X_initial,
        y_training=y_initial,
        query_strategy=STRATEGIES[args.strategy],
    )

    perf_hist = [learner.score(X_test, y_test)]
    for index in range(args.n_queries):
        query_idx, query_instance = learner.query(X_pool, n_instances=args.query_size)
        learner.teach(X_pool[query_idx], y_pool[query_idx])
        X_pool = np.delete(X_pool, query_idx, axis=0)
        y_pool = np.delete(y_pool, query_idx, axis=0)
        model_accuracy = learner.score(X_test, y_test)
        print("Accuracy after query {n}: {acc:0.4f}".format(n=index + 1, acc=model_accuracy))
        perf_hist.append(model_accuracy)

    np.save("perf_hist_{}.npy".format(args.strategy), np.array(perf_hist))


if __name__ == "__main__":
    main()
