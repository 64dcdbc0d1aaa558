#!/usr/bin/env python
# Copyright (c) Facebook, Inc. and its affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
#

import argparse
import os
from utils import utils
import torch


class BaseOptions():
    def __init__(self):
        self.parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
        self.initialized = False

    def initialize(self):
        self.parser.add_argument('--data_path', type=str, default='/mnt/data/VoxCeleb2/mp4/', help='path to frame/audio/detections')
        self.parser.add_argument('--mouthroi_root', type=str, default='/mnt/data/VoxCeleb2/mouth_roi_hdf5/', help='path to mouth roi hdf5 files')
        self.parser.add_argument('--audio_root', type=str, default='/mnt/data/VoxCeleb2/audio_hdf5/', help='path to audio hdf5 files')
        self.parser.add_argument('--hdf5_path', type=str, default='/mnt/data/VoxCeleb2/hdf5/')
        self.parser.add_argument('--name', type=str, default='audioVisual', help='name of the experiment. It decides where to store models')
        self.parser.add_argument('--checkpoints_dir', type=str, default='checkpoints/', help='models are saved here')
        self.parser.add_argument('--model', type=str, default='audioVisual', help='chooses how datasets are loaded.')
        self.parser.add_argument('--batchSize', type=int, default=16, help='input batch size')
        self.parser.add_argument('--nThreads', default=16, type=int, help='# threads for loading data')
        self.parser.add_argument('--seed', default=0, type=int, help='random seed')
        self.parser.add_argument('--gpu_ids', type=str, default='0', help='gpu ids: e.g. 0  0,1,2, 0,2. use -1 for CPU')

        # audio arguments
        self.parser.add_argument('--audio_window', default=2.55, type=float, help='audio segment length')
        self.parser.add_argument('--audio_sampling_rate', default=16000, type=int, help='sound sampling rate')
        self.parser.add_argument('--window_size', default=400, type=int, help="stft window length")
        self.parser.add_argument('--hop_size', default=160, type=int, help="stft hop length")
        self.parser.add_argument('--n_fft', default=512, type=int, help="stft n_fft")
        self.parser.add_argument('--num_frames', default=64, type=int, help='number of frames used for lipreading')
        self.parser.add_argument('--lipreading_config_path', type=str, help='path to the config file of lipreading')

        self.initialized = True

    def parse(self):
        if not self.initialized:
            self.initialize()
        self.opt = self.parser.parse_args()

        self.opt.mode = self.mode
        self.opt.isTrain = self.isTrain

        str_ids = self.opt.gpu_ids.split(',')
        self.opt.gpu_ids = []
        for str_id in str_ids:
            id = int(str_id)
            if id >= 0:
                self.opt.gpu_ids.append(id)

        # set gpu ids
        if len(self.opt.gpu_ids) > 0:
            torch.cuda.set_device(self.opt.gpu_ids[0])

        # set random seed
        torch.manual_seed(self.opt.seed)

        # I should process the opt here, like gpu ids, etc.
        args = vars(self.opt)
        print('------------ Options -------------')
        for k, v in sorted(args.items()):
            print('%s: %s' % (str(k), str(v)))
        print('-------------- End ----------------')

        # save to the disk
        expr_dir = os.path.join(self.opt.checkpoints_dir, self.opt.name)
        utils.mkdirs(expr_dir)
        file_name = os.path.join(expr_dir, 'opt.txt')
        with open(file_name, 'wt') as opt_file:
            opt_file.write('------------ Options -------------\n')
            for k, v in sorted(args.items()):
                opt_file.write('%s: %s\n' % (str(k), str(v)))
            opt_file.write('-------------- End ----------------\n')
        return self.opt
