"""
HySUPP: hyperspectral unmixing benchmark.

    python unmixing.py mode=blind data=Samson model=CNNAEU
    python unmixing.py mode=semi data=DC1 model=SUnCNN runs=5
    python unmixing.py mode=supervised data=Urban4 model=FCLS
"""
import logging
import os
import random

import hydra
import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from src.blind import main as blind_main
from src.semisupervised import main as semi_main
from src.supervised import main as supervised_main

log = logging.getLogger(__name__)

MODES = {
    "blind": blind_main,
    "semi": semi_main,
    "supervised": supervised_main,
}


def set_seeds(seed: int, deterministic: bool) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


@hydra.main(version_base=None, config_path="config", config_name="config")
def main(cfg: DictConfig) -> None:
    log.info("Configuration:\n%s", OmegaConf.to_yaml(cfg))
    if cfg.gpu is not None:
        # pick the card before any model touches it
        os.environ["CUDA_VISIBLE_DEVICES"] = str(cfg.gpu)
    set_seeds(cfg.seed, cfg.deterministic)

    if cfg.mode not in MODES:
        raise ValueError(f"Unknown mode {cfg.mode}, expected one of {list(MODES)}")
    log.info("Running %s unmixing with %s on %s", cfg.mode, cfg.model._target_, cfg.data.name)
    MODES[cfg.mode](cfg)


if __name__ == "__main__":
    main()
