"""
CNNAEU: convolutional neural network autoencoder for blind unmixing
(Palsson, Ulfarsson, Sveinsson, IEEE TGRS 2021) -- PyTorch re-implementation.
"""
import logging
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

from src.model.base import BlindUnmixingModel

log = logging.getLogger(__name__)


class PatchDataset(Dataset):
    def __init__(self, Y, patch_size, num_patches, seed=0):
        # Y: L x H x W
        self.Y = Y
        self.patch_size = patch_size
        L, H, W = Y.shape
        rng = np.random.RandomState(seed)
        self.rows = rng.randint(0, H - patch_size + 1, size=num_patches)
        self.cols = rng.randint(0, W - patch_size + 1, size=num_patches)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        r, c = self.rows[idx], self.cols[idx]
        patch = self.Y[:, r:r + self.patch_size, c:c + self.patch_size]
        return torch.from_numpy(np.ascontiguousarray(patch, dtype=np.float32))


class CNNAEU(nn.Module, BlindUnmixingModel):
    def __init__(
        self,
        scale=3.0,
        epochs=320,
        lr=0.0003,
        batch_size=15,
        patch_size=40,
        num_patches=250,
        decoder_kernel=11,
        device="cuda",
        *args,
        **kwargs,
    ):
        super().__init__()
        self.scale = scale
        self.epochs = epochs
        self.lr = lr
        self.batch_size = batch_size
        self.patch_size = patch_size
        self.num_patches = num_patches
        self.decoder_kernel = decoder_kernel
        self.device = torch.device(device if torch.cuda.is_available() else "cpu")

    def init_architecture(self, seed):
        # Set random seed
        torch.manual_seed(seed)

        self.encoder = nn.Sequential(
            nn.Conv2d(self.L, 48, kernel_size=3, padding=1, padding_mode="reflect", bias=False),
            nn.LeakyReLU(0.02),
            nn.BatchNorm2d(48),
            nn.Dropout2d(p=0.2),
            nn.Conv2d(48, self.p, kernel_size=1, bias=False),
            nn.LeakyReLU(0.02),
            nn.BatchNorm2d(self.p),
            nn.Dropout2d(p=0.2),
        )
        pad = self.decoder_kernel // 2
        self.decoder = nn.Conv2d(
            self.p, self.L, kernel_size=self.decoder_kernel, padding=pad, padding_mode="reflect", bias=False
        )

    def forward(self, x):
        code = self.encoder(x)
        abund = F.softmax(code * self.scale, dim=1)
        x_hat = self.decoder(abund)
        return abund, x_hat

    @staticmethod
    def loss(target, output):
        # spectral angle distance, averaged over pixels
        assert target.shape == output.shape
        dot_product = (target * output).sum(dim=1)
        target_norm = target.norm(dim=1)
        output_norm = output.norm(dim=1)
        sad = torch.acos(torch.clamp(dot_product / (target_norm * output_norm + 1e-8), -1.0 + 1e-7, 1.0 - 1e-7))
        return sad.mean()

    def compute_endmembers_and_abundances(self, Y, p, H, W, seed=0, *args, **kwargs):
        tic = time.time()
        log.debug("Solving started...")

        L, N = Y.shape
        self.L, self.p, self.H, self.W = L, p, H, W
        # Build architecture
        self.init_architecture(seed=seed)

        Y_cube = Y.reshape((L, H, W))
        dataset = PatchDataset(Y_cube, self.patch_size, self.num_patches, seed=seed)
        dataloader = DataLoader(dataset, batch_size=self.batch_size, shuffle=True, pin_memory=True)

        self.to(self.device)
        optimizer = torch.optim.RMSprop(self.parameters(), lr=self.lr)

        progress = tqdm(range(self.epochs))
        for ee in progress:
            running_loss = 0.0
            for ii, batch in enumerate(dataloader):
                batch = batch.to(self.device)
                optimizer.zero_grad()
                _, outputs = self(batch)
                loss = self.loss(batch, outputs)
                running_loss += loss.item()
                loss.backward()
                optimizer.step()
            progress.set_postfix_str(f"loss={running_loss:.3e}")

        # Get final abundances and endmembers
        self.eval()
        with torch.no_grad():
            Y_eval = torch.Tensor(Y_cube[None]).to(self.device)
            abund, _ = self(Y_eval)
            Ahat = abund.detach().cpu().numpy().reshape(self.p, self.H * self.W)
            # endmembers = mean of the decoder kernel over the spatial support
            Ehat = self.decoder.weight.data.mean((2, 3)).detach().cpu().numpy()

        self.time = time.time() - tic
        log.info(self.print_time())
        return Ehat, Ahat
