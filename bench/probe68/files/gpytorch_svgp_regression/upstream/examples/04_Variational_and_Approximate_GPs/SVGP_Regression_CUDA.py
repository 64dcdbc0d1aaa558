#!/usr/bin/env python3
"""Stochastic Variational GP Regression (SVGP) on the UCI elevators dataset, with CUDA.

Script version of the SVGP tutorial: a variational GP with 500 learned inducing points,
trained with minibatches.  Optionally uses natural gradient descent (NGD) for the variational
parameters and Adam for the hyperparameters.
"""
import argparse
import math
import os
import urllib.request

import torch
import tqdm
from scipy.io import loadmat
from torch.utils.data import DataLoader, TensorDataset

import gpytorch
from gpytorch.models import ApproximateGP
from gpytorch.variational import (
    CholeskyVariationalDistribution,
    MeanFieldVariationalDistribution,
    NaturalVariationalDistribution,
    VariationalStrategy,
)

# this is for running the notebook in our testing framework
smoke_test = ("CI" in os.environ)


def get_data(data_dir="."):
    path = os.path.join(data_dir, "elevators.mat")
    if not smoke_test and not os.path.isfile(path):
        print("Downloading 'elevators' UCI dataset...")
        urllib.request.urlretrieve(
            "https://drive.google.com/uc?export=download&id=1jhWL3YUHvXIaftia4qeAyDwVxo6j1alk", path)

    if smoke_test:  # this is for running the notebook in our testing framework
        X, y = torch.randn(1000, 3), torch.randn(1000)
    else:
        data = torch.Tensor(loadmat(path)["data"])
        X = data[:, :-1]
        X = X - X.min(0)[0]
        X = 2 * (X / X.max(0)[0]) - 1
        y = data[:, -1]

    train_n = int(math.floor(0.8 * len(X)))
    train_x = X[:train_n, :].contiguous()
    train_y = y[:train_n].contiguous()
    test_x = X[train_n:, :].contiguous()
    test_y = y[train_n:].contiguous()
    return train_x, train_y, test_x, test_y


class GPModel(ApproximateGP):
    def __init__(self, inducing_points, variational="cholesky"):
        if variational == "natural":
            variational_distribution = NaturalVariationalDistribution(inducing_points.size(0))
        elif variational == "meanfield":
            variational_distribution = MeanFieldVariationalDistribution(inducing_points.size(0))
        else:
            variational_distribution = CholeskyVariationalDistribution(inducing_points.size(0))
        variational_strategy = VariationalStrategy(
            self, inducing_points, variational_distribution, learn_inducing_locations=True
        )
        super(GPModel, self).__init__(variational_strategy)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(
            gpytorch.kernels.MaternKernel(nu=2.5, ard_num_dims=inducing_points.size(-1))
        )

    def forward(self, x):
        mean_x = self.mean_module(x)
        covar_x = self.covar_module(x)
        return gpytorch.distributions.MultivariateNormal(mean_x, covar_x)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--num-epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--num-inducing", type=int, default=500)
    p.add_argument("--variational", choices=["cholesky", "meanfield", "natural"], default="cholesky")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--ngd-lr", type=float, default=0.1)
    return p.parse_args()


def main():
    args = parse_args()
    num_epochs = 1 if smoke_test else args.num_epochs

    train_x, train_y, test_x, test_y = get_data()
    use_cuda = torch.cuda.is_available()
    if use_cuda:
        train_x, train_y, test_x, test_y = train_x.cuda(), train_y.cuda(), test_x.cuda(), test_y.cuda()

    train_dataset = TensorDataset(train_x, train_y)
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True)
    test_dataset = TensorDataset(test_x, test_y)
    test_loader = DataLoader(test_dataset, batch_size=args.batch_size, shuffle=False)

    # inducing points are initialised from the (already moved) training inputs, so they end up
    # on the same device as the data without an explicit transfer
    inducing_points = train_x[: args.num_inducing, :]
    model = GPModel(inducing_points=inducing_points, variational=args.variational)
    likelihood = gpytorch.likelihoods.GaussianLikelihood()

    if use_cuda:
        model = model.cuda()
        likelihood = likelihood.cuda()

    model.train()
    likelihood.train()

    if args.variational == "natural":
        variational_ngd_optimizer = gpytorch.optim.NGD(
            model.variational_parameters(), num_data=train_y.size(0), lr=args.ngd_lr)
        hyperparameter_optimizer = torch.optim.Adam([
            {"params": model.hyperparameters()},
            {"params": likelihood.parameters()},
        ], lr=args.lr)
        optimizers = [variational_ngd_optimizer, hyperparameter_optimizer]
    else:
        optimizers = [torch.optim.Adam([
            {"params": model.parameters()},
            {"params": likelihood.parameters()},
        ], lr=args.lr)]

    # Our loss object. We're using the VariationalELBO
    mll = gpytorch.mlls.VariationalELBO(likelihood, model, num_data=train_y.size(0))

    epochs_iter = tqdm.tqdm(range(num_epochs), desc="Epoch")
    for i in epochs_iter:
        # Within each iteration, we will go over each minibatch of data
        minibatch_iter = tqdm.tqdm(train_loader, desc="Minibatch", leave=False)
        for x_batch, y_batch in minibatch_iter:
            for opt in optimizers:
                opt.zero_grad()
            output = model(x_batch)
            loss = -mll(output, y_batch)
            minibatch_iter.set_postfix(loss=loss.item())
            loss.backward()
            for opt in optimizers:
                opt.step()

    model.eval()
    likelihood.eval()
    means = torch.tensor([0.])
    variances = torch.tensor([0.])
    with torch.no_grad():
        for x_batch, y_batch in test_loader:
            preds = likelihood(model(x_batch))
            means = torch.cat([means, preds.mean.cpu()])
            variances = torch.cat([variances, preds.variance.cpu()])
    means = means[1:]
    variances = variances[1:]

    mae = torch.mean(torch.abs(means - test_y.cpu()))
    nll = 0.5 * torch.log(2 * math.pi * variances) + 0.5 * (test_y.cpu() - means) ** 2 / variances
    print("Test MAE: {}".format(mae))
    print("Test NLL: {}".format(nll.mean()))


if __name__ == "__main__":
    main()
