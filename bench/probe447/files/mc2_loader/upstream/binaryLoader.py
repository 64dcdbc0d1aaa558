import os
import gzip
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils import data
from torch.utils.data import Dataset
from torch.utils.data.sampler import Sampler


class BinaryDataset(data.Dataset):
    """
    Loader for raw executable files. Each item is the first `max_len` bytes of a
    file shifted by +1 so that 0 can be reserved for padding, together with the
    integer label. Files may optionally be gzip compressed on disk.
    """

    def __init__(self, good_dir, bad_dir, sort_by_size=False, max_len=4000000):
        self.all_files = []
        self.max_len = max_len

        for roor_dir, dirs, files in os.walk(good_dir):
            for file in files:
                to_add = os.path.join(roor_dir, file)
                self.all_files.append((to_add, 0, os.path.getsize(to_add)))

        for roor_dir, dirs, files in os.walk(bad_dir):
            for file in files:
                to_add = os.path.join(roor_dir, file)
                self.all_files.append((to_add, 1, os.path.getsize(to_add)))

        if sort_by_size:
            self.all_files.sort(key=lambda filename: filename[2])

    def __len__(self):
        return len(self.all_files)

    def __getitem__(self, index):
        to_load, y, _ = self.all_files[index]

        try:
            with gzip.open(to_load, "rb") as f:
                x = f.read(self.max_len)
                # Need to use frombuffer b/c its a byte array, otherwise np.asarray
                # will get wonked on trying to convert to ints.
                x = np.frombuffer(x, dtype=np.uint8).astype(np.int16) + 1
        except OSError:
            # OK, you are not a gziped file. Just read in raw bytes from disk.
            with open(to_load, "rb") as f:
                x = f.read(self.max_len)
                x = np.frombuffer(x, dtype=np.uint8).astype(np.int16) + 1

        # x is a numpy array, y is an int
        return torch.tensor(x), torch.tensor([y])


class RandomChunkSampler(torch.utils.data.sampler.Sampler):
    """
    Samples random "chunks" of a dataset, so that items within a chunk are
    always together. Combined with a size-sorted dataset this keeps the files in
    one batch similar in length, which wastes far less padding.
    """

    def __init__(self, data_source, batch_size):
        self.data_source = data_source
        self.batch_size = batch_size

    def __iter__(self):
        n = len(self.data_source)
        data = [x for x in range(n)]

        # Create blocks
        blocks = [data[i:i + self.batch_size] for i in range(0, len(data), self.batch_size)]
        # shuffle the blocks
        random.shuffle(blocks)
        # concatenate the shuffled blocks
        data[:] = [b for bs in blocks for b in bs]

        return iter(data)

    def __len__(self):
        return len(self.data_source)


def pad_collate_func(batch):
    """
    This should be used as the collate_fn=pad_collate_func for a pytorch DataLoader object in order to pad out files in a batch to the length of the longest item in the batch.
    """
    vecs = [x[0] for x in batch]
    labels = [x[1] for x in batch]

    x = torch.nn.utils.rnn.pad_sequence(vecs, batch_first=True)
    # stack will give us (B, 1), so index [:,0] to get to just (B)
    y = torch.stack(labels)[:, 0]

    return x, y


class ExeListDataset(Dataset):
    """
    Same as BinaryDataset but driven by a CSV of (path, label) rows, which is
    how the EMBER and SOREL raw-binary splits are usually distributed.
    """

    def __init__(self, csv_path, root="", max_len=2000000, skip_missing=True):
        self.rows = []
        self.max_len = max_len
        with open(csv_path) as fh:
            for line in fh:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                path, label = line.rsplit(",", 1)
                full = os.path.join(root, path)
                if skip_missing and not os.path.exists(full):
                    continue
                self.rows.append((full, int(label)))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        path, label = self.rows[index]
        with open(path, "rb") as f:
            raw = f.read(self.max_len)
        x = np.frombuffer(raw, dtype=np.uint8).astype(np.int16) + 1
        return torch.from_numpy(x), torch.tensor([label])


def truncate_or_pad(x, length):
    """Fixed length helper for the non low-memory models."""
    if x.shape[-1] >= length:
        return x[..., :length]
    return F.pad(x, (0, length - x.shape[-1]), value=0)
