"""
Copyright (C) 2019 NVIDIA Corporation.  All rights reserved.
Licensed under the CC BY-NC-SA 4.0 license (https://creativecommons.org/licenses/by-nc-sa/4.0/legalcode).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from models.networks.base_network import BaseNetwork
from models.networks.normalization import get_nonspade_norm_layer
from models.networks.architecture import ResnetBlock as ResnetBlock
from models.networks.architecture import SPADEResnetBlock as SPADEResnetBlock
import torch.nn.utils.spectral_norm as spectral_norm


class CondConvGenerator(BaseNetwork):
    @staticmethod
    def modify_commandline_options(parser, is_train):
        parser.set_defaults(norm_G='spectralsyncbatch')
        parser.add_argument('--num_upsampling_layers',
                            choices=('normal', 'more', 'most'), default='normal',
                            help="If 'more', adds upsampling layer between the two middle resnet blocks. If 'most', also add one more upsampling + resnet layer at the end of the generator")
        return parser

    def __init__(self, opt):
        super().__init__()
        self.opt = opt
        nf = opt.ngf
        self.sw, self.sh, self.num_upsampling_layers = self.compute_latent_vector_size(opt)

        norm_layer = get_nonspade_norm_layer(opt, opt.norm_E)
        if opt.use_vae:
            # In case of VAE, we will sample from random z vector
            self.fc = nn.Linear(opt.z_dim, 16 * nf * self.sw * self.sh)
        else:
            # Otherwise, we make the network deterministic by starting with
            # downsampled segmentation map instead of random z
            self.fc = nn.Conv2d(self.opt.semantic_nc, 16 * nf, 3, padding=1)

        # global-context aware weight prediction network
        self.labelenc1 = nn.Sequential(norm_layer(nn.Conv2d(self.opt.semantic_nc, nf, 3, padding=1)), nn.LeakyReLU(0.2, True))  # 256
        self.labelenc2 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 3, padding=1, stride=2)), nn.LeakyReLU(0.2, True))  # 128
        self.labelenc3 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 3, padding=1, stride=2)), nn.LeakyReLU(0.2, True))  # 64
        self.labelenc4 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 3, padding=1, stride=2)), nn.LeakyReLU(0.2, True))  # 32
        self.labelenc5 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 3, padding=1, stride=2)), nn.LeakyReLU(0.2, True))  # 16
        self.labelenc6 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 3, padding=1, stride=2)), nn.LeakyReLU(0.2, True))  # 8
        if self.num_upsampling_layers == 'more':
            self.labelenc7 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 3, padding=1, stride=2)), nn.LeakyReLU(0.2, True))

        # lateral
        self.labellat1 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 1)), nn.LeakyReLU(0.2, True))
        self.labellat2 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 1)), nn.LeakyReLU(0.2, True))
        self.labellat3 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 1)), nn.LeakyReLU(0.2, True))
        self.labellat4 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 1)), nn.LeakyReLU(0.2, True))
        self.labellat5 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 1)), nn.LeakyReLU(0.2, True))
        if self.num_upsampling_layers == 'more':
            self.labellat6 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 1)), nn.LeakyReLU(0.2, True))

        # upsampling
        self.labeldec1 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 3, padding=1)), nn.LeakyReLU(0.2, True))
        self.labeldec2 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 3, padding=1)), nn.LeakyReLU(0.2, True))
        self.labeldec3 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 3, padding=1)), nn.LeakyReLU(0.2, True))
        self.labeldec4 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 3, padding=1)), nn.LeakyReLU(0.2, True))
        self.labeldec5 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 3, padding=1)), nn.LeakyReLU(0.2, True))
        if self.num_upsampling_layers == 'more':
            self.labeldec6 = nn.Sequential(norm_layer(nn.Conv2d(nf, nf, 3, padding=1)), nn.LeakyReLU(0.2, True))

        # image generator
        self.head_0 = DepthsepCCBlock(16 * nf, 16 * nf, opt, opt.semantic_nc + nf)
        self.G_middle_0 = DepthsepCCBlock(16 * nf, 16 * nf, opt, opt.semantic_nc + nf)
        self.G_middle_1 = DepthsepCCBlock(16 * nf, 16 * nf, opt, opt.semantic_nc + nf)

        self.up_0 = DepthsepCCBlock(16 * nf, 8 * nf, opt, opt.semantic_nc + nf)
        self.up_1 = DepthsepCCBlock(8 * nf, 4 * nf, opt, opt.semantic_nc + nf)
        self.up_2 = DepthsepCCBlock(4 * nf, 2 * nf, opt, opt.semantic_nc + nf)
        self.up_3 = DepthsepCCBlock(2 * nf, 1 * nf, opt, opt.semantic_nc + nf)

        final_nc = nf

        self.conv_img = nn.Conv2d(final_nc, 3, 3, padding=1)

        self.up = nn.Upsample(scale_factor=2)

    def compute_latent_vector_size(self, opt):
        if opt.num_upsampling_layers == 'normal':
            num_up_layers = 5
        elif opt.num_upsampling_layers == 'more':
            num_up_layers = 6
        elif opt.num_upsampling_layers == 'most':
            num_up_layers = 7
        else:
            raise ValueError('opt.num_upsampling_layers [%s] not recognized' %
                             opt.num_upsampling_layers)

        sw = opt.crop_size // (2**num_up_layers)
        sh = round(sw / opt.aspect_ratio)

        return sw, sh, opt.num_upsampling_layers

    def forward(self, input, z=None):
        seg = input

        if self.opt.use_vae:
            # we sample z from unit normal and reshape the tensor
            if z is None:
                z = torch.randn(input.size(0), self.opt.z_dim,
                                dtype=torch.float32, device=input.get_device())
            x = self.fc(z)
            x = x.view(-1, 16 * self.opt.ngf, self.sh, self.sw)
        else:
            # we downsample segmap and run convolution
            x = F.interpolate(seg, size=(self.sh, self.sw))
            x = self.fc(x)

        # encode segmentation labels
        seg1 = self.labelenc1(seg)  # 256
        seg2 = self.labelenc2(seg1)  # 128
        seg3 = self.labelenc3(seg2)  # 64
        seg4 = self.labelenc4(seg3)  # 32
        seg5 = self.labelenc5(seg4)  # 16
        seg6 = self.labelenc6(seg5)  # 8
        if self.num_upsampling_layers == 'more':
            seg7 = self.labelenc7(seg6)
            segout1 = seg7
            segout2 = self.up(segout1) + self.labellat1(seg6)
            segout2 = self.labeldec1(segout2)
            segout3 = self.up(segout2) + self.labellat2(seg5)
            segout3 = self.labeldec2(segout3)
            segout4 = self.up(segout3) + self.labellat3(seg4)
            segout4 = self.labeldec3(segout4)
            segout5 = self.up(segout4) + self.labellat4(seg3)
            segout5 = self.labeldec4(segout5)
            segout6 = self.up(segout5) + self.labellat5(seg2)
            segout6 = self.labeldec5(segout6)
            segout7 = self.up(segout6) + self.labellat6(seg1)
            segout7 = self.labeldec6(segout7)
        else:
            segout1 = seg6
            segout2 = self.up(segout1) + self.labellat1(seg5)
            segout2 = self.labeldec1(segout2)
            segout3 = self.up(segout2) + self.labellat2(seg4)
            segout3 = self.labeldec2(segout3)
            segout4 = self.up(segout3) + self.labellat3(seg3)
            segout4 = self.labeldec3(segout4)
            segout5 = self.up(segout4) + self.labellat4(seg2)
            segout5 = self.labeldec4(segout5)
            segout6 = self.up(segout5) + self.labellat5(seg1)
            segout6 = self.labeldec5(segout6)

        x = self.head_0(x, seg, segout1)

        x = self.up(x)
        x = self.G_middle_0(x, seg, segout2)
        if self.num_upsampling_layers == 'more':
            x = self.up(x)
            x = self.G_middle_1(x, seg, segout3)
            x = self.up(x)
            x = self.up_0(x, seg, segout4)
            x = self.up(x)
            x = self.up_1(x, seg, segout5)
            x = self.up(x)
            x = self.up_2(x, seg, segout6)
            x = self.up(x)
            x = self.up_3(x, seg, segout7)
        else:
            x = self.G_middle_1(x, seg, segout2)
            x = self.up(x)
            x = self.up_0(x, seg, segout3)
            x = self.up(x)
            x = self.up_1(x, seg, segout4)
            x = self.up(x)
            x = self.up_2(x, seg, segout5)
            x = self.up(x)
            x = self.up_3(x, seg, segout6)

        x = self.conv_img(F.leaky_relu(x, 2e-1))
        x = torch.tanh(x)

        return x


class DepthsepCCBlock(nn.Module):
    """Depthwise-separable conditional convolution block: the label features
    predict a per-sample depthwise 3x3 kernel and a pointwise kernel, which are
    applied with grouped convolutions over the flattened batch."""

    def __init__(self, fin, fout, opt, semantic_nc=None):
        super().__init__()
        self.learned_shortcut = (fin != fout)
        fmiddle = min(fin, fout)
        self.fin, self.fmiddle, self.fout = fin, fmiddle, fout

        self.weight_channels = fmiddle * 9
        self.gen_weights1 = nn.Sequential(
            nn.Conv2d(semantic_nc, fin * 9, kernel_size=3, padding=1),
            nn.LeakyReLU(0.2, True))
        self.gen_weights2 = nn.Sequential(
            nn.Conv2d(semantic_nc, fout * 9, kernel_size=3, padding=1),
            nn.LeakyReLU(0.2, True))

        self.conv_0 = nn.Conv2d(fin, fmiddle, kernel_size=1)
        self.conv_1 = nn.Conv2d(fmiddle, fout, kernel_size=1)
        if self.learned_shortcut:
            self.conv_s = nn.Conv2d(fin, fout, kernel_size=1, bias=False)

        if 'spectral' in opt.norm_G:
            self.conv_0 = spectral_norm(self.conv_0)
            self.conv_1 = spectral_norm(self.conv_1)
            if self.learned_shortcut:
                self.conv_s = spectral_norm(self.conv_s)

        self.norm_0 = nn.BatchNorm2d(fmiddle, affine=True) if 'batch' in opt.norm_G \
            else nn.InstanceNorm2d(fmiddle, affine=True)
        self.norm_1 = nn.BatchNorm2d(fout, affine=True) if 'batch' in opt.norm_G \
            else nn.InstanceNorm2d(fout, affine=True)

    def cond_depthwise(self, x, kernel):
        # x: (b, c, h, w), kernel: (b, c * 9, h, w) -> spatially varying depthwise conv via unfold
        b, c, h, w = x.size()
        x_unfold = F.unfold(x, kernel_size=3, padding=1).view(b, c, 9, h, w)
        kernel = kernel.view(b, c, 9, h, w)
        return (x_unfold * kernel).sum(dim=2)

    def forward(self, x, seg, label_feat):
        seg = F.interpolate(seg, size=x.size()[2:], mode='nearest')
        label_feat = F.interpolate(label_feat, size=x.size()[2:], mode='nearest')
        cond = torch.cat([seg, label_feat], dim=1)

        x_s = self.shortcut(x)

        w1 = self.gen_weights1(cond)
        dx = self.cond_depthwise(x, w1)
        dx = self.conv_0(dx)
        dx = F.leaky_relu(self.norm_0(dx), 2e-1)

        w2 = self.gen_weights2(cond)
        dx = self.conv_1(dx)
        dx = self.cond_depthwise(dx, w2)
        dx = F.leaky_relu(self.norm_1(dx), 2e-1)

        return x_s + dx

    def shortcut(self, x):
        if self.learned_shortcut:
            return self.conv_s(x)
        return x
