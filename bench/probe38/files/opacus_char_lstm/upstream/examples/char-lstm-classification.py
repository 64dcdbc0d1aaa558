#!/usr/bin/env python3
# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");

"""
Trains a character-level LSTM to classify surnames by language of origin,
with DP-SGD. The recurrent layer is Opacus' DPLSTM, which is built out of
nn.Linear pieces so per-sample gradients can be computed with hooks.
"""

import argparse
import random
import unicodedata
from collections import Counter
from pathlib import Path
from typing import List, Tuple

import numpy as np
import torch
import torch.nn as nn
from opacus import PrivacyEngine
from opacus.layers import DPLSTM
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


parser = argparse.ArgumentParser(
    description="PyTorch Name language classification DP Training",
    formatter_class=argparse.ArgumentDefaultsHelpFormatter,
)
parser.add_argument("--data-root", required=True, type=str, help="Path to training set of names (ie. ~/data/names/)")
parser.add_argument("--device", type=str, default="cuda", help="GPU ID for this process")
parser.add_argument("-b", "--batch-size", default=800, type=int, metavar="N", help="mini-batch size")
parser.add_argument("--n-lstm-layers", default=1, type=int, help="Number of LSTM layers")
parser.add_argument("--n-hidden", default=128, type=int, help="Hidden layer dim")
parser.add_argument("--embedding-size", default=64, type=int, help="Character embedding dim")
parser.add_argument("--learning-rate", default=2.0, type=float, metavar="LR", help="initial learning rate")
parser.add_argument("--epochs", default=10, type=int, help="Number of epochs")
parser.add_argument("--train-split", type=float, default=0.8, help="Fraction of data to use for training")
parser.add_argument("--max-per-sample-grad-norm", type=float, default=1.5, help="Clip per-sample gradients to this norm")
parser.add_argument("--sigma", type=float, default=1.0, help="Noise multiplier")
parser.add_argument("--delta", type=float, default=8e-5, help="Target delta")
parser.add_argument("--max-length", default=16, type=int, help="Max name length")
parser.add_argument("--disable-dp", action="store_true", default=False, help="Disable privacy training")
parser.add_argument("--secure-rng", action="store_true", default=False, help="Enable Secure RNG")
parser.add_argument("--seed", type=int, default=0, help="Random seed")
parser.add_argument("--test-every", type=int, default=0, help="Run evaluation on the test every these many epochs")


class CharByteEncoder(nn.Module):
    """
    Encodes a name as a sequence of UTF-8 bytes plus start/end/pad markers.
    """

    def __init__(self):
        super().__init__()
        self.start_token = "<s>"
        self.end_token = "</s>"
        self.pad_token = "<pad>"

        self.start_idx = 256
        self.end_idx = 257
        self.pad_idx = 258

    def forward(self, s: str, pad_to=0) -> torch.LongTensor:
        encoded = s.encode()
        n_pad = pad_to - len(encoded) if pad_to > len(encoded) else 0
        return torch.LongTensor(
            [self.start_idx]
            + [c for c in encoded]  # noqa
            + [self.end_idx]
            + [self.pad_idx for _ in range(n_pad)]
        )

    def decode(self, char_ids_tensor: torch.LongTensor) -> str:
        char_ids = char_ids_tensor.cpu().detach().tolist()
        out = []
        buf = []
        for c in char_ids:
            if c < 256:
                buf.append(c)
            else:
                if buf:
                    out.append(bytes(buf).decode())
                    buf = []
                if c == self.start_idx:
                    out.append(self.start_token)
                elif c == self.end_idx:
                    out.append(self.end_token)
                elif c == self.pad_idx:
                    out.append(self.pad_token)
        if buf:
            out.append(bytes(buf).decode())
        return "".join(out)

    def __len__(self):
        return 259


class NamesDataset(Dataset):
    def __init__(self, root):
        self.root = Path(root)
        self.labels = list({langfile.stem for langfile in self.root.iterdir()})
        self.labels_dict = {label: i for i, label in enumerate(self.labels)}
        self.encoder = CharByteEncoder()
        self.samples = self.construct_samples()

    def __getitem__(self, i):
        return self.samples[i]

    def __len__(self):
        return len(self.samples)

    def construct_samples(self) -> List[Tuple[torch.Tensor, torch.Tensor]]:
        samples = []
        for langfile in self.root.iterdir():
            label_name = langfile.stem
            label_id = self.labels_dict[label_name]
            with open(langfile, "r") as fin:
                for row in fin:
                    samples.append(
                        (self.encoder(unicodedata.normalize("NFC", row.strip())), torch.tensor(label_id).long())
                    )
        return samples

    def label_count(self):
        cnt = Counter()
        for _x, y in self.samples:
            label = self.labels[int(y)]
            cnt[label] += 1
        return cnt


VOCAB_SIZE = 256 + 3  # 256 alternatives in one byte, plus 3 special characters.


class CharNNClassifier(nn.Module):
    def __init__(self, embedding_size, hidden_size, output_size, num_lstm_layers=1, bidirectional=False, vocab_size=VOCAB_SIZE):
        super().__init__()
        self.embedding_size = embedding_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.vocab_size = vocab_size

        self.embedding = nn.Embedding(vocab_size, embedding_size)
        self.lstm = DPLSTM(
            embedding_size,
            hidden_size,
            num_layers=num_lstm_layers,
            bidirectional=bidirectional,
            batch_first=True,
        )
        self.out_layer = nn.Linear(hidden_size, output_size)

    def forward(self, x, lengths, hidden=None):
        x = self.embedding(x)  # -> [B, T, D]
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        packed_out, _ = self.lstm(packed, hidden)  # -> PackedSequence
        x, _ = pad_packed_sequence(packed_out, batch_first=True)
        idx = (lengths - 1).to(x.device).view(-1, 1, 1).expand(-1, 1, x.size(-1))
        x = x.gather(1, idx).squeeze(1)  # last valid step -> [B, H]
        x = self.out_layer(x)  # -> [B, C]
        return x


def padded_collate(batch, padding_idx=0):
    x = pad_sequence([elem[0] for elem in batch], batch_first=True, padding_value=padding_idx)
    lengths = torch.tensor([len(elem[0]) for elem in batch], dtype=torch.long)
    y = torch.stack([elem[1] for elem in batch]).long()
    return x, lengths, y


def train(model, criterion, optimizer, train_loader, epoch, privacy_engine, device="cpu"):
    accs = []
    losses = []
    for x, lengths, y in tqdm(train_loader):
        x = x.to(device)
        y = y.to(device)

        logits = model(x, lengths)
        loss = criterion(logits, y)
        loss.backward()

        optimizer.step()
        optimizer.zero_grad()

        preds = logits.argmax(-1)
        n_correct = float(preds.eq(y).sum())
        batch_accuracy = n_correct / len(y)

        accs.append(batch_accuracy)
        losses.append(float(loss))

    printstr = f"\t Epoch {epoch}. Accuracy: {np.mean(accs):.6f} | Loss: {np.mean(losses):.6f}"
    if privacy_engine:
        epsilon = privacy_engine.get_epsilon(delta=args.delta)
        printstr += f" | (ε = {epsilon:.2f}, δ = {args.delta})"

    print(printstr)


def test(model, test_loader, privacy_engine, device="cpu"):
    accs = []
    with torch.no_grad():
        for x, lengths, y in test_loader:
            x = x.to(device)
            y = y.to(device)

            preds = model(x, lengths).argmax(-1)
            n_correct = float(preds.eq(y).sum())
            batch_accuracy = n_correct / len(y)

            accs.append(batch_accuracy)
    mean_acc = np.mean(accs)
    printstr = "\n----------------------------\n" f"Test Accuracy: {mean_acc:.6f}"
    if privacy_engine:
        epsilon = privacy_engine.get_epsilon(delta=args.delta)
        printstr += f" (ε = {epsilon:.2f}, δ = {args.delta})"
    print(printstr + "\n----------------------------\n")
    return mean_acc


def main():
    global args
    args = parser.parse_args()
    device = torch.device(args.device)

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)

    ds = NamesDataset(args.data_root)
    train_len = int(args.train_split * len(ds))
    test_len = len(ds) - train_len

    print(f"{train_len} samples for training, {test_len} for testing")

    train_ds, test_ds = torch.utils.data.random_split(ds, [train_len, test_len])

    model = CharNNClassifier(
        args.embedding_size,
        args.n_hidden,
        len(ds.labels),
        args.n_lstm_layers,
    )
    model = model.to(device)

    train_loader = DataLoader(
        train_ds,
        batch_size=args.batch_size,
        pin_memory=True,
        collate_fn=padded_collate,
    )

    test_loader = DataLoader(
        test_ds,
        batch_size=2 * args.batch_size,
        shuffle=False,
        pin_memory=True,
        collate_fn=padded_collate,
    )

    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate)

    if not args.disable_dp:
        privacy_engine = PrivacyEngine(secure_mode=args.secure_rng)
        model, optimizer, train_loader = privacy_engine.make_private(
            module=model,
            optimizer=optimizer,
            data_loader=train_loader,
            max_grad_norm=args.max_per_sample_grad_norm,
            noise_multiplier=args.sigma,
        )
    else:
        privacy_engine = None

    print(f"Train stats ({len(train_ds)} samples): \n")
    for epoch in range(args.epochs):
        train(model, criterion, optimizer, train_loader, epoch, privacy_engine, device=device)
        if args.test_every:
            if epoch % args.test_every == 0:
                test(model, test_loader, privacy_engine, device=device)

    mean_acc = test(model, test_loader, privacy_engine, device=device)
    torch.save(mean_acc, f"run_results_chr_lstm_classification_{args.sigma}.pt")


if __name__ == "__main__":
    main()
