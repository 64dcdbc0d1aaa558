import time

import torch
import torch.nn.functional as F
import torch.nn as nn

import numpy as np


class FeatureMixerLayer(nn.Module):
    """One isotropic MLP block applied to the flattened spatial dimension of every channel."""

    def __init__(self, in_dim, mlp_ratio=1):
        super().__init__()
        self.mix = nn.Sequential(
            nn.LayerNorm(in_dim),
            nn.Linear(in_dim, int(in_dim * mlp_ratio)),
            nn.ReLU(),
            nn.Linear(int(in_dim * mlp_ratio), in_dim),
        )

        for m in self.modules():
            if isinstance(m, (nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        return x + self.mix(x)


class MixVPR(nn.Module):
    def __init__(self,
                 in_channels=1024,
                 in_h=20,
                 in_w=20,
                 out_channels=512,
                 mix_depth=1,
                 mlp_ratio=1,
                 out_rows=4,
                 ) -> None:
        super().__init__()

        # input feature maps are (in_channels, in_h, in_w), e.g. ResNet-50 cropped after layer3
        self.in_h = in_h
        self.in_w = in_w
        self.in_channels = in_channels

        # output descriptor is out_rows x out_channels (flattened, L2-normalised)
        self.out_channels = out_channels
        self.out_rows = out_rows

        self.mix_depth = mix_depth  # number of stacked mixer blocks
        self.mlp_ratio = mlp_ratio  # hidden width of each mixer MLP, relative to in_h * in_w

        hw = in_h * in_w
        self.mix = nn.Sequential(*[
            FeatureMixerLayer(in_dim=hw, mlp_ratio=mlp_ratio)
            for _ in range(self.mix_depth)
        ])
        self.channel_proj = nn.Linear(in_channels, out_channels)
        self.row_proj = nn.Linear(hw, out_rows)

    def forward(self, x):
        x = x.flatten(2)
        x = self.mix(x)
        x = x.permute(0, 2, 1)
        x = self.channel_proj(x)
        x = x.permute(0, 2, 1)
        x = self.row_proj(x)
        x = F.normalize(x.flatten(1), p=2, dim=-1)
        return x


# ---- quick self-test: python -m models.aggregators.mixvpr ----

def print_nb_params(m):
    model_parameters = filter(lambda p: p.requires_grad, m.parameters())
    params = sum([np.prod(p.size()) for p in model_parameters])
    print(f'Trainable parameters: {params/1e6:.3}M')


@torch.no_grad()
def benchmark(agg, x, n_warmup=20, n_iters=200):
    """Average forward time of the aggregator alone, timed with CUDA events so that
    asynchronous kernel launches are accounted for."""
    for _ in range(n_warmup):
        agg(x)
    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = np.zeros(n_iters)
    for i in range(n_iters):
        starter.record()
        agg(x)
        ender.record()
        torch.cuda.synchronize()
        timings[i] = starter.elapsed_time(ender)
    return timings.mean(), timings.std()


def main():
    x = torch.randn(1, 1024, 20, 20)
    agg = MixVPR(
        in_channels=1024,
        in_h=20,
        in_w=20,
        out_channels=1024,
        mix_depth=4,
        mlp_ratio=1,
        out_rows=4)

    print_nb_params(agg)
    output = agg(x)
    print(output.shape)

    if torch.cuda.is_available():
        agg = agg.cuda().eval()
        x = x.cuda()
        mean_ms, std_ms = benchmark(agg, x)
        print(f'GPU forward: {mean_ms:.3f} +- {std_ms:.3f} ms')
    else:
        t0 = time.perf_counter()
        for _ in range(50):
            agg(x)
        print(f'CPU forward: {(time.perf_counter() - t0) / 50 * 1000:.3f} ms')


if __name__ == '__main__':
    main()
