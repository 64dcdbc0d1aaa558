# -*- coding: utf-8 -*-
"""
DESCN: Deep Entire Space Cross Networks for Individual Treatment Effect Estimation (KDD 2022).

The model is trained on the entire sample space: the propensity network (PrpsyNetwork)
and the two response networks (Mu0 / Mu1) share a representation, and the
X-network (TauNetwork) learns the pseudo treatment effect of the cross response.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_normal_(m.weight)
        if m.bias is not None:
            nn.init.zeros_(m.bias)


class ShareNetwork(nn.Module):
    def __init__(self, input_dim, share_dim, base_dim, cfg, device):
        super(ShareNetwork, self).__init__()
        if cfg.BatchNorm1d == 'true':
            print("use BatchNorm1d")
            self.DNN = nn.Sequential(
                nn.Linear(input_dim, share_dim),
                nn.BatchNorm1d(share_dim),
                nn.ELU(),
                nn.Dropout(p=cfg.dropout_rate),
                nn.Linear(share_dim, share_dim),
                nn.BatchNorm1d(share_dim),
                nn.ELU(),
                nn.Dropout(p=cfg.dropout_rate),
                nn.Linear(share_dim, base_dim),
                nn.BatchNorm1d(base_dim),
                nn.ELU(),
                nn.Dropout(p=cfg.dropout_rate),
            )
        else:
            print("No BatchNorm1d")
            self.DNN = nn.Sequential(
                nn.Linear(input_dim, share_dim),
                nn.ELU(),
                nn.Dropout(p=cfg.dropout_rate),
                nn.Linear(share_dim, share_dim),
                nn.ELU(),
                nn.Dropout(p=cfg.dropout_rate),
                nn.Linear(share_dim, base_dim),
                nn.ELU(),
                nn.Dropout(p=cfg.dropout_rate),
            )

        self.DNN.apply(init_weights)
        self.cfg = cfg
        self.device = device
        self.to(device)

    def forward(self, x):
        x = x.to(self.device)
        h_rep = self.DNN(x)
        if self.cfg.normalization == "divide":
            h_rep_norm = h_rep / self.safe_sqrt(torch.sum(torch.square(h_rep), dim=1, keepdim=True))
        else:
            h_rep_norm = 1.0 * h_rep
        return h_rep_norm

    @staticmethod
    def safe_sqrt(x, lbound=1e-10):
        return torch.sqrt(torch.clamp(x, lbound, float("inf")))


class BaseModel(nn.Module):
    def __init__(self, base_dim, cfg):
        super(BaseModel, self).__init__()
        self.DNN = nn.Sequential(
            nn.Linear(base_dim, base_dim),
            nn.ELU(),
            nn.Dropout(p=cfg.dropout_rate),
            nn.Linear(base_dim, base_dim),
            nn.ELU(),
            nn.Dropout(p=cfg.dropout_rate),
            nn.Linear(base_dim, base_dim),
            nn.ELU(),
            nn.Dropout(p=cfg.dropout_rate),
        )
        self.DNN.apply(init_weights)

    def forward(self, x):
        logits = self.DNN(x)
        return logits


class BaseModel4MetaLearner(nn.Module):
    def __init__(self, input_dim, base_dim, cfg, device):
        super(BaseModel4MetaLearner, self).__init__()
        self.DNN = nn.Sequential(
            nn.Linear(input_dim, base_dim),
            nn.ELU(),
            nn.Dropout(p=cfg.dropout_rate),
            nn.Linear(base_dim, base_dim),
            nn.ELU(),
            nn.Dropout(p=cfg.dropout_rate),
            nn.Linear(base_dim, base_dim),
            nn.ELU(),
            nn.Dropout(p=cfg.dropout_rate),
            nn.Linear(base_dim, 1),
        )
        self.DNN.apply(init_weights)
        self.device = device
        self.to(device)

    def forward(self, x):
        x = x.to(self.device)
        logit = self.DNN(x)
        return logit


class PrpsyNetwork(nn.Module):
    """propensity network"""

    def __init__(self, base_dim, cfg):
        super(PrpsyNetwork, self).__init__()
        self.baseModel = BaseModel(base_dim, cfg)
        self.logitLayer = nn.Linear(base_dim, 1)
        self.sigmoid = nn.Sigmoid()
        self.logitLayer.apply(init_weights)

    def forward(self, inputs):
        inputs = self.baseModel(inputs)
        p = self.logitLayer(inputs)
        return p


class Mu0Network(nn.Module):
    def __init__(self, base_dim, cfg):
        super(Mu0Network, self).__init__()
        self.baseModel = BaseModel(base_dim, cfg)
        self.logitLayer = nn.Linear(base_dim, 1)
        self.logitLayer.apply(init_weights)

    def forward(self, inputs):
        inputs = self.baseModel(inputs)
        p = self.logitLayer(inputs)
        return p


class Mu1Network(nn.Module):
    def __init__(self, base_dim, cfg):
        super(Mu1Network, self).__init__()
        self.baseModel = BaseModel(base_dim, cfg)
        self.logitLayer = nn.Linear(base_dim, 1)
        self.logitLayer.apply(init_weights)

    def forward(self, inputs):
        inputs = self.baseModel(inputs)
        p = self.logitLayer(inputs)
        return p


class TauNetwork(nn.Module):
    """pseudo tau network"""

    def __init__(self, base_dim, cfg):
        super(TauNetwork, self).__init__()
        self.baseModel = BaseModel(base_dim, cfg)
        self.logitLayer = nn.Linear(base_dim, 1)
        self.tanh = nn.Tanh()
        self.logitLayer.apply(init_weights)

    def forward(self, inputs):
        inputs = self.baseModel(inputs)
        tau_logit = self.logitLayer(inputs)
        return tau_logit


class ESX(nn.Module):
    """ESX = ESN (entire space network) + X-network"""

    def __init__(self, prpsy_network: PrpsyNetwork, mu1_network: Mu1Network, mu0_network: Mu0Network,
                 tau_network: TauNetwork, shareNetwork: ShareNetwork, cfg, device):
        super(ESX, self).__init__()
        self.shareNetwork = shareNetwork.to(device)
        self.prpsy_network = prpsy_network.to(device)
        self.mu1_network = mu1_network.to(device)
        self.mu0_network = mu0_network.to(device)
        self.tau_network = tau_network.to(device)
        self.cfg = cfg
        self.device = device
        self.to(device)

    def forward(self, inputs):
        shared_h = self.shareNetwork(inputs)

        # propensity output_logit
        p_prpsy_logit = self.prpsy_network(shared_h)

        # p_prpsy = torch.clip(torch.sigmoid(p_prpsy_logit), 0.05, 0.95)
        p_prpsy = torch.clip(torch.sigmoid(p_prpsy_logit), 0.001, 0.999)

        # logit for mu1, mu0
        mu1_logit = self.mu1_network(shared_h)
        mu0_logit = self.mu0_network(shared_h)

        # pseudo tau
        tau_logit = self.tau_network(shared_h)

        p_mu1 = sigmod2(mu1_logit)
        p_mu0 = sigmod2(mu0_logit)
        p_h1 = p_mu1  # Refer to the naming in TARnet/CFR
        p_h0 = p_mu0  # Refer to the naming in TARnet/CFR

        # entire space
        p_estr = torch.mul(p_prpsy, p_h1)
        p_i_prpsy = 1 - p_prpsy
        p_escr = torch.mul(p_i_prpsy, p_h0)

        return p_prpsy_logit, p_estr, p_escr, tau_logit, mu1_logit, mu0_logit, p_prpsy, p_mu1, p_mu0, p_h1, p_h0, shared_h


def sigmod2(y):
    # y = torch.clamp(0.995 / (1.0 + torch.exp(-y)) + 0.0025, 0, 1)
    # y = torch.clamp(y, -16, 16)
    y = torch.sigmoid(y)
    # y = 0.995 / (1.0 + torch.exp(-y)) + 0.0025

    return y


def build_descn(input_dim, cfg, device):
    share = ShareNetwork(input_dim=input_dim, share_dim=cfg.share_dim, base_dim=cfg.base_dim, cfg=cfg, device=device)
    prpsy = PrpsyNetwork(cfg.base_dim, cfg=cfg)
    mu1 = Mu1Network(cfg.base_dim, cfg=cfg)
    mu0 = Mu0Network(cfg.base_dim, cfg=cfg)
    tau = TauNetwork(cfg.base_dim, cfg=cfg)
    return ESX(prpsy, mu1, mu0, tau, share, cfg, device)


def descn_loss(outputs, t, y, cfg):
    """
    Entire-space losses (ESTR / ESCR), propensity loss, cross-treatment losses
    and the plain TARNet-style response losses, weighted as in the paper.
    """
    (p_prpsy_logit, p_estr, p_escr, tau_logit, mu1_logit, mu0_logit,
     p_prpsy, p_mu1, p_mu0, p_h1, p_h0, shared_h) = outputs

    t = t.float().view(-1, 1)
    y = y.float().view(-1, 1)
    sample_weight = torch.ones_like(t)

    prpsy_loss = cfg.prpsy_w * F.binary_cross_entropy_with_logits(p_prpsy_logit, t, weight=sample_weight)
    estr_loss = cfg.escvr1_w * F.binary_cross_entropy(p_estr, t * y)
    escr_loss = cfg.escvr0_w * F.binary_cross_entropy(p_escr, (1 - t) * y)

    # cross network
    p_h1_cross = torch.sigmoid(mu0_logit + tau_logit)
    p_h0_cross = torch.sigmoid(mu1_logit - tau_logit)
    cross_tr_loss = cfg.h1_w * F.binary_cross_entropy(p_h1_cross[t.bool()], y[t.bool()]) \
        if t.sum() > 0 else torch.zeros((), device=t.device)
    cross_cr_loss = cfg.h0_w * F.binary_cross_entropy(p_h0_cross[~t.bool()], y[~t.bool()]) \
        if (1 - t).sum() > 0 else torch.zeros((), device=t.device)

    # TARNet style response losses
    tr_loss = cfg.mu1hat_w * F.binary_cross_entropy(p_h1[t.bool()], y[t.bool()]) \
        if t.sum() > 0 else torch.zeros((), device=t.device)
    cr_loss = cfg.mu0hat_w * F.binary_cross_entropy(p_h0[~t.bool()], y[~t.bool()]) \
        if (1 - t).sum() > 0 else torch.zeros((), device=t.device)

    total = prpsy_loss + estr_loss + escr_loss + cross_tr_loss + cross_cr_loss + tr_loss + cr_loss
    parts = {
        "prpsy": prpsy_loss.item(), "estr": estr_loss.item(), "escr": escr_loss.item(),
        "cross_tr": float(cross_tr_loss), "cross_cr": float(cross_cr_loss),
        "tr": float(tr_loss), "cr": float(cr_loss),
    }
    return total, parts
