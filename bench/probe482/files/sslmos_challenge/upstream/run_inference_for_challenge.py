# ==============================================================================
# Copyright (c) 2021, Yamagishi Laboratory, National Institute of Informatics
# Author: Erica Cooper
# All rights reserved.
# ==============================================================================
# Run a finetuned SSL-MOS model on the (unlabeled) challenge evaluation set and
# write answer.txt in the CodaLab format.  No ground truth is needed.

import os
import argparse
import torch
import fairseq
from torch.utils.data import DataLoader
from torch.utils.data.dataset import Dataset
import torchaudio
from tqdm import tqdm

from mos_fairseq import MosPredictor


class EvalDataset(Dataset):
    def __init__(self, wavdir, wavlist):
        with open(wavlist, 'r') as f:
            self.wavnames = sorted([line.strip().split(',')[0] for line in f if line.strip()])
        self.wavdir = wavdir

    def __getitem__(self, idx):
        wavname = self.wavnames[idx]
        wav = torchaudio.load(os.path.join(self.wavdir, wavname))[0]
        return wav, wavname

    def __len__(self):
        return len(self.wavnames)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--fairseq_base_model', type=str, required=True, help='Path to pretrained fairseq base model.')
    parser.add_argument('--datadir', type=str, required=True, help='Path of your DATA/ directory')
    parser.add_argument('--finetuned_checkpoint', type=str, required=True, help='Path to finetuned MOS prediction checkpoint.')
    parser.add_argument('--split', type=str, default='test', choices=['dev', 'test'])
    parser.add_argument('--outfile', type=str, required=False, default='answer.txt', help='Output filename for your answer.txt file for submission to the CodaLab leaderboard.')
    args = parser.parse_args()

    cp_path = args.fairseq_base_model
    ssl_model_type = cp_path.split('/')[-1]
    SSL_OUT_DIM = 768 if ssl_model_type == 'wav2vec_small.pt' else 1024

    model, cfg, task = fairseq.checkpoint_utils.load_model_ensemble_and_task([cp_path])
    ssl_model = model[0]
    ssl_model.remove_pretraining_modules()

    use_cuda = torch.cuda.is_available()
    model = MosPredictor(ssl_model, SSL_OUT_DIM)
    state = torch.load(args.finetuned_checkpoint, map_location='cuda' if use_cuda else 'cpu')
    model.load_state_dict(state)
    if use_cuda:
        model = model.cuda()
    model.eval()

    wavdir = os.path.join(args.datadir, 'wav')
    wavlist = os.path.join(args.datadir, 'sets', args.split + '.scp')
    dataset = EvalDataset(wavdir, wavlist)
    loader = DataLoader(dataset, batch_size=1, shuffle=False, num_workers=2)

    predictions = {}
    with torch.no_grad():
        for wav, names in tqdm(loader):
            if use_cuda:
                wav = wav.cuda(non_blocking=True)
            output = model(wav)
            predictions[names[0]] = output.item()

    with open(args.outfile, 'w') as ans:
        for k in sorted(predictions.keys()):
            ans.write(k.split('.')[0] + ',' + str(predictions[k]) + '\n')
    print('wrote %d predictions to %s' % (len(predictions), args.outfile))


if __name__ == '__main__':
    main()
