from lightning_model import NuWave2
from omegaconf import OmegaConf as OC
import os
import argparse
import datetime
import time
from glob import glob
import torch
import librosa as rosa
from scipy.io.wavfile import write as swrite
import matplotlib.pyplot as plt
from utils.stft import STFTMag
import numpy as np
from scipy.signal import sosfiltfilt
from scipy.signal import butter, cheby1, cheby2, ellip, bessel
from scipy.signal import resample_poly
import random


def save_stft_mag(wav, fname):
    fig = plt.figure(figsize=(9, 3))
    plt.imshow(rosa.amplitude_to_db(stft(wav[0].detach().cpu()).numpy(),
                                    ref=np.max, top_db=80.),
               aspect='auto',
               origin='lower',
               interpolation='none')
    plt.colorbar()
    plt.xlabel('Frames')
    plt.ylabel('Channels')
    plt.tight_layout()
    fig.savefig(fname, format='png')
    plt.close()
    return


def lowpass(wav, sr, cutoff, order=8, ftype='cheby1'):
    nyq = 0.5 * sr
    hi = cutoff / nyq
    if ftype == 'butter':
        sos = butter(order, hi, btype='low', output='sos')
    elif ftype == 'cheby1':
        sos = cheby1(order, 0.1, hi, btype='low', output='sos')
    elif ftype == 'cheby2':
        sos = cheby2(order, 60, hi, btype='low', output='sos')
    elif ftype == 'ellip':
        sos = ellip(order, 0.1, 60, hi, btype='low', output='sos')
    elif ftype == 'bessel':
        sos = bessel(order, hi, btype='low', output='sos')
    else:
        raise ValueError(ftype)
    return sosfiltfilt(sos, wav)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-c',
                        '--checkpoint',
                        type=str,
                        required=True,
                        help="Checkpoint path")
    parser.add_argument('-i',
                        '--wav',
                        type=str,
                        default=None,
                        help="audio")
    parser.add_argument('--sr',
                        type=int,
                        required=True,
                        help="Sampling rate of input audio")
    parser.add_argument('--steps',
                        type=int,
                        required=False,
                        help="Steps for sampling")
    parser.add_argument('--gt', action="store_true",
                        required=False, help="Whether the input audio is 48 kHz ground truth audio.")
    parser.add_argument('--device',
                        type=str,
                        default='cuda',
                        required=False,
                        help="Device, 'cuda' or 'cpu'")
    parser.add_argument('--save_stft', action="store_true", required=False)

    args = parser.parse_args()
    hparams = OC.load('hparameter.yaml')
    os.makedirs(hparams.log.test_result_dir, exist_ok=True)
    if args.steps is None or args.steps == 8:
        args.steps = 8
        noise_schedule = eval(hparams.dpm.infer_schedule)
    else:
        noise_schedule = None
    model = NuWave2(hparams).to(args.device)
    model.eval()
    stft = STFTMag()
    ckpt = torch.load(args.checkpoint, map_location='cpu')
    model.load_state_dict(ckpt['state_dict'] if not ('EMA' in args.checkpoint) else ckpt)

    highcut = args.sr // 2
    nyq = 0.5 * hparams.audio.sampling_rate
    hi = highcut / nyq

    if args.gt:
        wav, _ = rosa.load(args.wav, sr=hparams.audio.sampling_rate, mono=True)
        wav /= np.max(np.abs(wav))
        wav = wav[:len(wav) - len(wav) % hparams.audio.hop_length]

        order = 8
        sos = cheby1(order, 0.05, hi, btype='lowpass', output='sos')
        wav_l = sosfiltfilt(sos, wav)

        # downsample to the low sampling rate
        wav_l = resample_poly(wav_l, highcut * 2, hparams.audio.sampling_rate)
        # upsample to the original sampling rate
        wav_l = resample_poly(wav_l, hparams.audio.sampling_rate, highcut * 2)

        if len(wav_l) < len(wav):
            wav_l = np.pad(wav, (0, len(wav) - len(wav_l)), 'constant', constant_values=0)
        elif len(wav_l) > len(wav):
            wav_l = wav_l[:len(wav)]
    else:
        wav, _ = rosa.load(args.wav, sr=args.sr, mono=True)
        wav /= np.max(np.abs(wav))

        # upsample to the original sampling rate
        wav_l = resample_poly(wav, hparams.audio.sampling_rate, args.sr)
        wav_l = wav_l[:len(wav_l) - len(wav_l) % hparams.audio.hop_length]

    fft_size = hparams.audio.filter_length // 2 + 1
    band = torch.zeros(fft_size, dtype=torch.int64)
    band[:int(hi * fft_size)] = 1

    wav = torch.from_numpy(wav).unsqueeze(0).to(args.device)
    wav_l = torch.from_numpy(wav_l.copy()).float().unsqueeze(0).to(args.device)
    band = band.unsqueeze(0).to(args.device)

    if args.device.startswith('cuda'):
        torch.cuda.synchronize()
    t0 = time.time()
    wav_recon, wav_list = model.inference(wav_l, band, args.steps, noise_schedule)
    if 'cuda' in args.device:
        torch.cuda.synchronize(args.device)
    print(f'inference took {time.time() - t0:.2f}s for {wav_l.shape[-1] / hparams.audio.sampling_rate:.2f}s of audio')

    wav = torch.clamp(wav, min=-1, max=1 - torch.finfo(torch.float16).eps)
    save_stft_mag(wav, os.path.join(hparams.log.test_result_dir, f'{args.wav.split("/")[-1]}_gt.png'))
    if not args.gt:
        swrite(os.path.join(hparams.log.test_result_dir, f'{args.wav.split("/")[-1]}_up.wav'),
               hparams.audio.sampling_rate, wav_l[0].detach().cpu().numpy())
    for i in range(len(wav_list)):
        if args.save_stft:
            save_stft_mag(wav_list[i], os.path.join(hparams.log.test_result_dir,
                                                    f'{args.wav.split("/")[-1]}_{i}.png'))
    swrite(os.path.join(hparams.log.test_result_dir, f'{args.wav.split("/")[-1]}_recon.wav'),
           hparams.audio.sampling_rate, wav_recon[0].detach().cpu().numpy())
