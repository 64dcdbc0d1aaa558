#!/usr/bin/env python
# Copyright (c) Facebook, Inc. and its affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
#

import os
import argparse
import librosa
import numpy as np
from PIL import Image
import subprocess
from options.test_options import TestOptions
import torchvision.transforms as transforms
import torch
import soundfile as sf
from models.models import ModelBuilder
from models.audioVisual_model import AudioVisualModel
from data.audioVisual_dataset import generate_spectrogram_complex, load_mouthroi, get_preprocessing_pipelines
import h5py
import random
from utils import utils


def audio_normalize(samples, desired_rms=0.1, eps=1e-4):
    rms = np.maximum(eps, np.sqrt(np.mean(samples ** 2)))
    samples = samples * (desired_rms / rms)
    return rms / desired_rms, samples


def get_separated_audio(outputs, batch_data, opt):
    # fetch data and predictions
    mag_mix = batch_data['audio_spec_mix1']
    if opt.mask_to_use == 'pred':
        pred_masks_ = outputs['pred_mask']
    elif opt.mask_to_use == 'gt':
        pred_masks_ = outputs['gt_mask']
    pred_masks_ = pred_masks_.clamp(-opt.mask_clip_threshold, opt.mask_clip_threshold)
    spec_mix = mag_mix.detach().cpu().numpy()
    pred_masks = pred_masks_.detach().cpu().numpy()
    pred_spec_real = spec_mix[0, 0, :, :] * pred_masks[0, 0, :, :] - spec_mix[0, 1, :, :] * pred_masks[0, 1, :, :]
    pred_spec_imag = spec_mix[0, 1, :, :] * pred_masks[0, 0, :, :] + spec_mix[0, 0, :, :] * pred_masks[0, 1, :, :]
    preds_wav = librosa.istft(pred_spec_real + 1j * pred_spec_imag, hop_length=opt.hop_size,
                              length=int(opt.audio_length * opt.audio_sampling_rate))
    return preds_wav


def get_separated_audio_torch(outputs, batch_data, opt, window):
    # same reconstruction as above but done on the accelerator with torch.istft
    spec_mix = batch_data['audio_spec_mix1']
    masks = outputs['pred_mask'].clamp(-opt.mask_clip_threshold, opt.mask_clip_threshold)
    pred_real = spec_mix[:, 0] * masks[:, 0] - spec_mix[:, 1] * masks[:, 1]
    pred_imag = spec_mix[:, 1] * masks[:, 0] + spec_mix[:, 0] * masks[:, 1]
    spec = torch.complex(pred_real, pred_imag)
    wav = torch.istft(spec, n_fft=opt.n_fft, hop_length=opt.hop_size, win_length=opt.window_size,
                      window=window, length=int(opt.audio_length * opt.audio_sampling_rate))
    return wav[0].cpu().numpy()


def main():
    # load test arguments
    opt = TestOptions().parse()
    opt.device = torch.device("cuda")
    opt.mode = 'test'
    opt.rank = 0

    # Network Builders
    builder = ModelBuilder()
    net_lipreading = builder.build_lipreadingnet(
        config_path=opt.lipreading_config_path,
        weights=opt.weights_lipreadingnet,
        extract_feats=opt.lipreading_extract_feature)
    # if identity feature dim is not 512, for resnet reduce dimension to this feature dim
    if opt.identity_feature_dim != 512:
        opt.with_fc = True
    else:
        opt.with_fc = False
    net_facial_attributes = builder.build_facial(
        pool_type=opt.visual_pool,
        fc_out=opt.identity_feature_dim,
        with_fc=opt.with_fc,
        weights=opt.weights_facial)
    net_unet = builder.build_unet(
        ngf=opt.unet_ngf,
        input_nc=opt.unet_input_nc,
        output_nc=opt.unet_output_nc,
        audioVisual_feature_dim=opt.audioVisual_feature_dim,
        identity_feature_dim=opt.identity_feature_dim,
        weights=opt.weights_unet)
    net_vocal_attributes = builder.build_vocal(
        pool_type=opt.audio_pool,
        input_channel=2,
        with_fc=opt.with_fc,
        fc_out=opt.identity_feature_dim,
        weights=opt.weights_vocal)

    nets = (net_lipreading, net_facial_attributes, net_unet, net_vocal_attributes)

    # construct our audio-visual model
    model = AudioVisualModel(nets, opt)
    model = torch.nn.DataParallel(model, device_ids=[0])
    model.to(opt.device)
    model.eval()
    mtcnn = None

    lipreading_preprocessing_func = get_preprocessing_pipelines()['test']
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    vision_transform_list = [transforms.ToTensor()]
    if opt.normalization:
        vision_transform_list.append(normalize)
    vision_transform = transforms.Compose(vision_transform_list)

    # load data
    mouthroi_1 = load_mouthroi(opt.mouthroi1_path)
    mouthroi_2 = load_mouthroi(opt.mouthroi2_path)

    _, audio1 = utils.read_wav(opt.audio1_path)
    _, audio2 = utils.read_wav(opt.audio2_path)
    audio_length = min(len(audio1), len(audio2))
    audio1 = audio1[:audio_length]
    audio2 = audio2[:audio_length]
    audio_mix = (audio1 + audio2) / 2.0

    if opt.reliable_face:
        best_score_1 = 0
        best_score_2 = 0
        for i in range(10):
            frame_1 = utils.load_frame(opt.video1_path)
            frame_2 = utils.load_frame(opt.video2_path)
            boxes, scores = mtcnn.detect(frame_1)
            if scores[0] > best_score_1:
                best_frame_1 = frame_1
            boxes, scores = mtcnn.detect(frame_2)
            if scores[0] > best_score_2:
                best_frame_2 = frame_2
        frames_1 = vision_transform(best_frame_1).squeeze().unsqueeze(0)
        frames_2 = vision_transform(best_frame_2).squeeze().unsqueeze(0)
    else:
        frame_1_list = []
        frame_2_list = []
        for i in range(opt.number_of_identity_frames):
            frame_1 = utils.load_frame(opt.video1_path)
            frame_2 = utils.load_frame(opt.video2_path)
            frame_1 = vision_transform(frame_1)
            frame_2 = vision_transform(frame_2)
            frame_1_list.append(frame_1)
            frame_2_list.append(frame_2)
        frames_1 = torch.stack(frame_1_list).squeeze().unsqueeze(0)
        frames_2 = torch.stack(frame_2_list).squeeze().unsqueeze(0)

    # perform separation over the whole audio using a sliding window approach
    overlap_count = np.zeros((audio_length))
    sep_audio1 = np.zeros((audio_length))
    sep_audio2 = np.zeros((audio_length))
    sliding_window_start = 0
    data = {}
    avged_sep_audio1 = np.zeros((audio_length))
    avged_sep_audio2 = np.zeros((audio_length))

    samples_per_window = int(opt.audio_length * opt.audio_sampling_rate)
    istft_window = torch.hann_window(opt.window_size).cuda()
    while sliding_window_start + samples_per_window < audio_length:
        sliding_window_end = sliding_window_start + samples_per_window

        # get audio spectrogram
        segment1_audio = audio1[sliding_window_start:sliding_window_end]
        segment2_audio = audio2[sliding_window_start:sliding_window_end]

        if opt.audio_normalization:
            normalizer1, segment1_audio = audio_normalize(segment1_audio)
            normalizer2, segment2_audio = audio_normalize(segment2_audio)
        else:
            normalizer1 = 1
            normalizer2 = 1

        audio_segment = (segment1_audio + segment2_audio) / 2
        audio_mix_spec = generate_spectrogram_complex(audio_segment, opt.window_size, opt.hop_size, opt.n_fft)
        audio_spec_1 = generate_spectrogram_complex(segment1_audio, opt.window_size, opt.hop_size, opt.n_fft)
        audio_spec_2 = generate_spectrogram_complex(segment2_audio, opt.window_size, opt.hop_size, opt.n_fft)

        # get mouthroi
        frame_index_start = int(round(sliding_window_start / opt.audio_sampling_rate * 25))
        segment1_mouthroi = mouthroi_1[frame_index_start:(frame_index_start + opt.num_frames), :, :]
        segment2_mouthroi = mouthroi_2[frame_index_start:(frame_index_start + opt.num_frames), :, :]

        # transform mouthrois
        segment1_mouthroi = lipreading_preprocessing_func(segment1_mouthroi)
        segment2_mouthroi = lipreading_preprocessing_func(segment2_mouthroi)

        data['audio_spec_mix1'] = torch.FloatTensor(audio_mix_spec).unsqueeze(0)
        data['mouthroi_A1'] = torch.FloatTensor(segment1_mouthroi).unsqueeze(0).unsqueeze(0)
        data['mouthroi_B'] = torch.FloatTensor(segment2_mouthroi).unsqueeze(0).unsqueeze(0)
        data['audio_spec_A1'] = torch.FloatTensor(audio_spec_1).unsqueeze(0)
        data['audio_spec_B'] = torch.FloatTensor(audio_spec_2).unsqueeze(0)
        data['frame_A'] = frames_1
        data['frame_B'] = frames_2
        # don't care below
        data['frame_A'] = frames_1
        data['mouthroi_A2'] = torch.FloatTensor(segment1_mouthroi).unsqueeze(0).unsqueeze(0)
        data['audio_spec_A2'] = torch.FloatTensor(audio_spec_1).unsqueeze(0)
        data['audio_spec_mix2'] = torch.FloatTensor(audio_mix_spec).unsqueeze(0)

        with torch.no_grad():
            outputs = model.forward(data)
        if opt.torch_istft:
            reconstructed_signal_1 = get_separated_audio_torch(outputs, data, opt, istft_window)
        else:
            reconstructed_signal_1 = get_separated_audio(outputs, data, opt)
        reconstructed_signal_1 = reconstructed_signal_1 * normalizer1
        sep_audio1[sliding_window_start:sliding_window_end] = sep_audio1[sliding_window_start:sliding_window_end] + reconstructed_signal_1

        # swap the role of the two speakers to recover the second one
        data['mouthroi_A1'] = torch.FloatTensor(segment2_mouthroi).unsqueeze(0).unsqueeze(0)
        data['mouthroi_B'] = torch.FloatTensor(segment1_mouthroi).unsqueeze(0).unsqueeze(0)
        data['audio_spec_A1'] = torch.FloatTensor(audio_spec_2).unsqueeze(0)
        data['audio_spec_B'] = torch.FloatTensor(audio_spec_1).unsqueeze(0)
        data['frame_A'] = frames_2
        data['frame_B'] = frames_1
        with torch.no_grad():
            outputs = model.forward(data)
        reconstructed_signal_2 = get_separated_audio(outputs, data, opt)
        reconstructed_signal_2 = reconstructed_signal_2 * normalizer2
        sep_audio2[sliding_window_start:sliding_window_end] = sep_audio2[sliding_window_start:sliding_window_end] + reconstructed_signal_2

        # update overlap count
        overlap_count[sliding_window_start:sliding_window_end] = overlap_count[sliding_window_start:sliding_window_end] + 1
        sliding_window_start = sliding_window_start + int(opt.hop_length * opt.audio_sampling_rate)

    # deal with the last segment
    avged_sep_audio1 = np.divide(sep_audio1, overlap_count) * normalizer1
    avged_sep_audio2 = np.divide(sep_audio2, overlap_count) * normalizer2

    # output original and separated audios
    parts1 = opt.video1_path.split('/')
    parts2 = opt.video2_path.split('/')
    video1_name = parts1[-3] + '_' + parts1[-2] + '_' + parts1[-1][:-4]
    video2_name = parts2[-3] + '_' + parts2[-2] + '_' + parts2[-1][:-4]

    output_dir = os.path.join(opt.output_dir_root, video1_name + 'VS' + video2_name)
    if not os.path.isdir(output_dir):
        os.mkdir(output_dir)
    sf.write(os.path.join(output_dir, 'audio1.wav'), audio1, opt.audio_sampling_rate)
    sf.write(os.path.join(output_dir, 'audio2.wav'), audio2, opt.audio_sampling_rate)
    sf.write(os.path.join(output_dir, 'audio_mixed.wav'), audio_mix, opt.audio_sampling_rate)
    sf.write(os.path.join(output_dir, 'audio1_separated.wav'), avged_sep_audio1, opt.audio_sampling_rate)
    sf.write(os.path.join(output_dir, 'audio2_separated.wav'), avged_sep_audio2, opt.audio_sampling_rate)
    print('GPU memory peak: %.2f GB' % (torch.cuda.max_memory_allocated() / 1e9))


if __name__ == '__main__':
    main()
