"""Spectral-normalized Neural Gaussian Process (SNGP) building blocks for PyTorch.

Port of ``edward2.tensorflow.layers.RandomFeatureGaussianProcess`` and the
spectral-normalisation wrappers used by uncertainty-baselines (Liu et al., 2020).

The Laplace covariance is accumulated in fp32 even under mixed precision: the
precision matrix is inverted once per evaluation, and inverting an fp16 matrix of
size num_inducing x num_inducing is numerically hopeless.
"""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrizations
from torch.cuda.amp import custom_fwd


def random_ortho(n, m, device=None):
    q, _ = torch.linalg.qr(torch.randn(n, m, device=device))
    return q


class RandomFourierFeatures(nn.Module):
    """phi(x) = sqrt(2/D) * cos(W x + b),   W ~ N(0, 1/l^2),  b ~ U(0, 2 pi)."""

    def __init__(self, in_dim, num_random_features, feature_scale=None, length_scale=1.0,
                 orthogonal=False):
        super().__init__()
        if feature_scale is None:
            feature_scale = math.sqrt(2.0 / num_random_features)
        self.feature_scale = feature_scale
        self.length_scale = length_scale

        if orthogonal and num_random_features <= in_dim:
            w = random_ortho(in_dim, num_random_features).t()
        else:
            w = torch.randn(num_random_features, in_dim)
        self.register_buffer("W", w / length_scale)
        self.register_buffer("b", torch.rand(num_random_features) * 2 * math.pi)

    def forward(self, x):
        return self.feature_scale * torch.cos(F.linear(x, self.W, self.b))


class LaplaceRandomFeatureCovariance(nn.Module):
    """Posterior precision of the last layer, Sigma^-1 = s * I + sum_i p_i (1 - p_i) phi_i phi_i^T."""

    def __init__(self, gp_feature_dim, momentum=0.999, ridge_penalty=1.0, likelihood="gaussian"):
        super().__init__()
        self.ridge_penalty = ridge_penalty
        self.momentum = momentum
        self.likelihood = likelihood
        self.register_buffer("initial_precision_matrix", ridge_penalty * torch.eye(gp_feature_dim))
        self.register_buffer("precision_matrix", copy.deepcopy(self.initial_precision_matrix))
        self.register_buffer("covariance_matrix", torch.eye(gp_feature_dim))
        self.covariance_stale = True

    def reset_precision_matrix(self):
        self.precision_matrix.copy_(self.initial_precision_matrix)
        self.covariance_stale = True

    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def update_precision_matrix(self, gp_feature, logits):
        batch_size = gp_feature.shape[0]
        if self.likelihood == "binary_logistic":
            prob = torch.sigmoid(logits)
            prob_multiplier = prob * (1.0 - prob)
        elif self.likelihood == "poisson":
            prob_multiplier = torch.exp(logits)
        else:
            prob_multiplier = torch.ones_like(logits[:, :1])
        if prob_multiplier.shape[-1] > 1:
            # multi-class: use the max-probability approximation of the Hessian diagonal
            prob = F.softmax(logits, dim=-1)
            prob_multiplier = (prob * (1.0 - prob)).max(dim=-1, keepdim=True)[0]

        gp_feature_adjusted = torch.sqrt(prob_multiplier) * gp_feature
        precision_matrix_minibatch = gp_feature_adjusted.t() @ gp_feature_adjusted

        if self.momentum > 0:
            precision_matrix_minibatch = precision_matrix_minibatch / batch_size
            precision_matrix_new = (
                self.momentum * self.precision_matrix + (1.0 - self.momentum) * precision_matrix_minibatch
            )
        else:
            precision_matrix_new = self.precision_matrix + precision_matrix_minibatch
        self.precision_matrix.copy_(precision_matrix_new.detach())
        self.covariance_stale = True

    @custom_fwd(cast_inputs=torch.float32)
    def compute_predictive_covariance(self, gp_feature):
        if self.covariance_stale:
            self.covariance_matrix.copy_(torch.linalg.inv(self.precision_matrix))
            self.covariance_stale = False
        cov_feature_product = self.covariance_matrix @ gp_feature.t() * self.ridge_penalty
        gp_cov_matrix = gp_feature @ cov_feature_product
        return gp_cov_matrix

    def forward(self, gp_feature, logits=None):
        if self.training:
            if logits is not None:
                self.update_precision_matrix(gp_feature, logits)
            batch_size = gp_feature.shape[0]
            return torch.eye(batch_size, dtype=gp_feature.dtype, device=gp_feature.device)
        return self.compute_predictive_covariance(gp_feature)


class RandomFeatureGaussianProcess(nn.Module):
    def __init__(
        self,
        in_features,
        out_features,
        num_inducing=1024,
        gp_kernel_scale=1.0,
        normalize_input=True,
        scale_random_features=True,
        gp_cov_momentum=-1,
        gp_cov_ridge_penalty=1.0,
        return_gp_cov=True,
        orthogonal_features=False,
        likelihood="gaussian",
    ):
        super().__init__()
        self.num_inducing = num_inducing
        self.return_gp_cov = return_gp_cov
        self.normalize_input = normalize_input
        if normalize_input:
            self.input_layer_norm = nn.LayerNorm(in_features)

        feature_scale = math.sqrt(2.0 / num_inducing) if scale_random_features else 1.0
        self.random_features = RandomFourierFeatures(
            in_features, num_inducing, feature_scale=feature_scale,
            length_scale=gp_kernel_scale, orthogonal=orthogonal_features,
        )
        self.gp_output_layer = nn.Linear(num_inducing, out_features, bias=False)
        self.gp_output_bias = nn.Parameter(torch.zeros(out_features), requires_grad=False)
        self.gp_cov = LaplaceRandomFeatureCovariance(
            num_inducing, momentum=gp_cov_momentum, ridge_penalty=gp_cov_ridge_penalty,
            likelihood=likelihood,
        )

    def reset_covariance_matrix(self):
        self.gp_cov.reset_precision_matrix()

    def forward(self, x):
        if self.normalize_input:
            x = self.input_layer_norm(x)
        gp_feature = self.random_features(x)
        gp_output = self.gp_output_layer(gp_feature) + self.gp_output_bias
        if not self.return_gp_cov:
            return gp_output
        gp_cov = self.gp_cov(gp_feature, gp_output.detach() if self.training else None)
        return gp_output, gp_cov


def mean_field_logits(logits, covariance_matrix, mean_field_factor=math.pi / 8.0):
    """Mean-field approximation of the softmax-Gaussian integral (probit approx.)."""
    if mean_field_factor is None or mean_field_factor < 0:
        return logits
    variances = torch.diagonal(covariance_matrix, dim1=-2, dim2=-1)
    logits_scale = torch.sqrt(1.0 + variances * mean_field_factor)
    if logits.dim() > 1:
        logits_scale = logits_scale.unsqueeze(-1)
    return logits / logits_scale


class SpectralNormConv2d(nn.Module):
    """Conv2d whose spectral norm is bounded by ``coeff`` (soft constraint, Behrmann et al.)."""

    def __init__(self, conv, coeff=0.95, n_power_iterations=1):
        super().__init__()
        self.conv = parametrizations.spectral_norm(conv, n_power_iterations=n_power_iterations)
        self.coeff = coeff

    def forward(self, x):
        # the parametrization normalises to sigma = 1; rescale to the requested bound
        return self.coeff * self.conv(x)


def spectral_norm_linear(layer, coeff=0.95, n_power_iterations=1):
    layer = parametrizations.spectral_norm(layer, n_power_iterations=n_power_iterations)

    class _Scaled(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return coeff * self.inner(x)

    return _Scaled(layer)


class SNGPHead(nn.Module):
    """Replaces the dense output layer of a backbone with a random-feature GP."""

    def __init__(self, backbone, feature_dim, num_classes, num_inducing=1024,
                 spec_norm_bound=6.0, mean_field_factor=math.pi / 8.0, **gp_kwargs):
        super().__init__()
        self.backbone = backbone
        self.mean_field_factor = mean_field_factor
        self.gp = RandomFeatureGaussianProcess(
            feature_dim, num_classes, num_inducing=num_inducing, **gp_kwargs
        )

    def reset_covariance(self):
        self.gp.reset_covariance_matrix()

    def forward(self, x, return_cov=False, apply_mean_field=True):
        feats = self.backbone(x)
        logits, cov = self.gp(feats)
        if not self.training and apply_mean_field:
            logits = mean_field_logits(logits, cov, self.mean_field_factor)
        if return_cov:
            return logits, cov
        return logits


def sngp_uncertainty(logits, num_classes):
    """Dempster-Shafer uncertainty, the OOD score used in the SNGP paper."""
    return num_classes / (num_classes + torch.exp(logits).sum(dim=-1))
