# -*- coding: utf-8 -*-
"""
GRU-D: Recurrent Neural Networks for Multivariate Time Series with Missing Values
(Che, Purushotham, Cho, Sontag & Liu, Scientific Reports 2018).

PyTorch implementation adapted from the traffic-forecasting GRU-D code so that it can be used
for PhysioNet 2012 / MIMIC-III mortality prediction.  Inputs are stacked as
    [X, X_last_obsv, Mask, Delta]   -> shape (batch, 4, seq_len, input_size)
"""
import math
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.nn.parameter import Parameter


class FilterLinear(nn.Module):
    def __init__(self, in_features, out_features, filter_square_matrix, bias=True):
        '''
        filter_square_matrix : filter square matrix, whose each elements is 0 or 1.
        '''
        super(FilterLinear, self).__init__()
        self.in_features = in_features
        self.out_features = out_features

        use_gpu = torch.cuda.is_available()
        self.filter_square_matrix = None
        if use_gpu:
            self.filter_square_matrix = Variable(filter_square_matrix.cuda(), requires_grad=False)
        else:
            self.filter_square_matrix = Variable(filter_square_matrix, requires_grad=False)

        self.weight = Parameter(torch.Tensor(out_features, in_features))
        if bias:
            self.bias = Parameter(torch.Tensor(out_features))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input):
        return F.linear(input, self.filter_square_matrix.mul(self.weight), self.bias)

    def __repr__(self):
        return self.__class__.__name__ + '(' \
            + 'in_features=' + str(self.in_features) \
            + ', out_features=' + str(self.out_features) \
            + ', bias=' + str(self.bias is not None) + ')'


class GRUD(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, X_mean, output_last=False, dropout=0.0):
        """
        Recurrent Neural Networks for Multivariate Times Series with Missing Values
        GRU-D: GRU exploit two representations of informative missingness patterns, i.e., masking and time interval.

        Implemented based on the paper:
        @article{che2018recurrent,
          title={Recurrent neural networks for multivariate time series with missing values},
          author={Che, Zhengping and Purushotham, Sanjay and Cho, Kyunghyun and Sontag, David and Liu, Yan},
          journal={Scientific reports},
          volume={8},
          number={1},
          pages={6085},
          year={2018},
          publisher={Nature Publishing Group}
        }

        GRU-D:
            input_size: variable dimension of each time
            hidden_size: dimension of hidden_state
            output_size: dimension of the classifier output (1 for mortality)
            X_mean: the mean of the historical input data (per variable, computed on the train split)
        """
        super(GRUD, self).__init__()

        self.hidden_size = hidden_size
        self.delta_size = input_size
        self.mask_size = input_size
        self.output_size = output_size

        self.use_gpu = torch.cuda.is_available()
        if self.use_gpu:
            self.identity = torch.eye(input_size).cuda()
            self.zeros = Variable(torch.zeros(input_size).cuda())
            self.X_mean = Variable(torch.Tensor(X_mean).cuda())
        else:
            self.identity = torch.eye(input_size)
            self.zeros = Variable(torch.zeros(input_size))
            self.X_mean = Variable(torch.Tensor(X_mean))

        self.zl = nn.Linear(input_size + hidden_size + self.mask_size, hidden_size)
        self.rl = nn.Linear(input_size + hidden_size + self.mask_size, hidden_size)
        self.hl = nn.Linear(input_size + hidden_size + self.mask_size, hidden_size)

        self.gamma_x_l = FilterLinear(self.delta_size, self.delta_size, self.identity)
        self.gamma_h_l = nn.Linear(self.delta_size, self.hidden_size)

        self.dropout = nn.Dropout(p=dropout)
        self.output_last = output_last
        self.classifier = nn.Linear(hidden_size, output_size)

    def step(self, x, x_last_obsv, x_mean, h, mask, delta):
        batch_size = x.shape[0]
        dim_size = x.shape[1]

        delta_x = torch.exp(-torch.max(self.zeros, self.gamma_x_l(delta)))
        delta_h = torch.exp(-torch.max(self.zeros, self.gamma_h_l(delta)))

        x = mask * x + (1 - mask) * (delta_x * x_last_obsv + (1 - delta_x) * x_mean)
        h = delta_h * h

        combined = torch.cat((x, h, mask), 1)
        z = torch.sigmoid(self.zl(combined))
        r = torch.sigmoid(self.rl(combined))
        combined_r = torch.cat((x, r * h, mask), 1)
        h_tilde = torch.tanh(self.hl(combined_r))
        h = (1 - z) * h + z * h_tilde

        return h

    def forward(self, input):
        batch_size = input.size(0)
        type_size = input.size(1)
        step_size = input.size(2)
        spatial_size = input.size(3)

        Hidden_State = self.initHidden(batch_size)
        X = torch.squeeze(input[:, 0, :, :])
        X_last_obsv = torch.squeeze(input[:, 1, :, :])
        Mask = torch.squeeze(input[:, 2, :, :])
        Delta = torch.squeeze(input[:, 3, :, :])

        outputs = None
        for i in range(step_size):
            Hidden_State = self.step(torch.squeeze(X[:, i:i + 1, :]),
                                     torch.squeeze(X_last_obsv[:, i:i + 1, :]),
                                     torch.squeeze(self.X_mean[:, i:i + 1, :]),
                                     Hidden_State,
                                     torch.squeeze(Mask[:, i:i + 1, :]),
                                     torch.squeeze(Delta[:, i:i + 1, :]))
            if outputs is None:
                outputs = Hidden_State.unsqueeze(1)
            else:
                outputs = torch.cat((outputs, Hidden_State.unsqueeze(1)), 1)

        if self.output_last:
            return self.classifier(self.dropout(outputs[:, -1, :]))
        else:
            return outputs

    def initHidden(self, batch_size):
        if torch.cuda.is_available():
            Hidden_State = Variable(torch.zeros(batch_size, self.hidden_size).cuda())
            return Hidden_State
        else:
            Hidden_State = Variable(torch.zeros(batch_size, self.hidden_size))
            return Hidden_State


class GRUDClassifier(nn.Module):
    """Thin wrapper used by the PhysioNet script: GRU-D encoder + sigmoid head with
    optional static (demographic) features concatenated before the classifier."""

    def __init__(self, input_size, hidden_size, X_mean, n_static=0, dropout=0.3):
        super(GRUDClassifier, self).__init__()
        self.grud = GRUD(input_size, hidden_size, hidden_size, X_mean, output_last=False,
                         dropout=dropout)
        self.n_static = n_static
        head_in = hidden_size + n_static
        self.head = nn.Sequential(
            nn.Dropout(dropout),
            nn.Linear(head_in, hidden_size),
            nn.ReLU(),
            nn.Linear(hidden_size, 1),
        )

    def forward(self, x, static=None):
        outputs = self.grud(x)            # (B, T, H)
        last = outputs[:, -1, :]
        if self.n_static > 0 and static is not None:
            last = torch.cat([last, static.to(last.dtype)], dim=1)
        return self.head(last).squeeze(-1)


def compute_x_mean(X, M):
    """Per-variable empirical mean over observed entries, broadcast to (1, T, D) as
    expected by GRUD.X_mean.  X, M are numpy arrays of shape (N, T, D)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        num = (X * M).sum(axis=(0, 1))
        den = M.sum(axis=(0, 1))
        mean = np.where(den > 0, num / np.maximum(den, 1), 0.0)
    T = X.shape[1]
    return np.tile(mean[None, None, :], (1, T, 1)).astype(np.float32)
