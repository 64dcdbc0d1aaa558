import os
import random
from glob import glob

import numpy as np
import soundfile as sf
import torch
import torch.utils.data as data
from loguru import logger

from stft import STFT


def spect_loader(path, trim_start, num_samples, stft, return_phase=False):
    y, sr = sf.read(path)
    if sr != 16000:
        raise ValueError(f'{path}: expected 16 kHz audio, got {sr}')
    if y.ndim > 1:
        y = y.mean(axis=1)
    # crop / pad to a fixed length
    y = y[trim_start:trim_start + num_samples]
    if len(y) < num_samples:
        y = np.pad(y, (0, num_samples - len(y)), mode='constant')
    y = torch.FloatTensor(y).unsqueeze(0)
    with torch.no_grad():
        mag, phase = stft.transform(y)
    mag = mag.squeeze(0)
    phase = phase.squeeze(0)
    # log-compress the magnitude
    mag = torch.log1p(mag)
    if return_phase:
        return mag, phase
    return mag


class TimitLoader(data.Dataset):
    def __init__(self, root, n_messages=1, trim_start=0, num_samples=16000, test=False, filter_num=None):
        self.root = root
        self.n_messages = n_messages
        self.trim_start = trim_start
        self.num_samples = num_samples
        self.stft = STFT(filter_length=1024, hop_length=256)
        split = 'TEST' if test else 'TRAIN'
        self.spect_pairs = sorted(glob(os.path.join(root, split, '**', '*.WAV'), recursive=True) +
                                  glob(os.path.join(root, split.lower(), '**', '*.wav'), recursive=True))
        if filter_num is not None:
            self.spect_pairs = self.spect_pairs[:filter_num]
        if len(self.spect_pairs) == 0:
            raise RuntimeError(f'no wav files found in {root}/{split}')
        logger.info(f'{split}: {len(self.spect_pairs)} files')

    def __getitem__(self, index):
        carrier_path = self.spect_pairs[index]
        carrier, carrier_phase = spect_loader(carrier_path, self.trim_start, self.num_samples, self.stft,
                                              return_phase=True)
        msgs, msg_phases = [], []
        for _ in range(self.n_messages):
            msg_path = random.choice(self.spect_pairs)
            m, p = spect_loader(msg_path, self.trim_start, self.num_samples, self.stft, return_phase=True)
            msgs.append(m.unsqueeze(0))
            msg_phases.append(p.unsqueeze(0))
        return carrier.unsqueeze(0), carrier_phase.unsqueeze(0), msgs, msg_phases

    def __len__(self):
        return len(self.spect_pairs)


class YohoLoader(TimitLoader):
    """YOHO speaker verification corpus: same layout handling, different root structure."""

    def __init__(self, root, n_messages=1, trim_start=0, num_samples=16000, test=False, filter_num=None):
        self.root = root
        self.n_messages = n_messages
        self.trim_start = trim_start
        self.num_samples = num_samples
        self.stft = STFT(filter_length=1024, hop_length=256)
        split = 'verify' if test else 'enroll'
        self.spect_pairs = sorted(glob(os.path.join(root, '*', split, '**', '*.wav'), recursive=True))
        if filter_num is not None:
            self.spect_pairs = self.spect_pairs[:filter_num]
        logger.info(f'yoho/{split}: {len(self.spect_pairs)} files')


def collate(batch):
    carrier = torch.stack([b[0] for b in batch])
    carrier_phase = torch.stack([b[1] for b in batch])
    n_messages = len(batch[0][2])
    msg = [torch.stack([b[2][i] for b in batch]) for i in range(n_messages)]
    msg_phase = [torch.stack([b[3][i] for b in batch]) for i in range(n_messages)]
    return carrier, carrier_phase, msg, msg_phase


def create_loaders(args):
    dataset_cls = TimitLoader if args.dataset == 'timit' else YohoLoader
    train_set = dataset_cls(args.data, n_messages=args.n_messages, trim_start=args.trim_start,
                            num_samples=args.num_samples, test=False)
    test_set = dataset_cls(args.data, n_messages=args.n_messages, trim_start=args.trim_start,
                           num_samples=args.num_samples, test=True)
    # hold out 10% of the training files for validation
    n_val = max(1, len(train_set) // 10)
    train_set, val_set = data.random_split(train_set, [len(train_set) - n_val, n_val],
                                           generator=torch.Generator().manual_seed(args.seed))

    kwargs = {'num_workers': args.num_workers, 'pin_memory': True} if args.cuda else {}
    train_loader = data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                                   collate_fn=collate, drop_last=True, **kwargs)
    val_loader = data.DataLoader(val_set, batch_size=args.batch_size, shuffle=False,
                                 collate_fn=collate, **kwargs)
    test_loader = data.DataLoader(test_set, batch_size=args.batch_size, shuffle=False,
                                  collate_fn=collate, **kwargs)
    return train_loader, val_loader, test_loader
