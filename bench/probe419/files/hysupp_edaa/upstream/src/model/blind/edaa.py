"""
EDAA: entropic descent archetypal analysis for blind unmixing
(Zouaoui, Muhawenayo, Rasti, Chanussot, Mairal, IEEE TGRS 2023).

Alternating entropic (mirror) descent on the abundances A and the archetype
coefficients B, X ~ X B A, run from M random starts; the best model is picked
on the reconstruction error.
"""
import logging
import time

import numpy as np
import torch
from tqdm import tqdm

from src.model.base import BlindUnmixingModel

log = logging.getLogger(__name__)


class EDAA(BlindUnmixingModel):
    def __init__(
        self,
        T=100,
        K1=5,
        K2=5,
        M=50,
        normalize=True,
        device="cuda",
        *args,
        **kwargs,
    ):
        super().__init__()
        self.T = T
        self.K1 = K1
        self.K2 = K2
        self.M = M
        self.normalize = normalize
        self.device = torch.device(device)
        # double precision for the entropic updates (exp of large negative numbers)
        self.dtype = torch.float64

    @staticmethod
    def _spectral_norm(X):
        # largest singular value of X, used to scale the step sizes
        return torch.linalg.norm(X, ord=2)

    def _update_A(self, X, XB, A, eta):
        grad = XB.t() @ (XB @ A - X)
        A = A * torch.exp(-eta * grad)
        return A / A.sum(0, keepdim=True)

    def _update_B(self, X, B, A, eta):
        XB = X @ B
        grad = X.t() @ ((XB @ A - X) @ A.t())
        B = B * torch.exp(-eta * grad)
        return B / B.sum(0, keepdim=True)

    def _loss(self, X, B, A):
        return 0.5 * ((X - X @ B @ A) ** 2).sum()

    def _run_one(self, X, p, generator):
        L, N = X.shape
        A = torch.full((p, N), 1.0 / p, dtype=self.dtype, device=self.device)
        B = torch.rand((N, p), generator=generator, dtype=self.dtype, device=self.device)
        B = B / B.sum(0, keepdim=True)

        sigma = self._spectral_norm(X)
        eta_A = 1.0 / (sigma ** 2)
        eta_B = eta_A * p / N

        for _ in range(self.T):
            XB = X @ B
            for _ in range(self.K1):
                A = self._update_A(X, XB, A, eta_A)
            for _ in range(self.K2):
                B = self._update_B(X, B, A, eta_B)
        return B, A, self._loss(X, B, A)

    def compute_endmembers_and_abundances(self, Y, p, H=None, W=None, seed=0, *args, **kwargs):
        tic = time.time()
        Y = np.asarray(Y)
        if self.normalize:
            Y = (Y - Y.min()) / (Y.max() - Y.min())

        X = torch.from_numpy(Y).to(device=self.device, dtype=self.dtype)
        generator = torch.Generator(device=self.device)
        generator.manual_seed(seed)

        best = None
        losses = []
        for m in tqdm(range(self.M), desc="EDAA restarts"):
            B, A, loss = self._run_one(X, p, generator)
            losses.append(loss.item())
            if best is None or loss.item() < best[2]:
                best = (B, A, loss.item())

        B, A, _ = best
        Ehat = (X @ B).cpu().numpy()
        Ahat = A.cpu().numpy()
        log.info("EDAA best loss %.4e (median %.4e over %d restarts)", best[2], np.median(losses), self.M)
        self.time = time.time() - tic
        log.info(self.print_time())
        return Ehat, Ahat
