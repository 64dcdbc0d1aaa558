import os

import numpy as np
import torch
from torch.utils.data import Dataset


class SlidingWindowDataset(Dataset):
    """Cuts a long sequence into overlapping (input, target) windows.

    Used for the TaxiBJ / Moving-MNIST style data where a single long tensor of
    shape (T, C, H, W) is stored on disk.
    """

    def __init__(self, data, window, horizon=1, stride=1, transform=None):
        self.data = data
        self.window = window
        self.horizon = horizon
        self.stride = stride
        self.transform = transform

    def __len__(self):
        return (len(self.data) - self.window - self.horizon) // self.stride + 1

    def __getitem__(self, index):
        start = index * self.stride
        x = self.data[start:start + self.window]
        y = self.data[start + self.window:start + self.window + self.horizon]
        if self.transform is not None:
            x, y = self.transform(x), self.transform(y)
        return x, y


class MovingMNIST(Dataset):
    """Moving MNIST from the .npy file released by Srivastava et al.

    The file holds an array of shape (20, 10000, 64, 64), uint8.
    """

    url = "http://www.cs.toronto.edu/~nitish/unsupervised_video/mnist_test_seq.npy"

    def __init__(self, root, train=True, split=1000, n_frames_input=10, n_frames_output=10):
        path = os.path.join(root, "mnist_test_seq.npy")
        if not os.path.exists(path):
            raise FileNotFoundError(
                "{} not found, download it from {}".format(path, self.url))
        data = np.load(path)  # (T, N, H, W)
        data = data.transpose(1, 0, 2, 3)[:, :, None]  # (N, T, 1, H, W)
        self.data = data[split:] if train else data[:split]
        self.n_frames_input = n_frames_input
        self.n_frames_output = n_frames_output

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        seq = torch.from_numpy(self.data[idx].astype(np.float32) / 255.0)
        inputs = seq[:self.n_frames_input]
        targets = seq[self.n_frames_input:self.n_frames_input + self.n_frames_output]
        return inputs, targets


def get_loaders(root, batch_size, num_workers=4, window=10, horizon=10, pin_memory=True):
    train_set = MovingMNIST(root, train=True, n_frames_input=window, n_frames_output=horizon)
    valid_set = MovingMNIST(root, train=False, n_frames_input=window, n_frames_output=horizon)
    train_loader = torch.utils.data.DataLoader(
        train_set, batch_size=batch_size, shuffle=True, num_workers=num_workers,
        pin_memory=pin_memory, drop_last=True)
    valid_loader = torch.utils.data.DataLoader(
        valid_set, batch_size=batch_size, shuffle=False, num_workers=num_workers,
        pin_memory=pin_memory)
    return train_loader, valid_loader
