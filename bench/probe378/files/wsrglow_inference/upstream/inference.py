# *****************************************************************************
#  Copyright (c) 2018, NVIDIA CORPORATION.  All rights reserved.
#  Modified for waveform super-resolution.
# *****************************************************************************
import os
import argparse

import numpy as np
import librosa
import torch
from scipy.io.wavfile import write
from scipy.signal import decimate

from glow import WaveGlow

MAX_WAV_VALUE = 32768.0


def files_to_list(filename):
    """
    Takes a text file of filenames and makes a list of filenames
    """
    with open(filename, encoding='utf-8') as f:
        files = f.readlines()

    files = [f.rstrip() for f in files]
    return files


def load_lr(path, sampling_rate, upsampling_rate, from_hr=True):
    if from_hr:
        hr, _ = librosa.load(path, sr=sampling_rate)
        hr = hr[:len(hr) // (upsampling_rate * 8) * (upsampling_rate * 8)]
        lr = decimate(hr, upsampling_rate, ftype='fir', zero_phase=True)
    else:
        lr, _ = librosa.load(path, sr=sampling_rate // upsampling_rate)
    # naive sample-and-hold upsampling, the flow learns the residual spectrum
    lr = np.repeat(lr, upsampling_rate)
    return torch.from_numpy(lr.astype(np.float32))


def main(files, checkpoint_path, sigma, output_dir, sampling_rate,
         upsampling_rate, is_fp16, from_hr):
    files = files_to_list(files)
    waveglow = torch.load(checkpoint_path)['model']
    waveglow = waveglow.remove_weightnorm(waveglow)
    waveglow.cuda().eval()
    if is_fp16:
        from apex import amp
        waveglow, _ = amp.initialize(waveglow, [], opt_level="O3")

    for i, file_path in enumerate(files):
        file_name = os.path.splitext(os.path.basename(file_path))[0]
        lr = load_lr(file_path, sampling_rate, upsampling_rate, from_hr)
        lr = torch.autograd.Variable(lr.cuda())
        lr = torch.unsqueeze(lr, 0)
        lr = lr.half() if is_fp16 else lr
        with torch.no_grad():
            audio = waveglow.infer(lr, sigma=sigma)
            audio = audio * MAX_WAV_VALUE
        audio = audio.squeeze()
        audio = audio.cpu().numpy()
        audio = audio.astype('int16')
        audio_path = os.path.join(
            output_dir, "{}_sr.wav".format(file_name))
        write(audio_path, sampling_rate, audio)
        print(audio_path)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('-f', "--filelist_path", required=True)
    parser.add_argument('-w', '--checkpoint_path',
                        help='Path to WSRGlow checkpoint with model')
    parser.add_argument('-o', "--output_dir", required=True)
    parser.add_argument("-s", "--sigma", default=1.0, type=float)
    parser.add_argument("--sampling_rate", default=48000, type=int)
    parser.add_argument("--upsampling_rate", default=4, type=int)
    parser.add_argument("--is_fp16", action="store_true")
    parser.add_argument("--from_lr", action="store_true",
                        help="inputs are already low-resolution recordings")

    args = parser.parse_args()

    main(args.filelist_path, args.checkpoint_path, args.sigma,
         args.output_dir, args.sampling_rate, args.upsampling_rate,
         args.is_fp16, not args.from_lr)
