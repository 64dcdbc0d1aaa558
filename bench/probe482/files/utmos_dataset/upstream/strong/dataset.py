import os
import random

import numpy as np
import pandas as pd
import pytorch_lightning as pl
import torch
import torchaudio
from torch.utils.data import DataLoader, Dataset
from torch.nn.utils.rnn import pad_sequence
from sklearn.model_selection import KFold

from text.symbols import symbols
from text import text_to_sequence


class MOSDataset(Dataset):
    def __init__(self, wavdir, mos_list, listener_ids=None, domain_id=0,
                 use_phoneme=False, phoneme_file=None, augment=False):
        self.wavdir = wavdir
        self.mos_lookup = {}
        self.sysdict = {}
        self.listener_ids = listener_ids
        self.domain_id = domain_id
        self.use_phoneme = use_phoneme
        self.augment = augment
        with open(mos_list, 'r') as f:
            for line in f:
                parts = line.strip().split(',')
                wavname = parts[0]
                mos = float(parts[1])
                self.mos_lookup[wavname] = mos
        self.wavnames = sorted(self.mos_lookup.keys())
        if use_phoneme:
            self.phonemes = pd.read_csv(phoneme_file).set_index('wav_name')

    def __getitem__(self, idx):
        wavname = self.wavnames[idx]
        wavpath = os.path.join(self.wavdir, wavname)
        wav, sr = torchaudio.load(wavpath)
        if self.augment:
            # random speed perturbation (0.95 - 1.05) as in the paper
            factor = random.uniform(0.95, 1.05)
            wav = torchaudio.functional.resample(wav, int(sr * factor), sr)
        score = self.mos_lookup[wavname]
        item = {
            'wav': wav,
            'score': (score - 3) / 2,
            'wavname': wavname,
            'system_id': wavname.split('-')[0],
            'domain': self.domain_id,
            'judge_id': 0 if self.listener_ids is None else self.listener_ids.get(wavname, 0),
        }
        if self.use_phoneme:
            ph = self.phonemes.loc[wavname]
            item['phonemes'] = torch.tensor(text_to_sequence(ph['transcription']), dtype=torch.long)
            item['reference'] = torch.tensor(text_to_sequence(ph['reference']), dtype=torch.long)
        return item

    def __len__(self):
        return len(self.wavnames)

    @staticmethod
    def collate_fn(batch):
        wavs = [b['wav'] for b in batch]
        max_len = max(w.shape[1] for w in wavs)
        output_wavs = []
        for wav in wavs:
            amount_to_pad = max_len - wav.shape[1]
            padded_wav = torch.nn.functional.pad(wav, (0, amount_to_pad), 'constant', 0)
            output_wavs.append(padded_wav)
        out = {
            'wav': torch.stack(output_wavs, dim=0),
            'score': torch.tensor([b['score'] for b in batch], dtype=torch.float),
            'wavname': [b['wavname'] for b in batch],
            'system_id': [b['system_id'] for b in batch],
            'domain': [b['domain'] for b in batch],
            'domains': torch.tensor([b['domain'] for b in batch], dtype=torch.long),
            'judge_id': torch.tensor([b['judge_id'] for b in batch], dtype=torch.long),
            'utt_avg_score': torch.tensor([b['score'] * 2 + 3 for b in batch]),
        }
        if 'phonemes' in batch[0]:
            out['phonemes'] = pad_sequence([b['phonemes'] for b in batch], batch_first=True)
            out['phoneme_lens'] = torch.tensor([len(b['phonemes']) for b in batch])
            out['reference'] = pad_sequence([b['reference'] for b in batch], batch_first=True)
            out['reference_lens'] = torch.tensor([len(b['reference']) for b in batch])
        else:
            out['phonemes'] = None
            out['phoneme_lens'] = None
            out['reference'] = None
            out['reference_lens'] = None
        return out


class DataModule(pl.LightningDataModule):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.data_sources = cfg.dataset.data_sources

    def get_ds(self, phase):
        datasets = []
        for i, ds in enumerate(self.data_sources):
            mos_list = ds.get(f'{phase}_mos_list_path')
            if mos_list is None:
                continue
            datasets.append(MOSDataset(
                wavdir=ds['wav_dir'],
                mos_list=mos_list,
                domain_id=i,
                use_phoneme=self.cfg.dataset.use_phoneme,
                phoneme_file=ds.get('phoneme_file'),
                augment=(phase == 'train' and self.cfg.dataset.augment),
            ))
        return torch.utils.data.ConcatDataset(datasets)

    def train_dataloader(self):
        return DataLoader(
            self.get_ds('train'),
            batch_size=self.cfg.train.train_batch_size,
            shuffle=True,
            num_workers=self.cfg.dataset.num_workers,
            collate_fn=MOSDataset.collate_fn,
            persistent_workers=True,
        )

    def val_dataloader(self):
        return DataLoader(
            self.get_ds('val'),
            batch_size=self.cfg.train.val_batch_size,
            shuffle=False,
            num_workers=self.cfg.dataset.num_workers,
            collate_fn=MOSDataset.collate_fn,
        )

    def test_dataloader(self):
        return DataLoader(
            self.get_ds('test'),
            batch_size=self.cfg.train.test_batch_size,
            shuffle=False,
            num_workers=self.cfg.dataset.num_workers,
            collate_fn=MOSDataset.collate_fn,
        )


class CVDataModule(DataModule):
    def __init__(self, cfg, k_cv, i_cv):
        super().__init__(cfg)
        self.k_cv = k_cv
        self.i_cv = i_cv

    def get_ds(self, phase):
        if phase == 'test':
            return super().get_ds('val')
        full = super().get_ds('train')
        kf = KFold(n_splits=self.k_cv, shuffle=True, random_state=self.cfg.train.seed)
        train_idx, val_idx = list(kf.split(np.arange(len(full))))[self.i_cv]
        idx = train_idx if phase == 'train' else val_idx
        return torch.utils.data.Subset(full, idx)
