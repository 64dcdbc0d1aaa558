import os
import glob
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as models

from .Backbone import ResnetEncoder, DensenetEncoder
from .Utils import wrap_lr_pad


class ConvCompressH(nn.Module):
    def __init__(self, in_c, out_c, ks=3):
        super().__init__()
        assert ks % 2 == 1
        self.layers = nn.Sequential(
            nn.Conv2d(in_c, out_c, kernel_size=ks, stride=(2, 1), padding=ks // 2),
            nn.BatchNorm2d(out_c),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.layers(x)


class GlobalHeightConv(nn.Module):
    def __init__(self, in_c, out_c):
        super().__init__()
        self.layer = nn.Sequential(
            ConvCompressH(in_c, in_c // 2),
            ConvCompressH(in_c // 2, in_c // 2),
            ConvCompressH(in_c // 2, in_c // 4),
            ConvCompressH(in_c // 4, out_c),
        )

    def forward(self, x, out_w):
        x = self.layer(x)
        factor = out_w // x.shape[3]
        x = torch.cat([x[..., -1:], x, x[..., :1]], 3)
        x = F.interpolate(x, size=(x.shape[2], out_w + 2 * factor), mode='bilinear', align_corners=False)
        x = x[..., factor:-factor]
        return x


class GlobalHeightStage(nn.Module):
    def __init__(self, c1, c2, c3, c4, out_scale=8):
        super().__init__()
        self.cs = c1, c2, c3, c4
        self.out_scale = out_scale
        self.ghc_lst = nn.ModuleList([
            GlobalHeightConv(c, c // out_scale) for c in self.cs
        ])

    def forward(self, conv_list, out_w):
        bs = conv_list[0].shape[0]
        feature = torch.cat([
            f(x, out_w).reshape(bs, -1, out_w)
            for f, x in zip(self.ghc_lst, conv_list)
        ], dim=1)
        return feature


class BaseModule(nn.Module):
    """Small helper that knows how to save / restore the newest checkpoint of a folder."""
    def __init__(self, path):
        super().__init__()
        self.path = path
        os.makedirs(path, exist_ok=True)

    def Load(self, epoch=-1):
        files = sorted(glob.glob(os.path.join(self.path, 'model_*.pkl')))
        if len(files) == 0:
            print('No checkpoint in %s, train from scratch' % self.path)
            return 0
        name = files[-1] if epoch == -1 else os.path.join(self.path, 'model_%.5d.pkl' % epoch)
        print('Load %s' % name)
        params = torch.load(name)
        self.load_state_dict(params, strict=False)
        return int(os.path.basename(name)[6:11])

    def Save(self, epoch):
        name = os.path.join(self.path, 'model_%.5d.pkl' % epoch)
        torch.save(self.state_dict(), name)


class Network(BaseModule):
    def __init__(self, save_path, backbone='resnet50', dim=1024, use_rnn=True):
        super().__init__(save_path)
        self.backbone = backbone
        self.dim = dim
        self.use_rnn = use_rnn
        self.out_scale = 8
        self.step_cols = 4
        self.hidden = 512
        self.num_layers = 2

        if backbone.startswith('res'):
            self.feature_extractor = ResnetEncoder(backbone, pretrained=True)
        else:
            self.feature_extractor = DensenetEncoder(backbone, pretrained=True)

        with torch.no_grad():
            dummy = torch.zeros(1, 3, 512, dim)
            c1, c2, c3, c4 = [b.shape[1] for b in self.feature_extractor(dummy)]
            c_last = (c1 * 8 + c2 * 4 + c3 * 2 + c4 * 1) // self.out_scale

        self.reduce_height_module = GlobalHeightStage(c1, c2, c3, c4, self.out_scale)
        if use_rnn:
            self.bi_rnn = nn.LSTM(input_size=c_last, hidden_size=self.hidden,
                                  num_layers=self.num_layers, dropout=0.5,
                                  batch_first=False, bidirectional=True)
            self.drop_out = nn.Dropout(0.5)
            self.linear = nn.Linear(2 * self.hidden, 2 * self.step_cols)
        else:
            self.linear = nn.Sequential(
                nn.Linear(c_last, self.hidden),
                nn.ReLU(inplace=True),
                nn.Dropout(0.5),
                nn.Linear(self.hidden, 2 * self.step_cols),
            )
        self.register_buffer('x_mean', torch.FloatTensor([0.485, 0.456, 0.406])[None, :, None, None])
        self.register_buffer('x_std', torch.FloatTensor([0.229, 0.224, 0.225])[None, :, None, None])
        wrap_lr_pad(self)

    def _init_hidden(self, bs):
        # (num_layers * num_directions, batch, hidden_size)
        h0 = torch.zeros(self.num_layers * 2, bs, self.hidden).cuda()
        c0 = torch.zeros(self.num_layers * 2, bs, self.hidden).cuda()
        return h0, c0

    def forward(self, x):
        x = (x[:, :3] - self.x_mean) / self.x_std
        conv_list = self.feature_extractor(x)
        feature = self.reduce_height_module(conv_list, x.shape[3] // self.step_cols)

        if self.use_rnn:
            feature = feature.permute(2, 0, 1)  # [w, b, c*h]
            output, _ = self.bi_rnn(feature, self._init_hidden(feature.shape[1]))
            output = self.drop_out(output)
            output = self.linear(output)  # [w, b, 2*step]
            output = output.view(output.shape[0], output.shape[1], 2, self.step_cols)
            output = output.permute(1, 2, 0, 3).contiguous()
            output = output.view(output.shape[0], 2, -1)
        else:
            feature = feature.permute(0, 2, 1)
            output = self.linear(feature)
            output = output.view(output.shape[0], output.shape[1], 2, self.step_cols)
            output = output.permute(0, 2, 1, 3).contiguous()
            output = output.view(output.shape[0], 2, -1)

        # longitude-wise latitude of ceiling-wall and floor-wall boundary, in [-pi/2, pi/2]
        up = torch.sigmoid(output[:, 0:1, :]) * (-0.5 * np.pi)
        down = torch.sigmoid(output[:, 1:2, :]) * (0.5 * np.pi)
        return up, down
