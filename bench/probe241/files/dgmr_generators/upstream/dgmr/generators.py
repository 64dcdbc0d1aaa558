"""DGMR generator: context conditioning stack, latent conditioning stack and the
ConvGRU sampler that unrolls 18 lead times (90 min at 5 min resolution)."""
from typing import List, Tuple

import einops
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import spectral_norm

from .layers import AttentionLayer, ConvGRU
from .common import DBlock, GBlock, UpsampleGBlock, LBlock


class ContextConditioningStack(nn.Module):
    """Encodes the 4 context radar frames into 4 feature pyramids (64, 32, 16, 8 px)."""

    def __init__(self, input_channels: int = 1, output_channels: int = 768,
                 num_context_steps: int = 4, conv_type: str = "standard"):
        super().__init__()
        self.space2depth = nn.PixelUnshuffle(downscale_factor=2)
        self.d1 = DBlock(4 * input_channels, ((output_channels // 4) * input_channels) // num_context_steps,
                         conv_type=conv_type)
        self.d2 = DBlock(((output_channels // 4) * input_channels) // num_context_steps,
                         ((output_channels // 2) * input_channels) // num_context_steps, conv_type=conv_type)
        self.d3 = DBlock(((output_channels // 2) * input_channels) // num_context_steps,
                         (output_channels * input_channels) // num_context_steps, conv_type=conv_type)
        self.d4 = DBlock((output_channels * input_channels) // num_context_steps,
                         (output_channels * 2 * input_channels) // num_context_steps, conv_type=conv_type)
        self.conv1 = spectral_norm(nn.Conv2d((output_channels // 4) * input_channels,
                                             (output_channels // 8) * input_channels, kernel_size=3, padding=1))
        self.conv2 = spectral_norm(nn.Conv2d((output_channels // 2) * input_channels,
                                             (output_channels // 4) * input_channels, kernel_size=3, padding=1))
        self.conv3 = spectral_norm(nn.Conv2d(output_channels * input_channels,
                                             (output_channels // 2) * input_channels, kernel_size=3, padding=1))
        self.conv4 = spectral_norm(nn.Conv2d(output_channels * 2 * input_channels,
                                             output_channels * input_channels, kernel_size=3, padding=1))
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        x = self.space2depth(x)  # (B, T, 4C, H/2, W/2)
        steps = x.size(1)
        scale_1, scale_2, scale_3, scale_4 = [], [], [], []
        for i in range(steps):
            s1 = self.d1(x[:, i, :, :, :])
            s2 = self.d2(s1)
            s3 = self.d3(s2)
            s4 = self.d4(s3)
            scale_1.append(s1)
            scale_2.append(s2)
            scale_3.append(s3)
            scale_4.append(s4)
        scale_1 = self._mixing_layer(scale_1, self.conv1)
        scale_2 = self._mixing_layer(scale_2, self.conv2)
        scale_3 = self._mixing_layer(scale_3, self.conv3)
        scale_4 = self._mixing_layer(scale_4, self.conv4)
        return scale_1, scale_2, scale_3, scale_4

    def _mixing_layer(self, inputs, conv_block):
        # concatenate along channels: (B, T*C, H, W)
        stacked_inputs = einops.rearrange(torch.stack(inputs, dim=1), "b t c h w -> b (c t) h w")
        return F.relu(conv_block(stacked_inputs))


class LatentConditioningStack(nn.Module):
    """Maps i.i.d. Gaussian noise (8x8 spatial) to the initial state of the sampler."""

    def __init__(self, shape: Tuple[int, int, int] = (8, 8, 8), output_channels: int = 768,
                 use_attention: bool = True):
        super().__init__()
        self.shape = shape
        self.use_attention = use_attention
        self.conv_3x3 = spectral_norm(nn.Conv2d(shape[0], shape[0], kernel_size=3, padding=1))
        self.l_block1 = LBlock(input_channels=shape[0], output_channels=output_channels // 32)
        self.l_block2 = LBlock(input_channels=output_channels // 32, output_channels=output_channels // 16)
        self.l_block3 = LBlock(input_channels=output_channels // 16, output_channels=output_channels // 4)
        if self.use_attention:
            self.att_block = AttentionLayer(input_channels=output_channels // 4,
                                            output_channels=output_channels // 4)
        self.l_block4 = LBlock(input_channels=output_channels // 4, output_channels=output_channels)

    def forward(self, x: torch.Tensor, batch_size: int = 1) -> torch.Tensor:
        # draw the latent noise directly on the GPU (avoids a host->device copy per sample)
        z = torch.cuda.FloatTensor(batch_size, *self.shape).normal_()
        z = z.type_as(x)
        z = self.conv_3x3(z)
        z = self.l_block1(z)
        z = self.l_block2(z)
        z = self.l_block3(z)
        if self.use_attention:
            z = self.att_block(z)
        z = self.l_block4(z)
        return z


class Sampler(nn.Module):
    """Unrolls the ConvGRU pyramid for `forecast_steps` lead times."""

    def __init__(self, forecast_steps: int = 18, latent_channels: int = 768,
                 context_channels: int = 384, output_channels: int = 1):
        super().__init__()
        self.forecast_steps = forecast_steps
        self.convGRU1 = ConvGRU(input_channels=latent_channels + context_channels,
                                output_channels=context_channels, kernel_size=3)
        self.gru_conv_1x1 = spectral_norm(nn.Conv2d(context_channels, latent_channels, kernel_size=1))
        self.g1 = GBlock(input_channels=latent_channels, output_channels=latent_channels)
        self.up_g1 = UpsampleGBlock(input_channels=latent_channels, output_channels=latent_channels // 2)

        self.convGRU2 = ConvGRU(input_channels=latent_channels // 2 + context_channels // 2,
                                output_channels=context_channels // 2, kernel_size=3)
        self.gru_conv_1x1_2 = spectral_norm(nn.Conv2d(context_channels // 2, latent_channels // 2, kernel_size=1))
        self.g2 = GBlock(input_channels=latent_channels // 2, output_channels=latent_channels // 2)
        self.up_g2 = UpsampleGBlock(input_channels=latent_channels // 2, output_channels=latent_channels // 4)

        self.convGRU3 = ConvGRU(input_channels=latent_channels // 4 + context_channels // 4,
                                output_channels=context_channels // 4, kernel_size=3)
        self.gru_conv_1x1_3 = spectral_norm(nn.Conv2d(context_channels // 4, latent_channels // 4, kernel_size=1))
        self.g3 = GBlock(input_channels=latent_channels // 4, output_channels=latent_channels // 4)
        self.up_g3 = UpsampleGBlock(input_channels=latent_channels // 4, output_channels=latent_channels // 8)

        self.convGRU4 = ConvGRU(input_channels=latent_channels // 8 + context_channels // 8,
                                output_channels=context_channels // 8, kernel_size=3)
        self.gru_conv_1x1_4 = spectral_norm(nn.Conv2d(context_channels // 8, latent_channels // 8, kernel_size=1))
        self.g4 = GBlock(input_channels=latent_channels // 8, output_channels=latent_channels // 8)
        self.up_g4 = UpsampleGBlock(input_channels=latent_channels // 8, output_channels=latent_channels // 16)

        self.bn = nn.BatchNorm2d(latent_channels // 16)
        self.relu = nn.ReLU()
        self.conv_1x1 = spectral_norm(nn.Conv2d(latent_channels // 16, 4 * output_channels, kernel_size=1))
        self.depth2space = nn.PixelShuffle(upscale_factor=2)

    def forward(self, conditioning_states: List[torch.Tensor], latent_dim: torch.Tensor) -> torch.Tensor:
        init_states = conditioning_states
        latent_dim = einops.repeat(latent_dim, "b c h w -> (repeat b) c h w",
                                   repeat=init_states[0].shape[0] // latent_dim.shape[0])
        hidden_states = [latent_dim] * self.forecast_steps

        hidden_states = self.convGRU1(hidden_states, init_states[3])
        hidden_states = [self.gru_conv_1x1(h) for h in hidden_states]
        hidden_states = [self.up_g1(self.g1(h)) for h in hidden_states]

        hidden_states = self.convGRU2(hidden_states, init_states[2])
        hidden_states = [self.gru_conv_1x1_2(h) for h in hidden_states]
        hidden_states = [self.up_g2(self.g2(h)) for h in hidden_states]

        hidden_states = self.convGRU3(hidden_states, init_states[1])
        hidden_states = [self.gru_conv_1x1_3(h) for h in hidden_states]
        hidden_states = [self.up_g3(self.g3(h)) for h in hidden_states]

        hidden_states = self.convGRU4(hidden_states, init_states[0])
        hidden_states = [self.gru_conv_1x1_4(h) for h in hidden_states]
        hidden_states = [self.up_g4(self.g4(h)) for h in hidden_states]

        hidden_states = [F.relu(self.bn(h)) for h in hidden_states]
        hidden_states = [self.conv_1x1(h) for h in hidden_states]
        hidden_states = [self.depth2space(h) for h in hidden_states]
        forecasts = torch.stack(hidden_states, dim=1)
        return forecasts


class Generator(nn.Module):

    def __init__(self, conditioning_stack: nn.Module, latent_stack: nn.Module, sampler: nn.Module):
        super().__init__()
        self.conditioning_stack = conditioning_stack
        self.latent_stack = latent_stack
        self.sampler = sampler

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conditioning_states = self.conditioning_stack(x)
        latent_dim = self.latent_stack(x)
        x = self.sampler(conditioning_states, latent_dim)
        return x
