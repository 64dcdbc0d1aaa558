#!/usr/bin/env python
# Copyright (c) Facebook, Inc. and its affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
#

from .base_options import BaseOptions


class TrainOptions(BaseOptions):
    def initialize(self):
        BaseOptions.initialize(self)
        self.parser.add_argument('--display_freq', type=int, default=10, help='frequency of displaying average loss')
        self.parser.add_argument('--save_epoch_freq', type=int, default=50, help='frequency of saving checkpoints at the end of epochs')
        self.parser.add_argument('--save_latest_freq', type=int, default=5000, help='frequency of saving the latest results')
        self.parser.add_argument('--niter', type=int, default=1, help='# of epochs to train')
        self.parser.add_argument('--epoch_count', type=int, default=0, help='the starting epoch count')
        self.parser.add_argument('--learning_rate_decrease_itr', type=int, default=-1, help='how often is the learning rate decreased by six percent')
        self.parser.add_argument('--decay_factor', type=float, default=0.94, help='learning rate decay factor')
        self.parser.add_argument('--tensorboard', type=bool, default=False, help='use tensorboard to visualize loss change ')
        self.parser.add_argument('--measure_time', type=bool, default=False, help='measure time of different steps during training')
        self.parser.add_argument('--validation_on', action='store_true', help='whether to test on validation set during training')
        self.parser.add_argument('--validation_freq', type=int, default=100, help='frequency of testing on validation set')
        self.parser.add_argument('--validation_batches', type=int, default=10, help='number of batches to test for validation')
        self.parser.add_argument('--num_visualization_examples', type=int, default=5, help='number of examples to visualize')
        self.parser.add_argument('--audio_augmentation', type=bool, default=False, help='whether to augment input audio')

        # model arguments
        self.parser.add_argument('--visual_pool', type=str, default='maxpool', help='avg or max pool for visual stream feature')
        self.parser.add_argument('--audio_pool', type=str, default='maxpool', help="avg or max pool for audio stream feature")
        self.parser.add_argument('--weights_facial', type=str, default='', help="weights for facial attributes net")
        self.parser.add_argument('--weights_unet', type=str, default='', help="weights for unet")
        self.parser.add_argument('--weights_lipreadingnet', type=str, default='', help="weights for lipreading net")
        self.parser.add_argument('--weights_vocal', type=str, default='', help="weights for vocal attributes net")
        self.parser.add_argument('--unet_ngf', type=int, default=64, help="unet base channel dimension")
        self.parser.add_argument('--unet_input_nc', type=int, default=2, help="input spectrogram number of channels")
        self.parser.add_argument('--unet_output_nc', type=int, default=2, help="output spectrogram number of channels")
        self.parser.add_argument('--identity_feature_dim', type=int, default=64, help="dimension of identity feature map")
        self.parser.add_argument('--audioVisual_feature_dim', type=int, default=1152, help="dimension of audioVisual feature map")
        self.parser.add_argument('--lipreading_extract_feature', default=False, action='store_true', help="whether use features extracted from 3d conv")
        self.parser.add_argument('--number_of_identity_frames', type=int, default=1, help="number of identity frames to use")
        self.parser.add_argument('--compression_type', type=str, default='hyperbolic', choices=('hyperbolic', 'sigmoidal', 'none'))
        self.parser.add_argument('--hyperbolic_compression_K', type=int, default=10)
        self.parser.add_argument('--hyperbolic_compression_C', type=float, default=0.1)
        self.parser.add_argument('--mask_clip_threshold', type=int, default=5, help="clip the mask to this range")
        self.parser.add_argument('--mask_loss_type', default='L1', type=str, choices=('L1', 'L2', 'BCE'), help='type of loss on mask')
        self.parser.add_argument('--use_coseparation_loss', default=False, action='store_true')
        self.parser.add_argument('--coseparation_loss_weight', default=0.01, type=float, help='weight for coseparation loss')
        self.parser.add_argument('--crossmodal_loss_weight', default=0.01, type=float, help='weight for crossmodal loss')
        self.parser.add_argument('--margin', default=0.5, type=float, help='margin for triplet / contrastive loss')
        self.parser.add_argument('--mixandseparate_loss_weight', default=1, type=float, help='weight for mix and separate loss')

        # optimizer arguments
        self.parser.add_argument('--lr_lipreading', type=float, default=0.0001, help='learning rate for lipreading stream')
        self.parser.add_argument('--lr_facial_attributes', type=float, default=0.0001, help='learning rate for identity stream')
        self.parser.add_argument('--lr_unet', type=float, default=0.001, help='learning rate for unet')
        self.parser.add_argument('--lr_vocal_attributes', type=float, default=0.001, help='learning rate for audio classifier')
        self.parser.add_argument('--optimizer', default='adam', type=str, help='adam or sgd for optimization')
        self.parser.add_argument('--beta1', default=0.9, type=float, help='momentum for sgd, beta1 for adam')
        self.parser.add_argument('--weight_decay', default=0.0001, type=float, help='weights regularizer')

        self.mode = "train"
        self.isTrain = True
        self.enable_data_augmentation = True
