"""Handwriting synthesis network (Graves, 2013, sec. 5) in PyTorch.

Three stacked LSTMs with a soft Gaussian attention window over the one-hot
character sequence, followed by a mixture density output layer
(M bivariate Gaussians for the pen offsets + a Bernoulli for end-of-stroke).
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

use_cuda = torch.cuda.is_available()
FloatTensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor
LongTensor = torch.cuda.LongTensor if use_cuda else torch.LongTensor


class GaussianWindow(nn.Module):
    def __init__(self, input_size, num_mixtures):
        super(GaussianWindow, self).__init__()
        self.input_size = input_size
        self.num_mixtures = num_mixtures
        self.parameter_layer = nn.Linear(in_features=input_size, out_features=3 * num_mixtures)

    def forward(self, inputs, context, mask, prev_kappa):
        """
        inputs:     (B, H) output of the first LSTM at this time step
        context:    (B, U, V) one-hot characters
        mask:       (B, U) 1 for real characters, 0 for padding
        prev_kappa: (B, K) window position of the previous step
        """
        abk_hats = self.parameter_layer(inputs)
        abk = torch.exp(abk_hats).unsqueeze(-1)
        alpha, beta, kappa = abk.chunk(3, dim=1)
        kappa = kappa + prev_kappa.unsqueeze(-1)

        u = torch.arange(context.size(1)).type(FloatTensor)
        phi = torch.sum(alpha * torch.exp(-beta * (kappa - u) ** 2), dim=1)  # (B, U)
        phi = phi * mask
        window = torch.bmm(phi.unsqueeze(1), context).squeeze(1)  # (B, V)
        return window, kappa.squeeze(-1), phi


class MDNLayer(nn.Module):
    def __init__(self, input_size, num_mixtures):
        super(MDNLayer, self).__init__()
        self.num_mixtures = num_mixtures
        # pi, mu1, mu2, sigma1, sigma2, rho for each mixture + 1 eos
        self.output_layer = nn.Linear(input_size, 6 * num_mixtures + 1)

    def forward(self, x, bias=0.0):
        out = self.output_layer(x)
        eos_hat = out[..., 0:1]
        pi_hat, mu1, mu2, sigma1_hat, sigma2_hat, rho_hat = torch.split(out[..., 1:], self.num_mixtures, dim=-1)
        eos = torch.sigmoid(-eos_hat)
        pi = F.softmax(pi_hat * (1 + bias), dim=-1)
        sigma1 = torch.exp(sigma1_hat - bias)
        sigma2 = torch.exp(sigma2_hat - bias)
        rho = torch.tanh(rho_hat)
        return eos, pi, mu1, mu2, sigma1, sigma2, rho


class HandwritingSynthesisNetwork(nn.Module):
    def __init__(self, vocab_size, hidden_size=400, num_layers=3, num_window_mixtures=10,
                 num_output_mixtures=20, dropout=0.0):
        super(HandwritingSynthesisNetwork, self).__init__()
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_window_mixtures = num_window_mixtures
        self.num_output_mixtures = num_output_mixtures

        self.lstm1 = nn.LSTMCell(3 + vocab_size, hidden_size)
        self.window = GaussianWindow(hidden_size, num_window_mixtures)
        self.lstm2 = nn.LSTM(3 + vocab_size + hidden_size, hidden_size, batch_first=True)
        self.lstm3 = nn.LSTM(3 + vocab_size + hidden_size, hidden_size, batch_first=True)
        self.mdn = MDNLayer(3 * hidden_size, num_output_mixtures)
        self.dropout = nn.Dropout(dropout)

    def init_hidden(self, batch_size):
        h0 = Variable(torch.zeros(batch_size, self.hidden_size).type(FloatTensor))
        c0 = Variable(torch.zeros(batch_size, self.hidden_size).type(FloatTensor))
        window0 = Variable(torch.zeros(batch_size, self.vocab_size).type(FloatTensor))
        kappa0 = Variable(torch.zeros(batch_size, self.num_window_mixtures).type(FloatTensor))
        h2 = torch.zeros(1, batch_size, self.hidden_size).cuda() if use_cuda else torch.zeros(1, batch_size, self.hidden_size)
        c2 = torch.zeros_like(h2)
        h3 = torch.zeros_like(h2)
        c3 = torch.zeros_like(h2)
        return (h0, c0), window0, kappa0, (h2, c2), (h3, c3)

    def forward(self, strokes, chars, chars_mask, stroke_lengths=None, hidden=None, bias=0.0):
        """
        strokes:   (B, T, 3) (dx, dy, eos)
        chars:     (B, U, V) one-hot text
        chars_mask:(B, U)
        """
        B, T, _ = strokes.size()
        if hidden is None:
            hidden = self.init_hidden(B)
        (h1, c1), window, kappa, hid2, hid3 = hidden

        out1, windows, phis = [], [], []
        for t in range(T):
            x_t = torch.cat([strokes[:, t], window], dim=1)
            h1, c1 = self.lstm1(x_t, (h1, c1))
            window, kappa, phi = self.window(h1, chars, chars_mask, kappa)
            out1.append(h1)
            windows.append(window)
            phis.append(phi)
        out1 = torch.stack(out1, dim=1)
        windows = torch.stack(windows, dim=1)

        inp2 = torch.cat([strokes, out1, windows], dim=-1)
        if stroke_lengths is not None:
            packed = pack_padded_sequence(inp2, stroke_lengths, batch_first=True, enforce_sorted=False)
            out2, hid2 = self.lstm2(packed, hid2)
            out2, _ = pad_packed_sequence(out2, batch_first=True, total_length=T)
        else:
            out2, hid2 = self.lstm2(inp2, hid2)

        inp3 = torch.cat([strokes, out2, windows], dim=-1)
        out3, hid3 = self.lstm3(inp3, hid3)

        h = self.dropout(torch.cat([out1, out2, out3], dim=-1))
        params = self.mdn(h, bias)
        new_hidden = ((h1, c1), window, kappa, hid2, hid3)
        return params, new_hidden, torch.stack(phis, dim=1)

    def sample(self, chars, chars_mask, max_steps=1500, bias=0.0, stop_threshold=0.5):
        """Autoregressive sampling for a single text line; returns (T, 3) numpy strokes."""
        self.eval()
        x = torch.zeros(1, 1, 3).type(FloatTensor)
        hidden = self.init_hidden(1)
        strokes = []
        U = chars.size(1)
        with torch.no_grad():
            for step in range(max_steps):
                params, hidden, phi = self.forward(x, chars, chars_mask, hidden=hidden, bias=bias)
                eos, pi, mu1, mu2, s1, s2, rho = [p[:, -1] for p in params]
                k = torch.multinomial(pi, 1).item()
                mean = [mu1[0, k].item(), mu2[0, k].item()]
                cov = [[s1[0, k].item() ** 2, rho[0, k].item() * s1[0, k].item() * s2[0, k].item()],
                       [rho[0, k].item() * s1[0, k].item() * s2[0, k].item(), s2[0, k].item() ** 2]]
                dx, dy = np.random.multivariate_normal(mean, cov)
                pen = float(np.random.rand() < eos[0, 0].item())
                strokes.append([dx, dy, pen])
                x = torch.tensor([[[dx, dy, pen]]]).type(FloatTensor)
                # stop when the window has moved past the last character
                last_phi = phi[0, -1]
                if last_phi[-1] > stop_threshold and last_phi[-1] >= last_phi[:-1].max():
                    break
        return np.array(strokes, dtype=np.float32)


def mdn_loss(params, targets, mask, eps=1e-8):
    """Negative log-likelihood of the targets under the mixture density output."""
    eos, pi, mu1, mu2, sigma1, sigma2, rho = params
    x1 = targets[..., 0:1]
    x2 = targets[..., 1:2]
    x3 = targets[..., 2:3]

    norm1 = (x1 - mu1) / sigma1
    norm2 = (x2 - mu2) / sigma2
    z = norm1 ** 2 + norm2 ** 2 - 2 * rho * norm1 * norm2
    one_minus_rho2 = 1 - rho ** 2
    n = torch.exp(-z / (2 * one_minus_rho2)) / (2 * math.pi * sigma1 * sigma2 * torch.sqrt(one_minus_rho2))

    gmm = torch.sum(pi * n, dim=-1, keepdim=True)
    nll_gmm = -torch.log(gmm + eps)
    nll_eos = -(x3 * torch.log(eos + eps) + (1 - x3) * torch.log(1 - eos + eps))
    nll = (nll_gmm + nll_eos).squeeze(-1) * mask
    return nll.sum() / mask.sum()


def one_hot(char_ids, vocab_size):
    """char_ids: LongTensor (B, U) on any device -> FloatTensor (B, U, V)."""
    out = torch.zeros(char_ids.size(0), char_ids.size(1), vocab_size, device=char_ids.device)
    out.scatter_(2, char_ids.unsqueeze(-1), 1.0)
    return out
