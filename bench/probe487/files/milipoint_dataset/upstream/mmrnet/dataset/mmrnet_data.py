import glob
import logging
import os
import pickle

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger('milipoint')

# 49 activities, 11 subjects; 18 keypoints from a Zed2 camera
KEYPOINTS = ['nose', 'neck', 'r_shoulder', 'r_elbow', 'r_wrist', 'l_shoulder', 'l_elbow',
             'l_wrist', 'r_hip', 'r_knee', 'r_ankle', 'l_hip', 'l_knee', 'l_ankle',
             'r_eye', 'l_eye', 'r_ear', 'l_ear']


class MMRKeypointData(Dataset):
    """MiliPoint: point clouds from a TI IWR1843 radar, one .pkl per recording.

    Each record holds a list of frames; a frame is a (n_i, 3) array of detected
    points (x, y, z) in metres. Frames are stacked (``stacks`` consecutive
    frames) and zero-padded to ``max_points`` so the model sees dense tensors.
    """

    raw_dir = 'data/raw'
    processed_dir = 'data/processed'

    default_config = dict(
        stacks=5,
        max_points=22,
        zero_padding='per_data_point',   # or 'per_stack'
        seed=42,
        train_split=0.8,
        val_split=0.1,
        forced_rewrite=False,
    )

    def __init__(self, root, partition, config=None, mmr_dataset_config=None):
        super().__init__()
        self.root = root
        cfg = dict(self.default_config)
        if config:
            cfg.update(config)
        self.cfg = cfg
        self.partition = partition
        processed = os.path.join(root, self.processed_dir, self._tag() + '.pkl')
        if cfg['forced_rewrite'] or not os.path.exists(processed):
            data = self._process()
            os.makedirs(os.path.dirname(processed), exist_ok=True)
            with open(processed, 'wb') as f:
                pickle.dump(data, f)
        else:
            with open(processed, 'rb') as f:
                data = pickle.load(f)
        self.data = data[partition]
        self.num_samples = len(self.data)
        logger.info('%s %s: %d samples', type(self).__name__, partition, self.num_samples)

    def _tag(self):
        c = self.cfg
        return '%s_s%d_p%d_%s' % (type(self).__name__, c['stacks'], c['max_points'], c['zero_padding'])

    def _files(self):
        return sorted(glob.glob(os.path.join(self.root, self.raw_dir, '*.pkl')))

    def _stack_and_pad(self, frames):
        c = self.cfg
        out = []
        for i in range(len(frames)):
            lo = max(0, i - c['stacks'] + 1)
            window = frames[lo:i + 1]
            if c['zero_padding'] == 'per_data_point':
                padded = []
                for fr in window:
                    fr = np.asarray(fr, dtype=np.float32)[:c['max_points']]
                    pad = np.zeros((c['max_points'] - len(fr), 3), dtype=np.float32)
                    padded.append(np.concatenate([fr, pad], axis=0))
                while len(padded) < c['stacks']:
                    padded.insert(0, np.zeros((c['max_points'], 3), dtype=np.float32))
                out.append(np.concatenate(padded, axis=0))
            else:
                pts = np.concatenate([np.asarray(fr, dtype=np.float32) for fr in window], axis=0)
                total = c['stacks'] * c['max_points']
                pts = pts[:total]
                pad = np.zeros((total - len(pts), 3), dtype=np.float32)
                out.append(np.concatenate([pts, pad], axis=0))
        return out

    def _targets(self, rec):
        return [np.asarray(k, dtype=np.float32) for k in rec['kps']]

    def _process(self):
        rng = np.random.RandomState(self.cfg['seed'])
        samples = []
        for fn in self._files():
            with open(fn, 'rb') as f:
                rec = pickle.load(f)
            xs = self._stack_and_pad(rec['pcs'])
            ys = self._targets(rec)
            samples += list(zip(xs, ys))
        idx = rng.permutation(len(samples))
        n_train = int(len(idx) * self.cfg['train_split'])
        n_val = int(len(idx) * self.cfg['val_split'])
        split = dict(train=[samples[i] for i in idx[:n_train]],
                     val=[samples[i] for i in idx[n_train:n_train + n_val]],
                     test=[samples[i] for i in idx[n_train + n_val:]])
        return split

    def __len__(self):
        return self.num_samples

    def __getitem__(self, i):
        x, y = self.data[i]
        return torch.from_numpy(x), torch.from_numpy(np.asarray(y))


class MMRIdentificationData(MMRKeypointData):
    def _targets(self, rec):
        return [rec['subject']] * len(rec['pcs'])

    def __getitem__(self, i):
        x, y = self.data[i]
        return torch.from_numpy(x), torch.tensor(y, dtype=torch.long)


class MMRActionData(MMRKeypointData):
    def _targets(self, rec):
        return [int(a) if a is not None else -1 for a in rec['action']]

    def _process(self):
        split = super()._process()
        # frames between activities are labelled -1; drop them
        return {k: [(x, y) for x, y in v if y >= 0] for k, v in split.items()}

    def __getitem__(self, i):
        x, y = self.data[i]
        return torch.from_numpy(x), torch.tensor(y, dtype=torch.long)


DATASETS = dict(mmr_kp=MMRKeypointData, mmr_iden=MMRIdentificationData, mmr_act=MMRActionData)


def get_dataset(name, config_file=None, batch_size=128, num_workers=0, debug=False, root='.'):
    config = None
    if config_file is not None:
        import yaml
        with open(config_file) as f:
            config = yaml.safe_load(f)
    cls = DATASETS[name]
    train_set = cls(root, 'train', config)
    val_set = cls(root, 'val', config)
    test_set = cls(root, 'test', config)
    if debug:
        train_set.data = train_set.data[:512]
        train_set.num_samples = len(train_set.data)

    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True,
                              num_workers=num_workers, pin_memory=True, drop_last=True,
                              persistent_workers=num_workers > 0)
    val_loader = DataLoader(val_set, batch_size=batch_size, shuffle=False, num_workers=num_workers)
    test_loader = DataLoader(test_set, batch_size=batch_size, shuffle=False, num_workers=num_workers)

    info = dict(task='keypoint' if name == 'mmr_kp' else 'classification',
                num_keypoints=len(KEYPOINTS),
                num_classes=(49 if name == 'mmr_act' else 11),
                max_points=train_set.cfg['stacks'] * train_set.cfg['max_points'])
    return train_loader, val_loader, test_loader, info
