"""Evidential deep learning losses.

Classification: Sensoy, Kaplan & Kandemir, "Evidential Deep Learning to Quantify
Classification Uncertainty" (NeurIPS 2018) - Dirichlet evidence with the MSE,
log (Type-II ML) and digamma (Bayes risk of CE) losses plus the annealed KL term.

Regression: Amini et al., "Deep Evidential Regression" (NeurIPS 2020) - Normal-Inverse-
Gamma output layer with the NIG NLL and the evidence regulariser.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def get_device():
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda:0" if use_cuda else "cpu")
    return device


def one_hot_embedding(labels, num_classes=10):
    # Convert to One Hot Encoding
    y = torch.eye(num_classes)
    return y[labels]


# ------------------------------------------------------------------ evidence activations
def relu_evidence(y):
    return F.relu(y)


def exp_evidence(y):
    return torch.exp(torch.clamp(y, -10, 10))


def softplus_evidence(y):
    return F.softplus(y)


# ------------------------------------------------------------------ Dirichlet losses
def kl_divergence(alpha, num_classes, device=None):
    if not device:
        device = get_device()
    ones = torch.ones([1, num_classes], dtype=torch.float32, device=device)
    sum_alpha = torch.sum(alpha, dim=1, keepdim=True)
    first_term = (
        torch.lgamma(sum_alpha)
        - torch.lgamma(alpha).sum(dim=1, keepdim=True)
        + torch.lgamma(ones).sum(dim=1, keepdim=True)
        - torch.lgamma(ones.sum(dim=1, keepdim=True))
    )
    second_term = (
        (alpha - ones)
        .mul(torch.digamma(alpha) - torch.digamma(sum_alpha))
        .sum(dim=1, keepdim=True)
    )
    kl = first_term + second_term
    return kl


def loglikelihood_loss(y, alpha, device=None):
    if not device:
        device = get_device()
    y = y.to(device)
    alpha = alpha.to(device)
    S = torch.sum(alpha, dim=1, keepdim=True)
    loglikelihood_err = torch.sum((y - (alpha / S)) ** 2, dim=1, keepdim=True)
    loglikelihood_var = torch.sum(
        alpha * (S - alpha) / (S * S * (S + 1)), dim=1, keepdim=True
    )
    loglikelihood = loglikelihood_err + loglikelihood_var
    return loglikelihood


def mse_loss(y, alpha, epoch_num, num_classes, annealing_step, device=None):
    if not device:
        device = get_device()
    y = y.to(device)
    alpha = alpha.to(device)
    loglikelihood = loglikelihood_loss(y, alpha, device=device)

    annealing_coef = torch.min(
        torch.tensor(1.0, dtype=torch.float32),
        torch.tensor(epoch_num / annealing_step, dtype=torch.float32),
    )

    kl_alpha = (alpha - 1) * (1 - y) + 1
    kl_div = annealing_coef * kl_divergence(kl_alpha, num_classes, device=device)
    return loglikelihood + kl_div


def edl_loss(func, y, alpha, epoch_num, num_classes, annealing_step, device=None):
    y = y.to(device)
    alpha = alpha.to(device)
    S = torch.sum(alpha, dim=1, keepdim=True)

    A = torch.sum(y * (func(S) - func(alpha)), dim=1, keepdim=True)

    annealing_coef = torch.min(
        torch.tensor(1.0, dtype=torch.float32),
        torch.tensor(epoch_num / annealing_step, dtype=torch.float32),
    )

    kl_alpha = (alpha - 1) * (1 - y) + 1
    kl_div = annealing_coef * kl_divergence(kl_alpha, num_classes, device=device)
    return A + kl_div


def edl_mse_loss(output, target, epoch_num, num_classes, annealing_step, device=None):
    if not device:
        device = get_device()
    evidence = relu_evidence(output)
    alpha = evidence + 1
    loss = torch.mean(
        mse_loss(target, alpha, epoch_num, num_classes, annealing_step, device=device)
    )
    return loss


def edl_log_loss(output, target, epoch_num, num_classes, annealing_step, device=None):
    if not device:
        device = get_device()
    evidence = relu_evidence(output)
    alpha = evidence + 1
    loss = torch.mean(
        edl_loss(
            torch.log, target, alpha, epoch_num, num_classes, annealing_step, device
        )
    )
    return loss


def edl_digamma_loss(
    output, target, epoch_num, num_classes, annealing_step, device=None
):
    if not device:
        device = get_device()
    evidence = relu_evidence(output)
    alpha = evidence + 1
    loss = torch.mean(
        edl_loss(
            torch.digamma, target, alpha, epoch_num, num_classes, annealing_step, device
        )
    )
    return loss


def dirichlet_uncertainty(output, num_classes):
    """u = K / S, together with the expected probabilities alpha / S."""
    evidence = relu_evidence(output)
    alpha = evidence + 1
    S = torch.sum(alpha, dim=1, keepdim=True)
    uncertainty = num_classes / S
    prob = alpha / S
    return prob, uncertainty


# ------------------------------------------------------------------ deep evidential regression
class DenseNormalGamma(nn.Module):
    """Outputs (gamma, nu, alpha, beta) of a Normal-Inverse-Gamma distribution."""

    def __init__(self, in_features, out_units=1):
        super().__init__()
        self.out_units = out_units
        self.linear = nn.Linear(in_features, 4 * out_units)

    def evidence(self, x):
        return F.softplus(x)

    def forward(self, x):
        out = self.linear(x)
        gamma, lognu, logalpha, logbeta = torch.split(out, self.out_units, dim=-1)
        nu = self.evidence(lognu)
        alpha = self.evidence(logalpha) + 1
        beta = self.evidence(logbeta)
        return torch.cat([gamma, nu, alpha, beta], dim=-1)


def nig_nll(y, gamma, v, alpha, beta, reduce=True):
    twoBlambda = 2 * beta * (1 + v)

    nll = (
        0.5 * torch.log(math.pi / v)
        - alpha * torch.log(twoBlambda)
        + (alpha + 0.5) * torch.log(v * (y - gamma) ** 2 + twoBlambda)
        + torch.lgamma(alpha)
        - torch.lgamma(alpha + 0.5)
    )
    return torch.mean(nll) if reduce else nll


def nig_reg(y, gamma, v, alpha, beta, omega=0.01, reduce=True, kl=False):
    error = torch.abs(y - gamma)
    if kl:
        raise NotImplementedError("KL regulariser of the NIG is not used in the paper experiments")
    evi = 2 * v + alpha
    reg = error * evi
    return torch.mean(reg) if reduce else reg


def evidential_regression_loss(y_true, evidential_output, coeff=1e-2):
    gamma, v, alpha, beta = torch.chunk(evidential_output, 4, dim=-1)
    loss_nll = nig_nll(y_true, gamma, v, alpha, beta)
    loss_reg = nig_reg(y_true, gamma, v, alpha, beta)
    return loss_nll + coeff * loss_reg


def nig_uncertainties(evidential_output):
    """aleatoric = E[sigma^2] = beta/(alpha-1), epistemic = Var[mu] = beta/(nu(alpha-1))."""
    gamma, v, alpha, beta = torch.chunk(evidential_output, 4, dim=-1)
    aleatoric = beta / (alpha - 1)
    epistemic = beta / (v * (alpha - 1))
    return gamma, aleatoric, epistemic
