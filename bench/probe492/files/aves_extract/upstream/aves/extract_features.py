"""Extract AVES embeddings for a folder of animal vocalisation clips.

AVES (Animal Vocalization Encoder based on Self-supervision) is a HuBERT model
pretrained on animal sounds. The torchaudio-format checkpoints
(aves-base-bio.torchaudio.pt + .model_config.json) are loaded with
torchaudio.models.wav2vec2_model and the last transformer layer is mean-pooled
into one vector per clip. Output: an .npy matrix and a CSV index.
"""
import argparse
import csv
import json
import os

import numpy as np
import torch
import torch.nn as nn
import torchaudio
from torchaudio.models import wav2vec2_model

AVES_SAMPLE_RATE = 16000


class AvesTorchaudioWrapper(nn.Module):

    def __init__(self, config_path, model_path):

        super().__init__()

        # reference: https://pytorch.org/audio/stable/_modules/torchaudio/models/wav2vec2/utils/import_fairseq.html

        self.config = self.load_config(config_path)
        self.model = wav2vec2_model(**self.config, aux_num_out=None)
        self.model.load_state_dict(torch.load(model_path))
        self.model.feature_extractor.requires_grad_(False)

    def load_config(self, config_path):
        with open(config_path, 'r') as ff:
            obj = json.load(ff)

        return obj

    def forward(self, sig):
        # extract_feature in the torchaudio version will output all 12 layers' output, -1 to select the final one
        out = self.model.extract_features(sig)[0][-1]

        return out


def load_clip(path, max_seconds):
    sig, sr = torchaudio.load(path)
    if sig.shape[0] > 1:
        sig = sig.mean(dim=0, keepdim=True)
    if sr != AVES_SAMPLE_RATE:
        sig = torchaudio.functional.resample(sig, sr, AVES_SAMPLE_RATE)
    max_len = int(max_seconds * AVES_SAMPLE_RATE)
    return sig[:, :max_len]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--config-path', type=str, default='aves-base-bio.torchaudio.model_config.json')
    parser.add_argument('--model-path', type=str, default='aves-base-bio.torchaudio.pt')
    parser.add_argument('--audio-dir', type=str, required=True)
    parser.add_argument('--out-prefix', type=str, default='aves_embeddings')
    parser.add_argument('--max-seconds', type=float, default=10.0)
    parser.add_argument('--layer', type=int, default=-1, help='transformer layer to pool (-1 = last)')
    parser.add_argument('--device', type=str, default='cuda')
    parser.add_argument('--fp16', action='store_true', help='half precision inference on GPU')
    args = parser.parse_args()

    device = torch.device(args.device)
    model = AvesTorchaudioWrapper(args.config_path, args.model_path).to(device)
    model.eval()

    files = sorted(f for f in os.listdir(args.audio_dir) if f.lower().endswith(('.wav', '.flac')))
    embeddings = []
    with torch.inference_mode(), torch.autocast('cuda', dtype=torch.float16, enabled=args.fp16):
        for i, name in enumerate(files):
            sig = load_clip(os.path.join(args.audio_dir, name), args.max_seconds).to(device)
            if args.layer == -1:
                feats = model(sig)
            else:
                feats = model.model.extract_features(sig)[0][args.layer]
            embeddings.append(feats.mean(dim=1).squeeze(0).float().cpu().numpy())
            if i % 100 == 0:
                print(f'{i}/{len(files)} {name} {tuple(feats.shape)}')

    np.save(args.out_prefix + '.npy', np.stack(embeddings))
    with open(args.out_prefix + '.csv', 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['index', 'filename'])
        for i, name in enumerate(files):
            writer.writerow([i, name])
    print(f'wrote {len(files)} embeddings to {args.out_prefix}.npy')


if __name__ == '__main__':
    main()
