"""
Extract emotion2vec representations for downstream speech emotion recognition.

Usage:
    python extract_features.py --source_file test.wav --target_file test.npy \
        --model_dir ../upstream --checkpoint_dir emotion2vec_base.pt --granularity utterance

    python extract_features.py --source_file data/iemocap.scp --target_file feats/iemocap \
        --model_dir ../upstream --checkpoint_dir emotion2vec_base.pt --granularity frame
"""
import argparse
import os
from dataclasses import dataclass

import fairseq
import numpy as np
import soundfile as sf
import torch
import torch.nn.functional as F
from tqdm import tqdm


def get_parser():
    parser = argparse.ArgumentParser(
        description="extract emotion2vec features for downstream tasks"
    )
    parser.add_argument('--source_file', help='location of source wav file (.wav) or a kaldi-style scp list', required=True)
    parser.add_argument('--target_file', help='location of target npy file, or an output directory for scp input', required=True)
    parser.add_argument('--model_dir', type=str, help='pretrained model user dir', required=True)
    parser.add_argument('--checkpoint_dir', type=str, help='checkpoint for pre-trained model', required=True)
    parser.add_argument('--granularity', type=str, help='which granularity to use, frame or utterance', required=True)
    parser.add_argument('--max_seconds', type=float, default=30.0,
                        help='chunk long utterances to avoid running out of GPU memory')

    return parser


@dataclass
class UserDirModule:
    user_dir: str


def read_wav(path):
    wav, sr = sf.read(path)
    channel = sf.info(path).channels
    assert sr == 16e3, "Sample rate should be 16kHz, but got {} in file {}".format(sr, path)
    assert channel == 1, "Channel should be 1, but got {} in file {}".format(channel, path)
    return wav


def pool(feats, granularity):
    if granularity == 'frame':
        return feats
    elif granularity == 'utterance':
        return np.mean(feats, axis=0)
    raise ValueError("Unknown granularity: {}".format(granularity))


@torch.no_grad()
def extract_one(model, task, wav, max_samples):
    source = torch.from_numpy(wav).float().cuda()
    if task.cfg.normalize:
        source = F.layer_norm(source, source.shape)
    source = source.view(1, -1)

    chunks = []
    for start in range(0, source.size(1), max_samples):
        piece = source[:, start:start + max_samples]
        if piece.size(1) < 400:  # shorter than one conv receptive field
            continue
        feats = model.extract_features(piece, padding_mask=None)
        chunks.append(feats['x'].squeeze(0).cpu().numpy())
    return np.concatenate(chunks, axis=0)


def main():
    parser = get_parser()
    args = parser.parse_args()
    print(args)

    source_file = args.source_file
    target_file = args.target_file
    model_dir = args.model_dir
    checkpoint_dir = args.checkpoint_dir
    granularity = args.granularity
    max_samples = int(args.max_seconds * 16000)

    model_path = UserDirModule(model_dir)
    fairseq.utils.import_user_module(model_path)
    model, cfg, task = fairseq.checkpoint_utils.load_model_ensemble_and_task([checkpoint_dir])
    model = model[0]
    model.eval()
    model.cuda()

    if source_file.endswith('.wav'):
        wav = read_wav(source_file)
        try:
            feats = extract_one(model, task, wav, max_samples)
            np.save(target_file, pool(feats, granularity))
        except Exception as e:
            print("Error in extracting features from {}: {}".format(source_file, e))
        return

    # scp list: "<utt_id> <path>" per line
    os.makedirs(target_file, exist_ok=True)
    with open(source_file) as f:
        items = [line.strip().split(maxsplit=1) for line in f if line.strip()]

    n_fail = 0
    for utt_id, path in tqdm(items, desc="emotion2vec"):
        out_path = os.path.join(target_file, utt_id + '.npy')
        if os.path.exists(out_path):
            continue
        try:
            feats = extract_one(model, task, read_wav(path), max_samples)
            np.save(out_path, pool(feats, granularity))
        except Exception as e:
            n_fail += 1
            print("Error in extracting features from {}: {}".format(path, e))
    print("done: {} utterances, {} failed".format(len(items), n_fail))


if __name__ == '__main__':
    main()
