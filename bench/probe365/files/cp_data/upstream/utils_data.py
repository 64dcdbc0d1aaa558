import numpy as np
import h5py
import torch
from torch.utils.data import Dataset
import glob
import os


def UBFC_LU_split():
    # split UBFC dataset into training and testing parts
    # the function returns the file paths for the training set and test set.
    # TODO: if you want to train on another dataset, you should define new train-test split function.

    h5_dir = '../datasets/UBFC_h5'
    train_list = []
    val_list = []

    val_subject = [49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38]

    for subject in range(1, 50):
        if os.path.isfile(h5_dir + '/%d.h5' % (subject)):
            if subject in val_subject:
                val_list.append(h5_dir + '/%d.h5' % (subject))
            else:
                train_list.append(h5_dir + '/%d.h5' % (subject))

    return train_list, val_list


def PURE_split():
    # PURE: 10 subjects x 6 tasks, hold out the last 4 subjects
    h5_dir = '../datasets/PURE_h5'
    train_list, val_list = [], []
    for path in sorted(glob.glob(h5_dir + '/*.h5')):
        subject = int(os.path.basename(path)[:2])
        (val_list if subject >= 7 else train_list).append(path)
    return train_list, val_list


class H5Dataset(Dataset):

    def __init__(self, train_list, T):
        self.train_list = train_list  # list of .h5 file paths for training
        self.T = T  # video clip length

    def __len__(self):
        return len(self.train_list)

    def __getitem__(self, idx):
        with h5py.File(self.train_list[idx], 'r') as f:
            img_length = f['imgs'].shape[0]

            idx_start = np.random.choice(img_length - self.T)

            idx_end = idx_start + self.T

            img_seq = f['imgs'][idx_start:idx_end]
            img_seq = np.transpose(img_seq, (3, 0, 1, 2)).astype('float32')
        return img_seq


class H5DatasetWithLabel(H5Dataset):
    """Same as H5Dataset but also returns the aligned BVP (used by contrast-phys+ semi-supervised runs)."""

    def __getitem__(self, idx):
        with h5py.File(self.train_list[idx], 'r') as f:
            img_length = np.min([f['imgs'].shape[0], f['bvp'].shape[0]])
            idx_start = np.random.choice(img_length - self.T)
            idx_end = idx_start + self.T
            img_seq = f['imgs'][idx_start:idx_end]
            img_seq = np.transpose(img_seq, (3, 0, 1, 2)).astype('float32')
            bvp = f['bvp'][idx_start:idx_end].astype('float32')
        return torch.from_numpy(img_seq), torch.from_numpy(bvp)
