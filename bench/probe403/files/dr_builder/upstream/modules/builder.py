import os

import timm
import torch
import torch.nn as nn
import torchvision.models as tv_models
from torch.nn.parallel import DistributedDataParallel as DDP

from utils.func import print_msg, select_out_features, is_main


def generate_model(cfg):
    out_features = select_out_features(
        cfg.data.num_classes,
        cfg.train.criterion
    )

    model = build_model(
        cfg.train.backend,
        cfg.train.network,
        out_features,
        cfg.data.in_channels,
        cfg.train.pretrained
    )

    if cfg.train.checkpoint:
        weights = torch.load(cfg.train.checkpoint, map_location='cpu')
        model.load_state_dict(weights, strict=True)
        if is_main(cfg):
            print_msg('Load weights form {}'.format(cfg.train.checkpoint))

    model = model.to(cfg.base.device)
    if cfg.dist.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[cfg.dist.gpu], find_unused_parameters=False)

    return model


def build_model(backend, network, num_classes, in_channels, pretrained):
    if backend == 'timm':
        model = timm.create_model(
            network,
            in_chans=in_channels,
            num_classes=num_classes,
            pretrained=pretrained
        )
    elif backend == 'torchvision':
        model = build_torchvision_model(network, num_classes, pretrained)
    else:
        raise NotImplementedError('Not implemented network backend.')

    return model


def build_torchvision_model(network, num_classes, pretrained=False):
    model = tv_models.__dict__[network](weights='DEFAULT' if pretrained else None)
    if 'resnet' in network or 'resnext' in network or 'shufflenet' in network:
        model.fc = nn.Linear(model.fc.in_features, num_classes)
    elif 'densenet' in network:
        model.classifier = nn.Linear(model.classifier.in_features, num_classes)
    elif 'vgg' in network:
        model.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(True),
            nn.Dropout(),
            nn.Linear(4096, 4096),
            nn.ReLU(True),
            nn.Dropout(),
            nn.Linear(4096, num_classes),
        )
    elif 'mobilenet' in network:
        model.classifier = nn.Sequential(
            nn.Dropout(p=0.2),
            nn.Linear(model.last_channel, num_classes),
        )
    elif 'squeezenet' in network:
        model.classifier = nn.Sequential(
            nn.Dropout(p=0.5),
            nn.Conv2d(512, num_classes, kernel_size=1),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1))
        )
    elif 'efficientnet' in network or 'convnext' in network or 'regnet' in network:
        if hasattr(model, 'fc'):
            model.fc = nn.Linear(model.fc.in_features, num_classes)
        else:
            last = model.classifier[-1]
            model.classifier[-1] = nn.Linear(last.in_features, num_classes)
    else:
        raise NotImplementedError('Not implemented network.')

    return model
