# *_*coding:utf-8 *_*
"""
extract layer-wise utterance/frame features from huggingface speech models
(wav2vec2-base-960h, hubert-large-ll60k, chinese-hubert-large, wavlm-base-plus, ...)

python extract_wav2vec_huggingface.py --dataset=MER2023 --feature_level='UTTERANCE' \
       --model_name='chinese-hubert-large' --gpu=0
"""
import os
import time
import glob
import argparse
import numpy as np
import soundfile as sf

import torch
from transformers import AutoModel, Wav2Vec2FeatureExtractor

# import config
import sys
sys.path.append('../../')
import config

##################### Global Hyper-params #####################
HUBERT_BASE_CHINESE = 'chinese-hubert-base'
HUBERT_LARGE_CHINESE = 'chinese-hubert-large'
WAV2VEC2_BASE_CHINESE = 'chinese-wav2vec2-base'
WAV2VEC2_LARGE_CHINESE = 'chinese-wav2vec2-large'
WAVLM_BASE_PLUS = 'wavlm-base-plus'


def write_feature_to_npy(feature, feature_level, save_path):
    if feature_level == 'UTTERANCE':
        feature = np.array(feature).squeeze()  # [C,]
        if len(feature.shape) != 1:  # change [T, C] => [C,]
            feature = np.mean(feature, axis=0)
        np.save(save_path, feature)
    else:
        np.save(save_path, feature)


def extract(model_name, audio_files, save_dir, feature_level, gpu, layer_ids=None):
    start_time = time.time()

    # load model
    model_file = os.path.join(config.PATH_TO_PRETRAINED_MODELS, f'transformers/{model_name}')
    model = AutoModel.from_pretrained(model_file)
    feature_extractor = Wav2Vec2FeatureExtractor.from_pretrained(model_file)

    device = torch.device(f'cuda:{gpu}')
    model.to(device)
    model.eval()

    # iterate audios
    for idx, wav_file in enumerate(audio_files, 1):
        file_name = os.path.basename(wav_file)
        vid = file_name[:-4]
        print(f'Processing "{file_name}" ({idx}/{len(audio_files)})...')

        ## process for too short files
        samples, sr = sf.read(wav_file)
        assert sr == 16000, 'currently, we only test on 16k audio'
        if len(samples) < sr * 0.1:  # pad to 100ms
            samples = np.pad(samples, (0, int(sr * 0.1) - len(samples)))

        ## extract features
        with torch.no_grad():
            layer_ids = [-4, -3, -2, -1] if layer_ids is None else layer_ids
            input_values = feature_extractor(samples, sampling_rate=sr, return_tensors="pt").input_values
            input_values = input_values.to(device)
            hidden_states = model(input_values, output_hidden_states=True).hidden_states  # tuple of (B, T, D)
            feature = torch.stack(hidden_states)[layer_ids].sum(dim=0)  # (B, T, D)
            bsize, segnum, featdim = feature.shape
            feature = feature.view(-1, featdim).detach().squeeze().cpu().numpy()  # (T, D)

        ## store values
        csv_file = os.path.join(save_dir, f'{vid}.npy')
        write_feature_to_npy(feature, feature_level, csv_file)

    end_time = time.time()
    print(f'Total {len(audio_files)} files done! Time used ({model_name}): {end_time - start_time:.1f}s.')


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='Run.')
    parser.add_argument('--gpu', type=str, default='0', help='index of gpu')
    parser.add_argument('--model_name', type=str, default='chinese-hubert-large', help='name of pretrained model')
    parser.add_argument('--feature_level', type=str, default='UTTERANCE', help='FRAME or UTTERANCE')
    parser.add_argument('--dataset', type=str, default='MER2023', help='input dataset')
    parser.add_argument('--layer_ids', type=int, nargs='+', default=None, help='hidden layers to sum, e.g. -4 -3 -2 -1')
    args = parser.parse_args()

    audio_dir = config.PATH_TO_RAW_AUDIO[args.dataset]
    save_dir = config.PATH_TO_FEATURES[args.dataset]

    # audio_files
    audio_files = glob.glob(os.path.join(audio_dir, '*.wav'))
    print(f'Find total "{len(audio_files)}" audio files.')

    # save_dir
    dir_name = f'{args.model_name}-{args.feature_level[:3]}'
    save_dir = os.path.join(save_dir, dir_name)
    if not os.path.exists(save_dir):
        os.makedirs(save_dir)

    # extract features
    extract(args.model_name, audio_files, save_dir, args.feature_level, gpu=args.gpu, layer_ids=args.layer_ids)
