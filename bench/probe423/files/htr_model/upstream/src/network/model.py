"""
Handwritten Text Recognition model (PyTorch port of the Keras HTR-Flor code).

Architectures:
    puigcerver: "Are Multidimensional Recurrent Layers Really Necessary for HTR?" (2017)
    bluche:     "Gated Convolutional Recurrent Neural Networks for Multilingual HTR" (2017)
    flor:       "HTR-Flor: a deep learning system for offline HTR" (2020)

The model is trained with CTC. Decoding is greedy or beam search (see decoding.py).
"""
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from network.decoding import ctc_greedy_decode, ctc_beam_decode
from network.layers import FullGatedConv2d, GatedConv2d


class Flor(nn.Module):
    """Gated-CNN + 2 x BiGRU (HTR-Flor)."""

    def __init__(self, input_channels, vocab_size, rnn_units=128, dropout=0.5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(input_channels, 16, kernel_size=3, stride=(2, 2), padding=1),
            nn.PReLU(16),
            nn.BatchNorm2d(16, momentum=0.01),
            FullGatedConv2d(16, kernel_size=3, padding=1),

            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.PReLU(32),
            nn.BatchNorm2d(32, momentum=0.01),
            FullGatedConv2d(32, kernel_size=3, padding=1),

            nn.Conv2d(32, 40, kernel_size=(2, 4), stride=(2, 4), padding=0),
            nn.PReLU(40),
            nn.BatchNorm2d(40, momentum=0.01),
            FullGatedConv2d(40, kernel_size=3, padding=1, max_norm=4.0),
            nn.Dropout(p=0.2),

            nn.Conv2d(40, 48, kernel_size=3, padding=1),
            nn.PReLU(48),
            nn.BatchNorm2d(48, momentum=0.01),
            FullGatedConv2d(48, kernel_size=3, padding=1, max_norm=4.0),
            nn.Dropout(p=0.2),

            nn.Conv2d(48, 56, kernel_size=(2, 4), stride=(2, 4), padding=0),
            nn.PReLU(56),
            nn.BatchNorm2d(56, momentum=0.01),
            FullGatedConv2d(56, kernel_size=3, padding=1, max_norm=4.0),
            nn.Dropout(p=0.2),

            nn.Conv2d(56, 64, kernel_size=3, padding=1),
            nn.PReLU(64),
            nn.BatchNorm2d(64, momentum=0.01),
            nn.MaxPool2d(kernel_size=(1, 2), stride=(1, 2)),
        )
        self.rnn = nn.GRU(input_size=64 * 4, hidden_size=rnn_units, num_layers=2,
                          bidirectional=True, batch_first=True, dropout=dropout)
        self.fc = nn.Linear(rnn_units * 2, vocab_size + 1)

    def forward(self, x):
        # x: [b, 1, W, H] (images are stored transposed: width first, like the Keras code)
        f = self.features(x)                       # [b, c, w', h']
        b, c, w, h = f.shape
        f = f.permute(0, 2, 1, 3).reshape(b, w, c * h)  # [b, T, c*h]
        out, _ = self.rnn(f)
        return self.fc(out)                         # [b, T, vocab+1]


class Puigcerver(nn.Module):
    def __init__(self, input_channels, vocab_size):
        super().__init__()
        chans = [input_channels, 16, 32, 48, 64, 80]
        layers = []
        for i in range(5):
            layers += [
                nn.Conv2d(chans[i], chans[i + 1], kernel_size=3, padding=1),
                nn.BatchNorm2d(chans[i + 1]),
                nn.LeakyReLU(0.01),
            ]
            if i < 3:
                layers.append(nn.MaxPool2d(2))
        self.features = nn.Sequential(*layers)
        self.rnn = nn.LSTM(input_size=80 * 16, hidden_size=256, num_layers=5,
                           bidirectional=True, batch_first=True, dropout=0.5)
        self.fc = nn.Linear(512, vocab_size + 1)

    def forward(self, x):
        f = self.features(x)
        b, c, w, h = f.shape
        f = f.permute(0, 2, 1, 3).reshape(b, w, c * h)
        self.rnn.flatten_parameters()
        out, _ = self.rnn(f)
        return self.fc(out)


ARCHS = {"flor": Flor, "puigcerver": Puigcerver}


def build_ctc_loss(impl, blank):
    if impl == "warp":
        from warpctc_pytorch import CTCLoss as WarpCTCLoss
        return WarpCTCLoss(blank=blank, size_average=True)
    return nn.CTCLoss(blank=blank, reduction="mean", zero_infinity=True)


class HTRModel:
    def __init__(self, architecture, input_size, vocab_size, device, ctc_impl="pytorch",
                 amp=False, beam_width=10, top_paths=1):
        self.architecture = architecture
        self.input_size = input_size
        self.vocab_size = vocab_size
        self.device = device
        self.ctc_impl = ctc_impl
        self.amp = amp
        self.beam_width = beam_width
        self.top_paths = max(1, top_paths)

        self.model = ARCHS[architecture](input_size[2], vocab_size).to(self.device)
        self.blank = vocab_size  # last class is the CTC blank (Keras convention)
        self.criterion = build_ctc_loss(ctc_impl, self.blank)
        self.optimizer = None
        self.scheduler = None
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.amp)

    def summary(self, output=None, target=None):
        n_params = sum(p.numel() for p in self.model.parameters())
        lines = [str(self.model), f"Trainable params: {n_params:,}"]
        text = "\n".join(lines)
        if target is not None:
            os.makedirs(output, exist_ok=True)
            with open(os.path.join(output, target), "w") as f:
                f.write(text)
        print(text)

    def load_checkpoint(self, target):
        if target and os.path.isfile(target):
            state = torch.load(target, map_location=self.device)
            self.model.load_state_dict(state["model"])
            if self.optimizer is not None and "optimizer" in state:
                self.optimizer.load_state_dict(state["optimizer"])
            print(f"loaded checkpoint {target} (epoch {state.get('epoch', '?')})")

    def save_checkpoint(self, target, epoch):
        torch.save({"model": self.model.state_dict(),
                    "optimizer": self.optimizer.state_dict(),
                    "epoch": epoch}, target)

    def compile(self, learning_rate=None):
        if learning_rate is None:
            learning_rate = 1e-3
        self.optimizer = torch.optim.RMSprop(self.model.parameters(), lr=learning_rate)
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            self.optimizer, mode="min", factor=0.2, patience=15, min_lr=1e-4)

    def _ctc_loss(self, logits, targets, target_lengths):
        # logits: [b, T, C] -> log-probs [T, b, C]
        log_probs = F.log_softmax(logits, dim=2).permute(1, 0, 2)
        input_lengths = torch.full((logits.size(0),), logits.size(1), dtype=torch.int32)
        if self.ctc_impl == "warp":
            # warp-ctc wants activations (not log-probs), int32 on the CPU
            return self.criterion(logits.permute(1, 0, 2).contiguous(), targets.cpu().int(),
                                  input_lengths, target_lengths.cpu().int())
        # cuDNN's CTC is non-deterministic and picky about the label layout; use the native kernel
        torch.backends.cudnn.enabled = False
        loss = self.criterion(log_probs, targets, input_lengths, target_lengths)
        torch.backends.cudnn.enabled = True
        return loss

    def _run_epoch(self, loader, train):
        self.model.train(train)
        total, n = 0.0, 0
        for x, targets, target_lengths in loader:
            x = x.to(self.device, non_blocking=True)
            targets = targets.to(self.device, non_blocking=True)
            with torch.set_grad_enabled(train):
                with torch.cuda.amp.autocast(enabled=self.amp):
                    logits = self.model(x)
                    loss = self._ctc_loss(logits, targets, target_lengths)
            if train:
                self.optimizer.zero_grad(set_to_none=True)
                self.scaler.scale(loss).backward()
                self.scaler.unscale_(self.optimizer)
                nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
                self.scaler.step(self.optimizer)
                self.scaler.update()
            total += loss.item() * x.size(0)
            n += x.size(0)
        return total / max(n, 1)

    def fit(self, train_loader, valid_loader, epochs, target, patience=20, verbose=1):
        history = {"loss": [], "val_loss": [], "lr": []}
        best, bad = float("inf"), 0
        for epoch in range(epochs):
            t0 = time.time()
            loss = self._run_epoch(train_loader, train=True)
            val_loss = self._run_epoch(valid_loader, train=False)
            self.scheduler.step(val_loss)
            torch.cuda.synchronize()
            lr = self.optimizer.param_groups[0]["lr"]
            history["loss"].append(loss)
            history["val_loss"].append(val_loss)
            history["lr"].append(lr)
            if verbose:
                print(f"Epoch {epoch + 1}/{epochs} - {time.time() - t0:.0f}s - loss: {loss:.4f}"
                      f" - val_loss: {val_loss:.4f} - lr: {lr:.1e}")
            if val_loss < best:
                best, bad = val_loss, 0
                self.save_checkpoint(target, epoch)
            else:
                bad += 1
                if bad >= patience:
                    print(f"Early stopping at epoch {epoch + 1}")
                    break
        return history

    @torch.no_grad()
    def predict(self, x, ctc_decode=True):
        self.model.eval()
        if isinstance(x, (list, np.ndarray)):
            batches = [torch.from_numpy(np.asarray(x, dtype=np.float32))]
        else:
            batches = (b[0] for b in x)

        predicts, probabilities = [], []
        for xb in batches:
            if xb.dim() == 3:
                xb = xb.unsqueeze(1)
            xb = xb.to(self.device)
            with torch.cuda.amp.autocast(enabled=self.amp):  # fp16 inference
                logits = self.model(xb)
            probs = F.softmax(logits.float(), dim=2).cpu().numpy()
            if not ctc_decode:
                predicts.extend(probs)
                continue
            if self.beam_width > 1:
                p, s = ctc_beam_decode(probs, self.blank, self.beam_width, self.top_paths)
            else:
                p, s = ctc_greedy_decode(probs, self.blank)
            predicts.extend(p)
            probabilities.extend(s)
        return predicts, probabilities
