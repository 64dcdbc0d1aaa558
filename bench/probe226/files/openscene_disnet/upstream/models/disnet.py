import torch
import torch.nn as nn
import MinkowskiEngine as ME
from MinkowskiEngine import MinkowskiNetwork
from MinkowskiEngine import MinkowskiReLU
import MinkowskiEngine.MinkowskiOps as me

from models.mink_unet import mink_unet as model3D


def state_dict_remove_moudle(state_dict):
    from collections import OrderedDict
    new_state_dict = OrderedDict()
    for k, v in state_dict.items():
        # name = k[7:]  # remove 'module.' of data parallel
        name = k.replace('module.', '')
        new_state_dict[name] = v
    return new_state_dict


def constructor3d(**kwargs):
    model = model3D(**kwargs)
    # model = model.cuda()
    return model


class BasicBlock(nn.Module):
    expansion = 1
    NORM_TYPE = 'BN'

    def __init__(self, inplanes, planes, stride=1, dilation=1, downsample=None,
                 bn_momentum=0.1, D=3):
        super(BasicBlock, self).__init__()

        self.conv1 = ME.MinkowskiConvolution(
            inplanes, planes, kernel_size=3, stride=stride, dilation=dilation, dimension=D)
        self.norm1 = ME.MinkowskiBatchNorm(planes, momentum=bn_momentum)
        self.conv2 = ME.MinkowskiConvolution(
            planes, planes, kernel_size=3, stride=1, dilation=dilation, dimension=D)
        self.norm2 = ME.MinkowskiBatchNorm(planes, momentum=bn_momentum)
        self.relu = MinkowskiReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        residual = x

        out = self.conv1(x)
        out = self.norm1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.norm2(out)

        if self.downsample is not None:
            residual = self.downsample(x)

        out += residual
        out = self.relu(out)

        return out


class DisNet(nn.Module):
    '''3D Sparse UNet for Distillation.'''

    def __init__(self, cfg=None):
        super(DisNet, self).__init__()
        if not hasattr(cfg, 'feature_2d_extractor'):
            cfg.feature_2d_extractor = 'openseg'
        if 'lseg' in cfg.feature_2d_extractor:
            last_dim = 512
        elif 'openseg' in cfg.feature_2d_extractor:
            last_dim = 768
        else:
            raise NotImplementedError

        # MinkowskiNet for 3D point clouds
        net3d = constructor3d(in_channels=3, out_channels=last_dim, D=3,
                              arch=cfg.arch_3d)
        self.net3d = net3d

    def forward(self, sparse_3d):
        '''Forward method.'''
        return self.net3d(sparse_3d)


class DisNetHead(nn.Module):
    '''Optional projection head used by the "distill + clip head" ablation.

    The original experiments ran this on 8 V100s with SyncBN; on a single GPU
    the MinkowskiSyncBatchNorm falls back to a regular batch norm.
    '''

    def __init__(self, in_dim=96, out_dim=768, use_sync_bn=False, D=3):
        super(DisNetHead, self).__init__()
        norm = ME.MinkowskiSyncBatchNorm if use_sync_bn else ME.MinkowskiBatchNorm
        self.block = nn.Sequential(
            ME.MinkowskiLinear(in_dim, in_dim, bias=False),
            norm(in_dim),
            ME.MinkowskiReLU(inplace=True),
            ME.MinkowskiLinear(in_dim, out_dim, bias=True),
        )

    def forward(self, x):
        out = self.block(x)
        # normalise the per-point embedding so the cosine loss is well conditioned
        feats = out.F
        feats = feats / (feats.norm(dim=-1, keepdim=True) + 1e-6)
        return ME.SparseTensor(
            features=feats,
            coordinate_map_key=out.coordinate_map_key,
            coordinate_manager=out.coordinate_manager,
        )


def convert_sync_batchnorm(model, use_sync_bn):
    '''Swap every MinkowskiBatchNorm for its synchronised version before DDP wrapping.'''
    if not use_sync_bn:
        return model
    return ME.MinkowskiSyncBatchNorm.convert_sync_batchnorm(model)


def sparse_collate_to_device(coords, feats, device):
    '''Build a SparseTensor directly on `device`; used by the interactive demo.'''
    coords, feats = ME.utils.sparse_collate([coords], [feats])
    return ME.SparseTensor(features=feats.float(), coordinates=coords, device=device)


def load_distilled_weights(model, path, strict=True):
    '''Load a distilled checkpoint that may or may not come from DDP.'''
    checkpoint = torch.load(path, map_location='cpu')
    state_dict = checkpoint.get('state_dict', checkpoint)
    state_dict = state_dict_remove_moudle(state_dict)
    missing, unexpected = model.load_state_dict(state_dict, strict=strict)
    return missing, unexpected


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


if __name__ == '__main__':
    class _Cfg:
        feature_2d_extractor = 'lseg'
        arch_3d = 'MinkUNet18A'

    net = DisNet(cfg=_Cfg())
    print('DisNet parameters: %.2fM' % (count_parameters(net) / 1e6))
