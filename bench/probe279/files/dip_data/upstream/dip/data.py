"""
DIP-IMU / synthetic AMASS data pipeline.

Every sequence is stored as an .npz (or the original DIP .pkl) with
    imu_ori : [T, 17, 3, 3]  sensor orientations (global)
    imu_acc : [T, 17, 3]     sensor accelerations (global, m/s^2)
    gt      : [T, 72]        SMPL pose (axis-angle)
Only 6 of the 17 Xsens sensors are used: left/right wrist, left/right knee, head, pelvis.
"""
import glob
import os
import pickle

import numpy as np
import torch
from torch.utils.data import Dataset

from .model import SMPL_MAJOR_JOINTS

# DIP-IMU sensor indices of the 6 sparse sensors (head, pelvis last for root normalisation)
SENSOR_IDX = [7, 8, 11, 12, 0, 2]
ACC_SCALE = 30.0


def axis_angle_to_matrix(aa):
    """
    Rodrigues for numpy arrays of shape [..., 3] -> [..., 3, 3].
    """
    theta = np.linalg.norm(aa, axis=-1, keepdims=True)
    axis = aa / np.maximum(theta, 1e-8)
    x, y, z = axis[..., 0], axis[..., 1], axis[..., 2]
    c, s = np.cos(theta[..., 0]), np.sin(theta[..., 0])
    C = 1 - c
    R = np.stack([c + x * x * C, x * y * C - z * s, x * z * C + y * s,
                  y * x * C + z * s, c + y * y * C, y * z * C - x * s,
                  z * x * C - y * s, z * y * C + x * s, c + z * z * C], axis=-1)
    return R.reshape(aa.shape[:-1] + (3, 3))


def normalize_imu(ori, acc):
    """
    Express all sensors relative to the root (pelvis) sensor, as in DIP / TransPose.

    :param ori: [T, 6, 3, 3]
    :param acc: [T, 6, 3]
    :return: [T, 72] features
    """
    root_ori = ori[:, -1:]                                   # [T, 1, 3, 3]
    root_inv = np.transpose(root_ori, (0, 1, 3, 2))
    ori_n = np.concatenate([root_inv @ ori[:, :-1], root_ori], axis=1)
    acc_n = np.concatenate([acc[:, :-1] - acc[:, -1:], acc[:, -1:]], axis=1)
    acc_n = (root_inv[:, 0][:, None] @ acc_n[..., None])[..., 0] / ACC_SCALE
    return np.concatenate([ori_n.reshape(len(ori), -1), acc_n.reshape(len(acc), -1)], axis=1).astype(np.float32)


def load_sequence(path):
    if path.endswith('.pkl'):
        with open(path, 'rb') as f:
            d = pickle.load(f, encoding='latin1')
    else:
        d = dict(np.load(path))
    ori = np.asarray(d['imu_ori'], dtype=np.float32)[:, SENSOR_IDX]
    acc = np.asarray(d['imu_acc'], dtype=np.float32)[:, SENSOR_IDX]
    pose = np.asarray(d['gt'], dtype=np.float32).reshape(-1, 24, 3)
    valid = ~(np.isnan(ori).any(axis=(1, 2, 3)) | np.isnan(acc).any(axis=(1, 2)))
    ori[~valid] = np.eye(3, dtype=np.float32)
    acc[~valid] = 0
    x = normalize_imu(ori, acc)
    y = axis_angle_to_matrix(pose[:, SMPL_MAJOR_JOINTS]).reshape(len(pose), -1).astype(np.float32)
    return x, y, acc.reshape(len(acc), -1) / ACC_SCALE, valid.astype(np.float32)


class DipImuDataset(Dataset):
    def __init__(self, root, window=300, augment=False, acc_noise=0.01, ori_noise_deg=2.0):
        self.files = sorted(glob.glob(os.path.join(root, '*.npz')) + glob.glob(os.path.join(root, '*', '*.pkl')))
        if not self.files:
            raise FileNotFoundError('no sequences found under %s' % root)
        self.window = window
        self.augment = augment
        self.acc_noise = acc_noise
        self.ori_noise = np.deg2rad(ori_noise_deg)
        self.seqs = [load_sequence(f) for f in self.files]
        # index of (sequence, start frame) windows
        self.index = []
        for i, (x, _, _, _) in enumerate(self.seqs):
            if window is None:
                self.index.append((i, 0))
            else:
                for s in range(0, max(1, len(x) - window + 1), window // 2):
                    self.index.append((i, s))

    def __len__(self):
        return len(self.index)

    def __getitem__(self, item):
        i, s = self.index[item]
        x, y, acc, mask = self.seqs[i]
        e = len(x) if self.window is None else s + self.window
        x, y, acc, mask = x[s:e].copy(), y[s:e], acc[s:e], mask[s:e]
        if self.augment:
            x[:, 54:] += np.random.randn(*x[:, 54:].shape).astype(np.float32) * self.acc_noise
        return torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(acc), torch.from_numpy(mask)


class SyntheticAmassDataset(Dataset):
    """
    Windows of synthetic IMU data produced by preprocess/synthesize_amass_imu.py (one .pt per sequence).

    Augmentations used for the pre-training stage:
      * Gaussian noise on accelerations,
      * a small random rotation of every sensor (simulates sensor-to-bone calibration error),
      * random window start.
    """
    def __init__(self, root, window=300, acc_noise=0.1, calib_noise_deg=5.0, max_files=None):
        self.files = sorted(glob.glob(os.path.join(root, '*.pt')))[:max_files]
        if not self.files:
            raise FileNotFoundError('no synthetic sequences under %s' % root)
        self.window = window
        self.acc_noise = acc_noise
        self.calib_noise = np.deg2rad(calib_noise_deg)
        self.lengths = [torch.load(f, map_location='cpu')['pose'].shape[0] for f in self.files]

    def __len__(self):
        return len(self.files)

    def _random_rotation(self, n):
        aa = np.random.randn(n, 3)
        aa = aa / np.linalg.norm(aa, axis=1, keepdims=True) * np.random.rand(n, 1) * self.calib_noise
        return axis_angle_to_matrix(aa).astype(np.float32)

    def __getitem__(self, item):
        rec = torch.load(self.files[item], map_location='cpu')
        T = rec['pose'].shape[0]
        s = np.random.randint(0, max(1, T - self.window + 1))
        e = min(T, s + self.window)
        ori = np.asarray(rec['vrot'][s:e], dtype=np.float32)            # [t, 6, 3, 3]
        acc = np.asarray(rec['vacc'][s:e], dtype=np.float32)            # [t, 6, 3]
        ori = ori @ self._random_rotation(6)[None]
        acc = acc + np.random.randn(*acc.shape).astype(np.float32) * self.acc_noise
        pose = np.asarray(rec['pose'][s:e], dtype=np.float32).reshape(-1, 24, 3)
        x = normalize_imu(ori, acc)
        y = axis_angle_to_matrix(pose[:, SMPL_MAJOR_JOINTS]).reshape(len(pose), -1).astype(np.float32)
        mask = np.ones(len(x), dtype=np.float32)
        return torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(acc.reshape(len(acc), -1) / ACC_SCALE), \
            torch.from_numpy(mask)


def collate_windows(batch):
    """
    Pad variable-length windows to the longest one in the batch (mask marks valid frames).
    """
    T = max(b[0].shape[0] for b in batch)
    out = []
    for k in range(4):
        ref = batch[0][k]
        shape = (len(batch), T) + tuple(ref.shape[1:])
        t = torch.zeros(shape, dtype=ref.dtype)
        for j, b in enumerate(batch):
            t[j, :b[k].shape[0]] = b[k]
        out.append(t)
    return tuple(out)


class DataPrefetcher(object):
    """
    Overlap host-to-device copies with compute using a side CUDA stream (from the NVIDIA apex ImageNet example).

        prefetcher = DataPrefetcher(loader)
        batch = prefetcher.next()
        while batch is not None:
            ...
            batch = prefetcher.next()
    """
    def __init__(self, loader):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.batch = None
        self.preload()

    def preload(self):
        try:
            self.batch = next(self.loader)
        except StopIteration:
            self.batch = None
            return
        with torch.cuda.stream(self.stream):
            self.batch = tuple(t.cuda(non_blocking=True) for t in self.batch)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        batch = self.batch
        if batch is not None:
            for t in batch:
                t.record_stream(torch.cuda.current_stream())
        self.preload()
        return batch
