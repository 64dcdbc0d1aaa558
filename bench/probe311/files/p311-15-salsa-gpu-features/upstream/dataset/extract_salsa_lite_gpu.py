"""
GPU version of the SALSA-Lite feature extraction for the MIC format (4-channel tetrahedral array).

Computes, for every file in the dataset:
    * 4 channels of log-linear spectrograms (up to fmax_spectra)
    * 3 channels of normalized inter-channel phase differences (NIPD) between mic 1 and mics 2-4,
      only inside the spatial-aliasing-free band [fmin_doa, fmax_doa]
and writes them as (n_channels, n_frames, n_bins) float32 .npy files.

The numpy implementation in extract_salsa_lite.py takes ~40 min for the STARSS23 dev set on a
16-core CPU; this one takes ~3 min on a single V100. Usage:

    python dataset/extract_salsa_lite_gpu.py --data_config configs/salsa_lite_mic.yml --gpu 0
"""
import argparse
import glob
import logging
import os
import time

import numpy as np
import torch
import torchaudio
import yaml
from tqdm import tqdm

logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s')
logger = logging.getLogger(__name__)

SOUND_SPEED = 343.0
# distance between mic 1 and mics 2..4 is not needed for the normalised IPD (delta = -c * phi / (2 pi f))


def parse_args():
    parser = argparse.ArgumentParser(description='Extract SALSA-Lite features on the GPU')
    parser.add_argument('--data_config', default='configs/salsa_lite_mic.yml')
    parser.add_argument('--gpu', type=int, default=0, help='CUDA device index')
    parser.add_argument('--batch_files', type=int, default=8, help='files processed per GPU batch')
    parser.add_argument('--overwrite', action='store_true')
    return parser.parse_args()


class SalsaLiteExtractor(torch.nn.Module):
    def __init__(self, fs=24000, n_fft=512, hop_length=300, win_length=None, fmin_doa=50, fmax_doa=2000,
                 fmax_spectra=9000, eps=1e-8):
        super().__init__()
        self.fs = fs
        self.n_fft = n_fft
        self.hop_length = hop_length
        self.win_length = win_length or n_fft
        self.eps = eps
        self.spec = torchaudio.transforms.Spectrogram(n_fft=n_fft, hop_length=hop_length, win_length=self.win_length,
                                                      window_fn=torch.hann_window, power=None, center=True,
                                                      pad_mode='reflect')
        freq_bins = np.fft.rfftfreq(n_fft, d=1.0 / fs)
        self.lower_bin = int(np.floor(fmin_doa * n_fft / float(fs)))
        self.lower_bin = max(self.lower_bin, 1)
        self.upper_bin = int(np.floor(fmax_doa * n_fft / float(fs)))
        self.cutoff_bin = int(np.floor(fmax_spectra * n_fft / float(fs)))
        assert self.upper_bin <= self.cutoff_bin, 'Upper bin for doa feature is higher than cutoff bin for spectrogram!'
        # normalization factor for the IPD: -c / (2 pi f)
        delta = 2 * np.pi * freq_bins[self.lower_bin:self.upper_bin]
        self.register_buffer('ipd_norm', torch.from_numpy(-SOUND_SPEED / delta).float()[None, :, None], persistent=False)

    def forward(self, audio):
        """audio: (n_channels=4, n_samples) -> (7, n_frames, cutoff_bin)"""
        stft = self.spec(audio)  # (4, n_bins, n_frames), complex64
        log_spec = torch.log(torch.abs(stft[:, :self.cutoff_bin]) ** 2 + self.eps)

        phase_vector = torch.angle(stft[1:, self.lower_bin:self.upper_bin] * torch.conj(stft[:1, self.lower_bin:self.upper_bin]))
        phase_vector = phase_vector * self.ipd_norm
        nipd = torch.zeros(3, self.cutoff_bin, stft.shape[-1], dtype=log_spec.dtype, device=log_spec.device)
        nipd[:, self.lower_bin:self.upper_bin] = phase_vector

        feat = torch.cat((log_spec, nipd), dim=0)  # (7, cutoff_bin, n_frames)
        return feat.transpose(1, 2).contiguous()


def load_audio(path, target_fs):
    audio, fs = torchaudio.load(path)
    if fs != target_fs:
        audio = torchaudio.functional.resample(audio, fs, target_fs)
    return audio


def main():
    args = parse_args()
    with open(args.data_config, 'r') as f:
        cfg = yaml.safe_load(f)

    if not torch.cuda.is_available():
        raise SystemExit('This script needs a CUDA GPU; use extract_salsa_lite.py on CPU-only machines.')
    torch.cuda.set_device(args.gpu)
    device = torch.device('cuda', args.gpu)

    extractor = SalsaLiteExtractor(fs=cfg['data']['fs'], n_fft=cfg['data']['n_fft'], hop_length=cfg['data']['hop_len'],
                                   fmin_doa=cfg['data']['fmin_doa'], fmax_doa=cfg['data']['fmax_doa'],
                                   fmax_spectra=cfg['data']['fmax_spectra']).to(device)
    extractor.eval()

    for split in cfg['data']['splits']:
        audio_dir = os.path.join(cfg['data']['audio_dir'], 'mic_{}'.format(split))
        feature_dir = os.path.join(cfg['data']['feature_dir'], 'salsa_lite_{}'.format(split))
        os.makedirs(feature_dir, exist_ok=True)
        audio_fn_list = sorted(glob.glob(os.path.join(audio_dir, '**', '*.wav'), recursive=True))
        logger.info('{}: {} files -> {}'.format(split, len(audio_fn_list), feature_dir))

        start_time = time.time()
        for count, audio_fn in enumerate(tqdm(audio_fn_list)):
            out_fn = os.path.join(feature_dir, os.path.basename(audio_fn).replace('.wav', '.npy'))
            if os.path.exists(out_fn) and not args.overwrite:
                continue
            audio = load_audio(audio_fn, cfg['data']['fs'])
            audio_gpu = audio.to(device, non_blocking=True)
            with torch.no_grad():
                feat = extractor(audio_gpu)
            np.save(out_fn, feat.cpu().numpy().astype(np.float32))

            if (count + 1) % 100 == 0:
                torch.cuda.synchronize()
                logger.info('{} files, {:.1f} s, {:.0f} MB GPU memory in use'.format(
                    count + 1, time.time() - start_time, torch.cuda.memory_allocated(device) / 2 ** 20))
        logger.info('split {} done in {:.1f} s'.format(split, time.time() - start_time))


if __name__ == '__main__':
    main()
