"""
PyTorch re-implementation of the Dragonnet / TARNet / NEDnet architectures of
Shi, Blei & Veitch (2019), "Adapting Neural Networks for the Estimation of
Treatment Effects".  The layer sizes, initialisation and losses follow the
original Keras code in this repository as closely as possible.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def binary_classification_loss(concat_true, concat_pred):
    t_true = concat_true[:, 1]
    t_pred = concat_pred[:, 2]
    t_pred = (t_pred + 0.001) / 1.002
    losst = torch.sum(F.binary_cross_entropy(t_pred, t_true, reduction="none"))

    return losst


def regression_loss(concat_true, concat_pred):
    y_true = concat_true[:, 0]
    t_true = concat_true[:, 1]

    y0_pred = concat_pred[:, 0]
    y1_pred = concat_pred[:, 1]

    loss0 = torch.sum((1.0 - t_true) * torch.square(y_true - y0_pred))
    loss1 = torch.sum(t_true * torch.square(y_true - y1_pred))

    return loss0 + loss1


def ned_loss(concat_true, concat_pred):
    t_true = concat_true[:, 1]

    t_pred = concat_pred[:, 1]
    return torch.sum(F.binary_cross_entropy_with_logits(t_pred, t_true, reduction="none"))


def dead_loss(concat_true, concat_pred):
    return torch.zeros((), device=concat_pred.device)


def dragonnet_loss_binarycross(concat_true, concat_pred):
    return regression_loss(concat_true, concat_pred) + binary_classification_loss(
        concat_true, concat_pred
    )


def treatment_accuracy(concat_true, concat_pred):
    t_true = concat_true[:, 1]
    t_pred = concat_pred[:, 2]
    return ((t_pred > 0.5).float() == t_true).float().mean()


def track_epsilon(concat_true, concat_pred):
    epsilons = concat_pred[:, 3]
    return torch.abs(torch.mean(epsilons))


def make_tarreg_loss(ratio=1.0, dragonnet_loss=dragonnet_loss_binarycross):
    def tarreg_ATE_unbounded_domain_loss(concat_true, concat_pred):
        vanilla_loss = dragonnet_loss(concat_true, concat_pred)

        y_true = concat_true[:, 0]
        t_true = concat_true[:, 1]

        y0_pred = concat_pred[:, 0]
        y1_pred = concat_pred[:, 1]
        t_pred = concat_pred[:, 2]

        epsilons = concat_pred[:, 3]
        t_pred = (t_pred + 0.01) / 1.02
        # t_pred = torch.clamp(t_pred, 0.01, 0.99)

        y_pred = t_true * y1_pred + (1 - t_true) * y0_pred

        h = t_true / t_pred - (1 - t_true) / (1 - t_pred)

        y_pert = y_pred + epsilons * h
        targeted_regularization = torch.sum(torch.square(y_true - y_pert))

        # final
        loss = vanilla_loss + ratio * targeted_regularization
        return loss

    return tarreg_ATE_unbounded_domain_loss


class EpsilonLayer(nn.Module):
    """Single trainable scalar used by the targeted-regularisation perturbation."""

    def __init__(self):
        super().__init__()
        self.epsilon = nn.Parameter(torch.randn(1, 1) * 0.05)

    def forward(self, t_pred):
        return self.epsilon * torch.ones_like(t_pred)[:, 0:1]


def _dense(in_features, out_features):
    layer = nn.Linear(in_features, out_features)
    nn.init.normal_(layer.weight, mean=0.0, std=0.05)
    nn.init.zeros_(layer.bias)
    return layer


class DragonNet(nn.Module):
    """
    Three shared representation layers followed by three heads:
    propensity g(x), and two outcome heads Q(0, x), Q(1, x).
    """

    def __init__(self, input_dim, reg_l2=0.01, shared_hidden=200, outcome_hidden=100):
        super().__init__()
        self.reg_l2 = reg_l2
        self.representation = nn.Sequential(
            _dense(input_dim, shared_hidden),
            nn.ELU(),
            _dense(shared_hidden, shared_hidden),
            nn.ELU(),
            _dense(shared_hidden, shared_hidden),
            nn.ELU(),
        )
        self.t_head = _dense(shared_hidden, 1)

        self.y0_head = nn.Sequential(
            _dense(shared_hidden, outcome_hidden),
            nn.ELU(),
            _dense(outcome_hidden, outcome_hidden),
            nn.ELU(),
            _dense(outcome_hidden, 1),
        )
        self.y1_head = nn.Sequential(
            _dense(shared_hidden, outcome_hidden),
            nn.ELU(),
            _dense(outcome_hidden, outcome_hidden),
            nn.ELU(),
            _dense(outcome_hidden, 1),
        )
        self.epsilon = EpsilonLayer()

    def forward(self, x):
        z = self.representation(x)
        t_pred = torch.sigmoid(self.t_head(z))
        y0 = self.y0_head(z)
        y1 = self.y1_head(z)
        eps = self.epsilon(t_pred)
        return torch.cat([y0, y1, t_pred, eps], dim=1)

    def l2_penalty(self):
        """Keras applied kernel_regularizer=l2(reg_l2) to the outcome heads only."""
        penalty = 0.0
        for head in (self.y0_head, self.y1_head):
            for module in head.modules():
                if isinstance(module, nn.Linear):
                    penalty = penalty + self.reg_l2 * torch.sum(module.weight ** 2)
        return penalty


class TarNet(DragonNet):
    """
    TARNet: identical heads, but the propensity head reads the raw covariates so
    that it does not shape the shared representation.
    """

    def __init__(self, input_dim, reg_l2=0.01, shared_hidden=200, outcome_hidden=100):
        super().__init__(input_dim, reg_l2, shared_hidden, outcome_hidden)
        self.t_head = _dense(input_dim, 1)

    def forward(self, x):
        z = self.representation(x)
        t_pred = torch.sigmoid(self.t_head(x))
        y0 = self.y0_head(z)
        y1 = self.y1_head(z)
        eps = self.epsilon(t_pred)
        return torch.cat([y0, y1, t_pred, eps], dim=1)


class NEDNet(nn.Module):
    """
    'No-Effect-Dragonnet': first fit a network predicting treatment from the
    covariates, then freeze the representation and fit the outcome heads.
    """

    def __init__(self, input_dim, reg_l2=0.01, hidden=200):
        super().__init__()
        self.reg_l2 = reg_l2
        self.representation = nn.Sequential(
            _dense(input_dim, hidden),
            nn.ELU(),
            _dense(hidden, hidden),
            nn.ELU(),
            _dense(hidden, hidden),
            nn.ELU(),
        )
        self.t_head = _dense(hidden, 1)
        self.y_head = _dense(hidden, 1)

    def forward(self, x):
        z = self.representation(x)
        return torch.cat([self.y_head(z), self.t_head(z)], dim=1)

    def freeze_representation(self):
        for p in self.representation.parameters():
            p.requires_grad_(False)


def make_dragonnet(input_dim, reg_l2):
    return DragonNet(input_dim, reg_l2=reg_l2)


def make_tarnet(input_dim, reg_l2):
    return TarNet(input_dim, reg_l2=reg_l2)


def make_ned(input_dim, reg_l2=0.01):
    return NEDNet(input_dim, reg_l2=reg_l2)
