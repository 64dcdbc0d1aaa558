import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
from torch.nn.utils import weight_norm

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Mish(nn.Module):
    def __init__(self):
        super(Mish, self).__init__()

    def forward(self, x):
        return x * torch.tanh(F.softplus(x))


class FCBlock(nn.Module):
    """ Fully Connected Block """

    def __init__(self, in_features, out_features, activation=None, bias=False, dropout=None, spectral_norm=False):
        super(FCBlock, self).__init__()
        self.fc_layer = nn.Sequential()
        self.fc_layer.add_module(
            "fc_layer",
            LinearNorm(
                in_features,
                out_features,
                bias,
                spectral_norm,
            ),
        )
        if activation is not None:
            self.fc_layer.add_module("activ", activation)
        self.dropout = dropout

    def forward(self, x):
        x = self.fc_layer(x)
        if self.dropout is not None:
            x = F.dropout(x, self.dropout, self.training)
        return x


class LinearNorm(nn.Module):
    """ LinearNorm Projection """

    def __init__(self, in_features, out_features, bias=False, spectral_norm=False):
        super(LinearNorm, self).__init__()
        self.linear = nn.Linear(in_features, out_features, bias)

        nn.init.xavier_uniform_(self.linear.weight)
        if bias:
            nn.init.constant_(self.linear.bias, 0.0)
        if spectral_norm:
            self.linear = nn.utils.spectral_norm(self.linear)

    def forward(self, x):
        x = self.linear(x)
        return x


class Conv1DBlock(nn.Module):
    """ 1D Convolutional Block """

    def __init__(self, in_channels, out_channels, kernel_size, activation=None, dropout=None, spectral_norm=False):
        super(Conv1DBlock, self).__init__()

        self.conv_layer = nn.Sequential()
        self.conv_layer.add_module(
            "conv_layer",
            ConvNorm(
                in_channels,
                out_channels,
                kernel_size=kernel_size,
                stride=1,
                padding=int((kernel_size - 1) / 2),
                dilation=1,
                w_init_gain="tanh",
                spectral_norm=spectral_norm,
            ),
        )
        if activation is not None:
            self.conv_layer.add_module("activ", activation)
        self.dropout = dropout

    def forward(self, x, mask=None):
        x = x.contiguous().transpose(1, 2)
        x = self.conv_layer(x)

        if self.dropout is not None:
            x = F.dropout(x, self.dropout, self.training)

        x = x.contiguous().transpose(1, 2)
        if mask is not None:
            x = x.masked_fill(mask.unsqueeze(-1), 0)

        return x


class ConvNorm(nn.Module):
    """ 1D Convolution """

    def __init__(self, in_channels, out_channels, kernel_size=1, stride=1, padding=None, dilation=1, bias=True,
                 w_init_gain="linear", spectral_norm=False):
        super(ConvNorm, self).__init__()

        if padding is None:
            assert kernel_size % 2 == 1
            padding = int(dilation * (kernel_size - 1) / 2)

        self.conv = nn.Conv1d(
            in_channels,
            out_channels,
            kernel_size=kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            bias=bias,
        )
        if spectral_norm:
            self.conv = nn.utils.spectral_norm(self.conv)

    def forward(self, input):
        conv = self.conv(input)
        return conv


class ReluBlock(nn.Module):
    def __init__(self, c_in, c_out, kernel_size, stride, padding):
        super(ReluBlock, self).__init__()
        self.layers = nn.Sequential(
            nn.Conv2d(c_in, c_out, kernel_size=kernel_size, stride=stride, padding=padding),
            nn.InstanceNorm2d(c_out),
            nn.LeakyReLU(0.3),
        )

    def forward(self, x):
        return self.layers(x)


class GatedBlock(nn.Module):
    def __init__(self, c_in, c_out, kernel_size, stride, padding, deconv=False):
        super(GatedBlock, self).__init__()
        conv = nn.ConvTranspose2d if deconv else nn.Conv2d
        self.conv = weight_norm(conv(c_in, c_out, kernel_size=kernel_size, stride=stride, padding=padding))
        self.gate = weight_norm(conv(c_in, c_out, kernel_size=kernel_size, stride=stride, padding=padding))

    def forward(self, x):
        return self.conv(x) * torch.sigmoid(self.gate(x))


class fixed_STFT(nn.Module):
    """STFT / iSTFT with a fixed Hann window; the carrier of the watermark is the
    magnitude spectrogram, phase is kept aside and reused at reconstruction time."""

    def __init__(self, n_fft, hop_length, win_length):
        super(fixed_STFT, self).__init__()
        self.n_fft, self.hop_length, self.win_length = n_fft, hop_length, win_length
        self.window = torch.hann_window(self.win_length).to(device)

    def transform(self, x):
        x = torch.nn.functional.pad(x, pad=(0, self.n_fft - self.hop_length), mode="constant", value=0)
        spec = torch.stft(x, n_fft=self.n_fft, hop_length=self.hop_length, win_length=self.win_length,
                          window=self.window, return_complex=True)
        spec = torch.view_as_real(spec)
        return spec

    def inverse(self, spec):
        spec = torch.view_as_complex(spec.contiguous())
        y = torch.istft(spec, n_fft=self.n_fft, hop_length=self.hop_length, win_length=self.win_length,
                        window=self.window)
        return y

    @staticmethod
    def magphase(spec):
        real, imag = spec[..., 0], spec[..., 1]
        mag = torch.sqrt(real ** 2 + imag ** 2 + 1e-12)
        phase = torch.atan2(imag, real)
        return mag, phase

    @staticmethod
    def from_magphase(mag, phase):
        return torch.stack([mag * torch.cos(phase), mag * torch.sin(phase)], dim=-1)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)

        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-np.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[: x.size(0), :]
        return self.dropout(x)
