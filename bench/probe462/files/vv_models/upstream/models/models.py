#!/usr/bin/env python
# Copyright (c) Facebook, Inc. and its affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
#

import json
import torch
import torchvision
from .networks import VisualNet, VisualNetDilated, AudioNet, AV_Unet, weights_init
from .lipreading_model import Lipreading


def load_json(json_fp):
    with open(json_fp, 'r') as f:
        json_content = json.load(f)
    return json_content


class ModelBuilder():
    # builder for facial attributes analysis stream
    def build_facial(self, pool_type='maxpool', input_channel=3, fc_out=512, with_fc=False, weights=''):
        pretrained = False
        original_resnet = torchvision.models.resnet18(pretrained)
        net = VisualNet(original_resnet, pool_type=pool_type, input_channel=input_channel,
                        with_fc=with_fc, fc_in=512, fc_out=fc_out)

        if len(weights) > 0:
            print('Loading weights for facial attributes analysis stream')
            pretrained_state = torch.load(weights)
            model_state = net.state_dict()
            pretrained_state = {k: v for k, v in pretrained_state.items()
                                if k in model_state and v.size() == model_state[k].size()}
            model_state.update(pretrained_state)
            net.load_state_dict(model_state)
        return net

    # builder for lipreading stream
    def build_lipreadingnet(self, config_path, weights='', extract_feats=False):
        if config_path.endswith('.json'):
            args_loaded = load_json(config_path)
        else:
            raise ValueError('lipreading config must be a json file: %s' % config_path)
        print('Lipreading configuration file loaded.')
        tcn_options = {'num_layers': args_loaded['tcn_num_layers'],
                       'kernel_size': args_loaded['tcn_kernel_size'],
                       'dropout': args_loaded['tcn_dropout'],
                       'dwpw': args_loaded['tcn_dwpw'],
                       'width_mult': args_loaded['tcn_width_mult']}
        net = Lipreading(tcn_options=tcn_options,
                         backbone_type=args_loaded['backbone_type'],
                         relu_type=args_loaded['relu_type'],
                         width_mult=args_loaded['width_mult'],
                         extract_feats=extract_feats)

        if len(weights) > 0:
            print('Loading weights for lipreading stream')
            net.load_state_dict(torch.load(weights, map_location=lambda storage, loc: storage))
        return net

    # builder for auido stream
    def build_unet(self, ngf=64, input_nc=2, output_nc=2, audioVisual_feature_dim=1280,
                   identity_feature_dim=64, weights=''):
        net = AV_Unet(ngf, input_nc, output_nc, audioVisual_feature_dim, identity_feature_dim)
        net.apply(weights_init)

        if len(weights) > 0:
            print('Loading weights for UNet')
            net.load_state_dict(torch.load(weights))
        return net

    # builder for vocal attributes stream
    def build_vocal(self, pool_type='maxpool', input_channel=2, with_fc=False, fc_out=64, weights=''):
        original_resnet = torchvision.models.resnet18(False)
        net = AudioNet(original_resnet, pool_type=pool_type, input_channel=input_channel,
                       with_fc=with_fc, fc_in=512, fc_out=fc_out)

        if len(weights) > 0:
            print('Loading weights for vocal attributes analysis stream')
            vocal_state = torch.load(weights)
            net.load_state_dict(vocal_state)
        return net

    # builder for the dilated visual net used in the speech enhancement variant
    def build_facial_dilated(self, pool_type='maxpool', fc_out=512, with_fc=False, weights=''):
        original_resnet = torchvision.models.resnet18(False)
        net = VisualNetDilated(original_resnet, pool_type=pool_type, with_fc=with_fc,
                               fc_in=512, fc_out=fc_out)
        if len(weights) > 0:
            print('Loading weights for dilated facial attributes stream')
            state = torch.load(weights, map_location='cpu')
            net.load_state_dict(state)
        return net
