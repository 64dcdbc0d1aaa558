#!/usr/bin/env python3
"""SV-DKL (stochastic variational deep kernel learning) on CIFAR-10 with a DenseNet feature extractor.

The DenseNet produces a 132-d embedding; an additive grid-interpolation variational GP sits on top
of each embedding dimension, and a softmax likelihood mixes the GP outputs into class logits.
"""
import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.datasets as dset
import torchvision.transforms as transforms
from torch.optim.lr_scheduler import MultiStepLR
from torch.utils.data import DataLoader

import gpytorch
from densenet import DenseNet


def get_loaders(data_dir, batch_size, dataset="cifar10", num_workers=4):
    normalize = transforms.Normalize(mean=[0.5071, 0.4867, 0.4408], std=[0.2675, 0.2565, 0.2761])
    aug_trans = [transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip()]
    common_trans = [transforms.ToTensor(), normalize]
    train_compose = transforms.Compose(aug_trans + common_trans)
    test_compose = transforms.Compose(common_trans)

    if dataset == "cifar10":
        d_func = dset.CIFAR10
        num_classes = 10
    elif dataset == "cifar100":
        d_func = dset.CIFAR100
        num_classes = 100
    else:
        raise RuntimeError("dataset must be one of \"cifar100\" or \"cifar10\"")

    train_set = d_func(data_dir, train=True, transform=train_compose, download=True)
    test_set = d_func(data_dir, train=False, transform=test_compose)
    # pinned host buffers speed up the copy to the GPU; harmless on CPU-only machines
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True,
                              num_workers=num_workers, pin_memory=True)
    test_loader = DataLoader(test_set, batch_size=batch_size, shuffle=False,
                             num_workers=num_workers, pin_memory=True)
    return train_loader, test_loader, num_classes


class DenseNetFeatureExtractor(DenseNet):
    def forward(self, x):
        features = self.features(x)
        out = F.relu(features, inplace=True)
        out = F.avg_pool2d(out, kernel_size=self.avgpool_size).view(features.size(0), -1)
        return out


class GaussianProcessLayer(gpytorch.models.ApproximateGP):
    def __init__(self, num_dim, grid_bounds=(-10., 10.), grid_size=64):
        variational_distribution = gpytorch.variational.CholeskyVariationalDistribution(
            num_inducing_points=grid_size, batch_shape=torch.Size([num_dim])
        )

        # Our base variational strategy is a GridInterpolationVariationalStrategy,
        # which places variational inducing points on a Grid
        # We wrap it with a IndependentMultitaskVariationalStrategy so that our output is a vector-valued GP
        variational_strategy = gpytorch.variational.IndependentMultitaskVariationalStrategy(
            gpytorch.variational.GridInterpolationVariationalStrategy(
                self, grid_size=grid_size, grid_bounds=[grid_bounds],
                variational_distribution=variational_distribution,
            ), num_tasks=num_dim,
        )
        super().__init__(variational_strategy)

        self.covar_module = gpytorch.kernels.ScaleKernel(
            gpytorch.kernels.RBFKernel(
                lengthscale_prior=gpytorch.priors.SmoothedBoxPrior(
                    math.exp(-1), math.exp(1), sigma=0.1, transform=torch.exp
                )
            )
        )
        self.mean_module = gpytorch.means.ConstantMean()
        self.grid_bounds = grid_bounds

    def forward(self, x):
        mean = self.mean_module(x)
        covar = self.covar_module(x)
        return gpytorch.distributions.MultivariateNormal(mean, covar)


class DKLModel(gpytorch.Module):
    def __init__(self, feature_extractor, num_dim, grid_bounds=(-10., 10.)):
        super(DKLModel, self).__init__()
        self.feature_extractor = feature_extractor
        self.gp_layer = GaussianProcessLayer(num_dim=num_dim, grid_bounds=grid_bounds)
        self.grid_bounds = grid_bounds
        self.num_dim = num_dim

        # This module will scale the NN features so that they're nice values
        self.scale_to_bounds = gpytorch.utils.grid.ScaleToBounds(self.grid_bounds[0], self.grid_bounds[1])

    def forward(self, x):
        features = self.feature_extractor(x)
        features = self.scale_to_bounds(features)
        # This next line makes it so that we learn a GP for each feature
        features = features.transpose(-1, -2).unsqueeze(-1)
        res = self.gp_layer(features)
        return res


def train(epoch, model, likelihood, mll, optimizer, train_loader):
    model.train()
    likelihood.train()

    start = time.time()
    with gpytorch.settings.num_likelihood_samples(8):
        for batch_idx, (data, target) in enumerate(train_loader):
            data, target = data.cuda(non_blocking=True), target.cuda(non_blocking=True)
            optimizer.zero_grad()
            output = model(data)
            loss = -mll(output, target)
            loss.backward()
            optimizer.step()
            if (batch_idx + 1) % 25 == 0:
                print("Train Epoch: %d [%03d/%03d], Loss: %.6f" % (
                    epoch, batch_idx + 1, len(train_loader), loss.item()))
    print(f"epoch {epoch} took {time.time() - start:.1f}s")


def test(model, likelihood, test_loader):
    model.eval()
    likelihood.eval()

    correct = 0
    with torch.no_grad(), gpytorch.settings.num_likelihood_samples(16):
        for data, target in test_loader:
            data, target = data.cuda(), target.cuda()
            output = likelihood(model(data))  # This gives us 16 samples from the predictive distribution
            pred = output.probs.mean(0).argmax(-1)  # Taking the mean over all of the sample we've drawn
            correct += pred.eq(target.view_as(pred)).cpu().sum()
    acc = 100. * correct / float(len(test_loader.dataset))
    print("Test set: Accuracy: {}/{} ({}%)".format(correct, len(test_loader.dataset), acc))
    return acc


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default="data")
    parser.add_argument("--dataset", default="cifar10")
    parser.add_argument("--n-epochs", type=int, default=300)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--out", default="dkl_cifar_checkpoint.dat")
    args = parser.parse_args()

    torch.backends.cudnn.benchmark = True
    train_loader, test_loader, num_classes = get_loaders(args.data_dir, args.batch_size, args.dataset)

    feature_extractor = DenseNetFeatureExtractor(block_config=(6, 6, 6), num_classes=num_classes)
    num_features = feature_extractor.classifier.in_features
    if torch.cuda.device_count() > 1:
        feature_extractor = nn.DataParallel(feature_extractor)

    model = DKLModel(feature_extractor, num_dim=num_features)
    likelihood = gpytorch.likelihoods.SoftmaxLikelihood(num_features=model.num_dim, num_classes=num_classes)

    # If you run this example without CUDA, I hope you like waiting!
    if torch.cuda.is_available():
        model = model.cuda()
        likelihood = likelihood.cuda()

    optimizer = torch.optim.SGD([
        {"params": model.feature_extractor.parameters(), "weight_decay": 1e-4},
        {"params": model.gp_layer.hyperparameters(), "lr": args.lr * 0.01},
        {"params": model.gp_layer.variational_parameters()},
        {"params": likelihood.parameters()},
    ], lr=args.lr, momentum=0.9, nesterov=True, weight_decay=0)
    scheduler = MultiStepLR(optimizer, milestones=[0.5 * args.n_epochs, 0.75 * args.n_epochs], gamma=0.1)
    mll = gpytorch.mlls.VariationalELBO(likelihood, model.gp_layer, num_data=len(train_loader.dataset))

    for epoch in range(1, args.n_epochs + 1):
        with gpytorch.settings.use_toeplitz(False):
            train(epoch, model, likelihood, mll, optimizer, train_loader)
            test(model, likelihood, test_loader)
        scheduler.step()
        state_dict = model.state_dict()
        likelihood_state_dict = likelihood.state_dict()
        torch.save({"model": state_dict, "likelihood": likelihood_state_dict},
                   os.path.join(".", args.out))


if __name__ == "__main__":
    main()
