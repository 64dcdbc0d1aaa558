"""
Uses generator functions to supply train/test with data.
Image renderings and text are created on the fly each time.

PyTorch version: DataGenerator now hands out torch DataLoaders, plus an
optional CUDA prefetcher that overlaps host->device copies with compute.
"""

import h5py
import numpy as np
import unicodedata

import torch
from torch.utils.data import DataLoader, Dataset

from data import preproc as pp


class HDF5Split(Dataset):
    """One partition (train/valid/test) of the transformed HDF5 file."""

    def __init__(self, source, partition, tokenizer, augment=False):
        self.source = source
        self.partition = partition
        self.tokenizer = tokenizer
        self.augment = augment
        with h5py.File(source, "r") as f:
            self.size = len(f[partition]["gt"])
        self._f = None

    def __len__(self):
        return self.size

    def _file(self):
        # h5py handles must be opened lazily inside each DataLoader worker
        if self._f is None:
            self._f = h5py.File(self.source, "r")
        return self._f

    def __getitem__(self, index):
        f = self._file()
        img = np.array(f[self.partition]["dt"][index])
        text = f[self.partition]["gt"][index].decode()

        if self.augment:
            img = pp.augmentation([img],
                                  rotation_range=1.5,
                                  scale_range=0.05,
                                  height_shift_range=0.025,
                                  width_shift_range=0.05,
                                  erode_range=5,
                                  dilate_range=3)[0]

        img = pp.normalization([img])[0]
        x = torch.from_numpy(img).float().permute(2, 0, 1)  # (C, W, H)
        y = self.tokenizer.encode(text)
        return x, torch.as_tensor(y, dtype=torch.long), len(y)


def collate_ctc(batch):
    xs, ys, lens = zip(*batch)
    x = torch.stack(xs, 0)
    y = torch.cat(ys, 0)  # concatenated targets, the CTC "1-D" format
    y_len = torch.as_tensor(lens, dtype=torch.long)
    return x, y, y_len


class DataGenerator():
    """Generator class with data streaming"""

    def __init__(self, source, batch_size, charset, max_text_length, predict=False,
                 num_workers=4, pin_memory=True):
        self.tokenizer = Tokenizer(charset, max_text_length)
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.pin_memory = pin_memory

        self.size = dict()
        self.dataset = dict()

        with h5py.File(source, "r") as f:
            for pt in ["train", "valid", "test"]:
                self.dataset[pt] = dict()
                self.dataset[pt]["gt"] = np.array(f[pt]["gt"])
                self.size[pt] = len(self.dataset[pt]["gt"])

        self.splits = {
            pt: HDF5Split(source, pt, self.tokenizer, augment=(pt == "train" and not predict))
            for pt in ["train", "valid", "test"]
        }

    def loader(self, partition):
        return DataLoader(
            self.splits[partition],
            batch_size=self.batch_size,
            shuffle=(partition == "train"),
            num_workers=self.num_workers,
            pin_memory=self.pin_memory,
            drop_last=False,
            collate_fn=collate_ctc,
            persistent_workers=self.num_workers > 0,
        )


class CUDAPrefetcher:
    """Wraps a DataLoader and copies the next batch to the GPU on a side
    stream while the current one is being processed."""

    def __init__(self, loader, device):
        self.loader = loader
        self.device = device
        self.stream = torch.cuda.Stream(device=device)
        self._it = None
        self._next = None

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        self._it = iter(self.loader)
        self._preload()
        return self

    def _preload(self):
        try:
            batch = next(self._it)
        except StopIteration:
            self._next = None
            return
        with torch.cuda.stream(self.stream):
            self._next = [t.to(self.device, non_blocking=True) for t in batch]

    def __next__(self):
        torch.cuda.current_stream(self.device).wait_stream(self.stream)
        batch = self._next
        if batch is None:
            raise StopIteration
        for t in batch:
            t.record_stream(torch.cuda.current_stream(self.device))
        self._preload()
        return batch


class Tokenizer():
    """Manager tokens functions and charset/dictionary properties"""

    def __init__(self, chars, max_text_length=128):
        self.PAD_TK, self.UNK_TK = "¶", "¤"
        self.chars = (self.PAD_TK + self.UNK_TK + chars)

        self.PAD = self.chars.find(self.PAD_TK)
        self.UNK = self.chars.find(self.UNK_TK)

        self.vocab_size = len(self.chars)
        self.maxlen = max_text_length

    def encode(self, text):
        """Encode text to vector"""

        if isinstance(text, bytes):
            text = text.decode()

        text = unicodedata.normalize("NFKD", text).encode("ASCII", "ignore").decode("ASCII")
        text = " ".join(text.split())

        groups = ["".join(group) for _, group in __import__("itertools").groupby(text)]
        text = "¤".join([x if len(x) > 1 else x for x in groups])
        encoded = []

        for item in text:
            index = self.chars.find(item)
            index = self.UNK if index == -1 else index
            encoded.append(index)

        return np.asarray(encoded)

    def decode(self, text):
        """Decode vector to text"""

        decoded = "".join([self.chars[int(x)] for x in text if x > -1])
        decoded = self.remove_tokens(decoded)
        decoded = pp.text_standardize(decoded)

        return decoded

    def remove_tokens(self, text):
        """Remove tokens (PAD) from text"""

        return text.replace(self.PAD_TK, "").replace(self.UNK_TK, "")
