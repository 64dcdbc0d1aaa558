#!/usr/bin/env python3
"""Exact GP regression with multiple GPUs and kernel partitioning.

Converted from the notebook of the same name.  The training set (KEGG undirected, ~40k points)
is too large to fit a single dense kernel matrix on one card, so the kernel is distributed with
``MultiDeviceKernel`` and each device computes its slice in chunks (``checkpoint_kernel``).
We first search for the smallest partition size that fits in memory, then train with L-BFGS.

Usage:
    python Simple_MultiGPU_GP_Regression.py --dataset kegg --preconditioner-size 100
"""
import argparse
import math
import os
import time
import urllib.request

import numpy as np
import torch
from scipy.io import loadmat

import gpytorch
from LBFGS import FullBatchLBFGS

DATASETS = {
    "kegg": "https://drive.google.com/uc?export=download&id=1MnQxzBm7tJ1Ixk1dR8nAzFCVPUpOHiB8",
    "3droad": "https://drive.google.com/uc?export=download&id=1fzixwn5VwHOUL8GH4cRc5gYv4t4M8BTY",
    "protein": "https://drive.google.com/uc?export=download&id=1AAkQ4Z7hLJbyeEeD-3RvE3W2V1RyXxr3",
}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="kegg", choices=sorted(DATASETS))
    parser.add_argument("--data-dir", default="./data")
    parser.add_argument("--preconditioner-size", type=int, default=100)
    parser.add_argument("--training-iter", type=int, default=20)
    parser.add_argument("--checkpoint-size", type=int, default=None,
                        help="skip the partition search and use this kernel partition size")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def load_dataset(name, data_dir):
    os.makedirs(data_dir, exist_ok=True)
    path = os.path.join(data_dir, f"{name}.mat")
    if not os.path.isfile(path):
        print(f"Downloading '{name}' UCI dataset...")
        urllib.request.urlretrieve(DATASETS[name], path)
    data = torch.Tensor(loadmat(path)["data"])
    X = data[:, :-1]
    X = X - X.min(0)[0]
    X = 2 * (X / X.max(0)[0]) - 1
    y = data[:, -1]

    # drop constant columns (KEGG has a few after the min/max scaling)
    good = ~torch.isnan(X).any(0)
    X = X[:, good]

    train_n = int(math.floor(0.8 * len(X)))
    train_x = X[:train_n, :].contiguous()
    train_y = y[:train_n].contiguous()
    test_x = X[train_n:, :].contiguous()
    test_y = y[train_n:].contiguous()
    return train_x, train_y, test_x, test_y


n_devices = torch.cuda.device_count()
output_device = torch.device("cuda:0")
print("Planning to run on {} GPUs.".format(n_devices))


class ExactGPModel(gpytorch.models.ExactGP):
    def __init__(self, train_x, train_y, likelihood, n_devices):
        super(ExactGPModel, self).__init__(train_x, train_y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        base_covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

        self.covar_module = gpytorch.kernels.MultiDeviceKernel(
            base_covar_module, device_ids=range(n_devices),
            output_device=output_device,
        )

    def forward(self, x):
        mean_x = self.mean_module(x)
        covar_x = self.covar_module(x)
        return gpytorch.distributions.MultivariateNormal(mean_x, covar_x)


def train(train_x, train_y, n_devices, output_device, checkpoint_size,
          preconditioner_size, n_training_iter):
    likelihood = gpytorch.likelihoods.GaussianLikelihood().to(output_device)
    model = ExactGPModel(train_x, train_y, likelihood, n_devices).to(output_device)
    model.train()
    likelihood.train()

    optimizer = FullBatchLBFGS(model.parameters(), lr=0.1)
    # "Loss" for GPs - the marginal log likelihood
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)

    with gpytorch.beta_features.checkpoint_kernel(checkpoint_size), \
            gpytorch.settings.max_preconditioner_size(preconditioner_size):

        def closure():
            optimizer.zero_grad()
            output = model(train_x)
            loss = -mll(output, train_y)
            return loss

        loss = closure()
        loss.backward()

        for i in range(n_training_iter):
            options = {"closure": closure, "current_loss": loss, "max_ls": 10}
            loss, _, _, _, _, _, _, fail = optimizer.step(options)

            print("Iter %d/%d - Loss: %.3f   lengthscale: %.3f   noise: %.3f" % (
                i + 1, n_training_iter, loss.item(),
                model.covar_module.module.base_kernel.lengthscale.item(),
                model.likelihood.noise.item(),
            ))

            if fail:
                print("Convergence reached!")
                break

    print(f"Finished training on {train_x.size(0)} data points using {n_devices} GPUs.")
    return model, likelihood


def find_best_gpu_setting(train_x, train_y, n_devices, output_device, preconditioner_size):
    N = train_x.size(0)

    # Find the optimum partition/checkpoint size by decreasing in powers of 2
    # Start with no partitioning (size = 0)
    settings = [0] + [int(n) for n in np.ceil(N / 2 ** np.arange(1, np.floor(np.log2(N))))]

    for checkpoint_size in settings:
        print("Number of devices: {} -- Kernel partition size: {}".format(n_devices, checkpoint_size))
        try:
            # Try a full forward and backward pass with this setting to check memory usage
            _, _ = train(train_x, train_y,
                         n_devices=n_devices, output_device=output_device,
                         checkpoint_size=checkpoint_size,
                         preconditioner_size=preconditioner_size, n_training_iter=1)

            # when successful, break out of for-loop and jump to finally block
            break
        except torch.cuda.OutOfMemoryError as e:
            print("OOM: {}".format(e))
        except AttributeError as e:
            print("AttributeError: {}".format(e))
        finally:
            # handle CUDA OOM error
            gc_collect_and_free()
    return checkpoint_size


def gc_collect_and_free():
    import gc
    gc.collect()
    torch.cuda.empty_cache()


def evaluate(model, likelihood, test_x, test_y, checkpoint_size):
    # Get into evaluation (predictive posterior) mode
    model.eval()
    likelihood.eval()

    with torch.no_grad(), gpytorch.settings.fast_pred_var(), \
            gpytorch.beta_features.checkpoint_kernel(checkpoint_size):
        # Make predictions on a small number of test points to get the test time caches computed
        latent_pred = model(test_x[:2, :])
        del latent_pred  # We don't care about these predictions, we really just want the caches.

        start = time.time()
        latent_pred = model(test_x)
        observed_pred = likelihood(latent_pred)
        elapsed = time.time() - start

    mae = torch.mean(torch.abs(observed_pred.mean - test_y))
    nll = -observed_pred.log_prob(test_y) / test_y.numel()
    print(f"Test MAE: {mae.item():.4f}   NLL: {nll.item():.4f}   prediction time: {elapsed:.2f}s")
    return mae.item()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    train_x, train_y, test_x, test_y = load_dataset(args.dataset, args.data_dir)
    train_x, train_y = train_x.contiguous(), train_y.contiguous()
    test_x, test_y = test_x.contiguous(), test_y.contiguous()

    # the training data lives on the output device; MultiDeviceKernel scatters it
    train_x, train_y = train_x.to(output_device), train_y.to(output_device)
    test_x, test_y = test_x.to(output_device), test_y.to(output_device)

    if args.checkpoint_size is None:
        checkpoint_size = find_best_gpu_setting(train_x, train_y,
                                                n_devices=n_devices,
                                                output_device=output_device,
                                                preconditioner_size=args.preconditioner_size)
    else:
        checkpoint_size = args.checkpoint_size

    model, likelihood = train(train_x, train_y,
                              n_devices=n_devices, output_device=output_device,
                              checkpoint_size=checkpoint_size,
                              preconditioner_size=args.preconditioner_size,
                              n_training_iter=args.training_iter)
    evaluate(model, likelihood, test_x, test_y, checkpoint_size)


if __name__ == "__main__":
    main()
