import os
import random
from glob import glob

import numpy as np
import librosa as rosa
import torch
from torch.utils.data import Dataset, DataLoader
from torch.utils.data.distributed import DistributedSampler
from scipy.signal import sosfiltfilt
from scipy.signal import butter, cheby1, cheby2, ellip, bessel
from scipy.signal import resample_poly


def create_vctk_dataloader(hparams, cv):
    def collate_fn(batch):
        wav_list = list()
        wav_l_list = list()
        band_list = list()
        for wav, wav_l, band in batch:
            wav_list.append(wav)
            wav_l_list.append(wav_l)
            band_list.append(band)
        wav_list = torch.stack(wav_list, dim=0)
        wav_l_list = torch.stack(wav_l_list, dim=0)
        band_list = torch.stack(band_list, dim=0)
        return wav_list, wav_l_list, band_list

    if cv == 0:
        return DataLoader(dataset=VCTKMultiSpkDataset(hparams, cv),
                          batch_size=hparams.train.batch_size,
                          shuffle=True,
                          num_workers=hparams.train.num_workers,
                          collate_fn=collate_fn,
                          pin_memory=True,
                          drop_last=True,
                          sampler=None)
    else:
        return DataLoader(dataset=VCTKMultiSpkDataset(hparams, cv),
                          collate_fn=collate_fn,
                          batch_size=hparams.train.batch_size if cv == 1 else 1,
                          drop_last=True if cv == 1 else False,
                          shuffle=False,
                          num_workers=hparams.train.num_workers)


class VCTKMultiSpkDataset(Dataset):
    def __init__(self, hparams, cv=0):  # cv 0: train, 1: val, 2: test
        def _get_datalist(folder, file_format, spk_list, cv):
            _dl = []
            len_spk_list = len(spk_list)
            s = 0
            print(f'full speakers {len_spk_list}')
            for i, spk in enumerate(spk_list):
                if cv == 0:
                    if not (i < int(len_spk_list * self.cv_ratio[0])):
                        continue
                elif cv == 1:
                    if not (int(len_spk_list * self.cv_ratio[0]) <= i
                            <= int(len_spk_list * (self.cv_ratio[0] + self.cv_ratio[1]))):
                        continue
                else:
                    if not (int(len_spk_list * self.cv_ratio[0]) <= i):
                        continue
                _full_spk_dl = sorted(glob(os.path.join(spk, file_format)))
                _len = len(_full_spk_dl)
                if _len == 0:
                    continue
                s += 1
                _dl.extend(_full_spk_dl)

            print(cv, s)
            return _dl

        def _get_spk(folder):
            return sorted(glob(os.path.join(folder, '*')))

        self.hparams = hparams
        self.cv = cv
        self.cv_ratio = eval(hparams.data.cv_ratio)
        self.directory = hparams.data.dir
        self.dataformat = hparams.data.format
        self.data_list = _get_datalist(self.directory, self.dataformat,
                                       _get_spk(self.directory), self.cv)
        self.filter_ratio = [1. / 2.5, 1. / 2.]
        self.filters = ['cheby1', 'cheby1', 'bessel', 'ellip', 'butter']
        self.timestamps = self._read_timestamps(hparams.data.timestamp_path)

        assert len(self.data_list) != 0, "no data found"

    def _read_timestamps(self, path):
        ts = {}
        if not os.path.exists(path):
            return ts
        with open(path) as f:
            for line in f:
                name, start, end = line.strip().split(' ')
                ts[name] = (float(start), float(end))
        return ts

    def __len__(self):
        return len(self.data_list)

    def __getitem__(self, index):
        wav, _ = rosa.load(self.data_list[index], sr=self.hparams.audio.sampling_rate)
        name = os.path.basename(self.data_list[index]).replace('_mic1.wav', '')
        if name in self.timestamps:
            start, end = self.timestamps[name]
            wav = wav[int(start * self.hparams.audio.sampling_rate):
                      int(end * self.hparams.audio.sampling_rate)]
        wav /= np.max(np.abs(wav)) + 1e-8

        if wav.shape[0] < self.hparams.audio.length:
            padl = self.hparams.audio.length - wav.shape[0]
            r = random.randint(0, padl) if self.cv < 2 else padl // 2
            wav = np.pad(wav, (r, padl - r), 'constant', constant_values=0)
        else:
            start = random.randint(0, wav.shape[0] - self.hparams.audio.length)
            wav = wav[start:start + self.hparams.audio.length] if self.cv < 2 else wav[:len(wav) - len(wav) % self.hparams.audio.hop_length]

        if self.cv == 0:
            order = random.randint(1, 11)
            ripple = random.choice([1e-9, 1e-6, 1e-3, 1, 5])
        else:
            order = 8
            ripple = 0.05

        if self.cv == 0:
            highcut = random.randint(self.hparams.audio.sr_min // 2, self.hparams.audio.sr_max // 2)
        elif self.cv == 1:
            highcut = random.choice([6000, 8000, 12000]) // 2
        else:
            highcut = 12000 // 2

        nyq = 0.5 * self.hparams.audio.sampling_rate
        hi = highcut / nyq

        if hi == 1:
            hi -= 1e-7

        filter = random.choice(self.filters) if self.cv == 0 else 'cheby1'
        if filter == 'cheby1':
            sos = cheby1(order, ripple, hi, btype='lowpass', output='sos')
        elif filter == 'cheby2':
            sos = cheby2(order, ripple, hi, btype='lowpass', output='sos')
        elif filter == 'bessel':
            sos = bessel(order, hi, btype='lowpass', output='sos')
        elif filter == 'ellip':
            sos = ellip(order, ripple, ripple, hi, btype='lowpass', output='sos')
        else:
            sos = butter(order, hi, btype='lowpass', output='sos')

        wav_l = sosfiltfilt(sos, wav)

        # downsample to the low sampling rate
        wav_l = resample_poly(wav_l, highcut * 2, self.hparams.audio.sampling_rate)
        # upsample to the original sampling rate
        wav_l = resample_poly(wav_l, self.hparams.audio.sampling_rate, highcut * 2)

        if len(wav_l) < len(wav):
            wav_l = np.pad(wav, (0, len(wav) - len(wav_l)), 'constant', constant_values=0)
        elif len(wav_l) > len(wav):
            wav_l = wav_l[:len(wav)]

        fft_size = self.hparams.audio.filter_length // 2 + 1
        band = torch.zeros(fft_size, dtype=torch.int64)
        band[:int(hi * fft_size)] = 1

        return torch.from_numpy(wav).float(), torch.from_numpy(wav_l.copy()).float(), band
