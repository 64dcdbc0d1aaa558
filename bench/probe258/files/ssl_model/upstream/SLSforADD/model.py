"""
XLS-R (wav2vec 2.0, fairseq) front-end + Sensitive Layer Selection (SLS)
classifier for audio deepfake detection.

The fairseq checkpoint (xlsr2_300m.pt) must be downloaded separately:
    https://dl.fbaipublicfiles.com/fairseq/wav2vec/xlsr2_300m.pt
"""
import random
from typing import Union

import fairseq
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

___author__ = "Qishan Zhang"
__email__ = "qishan.zhang@example.org"


############################
## FOR fine-tuned SSL MODEL
############################


class SSLModel(nn.Module):
    def __init__(self, device, cp_path='xlsr2_300m.pt', n_layers=None):
        super(SSLModel, self).__init__()

        # Change the pre-trained XLSR model path if needed.
        model, cfg, task = fairseq.checkpoint_utils.load_model_ensemble_and_task([cp_path])
        self.model = model[0]
        self.device = device
        self.out_dim = 1024
        if n_layers is not None:
            # keep only the first n transformer blocks (speeds up training a lot)
            self.model.encoder.layers = self.model.encoder.layers[:n_layers]
        return

    def extract_feat(self, input_data):

        # put the model to GPU if it not there
        if next(self.model.parameters()).device != input_data.device \
           or next(self.model.parameters()).dtype != input_data.dtype:
            self.model.to(input_data.device, dtype=input_data.dtype)
            self.model.train()

        if True:
            # input should be in shape (batch, length)
            if input_data.ndim == 3:
                input_tmp = input_data[:, :, 0]
            else:
                input_tmp = input_data

            # [batch, length, dim]
            result = self.model(input_tmp, mask=False, features_only=True)
            emb = result['x']
            layerresult = result['layer_results']
        return emb, layerresult


def getAttenF(layerResult):
    poollayerResult = []
    fullf = []
    for layer in layerResult:

        layery = layer[0].transpose(0, 1).transpose(1, 2)  # (x,z)  x(201,b,1024) (b,201,1024) (b,1024,201)
        layery = F.adaptive_avg_pool1d(layery, 1)  # (b,1024,1)
        layery = layery.transpose(1, 2)  # (b,1,1024)
        poollayerResult.append(layery)

        x = layer[0].transpose(0, 1)
        x = x.view(x.size(0), -1, x.size(1), x.size(2))
        fullf.append(x)

    layery = torch.cat(poollayerResult, dim=1)
    fullfeature = torch.cat(fullf, dim=1)
    return layery, fullfeature


class Model(nn.Module):
    def __init__(self, args, device):
        super().__init__()
        self.device = device
        self.ssl_model = SSLModel(self.device)
        # fairseq always restores the checkpoint on the CPU; move it up front so
        # that the first forward does not pay for the host->GPU copy
        self.ssl_model.cuda()
        self.first_bn = nn.BatchNorm2d(num_features=1)
        self.selu = nn.SELU(inplace=True)
        self.fc0 = nn.Linear(1024, 1)
        self.sig = nn.Sigmoid()
        self.fc1 = nn.Linear(22847, 1024)
        self.fc3 = nn.Linear(1024, 2)
        self.logsoftmax = nn.LogSoftmax(dim=1)

    def forward(self, x):
        x_ssl_feat, layerResult = self.ssl_model.extract_feat(x.squeeze(-1))
        y0, fullfeature = getAttenF(layerResult)
        y0 = self.fc0(y0)
        y0 = self.sig(y0)
        y0 = y0.view(y0.shape[0], y0.shape[1], y0.shape[2], -1)
        fullfeature = fullfeature * y0
        fullfeature = torch.sum(fullfeature, 1)
        fullfeature = fullfeature.unsqueeze(dim=1)
        x = self.first_bn(fullfeature)
        x = self.selu(x)
        x = F.max_pool2d(x, (3, 3))
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = self.selu(x)
        x = self.fc3(x)
        x = self.selu(x)
        output = self.logsoftmax(x)

        return output


class W2VAASISTLite(nn.Module):
    """Lighter back-end used for the ITW / DF21 ablations: weighted sum of all
    transformer layers followed by attentive statistics pooling."""

    def __init__(self, args, device, n_layers=24, emb_dim=1024, proj_dim=128):
        super().__init__()
        self.device = device
        self.ssl_model = SSLModel(device)
        self.n_layers = n_layers
        self.layer_weights = nn.Parameter(torch.zeros(n_layers))
        self.proj = nn.Linear(emb_dim, proj_dim)
        self.att = nn.Sequential(
            nn.Conv1d(proj_dim, proj_dim, kernel_size=1),
            nn.Tanh(),
            nn.Conv1d(proj_dim, proj_dim, kernel_size=1),
        )
        self.bn = nn.BatchNorm1d(proj_dim * 2)
        self.out = nn.Linear(proj_dim * 2, 2)
        self.use_cuda_graph_friendly_pool = False

    def _stack_layers(self, layer_results):
        # each element: (T, B, C) tuple from fairseq TransformerEncoder
        hs = [lr[0].transpose(0, 1) for lr in layer_results[: self.n_layers]]
        return torch.stack(hs, dim=0)  # (L, B, T, C)

    def forward(self, x):
        _, layer_results = self.ssl_model.extract_feat(x.squeeze(-1))
        hs = self._stack_layers(layer_results)
        w = F.softmax(self.layer_weights[: hs.size(0)], dim=0)
        h = (w.view(-1, 1, 1, 1) * hs).sum(0)  # (B, T, C)
        h = self.proj(h).transpose(1, 2)  # (B, C, T)
        a = F.softmax(self.att(h), dim=-1)
        mu = torch.sum(h * a, dim=-1)
        sg = torch.sqrt((torch.sum((h ** 2) * a, dim=-1) - mu ** 2).clamp(min=1e-5))
        z = self.bn(torch.cat([mu, sg], dim=1))
        return F.log_softmax(self.out(z), dim=1)


def freeze_feature_extractor(model: nn.Module):
    """Freeze the CNN feature encoder of wav2vec 2.0 (common fine-tuning trick)."""
    ssl = model.ssl_model.model
    for p in ssl.feature_extractor.parameters():
        p.requires_grad = False
    return model


def count_trainable(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def build_model(args, device: Union[str, torch.device]):
    name = getattr(args, 'backend', 'sls')
    if name == 'sls':
        model = Model(args, device)
    elif name == 'aasist_lite':
        model = W2VAASISTLite(args, device)
    else:
        raise ValueError('unknown back-end {}'.format(name))
    if getattr(args, 'freeze_cnn', False):
        freeze_feature_extractor(model)
    print('trainable params: {:.2f} M'.format(count_trainable(model) / 1e6))
    return model
