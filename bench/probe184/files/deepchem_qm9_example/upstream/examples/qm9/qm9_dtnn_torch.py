"""
Train a DTNN (Deep Tensor Neural Network) on QM9 with DeepChem's PyTorch backend.

Usage:
    CUDA_VISIBLE_DEVICES=0 python qm9_dtnn_torch.py --epochs 50 --batch-size 64
"""
import argparse
import logging
import os

import numpy as np
import torch

import deepchem as dc
from deepchem.models.torch_models import DTNNModel

logging.basicConfig(level=logging.INFO)
logger = logging.getLogger(__name__)

QM9_TASKS = [
    "mu", "alpha", "homo", "lumo", "gap", "r2", "zpve", "cv", "u0", "u298",
    "h298", "g298"
]


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--n-embedding", type=int, default=30)
    parser.add_argument("--n-hidden", type=int, default=100)
    parser.add_argument("--model-dir", default="./dtnn_qm9")
    parser.add_argument("--gpu", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    parser.add_argument("--seed", type=int, default=123)
    parser.add_argument("--deterministic", action="store_true")
    return parser.parse_args()


def main():
    args = get_args()
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    if args.deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False

    device = torch.device(f"cuda:{args.gpu}")
    torch.cuda.set_device(device)
    logger.info("Training on %s (%s)", device, torch.cuda.get_device_name(device))

    featurizer = dc.feat.CoulombMatrix(max_atoms=29)
    tasks, datasets, transformers = dc.molnet.load_qm9(
        featurizer=featurizer,
        splitter="random",
        transformers=["normalization"],
        reload=True,
    )
    train_dataset, valid_dataset, test_dataset = datasets
    logger.info("train/valid/test: %d / %d / %d", len(train_dataset),
                len(valid_dataset), len(test_dataset))

    model = DTNNModel(
        n_tasks=len(tasks),
        n_embedding=args.n_embedding,
        n_hidden=args.n_hidden,
        n_distance=51,
        distance_min=-1.0,
        distance_max=9.2,
        output_activation=False,
        mode="regression",
        learning_rate=args.lr,
        batch_size=args.batch_size,
        model_dir=args.model_dir,
        device=torch.device("cuda"),
    )

    metric = dc.metrics.Metric(dc.metrics.mean_absolute_error, mode="regression")
    best_valid = np.inf
    for epoch in range(args.epochs):
        loss = model.fit(train_dataset, nb_epoch=1, checkpoint_interval=0)
        valid_scores = model.evaluate(valid_dataset, [metric], transformers)
        mae = valid_scores["mean_absolute_error"]
        mem = torch.cuda.max_memory_allocated(device) / 2**20
        logger.info("epoch %3d  loss %.4f  valid MAE %.4f  (peak mem %.0f MiB)",
                    epoch, loss, mae, mem)
        if mae < best_valid:
            best_valid = mae
            model.save_checkpoint(max_checkpoints_to_keep=1)
        torch.cuda.empty_cache()

    model.restore()
    test_scores = model.evaluate(test_dataset, [metric], transformers)
    logger.info("Test MAE: %.4f", test_scores["mean_absolute_error"])


if __name__ == "__main__":
    main()
