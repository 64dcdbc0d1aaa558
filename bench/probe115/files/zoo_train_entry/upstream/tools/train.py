"""Train a classification model from a vision_zoo config.

Single GPU:   python tools/train.py configs/resnet50_8xb32_in1k.yaml
Multi GPU:    bash tools/dist_train.sh configs/resnet50_8xb32_in1k.yaml 8
Slurm:        GPUS=16 bash tools/slurm_train.sh dev r50 configs/resnet50_8xb32_in1k.yaml work_dirs/r50
"""
import argparse
import logging
import os
import random

import numpy as np
import torch

from vision_zoo.config import Config, DictAction
from vision_zoo.engine.trainer import Trainer
from vision_zoo.utils.device import describe_devices, setup_device
from vision_zoo.utils.dist_utils import get_dist_info, init_dist, sync_random_seed

logger = logging.getLogger("vision_zoo")


def parse_args():
    parser = argparse.ArgumentParser(description="Train a classifier")
    parser.add_argument("config", help="train config file path")
    parser.add_argument("--work-dir", help="the dir to save logs and models")
    parser.add_argument("--resume", default="", help="checkpoint to resume from")
    parser.add_argument("--amp", action="store_true", help="enable automatic-mixed-precision training")
    parser.add_argument(
        "--launcher", choices=["none", "pytorch", "slurm", "mpi"], default="none", help="job launcher"
    )
    parser.add_argument(
        "--cfg-options",
        nargs="+",
        action=DictAction,
        help="override some settings in the used config, the key-value pair in xxx=yyy format",
    )
    # torch.distributed.launch passes --local_rank, torchrun sets LOCAL_RANK
    parser.add_argument("--local_rank", "--local-rank", type=int, default=0)
    args = parser.parse_args()
    if "LOCAL_RANK" not in os.environ:
        os.environ["LOCAL_RANK"] = str(args.local_rank)
    return args


def set_random_seed(seed, deterministic=False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        # required by cuBLAS for deterministic matmuls (CUDA >= 10.2)
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.use_deterministic_algorithms(True)


def main():
    args = parse_args()
    cfg = Config.fromfile(args.config)
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    if args.amp:
        cfg.amp.enabled = True

    if args.launcher != "none":
        init_dist(args.launcher, backend=cfg.dist.backend)
    device = setup_device(cfg)
    rank, world_size = get_dist_info()

    logging.basicConfig(
        level=logging.INFO if rank == 0 else logging.WARN,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    seed = sync_random_seed(cfg.seed)
    set_random_seed(seed + rank, deterministic=cfg.deterministic)

    if rank == 0:
        os.makedirs(cfg.work_dir, exist_ok=True)
        cfg.dump(os.path.join(cfg.work_dir, os.path.basename(args.config)))
        logger.info("torch %s | CUDA %s | cuDNN %s", torch.__version__, torch.version.cuda, torch.backends.cudnn.version())
        logger.info("devices: %s", describe_devices())
        logger.info("world size %d, seed %d", world_size, seed)

    trainer = Trainer(cfg, device)
    if args.resume:
        trainer.resume(args.resume)
    trainer.fit()


if __name__ == "__main__":
    main()
