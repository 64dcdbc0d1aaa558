"""
Uses the HDF5 file produced by `--transform` to feed the model:
    Tokenizer:     text <-> label indices (CTC blank is the last index)
    HDF5Split:     torch Dataset over one partition (train/valid/test)
    DataGenerator: builds the DataLoaders
"""

import unicodedata

import h5py
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from data import preproc as pp


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
        text = "".join([self.UNK_TK.join(list(x)) if len(x) > 1 else x for x in groups])
        encoded = []

        for item in text:
            index = self.chars.find(item)
            index = self.UNK if index == -1 else index
            encoded.append(index)

        return np.asarray(encoded)

    def decode(self, text):
        """Decode vector to text"""

        decoded = "".join([self.chars[int(x)] for x in text if -1 < x < len(self.chars)])
        decoded = pp.text_standardize(decoded.replace(self.UNK_TK, ""))

        return decoded

    def remove_tokens(self, text):
        """Remove tokens (PAD) from text"""

        return text.replace(self.PAD_TK, "").replace(self.UNK_TK, "")


class HDF5Split(Dataset):
    def __init__(self, source, partition, tokenizer, augment=False):
        self.source = source
        self.partition = partition
        self.tokenizer = tokenizer
        self.augment = augment
        with h5py.File(source, "r") as f:
            self.size = len(f[partition]["gt"])
        self._file = None

    def __len__(self):
        return self.size

    def _h5(self):
        # open lazily so that every DataLoader worker gets its own handle
        if self._file is None:
            self._file = h5py.File(self.source, "r")
        return self._file

    def __getitem__(self, index):
        f = self._h5()
        img = f[self.partition]["dt"][index]
        if self.augment:
            img = pp.augmentation([img],
                                  rotation_range=1.5,
                                  scale_range=0.05,
                                  height_shift_range=0.025,
                                  width_shift_range=0.05,
                                  erode_range=5,
                                  dilate_range=3)[0]
        img = pp.normalization([img])[0]                 # [W, H, 1] float32
        img = torch.from_numpy(img).permute(2, 0, 1)     # [1, W, H]
        label = self.tokenizer.encode(f[self.partition]["gt"][index])
        return img, torch.from_numpy(label).long()


def collate_ctc(batch):
    imgs, labels = zip(*batch)
    imgs = torch.stack(imgs)
    lengths = torch.tensor([len(l) for l in labels], dtype=torch.int32)
    targets = torch.cat(labels)  # concatenated targets format of nn.CTCLoss
    return imgs, targets, lengths


class DataGenerator():
    """Generator class with data streaming"""

    def __init__(self, source, batch_size, charset, max_text_length, predict=False, workers=4):
        self.tokenizer = Tokenizer(charset, max_text_length)
        self.batch_size = batch_size
        self.workers = workers
        self.source = source
        self.partitions = ["test"] if predict else ["train", "valid", "test"]

        self.size = dict()
        self.steps = dict()
        self.dataset = dict()

        with h5py.File(source, "r") as f:
            for pt in self.partitions:
                self.dataset[pt] = dict()
                self.dataset[pt]["gt"] = np.array(f[pt]["gt"])
                self.size[pt] = len(self.dataset[pt]["gt"])
                self.steps[pt] = int(np.ceil(self.size[pt] / self.batch_size))

    def loader(self, partition, augment=False):
        ds = HDF5Split(self.source, partition, self.tokenizer, augment=augment)
        return DataLoader(ds,
                          batch_size=self.batch_size,
                          shuffle=(partition == "train"),
                          num_workers=self.workers,
                          collate_fn=collate_ctc,
                          pin_memory=torch.cuda.is_available(),
                          persistent_workers=self.workers > 0,
                          drop_last=False)
