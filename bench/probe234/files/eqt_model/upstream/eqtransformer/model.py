"""
PyTorch re-implementation of EQTransformer (Mousavi et al., 2020).

Mirrors the original Keras layout: a convolutional encoder, a stack of
residual CNN and BiLSTM blocks, two global transformer blocks, and three
decoders (detection, P picking, S picking) with local attention for the
picking branches.
"""
import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F


class SeqSelfAttention(nn.Module):
    """
    Additive self attention as in keras-self-attention (used by the original model).

    :param input_size: Feature dimension
    :param units: Hidden units of the attention scoring MLP
    :param attention_width: If set, restrict attention to a local window of this width
    """

    def __init__(self, input_size, units=32, attention_width=None, eps=1e-5):
        super().__init__()
        self.attention_width = attention_width
        self.Wx = nn.Parameter(torch.empty(input_size, units))
        self.Wt = nn.Parameter(torch.empty(input_size, units))
        self.bh = nn.Parameter(torch.zeros(units))
        self.Wa = nn.Parameter(torch.empty(units, 1))
        self.ba = nn.Parameter(torch.zeros(1))
        self.eps = eps
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.Wx)
        nn.init.xavier_uniform_(self.Wt)
        nn.init.xavier_uniform_(self.Wa)

    def forward(self, x):
        # x: (batch, time, features)
        q = torch.matmul(x, self.Wt).unsqueeze(2)
        k = torch.matmul(x, self.Wx).unsqueeze(1)
        h = torch.tanh(q + k + self.bh)
        e = (torch.matmul(h, self.Wa) + self.ba).squeeze(-1)

        if self.attention_width is not None:
            n = x.shape[1]
            idx = torch.arange(n, device=x.device)
            lower = idx - self.attention_width // 2
            upper = lower + self.attention_width
            cols = idx.unsqueeze(0)
            mask = (cols >= lower.unsqueeze(1)) & (cols < upper.unsqueeze(1))
            e = e.masked_fill(~mask, float("-inf"))

        e = e - e.max(dim=-1, keepdim=True).values
        a = torch.exp(e)
        a = a / (a.sum(dim=-1, keepdim=True) + self.eps)
        v = torch.bmm(a, x)
        return v, a


class LayerNormalization(nn.Module):
    def __init__(self, filters, eps=1e-14):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(filters, 1))
        self.beta = nn.Parameter(torch.zeros(filters, 1))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(dim=1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=1, keepdim=True) + self.eps
        std = torch.sqrt(var)
        return self.gamma * (x - mean) / std + self.beta


class FeedForward(nn.Module):
    def __init__(self, io_size, drop_rate, hidden_size=128):
        super().__init__()
        self.lin1 = nn.Linear(io_size, hidden_size)
        self.lin2 = nn.Linear(hidden_size, io_size)
        self.dropout = nn.Dropout(drop_rate)

    def forward(self, x):
        return self.lin2(self.dropout(F.relu(self.lin1(x))))


class Transformer(nn.Module):
    def __init__(self, input_size, drop_rate, attention_width=None, eps=1e-5):
        super().__init__()
        self.attention = SeqSelfAttention(input_size, attention_width=attention_width, eps=eps)
        self.norm1 = LayerNormalization(input_size)
        self.ff = FeedForward(input_size, drop_rate)
        self.norm2 = LayerNormalization(input_size)

    def forward(self, x):
        # x: (batch, channels, time)
        y, weight = self.attention(x.permute(0, 2, 1))
        y = x + y.permute(0, 2, 1)
        y = self.norm1(y)
        y2 = self.ff(y.permute(0, 2, 1)).permute(0, 2, 1)
        y2 = y + y2
        return self.norm2(y2), weight


class ResCNNBlock(nn.Module):
    def __init__(self, filters, ker, drop_rate):
        super().__init__()
        self.manual_padding = ker == 2
        self.dropout = SpatialDropout1d(drop_rate)
        self.norm1 = nn.BatchNorm1d(filters, eps=1e-3)
        self.conv1 = nn.Conv1d(filters, filters, ker, padding=ker // 2)
        self.norm2 = nn.BatchNorm1d(filters, eps=1e-3)
        self.conv2 = nn.Conv1d(filters, filters, ker, padding=ker // 2)

    def forward(self, x):
        y = self.dropout(F.relu(self.norm1(x)))
        if self.manual_padding:
            y = F.pad(y, (0, 1), "constant", 0)
        y = self.conv1(y)
        y = self.dropout(F.relu(self.norm2(y)))
        if self.manual_padding:
            y = F.pad(y, (0, 1), "constant", 0)
        y = self.conv2(y)
        return x + y


class SpatialDropout1d(nn.Module):
    def __init__(self, drop_rate):
        super().__init__()
        self.dropout = nn.Dropout2d(drop_rate)

    def forward(self, x):
        return self.dropout(x.unsqueeze(-1)).squeeze(-1)


class BiLSTMBlock(nn.Module):
    def __init__(self, input_size, hidden_size, drop_rate):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, bidirectional=True, batch_first=True)
        self.dropout = nn.Dropout(drop_rate)
        self.conv = nn.Conv1d(2 * hidden_size, hidden_size, 1)
        self.norm = nn.BatchNorm1d(hidden_size, eps=1e-3)

    def forward(self, x):
        x = x.permute(0, 2, 1)
        x = self.lstm(x)[0]
        x = self.dropout(x)
        x = x.permute(0, 2, 1)
        return self.norm(self.conv(x))


class Encoder(nn.Module):
    def __init__(self, input_channels, filters, kernel_sizes, in_samples):
        super().__init__()
        convs, pools = [], []
        self.paddings = []
        for in_c, out_c, kernel_size in zip([input_channels] + filters[:-1], filters, kernel_sizes):
            convs.append(nn.Conv1d(in_c, out_c, kernel_size, padding=kernel_size // 2))
            padding = in_samples % 2
            self.paddings.append(padding)
            pools.append(nn.MaxPool1d(2, padding=0))
            in_samples = (in_samples + padding) // 2
        self.convs = nn.ModuleList(convs)
        self.pools = nn.ModuleList(pools)

    def forward(self, x):
        for conv, pool, padding in zip(self.convs, self.pools, self.paddings):
            x = F.relu(conv(x))
            if padding != 0:
                x = F.pad(x, (0, padding), "constant", -1e10)
            x = pool(x)
        return x


class Decoder(nn.Module):
    def __init__(self, input_channels, filters, kernel_sizes, out_samples):
        super().__init__()
        self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
        self.crops = []
        current = out_samples
        for _ in filters:
            self.crops.append(current % 2)
            current = (current + 1) // 2
        self.crops = self.crops[::-1]
        convs = []
        for in_c, out_c, kernel_size in zip([input_channels] + filters[:-1], filters, kernel_sizes):
            convs.append(nn.Conv1d(in_c, out_c, kernel_size, padding=kernel_size // 2))
        self.convs = nn.ModuleList(convs)

    def forward(self, x):
        for conv, crop in zip(self.convs, self.crops):
            x = self.upsample(x)
            if crop != 0:
                x = x[:, :, :-crop]
            x = F.relu(conv(x))
        return x


class EQTransformer(nn.Module):
    """
    :param in_channels: Number of input components (3)
    :param in_samples: Window length in samples (6000 = 60 s at 100 Hz)
    :param lstm_blocks: Number of BiLSTM blocks
    :param drop_rate: Dropout rate
    :param original_compatible: Reproduce the off-by-one cropping of the Keras model
    """

    def __init__(self, in_channels=3, in_samples=6000, lstm_blocks=3, drop_rate=0.1, original_compatible=False):
        super().__init__()
        self.in_samples = in_samples
        self.filters = [8, 16, 16, 32, 32, 64, 64]
        self.kernel_sizes = [11, 9, 7, 7, 5, 5, 3]
        self.res_cnn_kernels = [3, 3, 3, 3, 2, 3, 2]
        self.original_compatible = original_compatible

        self.encoder = Encoder(in_channels, self.filters, self.kernel_sizes, in_samples)
        self.res_cnn_stack = nn.ModuleList(
            [ResCNNBlock(self.filters[-1], ker, drop_rate) for ker in self.res_cnn_kernels]
        )
        self.bi_lstm_stack = nn.ModuleList(
            [BiLSTMBlock(self.filters[-1] if i == 0 else 16, 16, drop_rate) for i in range(lstm_blocks)]
        )
        self.transformer_d0 = Transformer(input_size=16, drop_rate=drop_rate)
        self.transformer_d = Transformer(input_size=16, drop_rate=drop_rate)

        self.decoder_d = Decoder(16, self.filters[::-1], self.kernel_sizes[::-1], in_samples)
        self.conv_d = nn.Conv1d(self.filters[0], 1, 11, padding=5)

        self.pick_lstms = nn.ModuleList([nn.LSTM(16, 16, batch_first=True) for _ in range(2)])
        self.pick_attentions = nn.ModuleList([SeqSelfAttention(16, attention_width=3) for _ in range(2)])
        self.pick_decoders = nn.ModuleList(
            [Decoder(16, self.filters[::-1], self.kernel_sizes[::-1], in_samples) for _ in range(2)]
        )
        self.pick_convs = nn.ModuleList([nn.Conv1d(self.filters[0], 1, 11, padding=5) for _ in range(2)])
        self.dropout = nn.Dropout(drop_rate)

    def forward(self, x):
        assert x.ndim == 3 and x.shape[1:] == (3, self.in_samples)

        x = self.encoder(x)
        for block in self.res_cnn_stack:
            x = block(x)
        for block in self.bi_lstm_stack:
            x = block(x)
        x, _ = self.transformer_d0(x)
        x, _ = self.transformer_d(x)

        detection = torch.sigmoid(self.conv_d(self.decoder_d(x)))
        detection = torch.squeeze(detection, dim=1)

        outputs = [detection]
        for lstm, attention, decoder, conv in zip(self.pick_lstms, self.pick_attentions,
                                                   self.pick_decoders, self.pick_convs):
            px = x.permute(0, 2, 1)
            px = lstm(px)[0]
            px = self.dropout(px)
            px, _ = attention(px)
            px = px.permute(0, 2, 1)
            pred = torch.sigmoid(conv(decoder(px)))
            outputs.append(torch.squeeze(pred, dim=1))

        return tuple(outputs)


def flatten_lstm_weights(model: nn.Module):
    """
    cuDNN requires the LSTM weights in one contiguous chunk. After loading a
    state dict or wrapping in DataParallel they can end up fragmented, which
    triggers a warning and a slow path on every call.
    """
    for module in model.modules():
        if isinstance(module, nn.LSTM):
            module.flatten_parameters()


def load_keras_weights(model: EQTransformer, h5_path: str):
    """Port the original Keras weights (EqT_original_model.h5) into the torch model."""
    try:
        import h5py
    except ImportError:
        raise ImportError("h5py is required to load the Keras weights")
    warnings.warn("Keras weight conversion is approximate for the LSTM gate order", UserWarning)
    with h5py.File(h5_path, "r") as f:
        n_loaded = 0
        for name, param in model.named_parameters():
            key = name.replace(".", "/")
            if key in f:
                param.data.copy_(torch.from_numpy(f[key][()]).reshape(param.shape))
                n_loaded += 1
    return n_loaded


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = EQTransformer().to(device)
    flatten_lstm_weights(model)
    x = torch.randn(4, 3, 6000, device=device)
    det, p, s = model(x)
    print(det.shape, p.shape, s.shape, sum(p.numel() for p in model.parameters()))
    print("cudnn enabled:", torch.backends.cudnn.enabled, "version:", torch.backends.cudnn.version())
