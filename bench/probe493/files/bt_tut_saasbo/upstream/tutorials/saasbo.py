#!/usr/bin/env python3
# coding: utf-8

# ## High-Dimensional sample-efficient Bayesian Optimization with SAASBO
#
# This tutorial shows how to use the Sparse Axis-Aligned Subspace Bayesian Optimization (SAASBO)
# method for high-dimensional Bayesian optimization [1]. SAASBO places strong hierarchical priors on
# the inverse lengthscales to avoid overfitting in high-dimensional spaces. Specifically, SAASBO uses
# a hierarchical sparsity prior consisting of a global shrinkage parameter
# $\tau \sim \mathcal{HC}(\beta)$ and inverse lengthscales $\rho_d \sim \mathcal{HC}(\tau)$ for
# $d=1, \ldots, D$, where $\mathcal{HC}$ is the half-Cauchy distribution.
#
# Since the SAAS model is not amenable to MAP estimation, we use the No-U-Turn sampler (NUTS) from
# Pyro to obtain posterior samples of the hyperparameters, and average the acquisition function over
# the samples.
#
# [1]: D. Eriksson, M. Jankowiak. High-Dimensional Bayesian Optimization with Sparse Axis-Aligned
# Subspaces. Proceedings of the Thirty-Seventh Conference on Uncertainty in Artificial Intelligence, 2021.

import os

import torch
from torch.quasirandom import SobolEngine

from botorch import fit_fully_bayesian_model_nuts
from botorch.acquisition.logei import qLogExpectedImprovement
from botorch.models.fully_bayesian import SaasFullyBayesianSingleTaskGP
from botorch.models.transforms import Standardize
from botorch.optim import optimize_acqf
from botorch.test_functions import Branin


SMOKE_TEST = os.environ.get("SMOKE_TEST")

# NUTS on a GPU is only worthwhile once there are a few hundred observations; for the
# 30 - 100 points used here the CPU is usually as fast, but we keep the GPU for the
# acquisition optimization (512 raw samples x 256 hyperparameter samples).
tkwargs = {
    "device": torch.device("cuda:0" if torch.cuda.is_available() else "cpu"),
    "dtype": torch.double,
}


# The parameters below control the amount of computation performed by NUTS: WARMUP_STEPS warmup
# steps, then NUM_SAMPLES samples of which we keep every THINNING-th.

WARMUP_STEPS = 512 if not SMOKE_TEST else 32
NUM_SAMPLES = 256 if not SMOKE_TEST else 16
THINNING = 16


# ## Simple model fitting
# We generate a simple function that only depends on the first parameter and show that the SAAS
# model sets all other lengthscales to large values.

train_X = torch.rand(10, 4, **tkwargs)
test_X = torch.rand(5, 4, **tkwargs)
train_Y = torch.sin(train_X[:, :1])
test_Y = torch.sin(test_X[:, :1])

gp = SaasFullyBayesianSingleTaskGP(
    train_X=train_X,
    train_Y=train_Y,
    outcome_transform=Standardize(m=1),
)
fit_fully_bayesian_model_nuts(
    gp,
    warmup_steps=WARMUP_STEPS,
    num_samples=NUM_SAMPLES,
    thinning=THINNING,
    disable_progbar=True,
)
with torch.no_grad():
    posterior = gp.posterior(test_X)

print(posterior.mean.shape)
print(posterior.variance.shape)
print(gp.median_lengthscale.detach())


# ## Optimize Branin embedded in a 30D space
# We take the standard 2D Branin problem and embed it in a 30D space. In particular, we let
# dimensions 0 and 1 correspond to the true dimensions. We will show that SAASBO is able to identify
# the important dimensions and efficiently optimize this function. We work with the domain
# $[0, 1]^d$ and unnormalize the inputs to the true domain of Branin before evaluating the function.

branin = Branin().to(**tkwargs)


def branin_emb(x):
    """x is assumed to be in [0, 1]^d"""
    lb, ub = branin.bounds
    return branin(lb + (ub - lb) * x[..., :2])[:, None]


DIM = 30 if not SMOKE_TEST else 2

# Evaluation budget
N_INIT = 10
N_ITERATIONS = 8 if not SMOKE_TEST else 1
BATCH_SIZE = 5 if not SMOKE_TEST else 1
print(f"Using a total of {N_INIT + BATCH_SIZE * N_ITERATIONS} function evaluations")


# ## Run the optimization
# We use 10 initial Sobol points followed by 8 iterations of BO using a batch size of 5, which
# results in a total of 50 function evaluations. As our goal is to minimize Branin, we flip the sign
# of the function values before fitting the SAAS model as the BoTorch acquisition functions assume
# maximization.

X = SobolEngine(dimension=DIM, scramble=True, seed=0).draw(N_INIT).to(**tkwargs)
Y = branin_emb(X)
print(f"Best initial point: {Y.min().item():.3f}")

for i in range(N_ITERATIONS):
    train_Y = -1 * Y  # Flip the sign since we want to minimize f(x)
    gp = SaasFullyBayesianSingleTaskGP(
        train_X=X,
        train_Y=train_Y,
        train_Yvar=torch.full_like(train_Y, 1e-6),
        outcome_transform=Standardize(m=1),
    )
    fit_fully_bayesian_model_nuts(
        gp,
        warmup_steps=WARMUP_STEPS,
        num_samples=NUM_SAMPLES,
        thinning=THINNING,
        disable_progbar=True,
    )

    EI = qLogExpectedImprovement(model=gp, best_f=train_Y.max())
    candidates, acq_values = optimize_acqf(
        EI,
        bounds=torch.cat((torch.zeros(1, DIM), torch.ones(1, DIM))).to(**tkwargs),
        q=BATCH_SIZE,
        num_restarts=10,
        raw_samples=1024,
    )

    Y_next = torch.cat([branin_emb(x).unsqueeze(-1) for x in candidates]).unsqueeze(-1)
    if Y_next.min() < Y.min():
        ind_best = Y_next.argmin()
        x0, x1 = candidates[ind_best, :2].tolist()
        print(
            f"{i + 1}) New best: {Y_next[ind_best].item():.3f} @ "
            f"[{x0:.3f}, {x1:.3f}]"
        )
    X = torch.cat((X, candidates))
    Y = torch.cat((Y, Y_next))


# ## Plot the results
# We can see that we were able to get close to the global optimum of $\approx 0.398$ after 50
# function evaluations.

import matplotlib.pyplot as plt
import numpy as np

Y_np = Y.cpu().numpy()
fig, ax = plt.subplots(figsize=(8, 6))
ax.plot(np.minimum.accumulate(Y_np), color="b", label="SAASBO")
ax.plot([0, len(Y_np)], [0.398, 0.398], "--", c="g", lw=3, label="Optimal value")
ax.grid(True)
ax.set_title(f"Branin, D = {DIM}", fontsize=20)
ax.set_xlabel("Number of evaluations", fontsize=20)
ax.set_xlim([0, len(Y_np)])
ax.set_ylabel("Best value found", fontsize=20)
ax.set_ylim([0, 8])
ax.legend(fontsize=18)
plt.show()


# ## Look a the lengthscales from the final model
# As SAASBO places strong priors on the inverse lengthscales, we only expect parameters 0 and 1 to be
# identified as important by the model since the other parameters have no effect. We can confirm
# that this is the case below as the lengthscales of parameters 0 and 1 are small with all other
# lengthscales being large.

median_lengthscales = gp.median_lengthscale
for i in median_lengthscales.argsort()[:10]:
    print(f"Parameter {i:>2}) Median lengthscale = {median_lengthscales[i].item():.2e}")
