"""CsiNet / CsiNet+ encoder-decoder for CSI feedback.

Encoder (UE side):  3x3 conv -> BN -> LeakyReLU -> flatten -> FC (codeword)
Decoder (BS side):  FC -> reshape -> 2 x RefineNet -> 3x3 conv -> sigmoid

The sigmoid at the output matches the [0, 1] normalisation of the COST2100
data (real/imag parts are shifted by +0.5 before being fed to the network).
"""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["CsiNet", "CsiNetPlus", "csinet"]


class ConvBN(nn.Sequential):
    def __init__(self, in_planes, out_planes, kernel_size, stride=1, groups=1):
        if not isinstance(kernel_size, int):
            padding = [(i - 1) // 2 for i in kernel_size]
        else:
            padding = (kernel_size - 1) // 2
        super(ConvBN, self).__init__(OrderedDict([
            ("conv", nn.Conv2d(in_planes, out_planes, kernel_size, stride,
                               padding=padding, groups=groups, bias=False)),
            ("bn", nn.BatchNorm2d(out_planes)),
        ]))


class RefineNet(nn.Module):
    """Residual refinement unit: 2 -> 8 -> 16 -> 2 channels with a skip connection."""

    def __init__(self, in_ch=2, mid_chs=(8, 16)):
        super(RefineNet, self).__init__()
        self.conv1 = ConvBN(in_ch, mid_chs[0], 3)
        self.conv2 = ConvBN(mid_chs[0], mid_chs[1], 3)
        self.conv3 = ConvBN(mid_chs[1], in_ch, 3)
        self.act = nn.LeakyReLU(negative_slope=0.3, inplace=True)

    def forward(self, x):
        identity = x
        out = self.act(self.conv1(x))
        out = self.act(self.conv2(out))
        out = self.conv3(out)
        out = self.act(out + identity)
        return out


class Encoder(nn.Module):
    def __init__(self, encoded_dim, img_channels=2, img_height=32, img_width=32):
        super(Encoder, self).__init__()
        self.total = img_channels * img_height * img_width
        self.conv = ConvBN(img_channels, img_channels, 3)
        self.act = nn.LeakyReLU(negative_slope=0.3, inplace=True)
        self.fc = nn.Linear(self.total, encoded_dim)

    def forward(self, x):
        n = x.size(0)
        out = self.act(self.conv(x))
        out = out.view(n, -1)
        return self.fc(out)


class Decoder(nn.Module):
    def __init__(self, encoded_dim, residual_num=2, img_channels=2, img_height=32, img_width=32):
        super(Decoder, self).__init__()
        self.img_channels = img_channels
        self.img_height = img_height
        self.img_width = img_width
        self.fc = nn.Linear(encoded_dim, img_channels * img_height * img_width)
        self.refine = nn.Sequential(*[RefineNet(img_channels) for _ in range(residual_num)])
        self.conv = nn.Conv2d(img_channels, img_channels, 3, padding=1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, z):
        n = z.size(0)
        out = self.fc(z).view(n, self.img_channels, self.img_height, self.img_width)
        out = self.refine(out)
        out = self.conv(out)
        return self.sigmoid(out)


class CsiNet(nn.Module):
    def __init__(self, encoded_dim=512, residual_num=2, quantize_bits=0):
        super(CsiNet, self).__init__()
        self.encoder = Encoder(encoded_dim)
        self.decoder = Decoder(encoded_dim, residual_num)
        self.quantize_bits = quantize_bits
        self._init_weights()

    def _init_weights(self):
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def quantize(self, z):
        """Uniform scalar quantisation with straight-through gradient (CsiNet+ style)."""
        if self.quantize_bits <= 0:
            return z
        levels = 2 ** self.quantize_bits
        z = torch.sigmoid(z)
        z_q = torch.round(z * (levels - 1)) / (levels - 1)
        z_q = z + (z_q - z).detach()
        # map back to the pre-sigmoid domain expected by the decoder
        return torch.log(z_q.clamp(1e-6, 1 - 1e-6) / (1 - z_q.clamp(1e-6, 1 - 1e-6)))

    def forward(self, x):
        z = self.encoder(x)
        z = self.quantize(z)
        return self.decoder(z)


class CsiNetPlus(CsiNet):
    """CsiNet+: 7x7 encoder conv and a larger refinement kernel (Guo et al., 2020)."""

    def __init__(self, encoded_dim=512, residual_num=5, quantize_bits=0):
        super(CsiNetPlus, self).__init__(encoded_dim, residual_num, quantize_bits)
        self.encoder.conv = nn.Sequential(ConvBN(2, 2, 7), ConvBN(2, 2, 7))
        self.decoder.conv = nn.Conv2d(2, 2, 7, padding=3)
        self._init_weights()


class CsiNetLSTM(nn.Module):
    """CsiNet-LSTM (Wang et al., 2019): exploit temporal correlation over T CSI frames.

    The first frame is compressed at a high CR with its own encoder, the remaining
    frames at a low CR; the decoded frames are refined jointly by a 3-layer LSTM.
    """

    def __init__(self, T=10, dim_first=512, dim_rest=64, hidden=2048, lstm_layers=3):
        super(CsiNetLSTM, self).__init__()
        self.T = T
        self.enc_first = Encoder(dim_first)
        self.enc_rest = Encoder(dim_rest)
        self.dec_first = Decoder(dim_first)
        self.dec_rest = Decoder(dim_first + dim_rest)
        self.lstm = nn.LSTM(2048, hidden, num_layers=lstm_layers, batch_first=True)
        self.out = nn.Linear(hidden, 2048)

    def forward(self, x_seq):
        """x_seq: [B, T, 2, 32, 32]"""
        b, t = x_seq.shape[:2]
        z0 = self.enc_first(x_seq[:, 0])
        frames = [self.dec_first(z0)]
        for i in range(1, t):
            zi = self.enc_rest(x_seq[:, i])
            frames.append(self.dec_rest(torch.cat([z0, zi], dim=1)))
        seq = torch.stack(frames, dim=1).view(b, t, -1)
        h, _ = self.lstm(seq)
        out = torch.sigmoid(self.out(h) + seq)
        return out.view(b, t, 2, 32, 32)


def csinet(encoded_dim=512, plus=False, **kwargs):
    if plus:
        return CsiNetPlus(encoded_dim=encoded_dim, **kwargs)
    return CsiNet(encoded_dim=encoded_dim, **kwargs)


def count_flops(model, input_shape=(1, 2, 32, 32)):
    """Rough MAC count for conv/linear layers (used for the complexity table)."""
    flops = []

    def conv_hook(module, inp, out):
        k = module.kernel_size[0] * module.kernel_size[1] * module.in_channels // module.groups
        flops.append(out.numel() * k)

    def fc_hook(module, inp, out):
        flops.append(module.in_features * module.out_features)

    hooks = []
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(fc_hook))
    p = next(model.parameters())
    with torch.no_grad():
        model(torch.zeros(input_shape, device=p.device, dtype=p.dtype))
    for h in hooks:
        h.remove()
    return sum(flops)


if __name__ == "__main__":
    # quick latency benchmark on the first GPU
    net = csinet(encoded_dim=128).cuda().eval()
    x = torch.rand(200, 2, 32, 32).cuda()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    with torch.no_grad():
        for _ in range(10):
            net(x)
        start.record()
        for _ in range(100):
            y = net(x)
        end.record()
    torch.cuda.synchronize()
    print("output", tuple(y.shape), "MSE vs input %.4f" % F.mse_loss(y, x).item())
    print("latency per batch: %.3f ms" % (start.elapsed_time(end) / 100))
    print("FLOPs: %.2fM" % (count_flops(net) / 1e6))
