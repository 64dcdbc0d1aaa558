#!/usr/bin/env python
# Copyright (c) Facebook, Inc. and its affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
#

import numpy as np
import torch
from torch import optim
import torch.nn.functional as F
from . import networks, criterion
from torch.autograd import Variable


class AudioVisualModel(torch.nn.Module):
    def name(self):
        return 'AudioVisualModel'

    def __init__(self, nets, opt):
        super(AudioVisualModel, self).__init__()
        self.opt = opt
        # initialize model
        self.net_lipreading, self.net_facial_attribtes, self.net_unet, self.net_vocal_attributes = nets

    def forward(self, input):
        audio_spec_A1 = input['audio_spec_A1'].to(self.opt.device)
        audio_spec_A2 = input['audio_spec_A2'].to(self.opt.device)
        audio_spec_B = input['audio_spec_B'].to(self.opt.device)
        audio_spec_mix1 = input['audio_spec_mix1'].to(self.opt.device)
        audio_spec_mix2 = input['audio_spec_mix2'].to(self.opt.device)
        mouthroi_A1 = input['mouthroi_A1'].to(self.opt.device)
        mouthroi_A2 = input['mouthroi_A2'].to(self.opt.device)
        mouthroi_B = input['mouthroi_B'].to(self.opt.device)
        frame_A = input['frame_A'].to(self.opt.device)
        frame_B = input['frame_B'].to(self.opt.device)

        # sum the mixture spectrogram magnitudes (real/imag channels) as the weighting term
        audio_mix_spec1_mag = torch.sqrt(audio_spec_mix1[:, 0, :, :] ** 2 + audio_spec_mix1[:, 1, :, :] ** 2)
        weight = torch.log1p(audio_mix_spec1_mag).unsqueeze(1)
        weight = torch.clamp(weight, 1e-3, 10)

        # calculate ground-truth masks
        gt_mask_A1 = self.get_mask(audio_spec_A1, audio_spec_mix1)
        gt_mask_B1 = self.get_mask(audio_spec_B, audio_spec_mix1)
        gt_mask_A2 = self.get_mask(audio_spec_A2, audio_spec_mix2)
        gt_mask_B2 = self.get_mask(audio_spec_B, audio_spec_mix2)

        # pass through visual stream and extract lipreading features
        lipreading_feature_A1 = self.net_lipreading(Variable(mouthroi_A1, requires_grad=False), self.opt.num_frames)
        lipreading_feature_A2 = self.net_lipreading(Variable(mouthroi_A2, requires_grad=False), self.opt.num_frames)
        lipreading_feature_B = self.net_lipreading(Variable(mouthroi_B, requires_grad=False), self.opt.num_frames)

        # pass through visual stream and extract identity features
        identity_feature_A = self.net_facial_attribtes(frame_A)
        identity_feature_B = self.net_facial_attribtes(frame_B)

        # what type of visual feature to use
        identity_feature_A = identity_feature_A.repeat(1, 1, 1, lipreading_feature_A1.shape[-1])
        identity_feature_B = identity_feature_B.repeat(1, 1, 1, lipreading_feature_B.shape[-1])
        visual_feature_A1 = torch.cat((identity_feature_A, lipreading_feature_A1), dim=1)
        visual_feature_A2 = torch.cat((identity_feature_A, lipreading_feature_A2), dim=1)
        visual_feature_B = torch.cat((identity_feature_B, lipreading_feature_B), dim=1)

        # audio-visual feature fusion through UNet and predict mask
        audio_spec_mix1_comp = self.compress(audio_spec_mix1)
        audio_spec_mix2_comp = self.compress(audio_spec_mix2)
        mask_prediction_A1 = self.net_unet(audio_spec_mix1_comp, visual_feature_A1)
        mask_prediction_B1 = self.net_unet(audio_spec_mix1_comp, visual_feature_B)
        mask_prediction_A2 = self.net_unet(audio_spec_mix2_comp, visual_feature_A2)
        mask_prediction_B2 = self.net_unet(audio_spec_mix2_comp, visual_feature_B)

        # masking the spectrogram of mixed audio to perform separation and predict separated spectrograms
        pred_spec_A1 = self.apply_mask(mask_prediction_A1, audio_spec_mix1)
        pred_spec_B1 = self.apply_mask(mask_prediction_B1, audio_spec_mix1)
        pred_spec_A2 = self.apply_mask(mask_prediction_A2, audio_spec_mix2)
        pred_spec_B2 = self.apply_mask(mask_prediction_B2, audio_spec_mix2)

        # pass the predicted spectrograms through the vocal attributes net to get embeddings
        audio_embedding_A1_pred = self.net_vocal_attributes(pred_spec_A1)
        audio_embedding_B1_pred = self.net_vocal_attributes(pred_spec_B1)
        audio_embedding_A2_pred = self.net_vocal_attributes(pred_spec_A2)
        audio_embedding_B2_pred = self.net_vocal_attributes(pred_spec_B2)

        # ground-truth spectrogram embeddings are only used for the cross-modal loss
        audio_embedding_A1_gt = self.net_vocal_attributes(audio_spec_A1)
        audio_embedding_B_gt = self.net_vocal_attributes(audio_spec_B)

        output = {'pred_mask': torch.cat((mask_prediction_A1, mask_prediction_B1,
                                          mask_prediction_A2, mask_prediction_B2), dim=0),
                  'gt_mask': torch.cat((gt_mask_A1, gt_mask_B1, gt_mask_A2, gt_mask_B2), dim=0),
                  'weight': torch.cat((weight, weight, weight, weight), dim=0),
                  'pred_spec_A1': pred_spec_A1, 'pred_spec_B1': pred_spec_B1,
                  'pred_spec_A2': pred_spec_A2, 'pred_spec_B2': pred_spec_B2,
                  'audio_embedding_A1_pred': audio_embedding_A1_pred,
                  'audio_embedding_A2_pred': audio_embedding_A2_pred,
                  'audio_embedding_B1_pred': audio_embedding_B1_pred,
                  'audio_embedding_B2_pred': audio_embedding_B2_pred,
                  'identity_feature': torch.cat((identity_feature_A[:, :, 0, 0], identity_feature_B[:, :, 0, 0]), dim=0),
                  'audio_embedding_pred': torch.cat((audio_embedding_A1_gt, audio_embedding_B_gt), dim=0),
                  'audio_spec_mix1': audio_spec_mix1, 'audio_spec_mix2': audio_spec_mix2}
        return output

    def compress(self, spec):
        # hyperbolic tangent compression of the complex spectrogram, as in the paper
        if self.opt.compression_type == 'none':
            return spec
        K = self.opt.hyperbolic_compression_K
        C = self.opt.hyperbolic_compression_C
        return K * (1 - torch.exp(-C * spec)) / (1 + torch.exp(-C * spec))

    def get_mask(self, spec_target, spec_mix):
        # complex ideal ratio mask, clipped to a fixed range
        real_target, imag_target = spec_target[:, 0, :, :], spec_target[:, 1, :, :]
        real_mix, imag_mix = spec_mix[:, 0, :, :], spec_mix[:, 1, :, :]
        denom = real_mix ** 2 + imag_mix ** 2 + 1e-10
        mask_real = (real_mix * real_target + imag_mix * imag_target) / denom
        mask_imag = (real_mix * imag_target - imag_mix * real_target) / denom
        mask = torch.stack((mask_real, mask_imag), dim=1)
        mask.clamp_(-self.opt.mask_clip_threshold, self.opt.mask_clip_threshold)
        return mask

    def apply_mask(self, mask, spec_mix):
        real_mix, imag_mix = spec_mix[:, 0, :, :], spec_mix[:, 1, :, :]
        real_mask, imag_mask = mask[:, 0, :, :], mask[:, 1, :, :]
        pred_real = real_mix * real_mask - imag_mix * imag_mask
        pred_imag = real_mix * imag_mask + imag_mix * real_mask
        return torch.stack((pred_real, pred_imag), dim=1)
