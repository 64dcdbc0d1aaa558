import torch
import torch.nn as nn
import torch.nn.functional as F


class MalConv(nn.Module):
    """
    MalConv from "Malware Detection by Eating a Whole EXE" (Raff et al., 2017).

    Gated 1-D convolution over byte embeddings followed by a global temporal
    max-pool. With input_length=2000000 and window_size=500 this is the
    configuration reported in the paper.
    """

    def __init__(self, input_length=2000000, window_size=500):
        super(MalConv, self).__init__()

        self.embed = nn.Embedding(257, 8, padding_idx=0)

        self.conv_1 = nn.Conv1d(4, 128, window_size, stride=window_size, bias=True)
        self.conv_2 = nn.Conv1d(4, 128, window_size, stride=window_size, bias=True)

        self.pooling = nn.MaxPool1d(int(input_length / window_size))

        self.fc_1 = nn.Linear(128, 128)
        self.fc_2 = nn.Linear(128, 1)

        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        x = self.embed(x)
        # Channel first
        x = torch.transpose(x, -1, -2)

        cnn_value = self.conv_1(x.narrow(-2, 0, 4))
        gating_weight = self.sigmoid(self.conv_2(x.narrow(-2, 4, 4)))

        x = cnn_value * gating_weight
        x = self.pooling(x)

        x = x.view(-1, 128)
        x = self.fc_1(x)
        x = self.fc_2(x)

        return x


class MalConvMaxPoolOnly(nn.Module):
    """
    Ablation used in the README: no gating, only a single convolution and a
    global max-pool. Handy for sanity-checking a new dataset.
    """

    def __init__(self, input_length=2000000, window_size=500, channels=128):
        super(MalConvMaxPoolOnly, self).__init__()
        self.embed = nn.Embedding(257, 8, padding_idx=0)
        self.conv = nn.Conv1d(8, channels, window_size, stride=window_size, bias=True)
        self.fc = nn.Linear(channels, 1)
        self.n_windows = int(input_length / window_size)

    def forward(self, x):
        x = self.embed(x).transpose(-1, -2)
        x = F.relu(self.conv(x))
        x = F.max_pool1d(x, self.n_windows)
        return self.fc(x.flatten(1))
