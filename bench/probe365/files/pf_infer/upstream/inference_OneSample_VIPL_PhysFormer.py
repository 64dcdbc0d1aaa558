from __future__ import print_function, division
import torch
import matplotlib.pyplot as plt
import argparse, os
import numpy as np
import random
import math
import cv2
import scipy.io as sio
from scipy import signal

from model import ViT_ST_ST_Compact3_TDC_gra_sharp
from TorchLossComputer import TorchLossComputer

import torch.nn as nn

# Inference on one VIPL-HR sample with the released fold-1 checkpoint.
# The checkpoint was trained on a single V100; 160-frame clips, 128x128 face crops.

os.environ["CUDA_VISIBLE_DEVICES"] = "0"

CLIP_FRAMES = 160
FACE_SIZE = 128


def load_face_frames(video_dir, start_frame, num_frames=CLIP_FRAMES):
    """Read cropped face images <video_dir>/image_xxxxx.png into a [T, H, W, 3] array."""
    video_x = np.zeros((num_frames, FACE_SIZE, FACE_SIZE, 3))
    image_id = start_frame
    for i in range(num_frames):
        image_name = 'image_%05d.png' % image_id
        image_path = os.path.join(video_dir, image_name)
        image = cv2.imread(image_path)
        if image is None:
            raise FileNotFoundError(image_path)
        image = cv2.resize(image, (FACE_SIZE, FACE_SIZE), interpolation=cv2.INTER_CUBIC)
        video_x[i, :, :, :] = image
        image_id += 1
    return video_x


def normalize(video_x):
    # [0, 255] -> [-1, 1]
    return (video_x - 127.5) / 128


def bandpass(rppg, fs, low=0.7, high=2.5):
    b, a = signal.butter(2, [low / fs * 2, high / fs * 2], btype='bandpass')
    return signal.filtfilt(b, a, rppg)


def hr_from_psd(rppg, fs):
    f, pxx = signal.periodogram(rppg, fs=fs, nfft=4 * len(rppg), detrend=False)
    mask = (f >= 0.7) & (f <= 3.0)
    return f[mask][np.argmax(pxx[mask])] * 60.0


def main(args):
    model = ViT_ST_ST_Compact3_TDC_gra_sharp(image_size=(160, 128, 128), patches=(4, 4, 4), dim=96, ff_dim=144,
                                             num_heads=4, num_layers=12, dropout_rate=0.1, theta=0.7)
    model.load_state_dict(torch.load(args.checkpoint))
    model = model.cuda()
    model.eval()

    video_x = load_face_frames(args.video_dir, args.start_frame)
    video_x = normalize(video_x)
    # [T, H, W, C] -> [1, C, T, H, W]
    video_x = video_x.transpose((3, 0, 1, 2))
    inputs = torch.from_numpy(video_x.astype(np.float32)).unsqueeze(0).cuda()

    with torch.no_grad():
        rPPG, Score1, Score2, Score3 = model(inputs, args.gra_sharp)
        rPPG = (rPPG - torch.mean(rPPG)) / torch.std(rPPG)
        hr_dl = TorchLossComputer.cross_entropy_power_spectrum_forward_pred(rPPG[0], torch.tensor(args.fps).cuda())

    rppg = rPPG[0].cpu().data.numpy()
    rppg = bandpass(rppg, args.fps)
    hr_psd = hr_from_psd(rppg, args.fps)

    print('HR (spectral argmax, torch): %.2f bpm' % (hr_dl.item() + 40))
    print('HR (periodogram, numpy):     %.2f bpm' % hr_psd)

    if args.save_mat:
        sio.savemat(args.save_mat, {'rPPG': rppg, 'HR': hr_psd,
                                    'Score1': Score1.cpu().numpy(), 'Score2': Score2.cpu().numpy(),
                                    'Score3': Score3.cpu().numpy()})

    if args.plot:
        t = np.arange(len(rppg)) / args.fps
        plt.figure(figsize=(10, 3))
        plt.plot(t, rppg, 'r', linewidth=1)
        plt.xlabel('time (s)')
        plt.title('PhysFormer rPPG, HR = %.1f bpm' % hr_psd)
        plt.tight_layout()
        plt.savefig(args.plot)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="PhysFormer one-sample inference")
    parser.add_argument('--checkpoint', type=str, default='Physformer_VIPL_fold1.pkl')
    parser.add_argument('--video_dir', type=str, default='./p1/v1/source1/')
    parser.add_argument('--start_frame', type=int, default=1)
    parser.add_argument('--fps', type=float, default=30.0)
    parser.add_argument('--gra_sharp', type=float, default=2.0)
    parser.add_argument('--save_mat', type=str, default='')
    parser.add_argument('--plot', type=str, default='rPPG_onesample.png')
    args = parser.parse_args()
    main(args)
