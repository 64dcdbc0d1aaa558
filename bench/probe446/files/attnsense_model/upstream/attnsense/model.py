"""
PyTorch re-implementation of AttnSense (Ma et al., IJCAI 2019):
"AttnSense: Multi-level Attention Mechanism For Multimodal Human Activity Recognition".

Each sensor (e.g. wrist accelerometer, wrist gyroscope, chest accelerometer, ...) is turned into a
sequence of short-time Fourier spectra, encoded with a small CNN, fused across sensors with an
attention layer, and finally modelled over time with a GRU + temporal attention.

The original implementation is in TensorFlow; this port keeps the layer sizes of the paper.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


train_on_gpu = torch.cuda.is_available()


class SensorCNN(nn.Module):
    """Per-sensor convolutional encoder applied to one (axes x freq) spectrum slice."""

    def __init__(self, n_axes, n_freq, n_filters=64, kernel=(3, 3), out_dim=128, dropout=0.2):
        super().__init__()
        self.conv1 = nn.Conv2d(1, n_filters, kernel_size=(n_axes, kernel[1]), padding=(0, kernel[1] // 2))
        self.conv2 = nn.Conv2d(n_filters, n_filters, kernel_size=(1, kernel[1]), padding=(0, kernel[1] // 2))
        self.conv3 = nn.Conv2d(n_filters, n_filters, kernel_size=(1, kernel[1]), padding=(0, kernel[1] // 2))
        self.bn1 = nn.BatchNorm2d(n_filters)
        self.bn2 = nn.BatchNorm2d(n_filters)
        self.bn3 = nn.BatchNorm2d(n_filters)
        self.drop = nn.Dropout(dropout)
        self.proj = nn.Linear(n_filters * n_freq, out_dim)

    def forward(self, x):
        # x: (B*T, 1, axes, freq)
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.drop(x)
        x = F.relu(self.bn2(self.conv2(x)))
        x = self.drop(x)
        x = F.relu(self.bn3(self.conv3(x)))
        x = x.flatten(1)
        return F.relu(self.proj(x))


class AdditiveAttention(nn.Module):
    """Bahdanau-style attention returning a weighted sum over dim=1 and the weights."""

    def __init__(self, in_dim, att_dim=64):
        super().__init__()
        self.w = nn.Linear(in_dim, att_dim)
        self.u = nn.Linear(att_dim, 1, bias=False)

    def forward(self, h, mask=None):
        # h: (B, N, D)
        scores = self.u(torch.tanh(self.w(h))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float('-inf'))
        alpha = torch.softmax(scores, dim=1)
        return torch.bmm(alpha.unsqueeze(1), h).squeeze(1), alpha


class AttnSense(nn.Module):
    def __init__(self, sensor_axes, n_classes, win_len=128, sub_win=16, hop=8, n_filters=64,
                 feat_dim=128, n_hidden=120, n_layers=2, gru_dropout=0.2, cls_dropout=0.5):
        """
        :param sensor_axes: list with the number of axes of every sensor, e.g. [3, 3, 3, 3, 3, 3]
        :param win_len: window length in samples
        :param sub_win: length of the sub-windows on which the spectrum is computed
        :param hop: hop between sub-windows
        """
        super().__init__()
        self.sensor_axes = list(sensor_axes)
        self.n_sensors = len(self.sensor_axes)
        self.sub_win = sub_win
        self.hop = hop
        self.n_steps = 1 + (win_len - sub_win) // hop
        self.n_freq = sub_win // 2 + 1
        self.n_hidden = n_hidden
        self.n_layers = n_layers

        self.register_buffer('window', torch.hann_window(sub_win), persistent=False)

        self.encoders = nn.ModuleList([
            SensorCNN(axes, self.n_freq, n_filters=n_filters, out_dim=feat_dim) for axes in self.sensor_axes
        ])
        self.sensor_attention = AdditiveAttention(feat_dim)
        self.gru = nn.GRU(feat_dim, n_hidden, num_layers=n_layers, batch_first=True, dropout=gru_dropout)
        self.temporal_attention = AdditiveAttention(n_hidden)
        self.dropout = nn.Dropout(cls_dropout)
        self.fc = nn.Linear(n_hidden, n_classes)

    def spectrogram(self, x):
        """
        x: (B, L, C) raw signal of all axes of all sensors.
        returns (B, T, C, F) log-magnitude spectra of the sub-windows.
        """
        b, l, c = x.shape
        x = x.permute(0, 2, 1).reshape(b * c, l)
        spec = torch.stft(x, n_fft=self.sub_win, hop_length=self.hop, win_length=self.sub_win,
                          window=self.window, center=False, return_complex=True)
        spec = torch.log1p(spec.abs())
        # (B*C, F, T) -> (B, T, C, F)
        spec = spec.reshape(b, c, self.n_freq, -1).permute(0, 3, 1, 2)
        return spec

    def init_hidden(self, batch_size):
        weight = next(self.parameters()).data
        if train_on_gpu:
            hidden = weight.new(self.n_layers, batch_size, self.n_hidden).zero_().cuda()
        else:
            hidden = weight.new(self.n_layers, batch_size, self.n_hidden).zero_()
        return hidden

    def forward(self, x, return_attention=False):
        b = x.shape[0]
        spec = self.spectrogram(x)
        t = spec.shape[1]

        # encode every sensor separately
        feats = []
        start = 0
        for i, axes in enumerate(self.sensor_axes):
            s = spec[:, :, start:start + axes, :]
            s = s.reshape(b * t, 1, axes, self.n_freq)
            feats.append(self.encoders[i](s).reshape(b, t, -1))
            start += axes
        feats = torch.stack(feats, dim=2)  # (B, T, S, D)

        # sensor-level attention (per time step)
        fused, sensor_alpha = self.sensor_attention(feats.reshape(b * t, self.n_sensors, -1))
        fused = fused.reshape(b, t, -1)

        # temporal modelling
        h0 = self.init_hidden(b)
        out, _ = self.gru(fused, h0)
        context, time_alpha = self.temporal_attention(out)
        logits = self.fc(self.dropout(context))
        if return_attention:
            return logits, sensor_alpha.reshape(b, t, -1), time_alpha
        return logits


def build_attnsense(dataset, n_classes, win_len):
    """Sensor layouts of the datasets used in the paper."""
    layouts = {
        'pamap2': [3, 3, 3, 3, 3, 3, 3, 3, 3],    # hand / chest / ankle: acc16, gyro, mag
        'skoda': [3] * 10,                        # 10 right-arm sensors
        'heterogeneous': [3, 3],                 # smartphone acc + gyro
        'ucihar': [3, 3, 3],                     # body acc, gyro, total acc
    }
    if dataset not in layouts:
        raise KeyError('no sensor layout for dataset {}'.format(dataset))
    return AttnSense(layouts[dataset], n_classes, win_len=win_len)


def count_flops(model, win_len, n_channels):
    """Very rough estimate used for the efficiency table (ignores BN / activations)."""
    total = 0
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            total += m.in_channels * m.out_channels * math.prod(m.kernel_size)
        elif isinstance(m, nn.Linear):
            total += m.in_features * m.out_features
    return total
