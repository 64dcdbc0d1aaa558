# Copyright (c) 2023 Image Processing Research Group of University Federico II of Naples ('GRIP-UNINA').
# All rights reserved.
#
# Encoder-decoder with a Noiseprint++ extractor (DnCNN) feeding the second modality of a CMX
# dual SegFormer encoder, plus a confidence decoder and a detection head on top of it.

import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..DnCNN import make_net
from .net_utils import FeatureFusionModule as FFM
from .net_utils import FeatureRectifyModule as FRM

logger = logging.getLogger(__name__)


def preprc_imagenet_torch(x):
    mean = torch.Tensor([0.485, 0.456, 0.406]).to(x.device)
    std = torch.Tensor([0.229, 0.224, 0.225]).to(x.device)
    x = (x - mean[None, :, None, None]) / std[None, :, None, None]
    return x


def create_backbone(typ, norm_layer):
    channels = [64, 128, 320, 512]
    if typ == 'mit_b2':
        logger.info('Using backbone: Segformer-B2')
        from .encoders.dual_segformer import mit_b2 as backbone_
        backbone = backbone_(norm_fuse=norm_layer)
    elif typ == 'mit_b1':
        logger.info('Using backbone: Segformer-B1')
        from .encoders.dual_segformer import mit_b1 as backbone_
        backbone = backbone_(norm_fuse=norm_layer)
    elif typ == 'mit_b0':
        logger.info('Using backbone: Segformer-B0')
        channels = [32, 64, 160, 256]
        from .encoders.dual_segformer import mit_b0 as backbone_
        backbone = backbone_(norm_fuse=norm_layer)
    else:
        raise NotImplementedError('backbone not implemented')
    return backbone, channels


class myEncoderDecoder(nn.Module):
    def __init__(self, cfg=None, norm_layer=nn.BatchNorm2d):
        super(myEncoderDecoder, self).__init__()

        self.norm_layer = norm_layer
        self.cfg = cfg.MODEL.EXTRA
        self.mods = cfg.MODEL.MODS
        self.detection = cfg.MODEL.EXTRA.DETECTION

        # import backbone and decoder
        self.backbone, self.channels = create_backbone(self.cfg.BACKBONE, norm_layer)

        if self.cfg.CONF_BACKBONE == 'same':
            self.conf_backbone = None
        else:
            self.conf_backbone = None  # a separate backbone is not used in the released model

        if self.cfg.DECODER == 'MLPDecoder':
            logger.info('Using MLP Decoder')
            from .decoders.MLPDecoder import DecoderHead
            self.decode_head = DecoderHead(in_channels=self.channels, num_classes=cfg.DATASET.NUM_CLASSES,
                                           norm_layer=norm_layer, embed_dim=self.cfg.DECODER_EMBED_DIM)
            if self.cfg.CONF:
                self.decode_head_conf = DecoderHead(in_channels=self.channels, num_classes=1,
                                                    norm_layer=norm_layer, embed_dim=self.cfg.DECODER_EMBED_DIM)
            else:
                self.decode_head_conf = None

            self.conf_detection = None
            if self.detection is not None:
                if self.detection == 'confpool':
                    self.conf_detection = 'confpool'
                    assert self.cfg.CONF
                    self.detection = nn.Sequential(
                        nn.Linear(in_features=8, out_features=128),
                        nn.ReLU(),
                        nn.Dropout(p=0.5),
                        nn.Linear(in_features=128, out_features=1),
                    )
                else:
                    raise NotImplementedError('Detection mechanism not implemented')
        else:
            raise NotImplementedError('decoder not implemented')

        num_levels = 17
        out_channel = 1
        self.dncnn = make_net(3, kernels=[3, ] * num_levels,
                              features=[64, ] * (num_levels - 1) + [out_channel],
                              bns=[False, ] + [True, ] * (num_levels - 2) + [False, ],
                              acts=['relu', ] * (num_levels - 1) + ['linear', ],
                              dilats=[1, ] * num_levels,
                              bn_momentum=0.1, padding=1)

        if self.cfg.PREPRC == 'imagenet':  # RGB (mean and variance)
            self.prepro = preprc_imagenet_torch
        else:
            assert False

        self.init_weights(pretrained=cfg.MODEL.PRETRAINED)

    def init_weights(self, pretrained=None):
        if pretrained:
            logger.info('Loading pretrained model: {}'.format(pretrained))
            self.backbone.init_weights(pretrained=pretrained)

        np_weights = self.cfg.NP_WEIGHTS
        assert np_weights is not None and len(np_weights) > 0
        logger.info('Loading Noiseprint++ weights: {}'.format(np_weights))
        dat = torch.load(np_weights, map_location=torch.device('cpu'))
        if 'network' in dat:
            dat = dat['network']
        self.dncnn.load_state_dict(dat)

    def encode_decode(self, rgb, modal_x):
        if rgb is not None:
            orisize = rgb.shape
        else:
            orisize = modal_x.shape

        # cmx
        x = self.backbone(rgb, modal_x)
        out, _, _ = self.decode_head.forward(x, return_feats=True)
        out = F.interpolate(out, size=orisize[2:], mode='bilinear', align_corners=False)

        # confidence
        if self.decode_head_conf is not None:
            if self.conf_backbone is not None:
                x_conf = self.conf_backbone(rgb, modal_x)
            else:
                x_conf = x  # same encoder of Localization Network
            conf = self.decode_head_conf(x_conf)
            conf = F.interpolate(conf, size=orisize[2:], mode='bilinear', align_corners=False)
        else:
            conf = None

        # detection
        if self.conf_detection is not None:
            if self.conf_detection == 'confpool':
                from .layer_utils import weighted_statistics_pooling
                f1 = weighted_statistics_pooling(conf).view(out.shape[0], -1)
                f2 = weighted_statistics_pooling(out[:, 1:2, :, :] - out[:, 0:1, :, :],
                                                 F.logsigmoid(conf)).view(out.shape[0], -1)
                det = self.detection(torch.cat((f1, f2), -1))
            else:
                assert False
        else:
            det = None

        return out, conf, det

    def forward(self, rgb):
        # Noiseprint++ extraction
        if 'NP++' in self.mods:
            modal_x = self.dncnn(rgb)
            modal_x = torch.tile(modal_x, (3, 1, 1))
        else:
            modal_x = None

        if self.prepro is not None:
            rgb = self.prepro(rgb)

        out, conf, det = self.encode_decode(rgb, modal_x)
        return out, conf, det, modal_x
