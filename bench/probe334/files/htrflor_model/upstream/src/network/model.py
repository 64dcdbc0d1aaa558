"""
Handwritten Text Recognition Neural Network (PyTorch port of the Keras HTRModel).

The public surface mimics the Keras version (compile / load_checkpoint /
fit / predict / summary) so that main.py did not have to change much.
"""

import os
import sys
import time
from contextlib import redirect_stdout

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast

try:
    # parlance/ctcdecode: CPU beam search with optional KenLM
    from ctcdecode import CTCBeamDecoder
except ImportError:
    CTCBeamDecoder = None

from network.layers import FullGatedConv2D, GatedConv2D, OctConv2D


class HTRModel:
    def __init__(self,
                 architecture,
                 input_size,
                 vocab_size,
                 greedy=False,
                 beam_width=10,
                 top_paths=1,
                 stop_tolerance=20,
                 reduce_tolerance=15,
                 reduce_factor=0.1,
                 device=None,
                 use_amp=False,
                 cooldown=0):
        """
        Initialization of a HTR Model.

        :param
            architecture: option of the architecture model to build and compile
            greedy, beam_width, top_paths: Parameters of the CTC decoding
            top_paths: number of decoding paths (beam search only)
            device: torch.device the network lives on
            use_amp: mixed precision training (CUDA only)
        """

        self.architecture = globals()[architecture]
        self.input_size = input_size
        self.vocab_size = vocab_size
        self.device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.use_amp = use_amp and self.device.type == "cuda"

        self.model = None
        self.optimizer = None
        self.scheduler = None
        self.scaler = None
        self.greedy = greedy
        self.beam_width = beam_width
        self.top_paths = max(1, top_paths)

        self.stop_tolerance = stop_tolerance
        self.reduce_tolerance = reduce_tolerance
        self.reduce_factor = reduce_factor
        self.cooldown = cooldown

    def summary(self, output=None, target=None):
        """Show/Save model structure (summary)"""
        n_params = sum(p.numel() for p in self.model.parameters())
        n_train = sum(p.numel() for p in self.model.parameters() if p.requires_grad)
        text = f"{self.model}\n\nTotal params: {n_params:,}\nTrainable params: {n_train:,}\n"
        print(text)

        if target is not None:
            os.makedirs(output, exist_ok=True)
            with open(os.path.join(output, target), "w") as f:
                with redirect_stdout(f):
                    print(text)

    def load_checkpoint(self, target):
        """ Load a model with checkpoint file"""

        if os.path.isfile(target):
            if self.model is None:
                self.compile()

            checkpoint = torch.load(target, map_location=self.device)
            self.model.load_state_dict(checkpoint["model"])
            if "optimizer" in checkpoint and self.optimizer is not None:
                self.optimizer.load_state_dict(checkpoint["optimizer"])

    def save_checkpoint(self, target, epoch):
        torch.save({
            "epoch": epoch,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
        }, target)

    def compile(self, learning_rate=None, initial_step=0):
        """
        Configure the network (optimizer, scheduler, AMP scaler, CTC loss).
        """

        self.model = self.architecture(self.input_size, self.vocab_size + 1)
        self.model.to(self.device)

        self.optimizer = torch.optim.RMSprop(self.model.parameters(), lr=learning_rate or 1e-3)
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            self.optimizer, mode="min", factor=self.reduce_factor,
            patience=self.reduce_tolerance, cooldown=self.cooldown, min_lr=1e-4)
        self.scaler = GradScaler(enabled=self.use_amp)
        self.ctc_loss = nn.CTCLoss(blank=0, reduction="mean", zero_infinity=True)

    def _step(self, batch, train=True):
        x, y, y_len = batch
        x = x.to(self.device, non_blocking=True)
        y = y.to(self.device, non_blocking=True)

        with autocast(enabled=self.use_amp):
            logits = self.model(x)  # (N, T, C)

        log_probs = F.log_softmax(logits.float(), dim=2).permute(1, 0, 2)
        x_len = torch.full((x.size(0),), log_probs.size(0), dtype=torch.long)
        loss = self.ctc_loss(log_probs, y, x_len, y_len)

        if train:
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
            self.scaler.step(self.optimizer)
            self.scaler.update()

        return loss.item()

    def fit(self, train_loader, valid_loader, epochs=1, checkpoint=None, logdir=None, verbose=1):
        """
        Train loop with the Keras-like callbacks reimplemented by hand:
        CSVLogger, ModelCheckpoint(save_best_only), EarlyStopping, ReduceLROnPlateau.
        """
        history = {"loss": [], "val_loss": []}
        best, wait = np.inf, 0
        csv_path = os.path.join(logdir, "epochs.log") if logdir else None

        for epoch in range(epochs):
            t0 = time.time()
            self.model.train()
            tr_losses = [self._step(b, train=True) for b in train_loader]

            self.model.eval()
            with torch.no_grad():
                va_losses = [self._step(b, train=False) for b in valid_loader]

            loss, val_loss = float(np.mean(tr_losses)), float(np.mean(va_losses))
            history["loss"].append(loss)
            history["val_loss"].append(val_loss)
            self.scheduler.step(val_loss)

            if verbose:
                lr = self.optimizer.param_groups[0]["lr"]
                print(f"Epoch {epoch + 1}/{epochs} - {time.time() - t0:.0f}s - "
                      f"loss: {loss:.4f} - val_loss: {val_loss:.4f} - lr: {lr:.2e}")

            if csv_path:
                with open(csv_path, "a") as f:
                    f.write(f"{epoch},{loss},{val_loss}\n")

            if val_loss < best:
                best, wait = val_loss, 0
                if checkpoint:
                    self.save_checkpoint(checkpoint, epoch)
            else:
                wait += 1
                if wait >= self.stop_tolerance:
                    print(f"Early stopping at epoch {epoch + 1}")
                    break

        return history

    def predict(self, x, ctc_decode=True, verbose=0):
        """
        Predict a numpy batch or a DataLoader. Returns (predicts, probabilities)
        in the same format as the Keras version.
        """
        self.model.eval()
        if isinstance(x, np.ndarray):
            batches = [torch.from_numpy(x).float()]
        else:
            batches = (b[0] for b in x)

        outputs = []
        with torch.no_grad():
            for xb in batches:
                xb = xb.cuda(non_blocking=True) if self.device.type == "cuda" else xb
                with autocast(enabled=self.use_amp):
                    out = self.model(xb)
                outputs.append(F.softmax(out.float(), dim=2).cpu())

        probs = torch.cat(outputs, dim=0)

        if not ctc_decode:
            return np.log(probs.clamp(min=1e-8).numpy()), []

        if self.greedy or CTCBeamDecoder is None:
            best = probs.argmax(dim=2)
            predicts, scores = [], []
            for row, p in zip(best, probs):
                seq = torch.unique_consecutive(row)
                seq = seq[seq != 0] - 1
                predicts.append([seq.tolist()])
                scores.append([float(p.max(dim=1)[0].log().sum())])
            return predicts, scores

        decoder = CTCBeamDecoder(
            labels=[str(i) for i in range(self.vocab_size + 1)],
            beam_width=self.beam_width, blank_id=0, num_processes=os.cpu_count() or 1)
        beams, beam_scores, _, out_lens = decoder.decode(probs)
        predicts, scores = [], []
        for i in range(beams.size(0)):
            predicts.append([(beams[i, k, :out_lens[i, k]] - 1).tolist() for k in range(self.top_paths)])
            scores.append([float(np.exp(-beam_scores[i, k])) for k in range(self.top_paths)])
        return predicts, scores


"""
Networks to the Handwritten Text Recognition Model

Reference for the networks:
    Puigcerver, Are Multidimensional Recurrent Layers Really Necessary for HTR? (2017)
    Bluche and Messina, Gated Convolutional Recurrent Neural Networks (2017)
    Flor et al., Towards a Lightweight Gated CNN for HTR (2020)
"""


class flor(nn.Module):
    """Gated Convolucional Recurrent Neural Network by Flor et al."""

    def __init__(self, input_size, d_model):
        super().__init__()
        w, h, c = input_size

        def block(cin, cout, k, s, gated=True, drop=0.0):
            layers = [nn.Conv2d(cin, cout, kernel_size=k, stride=s, padding="same" if s == (1, 1) else 1),
                      nn.PReLU(cout), nn.BatchNorm2d(cout, momentum=0.01)]
            if gated:
                layers.append(FullGatedConv2D(cout, kernel_size=(3, 3)))
            if drop:
                layers.append(nn.Dropout(drop))
            return layers

        self.cnn = nn.Sequential(
            *block(c, 16, (3, 3), (2, 2)),
            *block(16, 32, (3, 3), (1, 1)),
            *block(32, 40, (2, 4), (2, 4), drop=0.2),
            *block(40, 48, (3, 3), (1, 1), drop=0.2),
            *block(48, 56, (2, 4), (2, 4), drop=0.2),
            *block(56, 64, (3, 3), (1, 1), gated=False),
        )
        self.pool = nn.MaxPool2d(kernel_size=(1, 2), stride=(1, 2))
        feat = 64 * (h // 16)
        self.rnn1 = nn.GRU(feat, 128, batch_first=True, bidirectional=True)
        self.dense1 = nn.Linear(256, 256)
        self.rnn2 = nn.GRU(256, 128, batch_first=True, bidirectional=True)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(256, d_model)

    def forward(self, x):
        # x: (N, 1, W, H) to match the Keras (W, H, C) storage of the HDF5 files
        x = self.cnn(x)
        x = self.pool(x)
        n, c, w, h = x.shape
        x = x.permute(0, 2, 1, 3).reshape(n, w, c * h)
        x, _ = self.rnn1(self.drop(x))
        x = self.dense1(x)
        x, _ = self.rnn2(self.drop(x))
        return self.out(x)


class puigcerver(nn.Module):
    """Convolucional Recurrent Neural Network by Puigcerver et al."""

    def __init__(self, input_size, d_model):
        super().__init__()
        w, h, c = input_size
        chans = [c, 16, 32, 48, 64, 80]
        layers = []
        for i in range(5):
            layers += [nn.Conv2d(chans[i], chans[i + 1], 3, padding=1),
                       nn.BatchNorm2d(chans[i + 1]), nn.LeakyReLU(0.01)]
            if i < 3:
                layers.append(nn.MaxPool2d(2))
            if i >= 2:
                layers.append(nn.Dropout(0.2))
        self.cnn = nn.Sequential(*layers)
        self.rnn = nn.LSTM(80 * (h // 8), 256, num_layers=5, dropout=0.5,
                           batch_first=True, bidirectional=True)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(512, d_model)

    def forward(self, x):
        x = self.cnn(x)
        n, c, w, h = x.shape
        x = x.permute(0, 2, 1, 3).reshape(n, w, c * h)
        x, _ = self.rnn(self.drop(x))
        return self.out(self.drop(x))
