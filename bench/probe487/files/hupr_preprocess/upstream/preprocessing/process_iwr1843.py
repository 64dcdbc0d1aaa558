"""Turn raw TI IWR1843 ADC captures into range-azimuth / range-elevation
Doppler heatmaps (VRDAE maps) for HuPR.

Two radars are used: one horizontal (12 virtual antennas along azimuth) and one
vertical (rotated 90 deg, so its azimuth axis measures elevation). Every frame
has numChirps x numTx chirps; the 3-D FFT (range, Doppler, angle) is done on
the GPU with torch.fft because numpy takes ~40 s per sequence.

    python preprocessing/process_iwr1843.py --root ./data/HuPR/raw --out ./data/HuPR --gpu
"""
import os
import glob
import argparse

import numpy as np
import torch
from tqdm import tqdm


class RadarObject(object):
    def __init__(self, args):
        self.root = args.root
        self.saveRoot = args.out
        self.numADCSamples = 256
        self.numTxAntennas = 3
        self.numRxAntennas = 4
        self.numLoopsPerFrame = 64
        self.numChirpsPerFrame = self.numTxAntennas * self.numLoopsPerFrame
        self.numFrames = 600
        self.numKeptChirps = 16          # Doppler bins kept around zero velocity
        self.numAngleBins = 64
        self.numEleBins = 8
        self.rangeSize = 64              # range bins kept (0.2 m .. ~3 m)
        self.rangeStart = 4
        self.device = torch.device('cuda' if args.gpu else 'cpu')
        self.rangeWindow = torch.hann_window(self.numADCSamples, periodic=False, device=self.device)
        self.dopplerWindow = torch.hann_window(self.numLoopsPerFrame, periodic=False, device=self.device)
        self.batchFrames = args.batch_frames

    # ---------------------------------------------------------------- io
    def readBin(self, path):
        adc = np.fromfile(path, dtype=np.int16)
        # 2 LVDS lanes, I/Q interleaved: [I0 I1 Q0 Q1 ...]
        adc = adc.reshape(-1, 4)
        iq = adc[:, :2].reshape(-1) + 1j * adc[:, 2:].reshape(-1)
        frames = iq.reshape(self.numFrames, self.numChirpsPerFrame, self.numRxAntennas, self.numADCSamples)
        return frames.astype(np.complex64)

    # ---------------------------------------------------------------- dsp
    def toVirtualArray(self, x):
        """(F, chirps, rx, samples) -> (F, loops, virtual antennas, samples)."""
        F = x.shape[0]
        x = x.reshape(F, self.numLoopsPerFrame, self.numTxAntennas, self.numRxAntennas, self.numADCSamples)
        # TX0 and TX2 form the 8-element azimuth array, TX1 is offset in elevation
        azi = torch.cat([x[:, :, 0], x[:, :, 2]], dim=2)
        ele = x[:, :, 1]
        return azi, ele

    def shift(self, x, dim):
        return torch.fft.fftshift(x, dim=dim)

    def rangeDopplerFFT(self, x):
        x = x - x.mean(dim=1, keepdim=True)                      # static clutter removal
        x = torch.fft.fft(x * self.rangeWindow, n=self.numADCSamples, dim=-1)
        x = x[..., self.rangeStart:self.rangeStart + self.rangeSize]
        x = torch.fft.fft(x * self.dopplerWindow.view(1, -1, 1, 1), dim=1)
        x = self.shift(x, dim=1)
        c = self.numLoopsPerFrame // 2
        half = self.numKeptChirps // 2
        return x[:, c - half:c + half]

    def angleFFT(self, x, nbins):
        # zero-pad the antenna axis to nbins and FFT across it
        x = torch.fft.fft(x, n=nbins, dim=2)
        return self.shift(x, dim=2)

    def processSequence(self, frames):
        """Returns hori (F, 2, D, R, A) and vert (F, 2, D, R, E) float16 maps."""
        outH, outV = [], []
        for s in range(0, frames.shape[0], self.batchFrames):
            chunk = torch.from_numpy(frames[s:s + self.batchFrames]).to(self.device)
            azi, ele = self.toVirtualArray(chunk)
            azi = self.rangeDopplerFFT(azi)
            ele = self.rangeDopplerFFT(ele)
            azi = self.angleFFT(azi, self.numAngleBins)           # (F, D, A, R)
            ele = self.angleFFT(ele, self.numEleBins)             # (F, D, E, R)
            azi = torch.view_as_real(azi.permute(0, 1, 3, 2).contiguous())
            ele = torch.view_as_real(ele.permute(0, 1, 3, 2).contiguous())
            outH.append(azi.permute(0, 4, 1, 2, 3).half().cpu())
            outV.append(ele.permute(0, 4, 1, 2, 3).half().cpu())
        return torch.cat(outH).numpy(), torch.cat(outV).numpy()

    # ---------------------------------------------------------------- main
    def run(self, seqs=None):
        folders = sorted(glob.glob(os.path.join(self.root, 'single_*')))
        if seqs is not None:
            folders = [f for f in folders if int(f.split('_')[-1]) in seqs]
        for folder in tqdm(folders):
            name = os.path.basename(folder)
            hori = self.readBin(os.path.join(folder, 'hori', 'adc_data.bin'))
            vert = self.readBin(os.path.join(folder, 'vert', 'adc_data.bin'))
            H, _ = self.processSequence(hori)
            _, V = self.processSequence(vert)
            saveDir = os.path.join(self.saveRoot, name)
            os.makedirs(os.path.join(saveDir, 'hori'), exist_ok=True)
            os.makedirs(os.path.join(saveDir, 'vert'), exist_ok=True)
            for i in range(H.shape[0]):
                np.save(os.path.join(saveDir, 'hori', '%09d.npy' % i), H[i])
                np.save(os.path.join(saveDir, 'vert', '%09d.npy' % i), V[i])
            if self.device.type == 'cuda':
                torch.cuda.empty_cache()


def parse_arg():
    parser = argparse.ArgumentParser()
    parser.add_argument('--root', default='./data/HuPR/raw')
    parser.add_argument('--out', default='./data/HuPR')
    parser.add_argument('--gpu', action='store_true', help='run the FFTs on the GPU')
    parser.add_argument('--batch_frames', type=int, default=50)
    parser.add_argument('--seqs', type=int, nargs='*', default=None)
    return parser.parse_args()


if __name__ == '__main__':
    args = parse_arg()
    radar = RadarObject(args)
    radar.run(args.seqs)
