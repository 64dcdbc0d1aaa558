"""PyTorch re-implementation of DeepSleepNet (Supratak et al., 2017).

Two-stage architecture for automatic sleep stage scoring from single-channel EEG:

* ``DeepFeatureNet``: representation learning with two CNN branches (small
  filters capture temporal detail, large filters capture frequency content).
* ``DeepSleepNet``: sequence residual learning with a bidirectional LSTM on top
  of the pretrained feature net, plus a shortcut fully-connected connection.

Shapes follow the original TensorFlow code: input epochs are 30 s at 100 Hz,
i.e. ``(batch, 1, 3000)``; the sequence model takes ``(batch, seq_len, 1, 3000)``.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def _conv_bn_relu(in_ch, out_ch, kernel_size, stride, padding):
    return nn.Sequential(
        nn.Conv1d(in_ch, out_ch, kernel_size=kernel_size, stride=stride, padding=padding, bias=False),
        nn.BatchNorm1d(out_ch, eps=1e-5, momentum=0.001),
        nn.ReLU(inplace=True),
    )


class _Branch(nn.Module):
    """One CNN branch of the feature net."""

    def __init__(self, first_kernel, first_stride, pool1, pool2, conv_kernel, drop=0.5):
        super().__init__()
        self.conv1 = _conv_bn_relu(1, 64, first_kernel, first_stride, first_kernel // 2)
        self.pool1 = nn.MaxPool1d(kernel_size=pool1, stride=pool1, padding=pool1 // 2)
        self.drop = nn.Dropout(p=drop)
        self.conv2 = _conv_bn_relu(64, 128, conv_kernel, 1, conv_kernel // 2)
        self.conv3 = _conv_bn_relu(128, 128, conv_kernel, 1, conv_kernel // 2)
        self.conv4 = _conv_bn_relu(128, 128, conv_kernel, 1, conv_kernel // 2)
        self.pool2 = nn.MaxPool1d(kernel_size=pool2, stride=pool2, padding=pool2 // 2)

    def forward(self, x):
        x = self.conv1(x)
        x = self.pool1(x)
        x = self.drop(x)
        x = self.conv2(x)
        x = self.conv3(x)
        x = self.conv4(x)
        x = self.pool2(x)
        return torch.flatten(x, 1)


class DeepFeatureNet(nn.Module):
    def __init__(self, sampling_rate=100, n_classes=5, use_dropout=True):
        super().__init__()
        fs = sampling_rate
        # small filter: fs/2 kernel, stride fs/16 ; large filter: 4*fs kernel, stride fs/2
        self.small = _Branch(first_kernel=fs // 2, first_stride=fs // 16, pool1=8, pool2=4, conv_kernel=8)
        self.large = _Branch(first_kernel=fs * 4, first_stride=fs // 2, pool1=4, pool2=2, conv_kernel=6)
        self.dropout = nn.Dropout(p=0.5 if use_dropout else 0.0)
        self.n_classes = n_classes
        with torch.no_grad():
            dummy = torch.zeros(1, 1, 30 * fs)
            self.feature_dim = self._features(dummy).shape[1]
        self.fc = nn.Linear(self.feature_dim, n_classes)

    def _features(self, x):
        return torch.cat([self.small(x), self.large(x)], dim=1)

    def forward(self, x, return_features=False):
        feats = self.dropout(self._features(x))
        if return_features:
            return feats
        return self.fc(feats)


class DeepSleepNet(nn.Module):
    """Sequence model: DeepFeatureNet -> 2-layer bi-LSTM (+ FC shortcut)."""

    def __init__(self, feature_net=None, sampling_rate=100, n_classes=5, seq_length=25,
                 n_rnn_layers=2, hidden_size=512, use_dropout_sequence=True):
        super().__init__()
        self.feature_net = feature_net if feature_net is not None else DeepFeatureNet(sampling_rate, n_classes)
        self.seq_length = seq_length
        self.n_rnn_layers = n_rnn_layers
        self.hidden_size = hidden_size
        feat_dim = self.feature_net.feature_dim

        self.shortcut = nn.Sequential(
            nn.Linear(feat_dim, 1024, bias=False),
            nn.BatchNorm1d(1024, eps=1e-5, momentum=0.001),
            nn.ReLU(inplace=True),
        )
        self.lstm = nn.LSTM(
            input_size=feat_dim,
            hidden_size=hidden_size,
            num_layers=n_rnn_layers,
            batch_first=True,
            dropout=0.5 if use_dropout_sequence else 0.0,
            bidirectional=True,
        )
        self.dropout = nn.Dropout(p=0.5 if use_dropout_sequence else 0.0)
        self.fc = nn.Linear(2 * hidden_size, n_classes)

    def init_hidden(self, batch_size):
        # (num_layers * num_directions, batch, hidden)
        h0 = torch.zeros(self.n_rnn_layers * 2, batch_size, self.hidden_size).cuda()
        c0 = torch.zeros(self.n_rnn_layers * 2, batch_size, self.hidden_size).cuda()
        return h0, c0

    def forward(self, x, hidden=None):
        # x: (batch, seq_len, 1, n_samples)
        b, s = x.shape[:2]
        feats = self.feature_net(x.reshape(b * s, *x.shape[2:]), return_features=True)
        short = self.shortcut(feats).reshape(b, s, -1)
        feats = feats.reshape(b, s, -1)

        if hidden is None:
            hidden = self.init_hidden(b)
        self.lstm.flatten_parameters()
        out, hidden = self.lstm(feats, hidden)
        out = self.dropout(out + short)
        logits = self.fc(out)  # (batch, seq_len, n_classes)
        return logits, tuple(h.detach() for h in hidden)

    def load_pretrained_features(self, state_dict_path, map_location="cpu", freeze=False):
        state = torch.load(state_dict_path, map_location=map_location)
        if "model" in state:
            state = state["model"]
        missing, unexpected = self.feature_net.load_state_dict(state, strict=False)
        if missing:
            print("[DeepSleepNet] missing keys in feature net:", missing)
        if unexpected:
            print("[DeepSleepNet] unexpected keys in feature net:", unexpected)
        if freeze:
            for p in self.feature_net.parameters():
                p.requires_grad = False

    def param_groups(self, lr_features, lr_sequence, weight_decay=1e-3):
        """The paper uses a 10x smaller learning rate for the pretrained CNN."""
        conv_w = [p for n, p in self.feature_net.named_parameters() if "conv1" in n and p.ndim > 1]
        other_feat = [p for n, p in self.feature_net.named_parameters() if not ("conv1" in n and p.ndim > 1)]
        seq = list(self.shortcut.parameters()) + list(self.lstm.parameters()) + list(self.fc.parameters())
        return [
            {"params": conv_w, "lr": lr_features, "weight_decay": weight_decay},
            {"params": other_feat, "lr": lr_features, "weight_decay": 0.0},
            {"params": seq, "lr": lr_sequence, "weight_decay": 0.0},
        ]


def sequence_loss(logits, targets, class_weights=None):
    """Cross-entropy over every epoch of every sequence."""
    n_classes = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, n_classes), targets.reshape(-1), weight=class_weights)


if __name__ == "__main__":
    net = DeepFeatureNet()
    print(net)
    print("feature dim:", net.feature_dim)
    x = torch.randn(4, 1, 3000)
    print(net(x).shape)
