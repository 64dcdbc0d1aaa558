"""Spatial and temporal discriminators of DGMR.

Both discriminators use spectrally normalised convolutions. The spatial one looks at
8 randomly selected frames at half resolution, the temporal one at a random 128x128
crop of the whole sequence with 3D convolutions.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import spectral_norm


class DBlock(nn.Module):
    """Residual downsampling block (2D or 3D), spectral-normalised."""

    def __init__(self, input_channels=12, output_channels=12, conv_type="standard",
                 first_relu=True, keep_same_output=False):
        super().__init__()
        self.input_channels = input_channels
        self.output_channels = output_channels
        self.first_relu = first_relu
        self.keep_same_output = keep_same_output
        self.conv_type = conv_type
        if conv_type == "3d":
            conv = nn.Conv3d
            # (T, H, W) -> (T/2, H/2, W/2)
            self.pooling = nn.AvgPool3d(kernel_size=2, stride=2)
        else:
            conv = nn.Conv2d
            self.pooling = nn.AvgPool2d(kernel_size=2, stride=2)
        self.conv_1x1 = spectral_norm(conv(input_channels, output_channels, kernel_size=1))
        self.first_conv_3x3 = spectral_norm(conv(input_channels, output_channels, kernel_size=3, padding=1))
        self.last_conv_3x3 = spectral_norm(conv(output_channels, output_channels, kernel_size=3, padding=1))
        self.relu = nn.ReLU()

    def forward(self, x):
        if self.input_channels != self.output_channels:
            x1 = self.conv_1x1(x)
            if not self.keep_same_output:
                x1 = self.pooling(x1)
        else:
            x1 = x

        if self.first_relu:
            x = self.relu(x)
        x = self.first_conv_3x3(x)
        x = self.relu(x)
        x = self.last_conv_3x3(x)

        if not self.keep_same_output:
            x = self.pooling(x)
        return x1 + x


class SpatialDiscriminator(nn.Module):

    def __init__(self, input_channels: int = 1, num_timesteps: int = 8, num_layers: int = 4,
                 conv_type: str = "standard"):
        super().__init__()
        self.num_timesteps = num_timesteps
        # frames are downsampled 2x and space-to-depth'ed 2x before the D blocks
        self.mean_pool = nn.AvgPool2d(2)
        self.space2depth = nn.PixelUnshuffle(downscale_factor=2)
        internal_chn = 24
        self.d1 = DBlock(input_channels=4 * input_channels, output_channels=2 * internal_chn * input_channels,
                         first_relu=False, conv_type=conv_type)
        self.intermediate_dblocks = nn.ModuleList()
        for _ in range(num_layers):
            internal_chn *= 2
            self.intermediate_dblocks.append(
                DBlock(input_channels=internal_chn * input_channels,
                       output_channels=2 * internal_chn * input_channels,
                       conv_type=conv_type))
        self.d6 = DBlock(input_channels=2 * internal_chn * input_channels,
                         output_channels=2 * internal_chn * input_channels,
                         keep_same_output=True, conv_type=conv_type)
        self.fc = spectral_norm(nn.Linear(2 * internal_chn * input_channels, 1))
        self.relu = nn.ReLU()
        self.bn = nn.BatchNorm1d(2 * internal_chn * input_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (B, T, C, H, W); pick num_timesteps frames at random (same frames for the whole batch)
        idxs = torch.randint(low=0, high=x.size(1), size=(self.num_timesteps,)).cuda()
        representations = []
        for idx in idxs:
            rep = self.mean_pool(x[:, idx, :, :, :])  # 128x128
            rep = self.space2depth(rep)  # 64x64x4
            rep = self.d1(rep)  # 32x32
            for d in self.intermediate_dblocks:
                rep = d(rep)
            rep = self.d6(rep)  # 2x2
            rep = torch.sum(F.relu(rep), dim=[2, 3])
            rep = self.bn(rep)
            rep = self.fc(rep)
            representations.append(rep)
        # sum over the selected frames
        x = torch.stack(representations, dim=0).sum(dim=0)
        return x


class TemporalDiscriminator(nn.Module):

    def __init__(self, input_channels: int = 12, num_layers: int = 3, conv_type: str = "standard"):
        super().__init__()
        self.downsample = nn.AvgPool3d(kernel_size=(1, 2, 2))
        self.space2depth = nn.PixelUnshuffle(downscale_factor=2)
        internal_chn = 48
        self.d1 = DBlock(input_channels=4 * input_channels, output_channels=internal_chn * input_channels,
                         conv_type="3d", first_relu=False)
        self.d2 = DBlock(input_channels=internal_chn * input_channels,
                         output_channels=2 * internal_chn * input_channels, conv_type="3d")
        self.intermediate_dblocks = nn.ModuleList()
        for _ in range(num_layers):
            internal_chn *= 2
            self.intermediate_dblocks.append(
                DBlock(input_channels=internal_chn * input_channels,
                       output_channels=2 * internal_chn * input_channels,
                       conv_type=conv_type))
        self.d_last = DBlock(input_channels=2 * internal_chn * input_channels,
                             output_channels=2 * internal_chn * input_channels,
                             keep_same_output=True, conv_type=conv_type)
        self.fc = spectral_norm(nn.Linear(2 * internal_chn * input_channels, 1))
        self.relu = nn.ReLU()
        self.bn = nn.BatchNorm1d(2 * internal_chn * input_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (B, T, C, H, W) -> (B, C, T, H, W) for the 3D convolutions
        x = self.downsample(x.permute(0, 2, 1, 3, 4)).permute(0, 2, 1, 3, 4)
        x = self.space2depth(x)
        x = torch.permute(x, dims=(0, 2, 1, 3, 4))
        x = self.d1(x)
        x = self.d2(x)
        # back to (B, T, C, H, W) and fold time into the batch for the 2D blocks
        x = torch.permute(x, dims=(0, 2, 1, 3, 4))
        representations = []
        for idx in range(x.size(1)):
            rep = x[:, idx, :, :, :]
            for d in self.intermediate_dblocks:
                rep = d(rep)
            rep = self.d_last(rep)
            rep = torch.sum(F.relu(rep), dim=[2, 3])
            rep = self.bn(rep)
            rep = self.fc(rep)
            representations.append(rep)
        x = torch.stack(representations, dim=1)
        x = torch.sum(x, keepdim=True, dim=1)
        return x


class Discriminator(nn.Module):

    def __init__(self, input_channels: int = 12, num_spatial_frames: int = 8, conv_type: str = "standard"):
        super().__init__()
        self.spatial_discriminator = SpatialDiscriminator(
            input_channels=input_channels, num_timesteps=num_spatial_frames, conv_type=conv_type)
        self.temporal_discriminator = TemporalDiscriminator(input_channels=input_channels, conv_type=conv_type)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spatial_loss = self.spatial_discriminator(x)
        temporal_loss = self.temporal_discriminator(x)
        return torch.cat([spatial_loss, temporal_loss], dim=1)
