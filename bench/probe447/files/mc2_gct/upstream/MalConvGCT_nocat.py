import torch
import torch.nn as nn
import torch.nn.functional as F

from LowMemConv import LowMemConvBase


def getParams():
    # Hyper-parameters used for the published MalConv GCT checkpoint.
    # Trained on 8 V100 GPUs for roughly 11 days with these settings.
    return {
        "embd_size": 8,
        "filter_size": 256,
        "stride": 64,
        "channels": 256,
        "log_stride": None,
        "num_layers": 1,
    }


class MalConvGCT(LowMemConvBase):
    """
    MalConv with Global Channel Gating (GCT). A second, lightweight context
    convolution produces a global context vector that gates every channel of
    the main convolution. The "nocat" variant does not concatenate the context
    to the final feature vector.
    """

    def __init__(self, out_size=2, channels=128, window_size=512, stride=512,
                 layers=1, embd_size=8, log_stride=None, low_mem=True):
        super(MalConvGCT, self).__init__()
        self.low_mem = low_mem
        self.embd = nn.Embedding(257, embd_size, padding_idx=0)
        if log_stride is not None:
            stride = 2 ** log_stride

        self.context_net = MalConvML(out_size=channels, channels=channels,
                                     window_size=window_size, stride=stride,
                                     layers=layers, embd_size=embd_size)
        self.convs = nn.ModuleList(
            [nn.Conv1d(embd_size, channels * 2, window_size, stride=stride, bias=True)] +
            [nn.Conv1d(channels, channels * 2, window_size, stride=1, bias=True) for i in range(layers - 1)])

        # one linear per layer to turn the global context into gate logits
        self.linear_atn = nn.ModuleList([nn.Linear(channels, channels) for i in range(layers)])

        # channel-wise 1x1 "sharing" convolutions
        self.convs_share = nn.ModuleList([nn.Conv1d(channels, 1, 1, bias=True) for i in range(layers)])

        self.fc_1 = nn.Linear(channels, channels)
        self.fc_2 = nn.Linear(channels, out_size)

    def processRange(self, x, gct=None):
        if gct is None:
            raise Exception("No Global Context Given")

        x = self.embd(x)
        x = x.permute(0, 2, 1)

        for conv_glu, linear_cntx, conv_share in zip(self.convs, self.linear_atn, self.convs_share):
            x = F.glu(conv_glu(x), dim=1)
            x = F.leaky_relu(conv_share(x))
            x_len = x.shape[2]
            B = x.shape[0]
            C = x.shape[1]

            sqrt_dim = float(C) ** 0.5
            # (B, C) -> (B, C, 1)
            ctnx = torch.tanh(linear_cntx(gct))
            ctnx = torch.unsqueeze(ctnx, dim=2)
            # (B, C, T) -> (B, 1, T) gate per position
            x_tmp = x.view(1, B * C, -1)
            x_tmp = F.conv1d(x_tmp, ctnx.view(B * C, 1, -1), groups=B) / sqrt_dim
            gates = torch.sigmoid(x_tmp.view(B, 1, -1))
            x = x * gates

        return x

    def forward(self, x):
        if self.low_mem:
            global_context = self.context_net.seq2fix(x)
        else:
            global_context = self.context_net(x)[2]

        post_conv = self.seq2fix(x, pr_args={"gct": global_context})

        penult = F.leaky_relu(self.fc_1(post_conv))
        x = self.fc_2(penult)

        return x, penult, post_conv


class MalConvML(LowMemConvBase):
    """Multi-layer MalConv, used here as the context network."""

    def __init__(self, out_size=2, channels=128, window_size=512, stride=512,
                 layers=1, embd_size=8, log_stride=None):
        super(MalConvML, self).__init__()
        self.embd = nn.Embedding(257, embd_size, padding_idx=0)
        if log_stride is not None:
            stride = 2 ** log_stride

        self.convs = nn.ModuleList(
            [nn.Conv1d(embd_size, channels * 2, window_size, stride=stride, bias=True)] +
            [nn.Conv1d(channels, channels * 2, window_size, stride=1, bias=True) for i in range(layers - 1)])
        self.convs_1 = nn.ModuleList([nn.Conv1d(channels * 2, channels, 1, bias=True) for i in range(layers)])

        self.fc_1 = nn.Linear(channels, channels)
        self.fc_2 = nn.Linear(channels, out_size)

    def processRange(self, x, **kwargs):
        x = self.embd(x)
        x = x.permute(0, 2, 1)

        for conv_glu, conv_share in zip(self.convs, self.convs_1):
            x = F.leaky_relu(conv_share(F.glu(conv_glu(x.contiguous()), dim=1).repeat(1, 2, 1)))

        return x

    def forward(self, x):
        post_conv = x = self.seq2fix(x)

        penult = x = F.leaky_relu(self.fc_1(x))
        x = self.fc_2(x)

        return x, penult, post_conv


if __name__ == "__main__":
    # quick smoke test on a random 2MB "binary"
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = MalConvGCT(channels=256, window_size=256, stride=64).to(dev)
    fake = torch.randint(1, 257, (2, 2 ** 21))
    with torch.no_grad():
        logits, _, _ = model(fake)
    print(logits.shape, "on", dev)
