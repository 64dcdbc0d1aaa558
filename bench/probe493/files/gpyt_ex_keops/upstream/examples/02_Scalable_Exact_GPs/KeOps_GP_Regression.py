#!/usr/bin/env python
# coding: utf-8

# # Exact GP Regression with KeOps
#
# In this notebook, we provide a GPyTorch implementation of a simple exact GP regression model on a
# mid-size dataset, using KeOps (https://www.kernel-operations.io/) to compute kernel matrix-vector
# products without ever materialising the full n x n kernel matrix.
#
# KeOps generates and compiles CUDA kernels for the symbolic kernel formula the first time it is
# used, so the first iteration can take a minute. Subsequent calls hit the build cache in ~/.cache/keops*.
#
# The KeOps kernels in GPyTorch only use KeOps under the hood when the number of data points exceeds
# `gpytorch.settings.max_cholesky_size`; below that they fall back to the standard implementation.

import math
import os
import time
import urllib.request

import torch
import gpytorch
import tqdm
from matplotlib import pyplot as plt
from scipy.io import loadmat

# Make plots inline
# %matplotlib inline

# Sanity-check the KeOps install (builds a tiny test kernel)
import pykeops
pykeops.test_torch_bindings()

smoke_test = ('CI' in os.environ)

# ## Downloading Data
# We will be using the 3droad UCI dataset which contains a total of 434,874 data points. We will
# split the data in half for training and half for testing.

if not smoke_test and not os.path.isfile('../3droad.mat'):
    print('Downloading \'3droad\' UCI dataset...')
    urllib.request.urlretrieve('https://www.dropbox.com/s/f6ow1i59oqx05pl/3droad.mat?dl=1', '../3droad.mat')

if smoke_test:  # this is for running the notebook in our testing framework
    X, y = torch.randn(1000, 3), torch.randn(1000)
else:
    data = torch.Tensor(loadmat('../3droad.mat')['data'])
    X = data[:, :-1]
    X = X - X.min(0)[0]
    X = 2 * (X / X.max(0)[0]) - 1
    y = data[:, -1]

N = X.size(0)
train_n = int(math.floor(0.5 * N))
train_x = X[:train_n, :].contiguous()
train_y = y[:train_n].contiguous()

test_x = X[train_n:, :].contiguous()
test_y = y[train_n:].contiguous()

train_x, train_y = train_x.cuda(), train_y.cuda()
test_x, test_y = test_x.cuda(), test_y.cuda()

print(f"train: {tuple(train_x.shape)}  test: {tuple(test_x.shape)}")


# ## Using KeOps with a GPyTorch Model
#
# Using KeOps with one of our pre built kernels is as straightforward as swapping the kernel out.
# For example, in the cell below, we copy the simple GP from our basic tutorial notebook, and swap out
# `gpytorch.kernels.MaternKernel` for `gpytorch.kernels.keops.MaternKernel`.

class ExactGPModel(gpytorch.models.ExactGP):
    def __init__(self, train_x, train_y, likelihood):
        super(ExactGPModel, self).__init__(train_x, train_y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.keops.MaternKernel(nu=2.5))

    def forward(self, x):
        mean_x = self.mean_module(x)
        covar_x = self.covar_module(x)
        return gpytorch.distributions.MultivariateNormal(mean_x, covar_x)


# initialize likelihood and model
likelihood = gpytorch.likelihoods.GaussianLikelihood().cuda()
model = ExactGPModel(train_x, train_y, likelihood).cuda()

# Find optimal model hyperparameters
model.train()
likelihood.train()

# Use the adam optimizer
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)  # Includes GaussianLikelihood parameters

# "Loss" for GPs - the marginal log likelihood
mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)

training_iter = 2 if smoke_test else 50
start = time.time()
iterator = tqdm.tqdm(range(training_iter), desc="Training")
for i in iterator:
    # Zero gradients from previous iteration
    optimizer.zero_grad()
    # Output from model
    output = model(train_x)
    # Calc loss and backprop gradients
    loss = -mll(output, train_y)
    iterator.set_postfix(loss=loss.item())
    loss.backward()
    optimizer.step()
torch.cuda.synchronize()
print(f"Training took {time.time() - start:.1f}s")


# ## Making Predictions using KeOps
#
# Predictions with KeOps are as simple as with standard GPyTorch models. Computing the predictive
# variances requires Lanczos, so we use `fast_pred_var` which avoids an n x n solve.

# Get into evaluation (predictive posterior) mode
model.eval()
likelihood.eval()

# Test points are regularly spaced along [0,1]
# Make predictions by feeding model through likelihood
start = time.time()
with torch.no_grad(), gpytorch.settings.fast_pred_var():
    observed_pred = likelihood(model(test_x))
torch.cuda.synchronize()  # KeOps launches asynchronously; wait before reading the clock
print(f"Prediction took {time.time() - start:.1f}s")

print('Test MAE: {}'.format(torch.mean(torch.abs(observed_pred.mean - test_y))))
