"""MVSEC loader for EV-FlowNet.

Every sample is the event volume between two consecutive DAVIS grayscale frames
(or `skip_frames` frames apart), encoded as 4 channels:
    [count_pos, count_neg, last_ts_pos, last_ts_neg]
The encoding is done on the CPU in the worker processes; the training loop moves
the batches to the GPU.
"""
import os
import random

import h5py
import numpy as np
import torch
from torch.utils.data import Dataset


def _events_to_image(xs, ys, values, height, width, reduce='sum'):
    img = np.zeros((height, width), dtype=np.float32)
    if reduce == 'sum':
        np.add.at(img, (ys, xs), values)
    else:
        # keep the maximum value per pixel (used for the timestamp images)
        np.maximum.at(img, (ys, xs), values)
    return img


class EventData(Dataset):
    """
    args:
        data_folder_path: the path of the MVSEC hdf5 files
        sequence: e.g. 'outdoor_day2'
        train: random crop + flips if True, central crop otherwise
    """

    def __init__(self, data_folder_path, sequence, args, train=True):
        super(EventData, self).__init__()
        self._args = args
        self._train = train
        self._height = args.image_height
        self._width = args.image_width
        self._skip = args.skip_frames
        self._count_only = args.count_only
        self._time_only = args.time_only

        data_file = os.path.join(data_folder_path, '{}_data.hdf5'.format(sequence))
        if not os.path.exists(data_file):
            raise FileNotFoundError(data_file)
        self._data_file = data_file
        self._h5 = None

        with h5py.File(data_file, 'r') as f:
            davis = f['davis']['left']
            self._num_images = davis['image_raw'].shape[0]
            self._image_ts = np.array(davis['image_raw_ts'])
            # index of the first event after every image timestamp
            self._image_event_inds = np.array(davis['image_raw_event_inds'])
            self._sensor_size = davis['image_raw'].shape[1:]

        # the first frames of outdoor_day* are static / the car is not moving
        first = 10 if sequence.startswith('outdoor') else 0
        self._indices = list(range(first, self._num_images - self._skip - 1))

    def __len__(self):
        return len(self._indices)

    def _open(self):
        if self._h5 is None:
            # h5py handles can not be pickled -> open lazily in each worker
            self._h5 = h5py.File(self._data_file, 'r')
        return self._h5

    def _crop_params(self):
        full_h, full_w = self._sensor_size
        if self._train:
            y0 = random.randint(0, full_h - self._height)
            x0 = random.randint(0, full_w - self._width)
        else:
            y0 = (full_h - self._height) // 2
            x0 = (full_w - self._width) // 2
        return y0, x0

    def _event_volume(self, events, y0, x0):
        xs = events[:, 0].astype(np.int64)
        ys = events[:, 1].astype(np.int64)
        ts = events[:, 2]
        ps = events[:, 3]

        inside = (xs >= x0) & (xs < x0 + self._width) & (ys >= y0) & (ys < y0 + self._height)
        xs, ys, ts, ps = xs[inside] - x0, ys[inside] - y0, ts[inside], ps[inside]

        channels = []
        if len(ts) > 0:
            t_norm = (ts - ts[0]) / max(ts[-1] - ts[0], 1e-9)
        else:
            t_norm = ts
        pos = ps > 0
        neg = ~pos
        if not self._time_only:
            channels.append(_events_to_image(xs[pos], ys[pos], np.ones(pos.sum()), self._height, self._width))
            channels.append(_events_to_image(xs[neg], ys[neg], np.ones(neg.sum()), self._height, self._width))
        if not self._count_only:
            channels.append(_events_to_image(xs[pos], ys[pos], t_norm[pos], self._height, self._width, 'max'))
            channels.append(_events_to_image(xs[neg], ys[neg], t_norm[neg], self._height, self._width, 'max'))
        return np.stack(channels, axis=0)

    def __getitem__(self, idx):
        f = self._open()
        davis = f['davis']['left']
        i0 = self._indices[idx]
        i1 = i0 + self._skip

        e0 = self._image_event_inds[i0]
        e1 = self._image_event_inds[i1]
        events = np.array(davis['events'][e0:e1])

        y0, x0 = self._crop_params()
        volume = self._event_volume(events, y0, x0)

        prev_image = np.array(davis['image_raw'][i0], dtype=np.float32)[y0:y0 + self._height, x0:x0 + self._width]
        next_image = np.array(davis['image_raw'][i1], dtype=np.float32)[y0:y0 + self._height, x0:x0 + self._width]
        prev_image /= 255.
        next_image /= 255.

        if self._train and random.random() < 0.5:
            # horizontal flip: the event volume and both frames are flipped together
            volume = volume[:, :, ::-1].copy()
            prev_image = prev_image[:, ::-1].copy()
            next_image = next_image[:, ::-1].copy()

        volume = torch.from_numpy(volume).float()
        prev_image = torch.from_numpy(prev_image).unsqueeze(0)
        next_image = torch.from_numpy(next_image).unsqueeze(0)
        dt = torch.tensor(self._image_ts[i1] - self._image_ts[i0], dtype=torch.float64)
        return volume, prev_image, next_image, dt


class GroundTruthFlow(object):
    """Reads the MVSEC ground truth flow (computed from depth + odometry) for evaluation."""

    def __init__(self, data_folder_path, sequence):
        gt_file = os.path.join(data_folder_path, '{}_gt_flow_dist.npz'.format(sequence))
        gt = np.load(gt_file)
        self.timestamps = gt['timestamps']
        self.x_flow = gt['x_flow_dist']
        self.y_flow = gt['y_flow_dist']

    def flow_at(self, t0, t1):
        """Integrates the ground truth flow between t0 and t1 (nearest gt sample, scaled by dt)."""
        i = np.searchsorted(self.timestamps, t0, side='right') - 1
        i = int(np.clip(i, 0, len(self.timestamps) - 2))
        gt_dt = self.timestamps[i + 1] - self.timestamps[i]
        scale = (t1 - t0) / gt_dt
        return self.x_flow[i] * scale, self.y_flow[i] * scale
