"""
Blind unmixing: estimate endmembers and abundances jointly.
"""
import logging
import os
import time

import hydra
import numpy as np
from omegaconf import DictConfig
from scipy import io as sio

from src.data.base import HSI
from src.data.noise import AdditiveWhiteGaussianNoise
from src.utils.aligners import HungarianAligner as Aligner
from src.utils.metrics import (
    SADDegrees,
    aRMSE,
    eRMSE,
    SRE,
    compute_metric,
)
from src.utils.scalers import get_scaler

log = logging.getLogger(__name__)

TORCH_MODELS = ("CNNAEU", "MiSiCNet", "EDAA", "MSNet", "PGMSU", "EndNet")


def instantiate_model(cfg: DictConfig):
    name = cfg.model._target_.split(".")[-1]
    if name in TORCH_MODELS:
        # deep / tensor based methods receive the device from the main config
        return hydra.utils.instantiate(cfg.model, device=cfg.device)
    return hydra.utils.instantiate(cfg.model)


def main(cfg: DictConfig) -> None:
    # Load the data
    hsi = HSI(**cfg.data)
    log.info(hsi)

    # Apply noise
    noise = AdditiveWhiteGaussianNoise(SNR=cfg.SNR)
    Y = noise.apply(hsi.Y)

    # L2 normalization
    if cfg.l2_normalization:
        Y = Y / np.linalg.norm(Y, axis=0, ord=2, keepdims=True)

    # Apply data scaling
    scaler = get_scaler(cfg.scaler)
    Y = scaler.transform(Y)

    results = {"SAD": [], "aRMSE": [], "eRMSE": [], "SRE": [], "time": []}
    for run in range(cfg.runs):
        seed = cfg.seed + run
        model = instantiate_model(cfg)
        tic = time.time()
        E_hat, A_hat = model.compute_endmembers_and_abundances(
            Y,
            hsi.p,
            H=hsi.H,
            W=hsi.W,
            seed=seed,
        )
        elapsed = time.time() - tic

        # Align endmembers / abundances on the ground truth
        if cfg.force_align:
            aligner = Aligner(Aref=hsi.A, criterion="MSE")
            A1 = aligner.fit_transform(A_hat)
            E1 = aligner.transform_endmembers(E_hat)
        else:
            A1, E1 = A_hat, E_hat

        results["SAD"].append(compute_metric(SADDegrees(), hsi.E, E1, detail=True, on_endmembers=True))
        results["aRMSE"].append(compute_metric(aRMSE(), hsi.A, A1, detail=True, on_endmembers=False))
        results["eRMSE"].append(compute_metric(eRMSE(), hsi.E, E1, detail=True, on_endmembers=True))
        results["SRE"].append(compute_metric(SRE(), hsi.A, A1, detail=False, on_endmembers=False))
        results["time"].append(elapsed)
        log.info("Run %d finished in %.2fs", run, elapsed)

        out = os.path.join(cfg.output_dir, f"estimates_run{run}.mat")
        sio.savemat(out, {"E": E1, "A": A1.reshape(hsi.p, hsi.H, hsi.W)})

    for key, values in results.items():
        if key in ("SRE", "time"):
            log.info("%s: %.3f +/- %.3f", key, np.mean(values), np.std(values))
        else:
            overall = [v["Overall"] for v in values]
            log.info("%s: %.3f +/- %.3f", key, np.mean(overall), np.std(overall))
