import torch
import torch.nn as nn
import torch.nn.functional as F

from FAC.kernelconv2d import KernelConv2D


class make_dense(nn.Module):
    def __init__(self, nChannels, growthRate, kernel_size=3):
        super(make_dense, self).__init__()
        self.conv = nn.Conv2d(nChannels, growthRate, kernel_size=kernel_size, padding=(kernel_size - 1) // 2,
                              bias=False)

    def forward(self, x):
        out = F.relu(self.conv(x))
        out = torch.cat((x, out), 1)
        return out


# Residual dense block (RDB) architecture
class RDB(nn.Module):
    def __init__(self, nChannels, nDenselayer, growthRate):
        super(RDB, self).__init__()
        nChannels_ = nChannels
        modules = []
        for i in range(nDenselayer):
            modules.append(make_dense(nChannels_, growthRate))
            nChannels_ += growthRate
        self.dense_layers = nn.Sequential(*modules)
        self.conv_1x1 = nn.Conv2d(nChannels_, nChannels, kernel_size=1, padding=0, bias=False)

    def forward(self, x):
        out = self.dense_layers(x)
        out = self.conv_1x1(out)
        out = out + x
        return out


class WindowAttention(nn.Module):
    """Window based multi-head self attention used for the global fusion
    between the optical and the SAR features (Swin-style, no shift)."""

    def __init__(self, dim, window_size, num_heads, qkv_bias=True, attn_drop=0., proj_drop=0.):
        super().__init__()
        self.dim = dim
        self.window_size = window_size
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5

        self.relative_position_bias_table = nn.Parameter(
            torch.zeros((2 * window_size - 1) * (2 * window_size - 1), num_heads))
        coords_h = torch.arange(window_size)
        coords_w = torch.arange(window_size)
        coords = torch.stack(torch.meshgrid([coords_h, coords_w], indexing='ij'))
        coords_flatten = torch.flatten(coords, 1)
        relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
        relative_coords = relative_coords.permute(1, 2, 0).contiguous()
        relative_coords[:, :, 0] += window_size - 1
        relative_coords[:, :, 1] += window_size - 1
        relative_coords[:, :, 0] *= 2 * window_size - 1
        relative_position_index = relative_coords.sum(-1)
        self.register_buffer("relative_position_index", relative_position_index)

        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.kv = nn.Linear(dim, dim * 2, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        nn.init.trunc_normal_(self.relative_position_bias_table, std=.02)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x_opt, x_sar):
        B_, N, C = x_opt.shape
        q = self.q(x_opt).reshape(B_, N, self.num_heads, C // self.num_heads).permute(0, 2, 1, 3)
        kv = self.kv(x_sar).reshape(B_, N, 2, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]

        q = q * self.scale
        attn = (q @ k.transpose(-2, -1))

        relative_position_bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(
            self.window_size * self.window_size, self.window_size * self.window_size, -1)
        relative_position_bias = relative_position_bias.permute(2, 0, 1).contiguous()
        attn = attn + relative_position_bias.unsqueeze(0)

        attn = self.softmax(attn)
        attn = self.attn_drop(attn)

        x = (attn @ v).transpose(1, 2).reshape(B_, N, C)
        x = self.proj(x)
        x = self.proj_drop(x)
        return x


def window_partition(x, window_size):
    B, C, H, W = x.shape
    x = x.view(B, C, H // window_size, window_size, W // window_size, window_size)
    windows = x.permute(0, 2, 4, 3, 5, 1).contiguous().view(-1, window_size * window_size, C)
    return windows


def window_reverse(windows, window_size, B, H, W):
    C = windows.shape[-1]
    x = windows.view(B, H // window_size, W // window_size, window_size, window_size, C)
    x = x.permute(0, 5, 1, 3, 2, 4).contiguous().view(B, C, H, W)
    return x


class GlobalFusion(nn.Module):
    def __init__(self, dim, window_size=8, num_heads=8):
        super().__init__()
        self.window_size = window_size
        self.norm_opt = nn.LayerNorm(dim)
        self.norm_sar = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, window_size, num_heads)

    def forward(self, f_opt, f_sar):
        B, C, H, W = f_opt.shape
        w_opt = self.norm_opt(window_partition(f_opt, self.window_size))
        w_sar = self.norm_sar(window_partition(f_sar, self.window_size))
        fused = self.attn(w_opt, w_sar)
        return f_opt + window_reverse(fused, self.window_size, B, H, W)


class RDN_residual_CR(nn.Module):
    def __init__(self, input_size):
        super(RDN_residual_CR, self).__init__()
        self.G0 = 96
        kSize = 3

        # number of RDB blocks D, conv layers within the blocks C, out channels G within the last layer of the blocks,
        self.D = 6
        self.C = 5
        self.G = 48

        # Shallow feature extraction net
        self.SFENet1_opt = nn.Conv2d(13, self.G0, kSize, padding=(kSize - 1) // 2, stride=1)
        self.SFENet2_opt = nn.Conv2d(self.G0, self.G0, kSize, padding=(kSize - 1) // 2, stride=1)
        self.SFENet1_sar = nn.Conv2d(2, self.G0, kSize, padding=(kSize - 1) // 2, stride=1)
        self.SFENet2_sar = nn.Conv2d(self.G0, self.G0, kSize, padding=(kSize - 1) // 2, stride=1)

        # Residual dense blocks and dense feature fusion
        self.RDBs_opt = nn.ModuleList()
        self.RDBs_sar = nn.ModuleList()
        for i in range(self.D):
            self.RDBs_opt.append(RDB(self.G0, self.C, self.G))
            self.RDBs_sar.append(RDB(self.G0, self.C, self.G))

        # local fusion: the SAR features predict a 5x5 kernel per pixel and per channel
        self.kernel_size = 5
        self.kernel_pred = nn.ModuleList()
        self.kernel_conv = nn.ModuleList()
        self.global_fusion = nn.ModuleList()
        for i in range(self.D):
            self.kernel_pred.append(nn.Sequential(
                nn.Conv2d(self.G0 * 2, self.G0, 3, padding=1), nn.ReLU(),
                nn.Conv2d(self.G0, self.G0 * self.kernel_size ** 2, 1, padding=0)))
            self.kernel_conv.append(KernelConv2D.KernelConv2D(kernel_size=self.kernel_size))
            self.global_fusion.append(GlobalFusion(self.G0, window_size=8, num_heads=8))

        # Global Feature Fusion
        self.GFF = nn.Sequential(*[
            nn.Conv2d(self.D * self.G0, self.G0, 1, padding=0, stride=1),
            nn.Conv2d(self.G0, self.G0, kSize, padding=(kSize - 1) // 2, stride=1)
        ])

        # Up-sampling net
        self.UPNet = nn.Sequential(*[
            nn.Conv2d(self.G0, 256, kSize, padding=(kSize - 1) // 2, stride=1),
            nn.Conv2d(256, 13, kSize, padding=(kSize - 1) // 2, stride=1)
        ])

    def forward(self, cloudy_data, SAR):
        B_shallow_opt = self.SFENet1_opt(cloudy_data)
        x_opt = self.SFENet2_opt(B_shallow_opt)
        B_shallow_sar = self.SFENet1_sar(SAR)
        x_sar = self.SFENet2_sar(B_shallow_sar)

        RDBs_out = []
        for i in range(self.D):
            x_opt = self.RDBs_opt[i](x_opt)
            x_sar = self.RDBs_sar[i](x_sar)

            kernel = self.kernel_pred[i](torch.cat([x_opt, x_sar], 1))
            x_opt = x_opt + self.kernel_conv[i](x_sar, kernel.contiguous())
            x_opt = self.global_fusion[i](x_opt, x_sar)
            RDBs_out.append(x_opt)

        x = self.GFF(torch.cat(RDBs_out, 1))
        x += B_shallow_opt

        pred_CloudFree_data = self.UPNet(x) + cloudy_data
        return pred_CloudFree_data


if __name__ == '__main__':
    net = RDN_residual_CR(128).cuda()
    cloudy = torch.rand(1, 13, 128, 128).cuda()
    sar = torch.rand(1, 2, 128, 128).cuda()
    out = net(cloudy, sar)
    print(out.shape)
