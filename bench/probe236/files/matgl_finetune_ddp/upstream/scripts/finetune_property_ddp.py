"""Fine-tune a pretrained MatGL property model (MEGNet / M3GNet) on several GPUs.

    python scripts/finetune_property_ddp.py --data data/bandgap.json \
        --pretrained MEGNet-MP-2019.4.1-BandGap-mfi --gpus 4

Uses Lightning DDP; one process per GPU.
"""

from __future__ import annotations

import argparse
import json
import os
from functools import partial

os.environ.setdefault("DGLBACKEND", "pytorch")
os.environ.setdefault("NCCL_DEBUG", "WARN")
os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")

import lightning as pl
import numpy as np
import torch
from dgl.data.utils import split_dataset
from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.strategies import DDPStrategy
from pymatgen.core import Structure

import matgl
from matgl.ext.pymatgen import Structure2Graph
from matgl.graph.data import MGLDataLoader, MGLDataset, collate_fn_graph
from matgl.utils.training import ModelLightningModule


def get_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", required=True, help="json list of {structure, target}")
    p.add_argument("--pretrained", default="MEGNet-MP-2019.4.1-BandGap-mfi")
    p.add_argument("--target", default="band_gap")
    p.add_argument("--gpus", type=int, default=4)
    p.add_argument("--nodes", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--precision", default="auto", help="auto | 32-true | 16-mixed | bf16-mixed")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--out", default="runs/megnet_bandgap_ft")
    return p.parse_args()


def pick_precision(requested: str) -> str:
    """bf16 on Ampere and newer, fp16 autocast on older cards."""
    if requested != "auto":
        return requested
    major, _ = torch.cuda.get_device_capability()
    return "bf16-mixed" if major >= 8 else "16-mixed"


def load_dataset(path: str, target: str, converter: Structure2Graph) -> MGLDataset:
    with open(path) as fh:
        raw = json.load(fh)
    structures = [Structure.from_dict(d["structure"]) for d in raw]
    values = np.array([d[target] for d in raw], dtype=np.float32)
    return MGLDataset(
        structures=structures,
        converter=converter,
        labels={target: values.tolist()},
        include_line_graph=False,
        save_cache=False,
    )


def main():
    args = get_args()
    pl.seed_everything(42, workers=True)
    torch.set_float32_matmul_precision("high")

    pretrained = matgl.load_model(args.pretrained)
    model = pretrained.model
    converter = Structure2Graph(element_types=model.element_types, cutoff=model.cutoff)
    dataset = load_dataset(args.data, args.target, converter)
    train_data, val_data, test_data = split_dataset(
        dataset, frac_list=[0.8, 0.1, 0.1], shuffle=True, random_state=42
    )
    collate = partial(collate_fn_graph, include_line_graph=False)
    train_loader, val_loader, test_loader = MGLDataLoader(
        train_data=train_data,
        val_data=val_data,
        test_data=test_data,
        collate_fn=collate,
        batch_size=args.batch_size,
        num_workers=args.workers,
        pin_memory=True,
        persistent_workers=args.workers > 0,
    )

    lit = ModelLightningModule(
        model=model,
        include_line_graph=False,
        lr=args.lr,
        loss="mse_loss",
        data_mean=0.0,
        data_std=1.0,
    )

    precision = pick_precision(args.precision)
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.gpus,
        num_nodes=args.nodes,
        strategy=DDPStrategy(process_group_backend="nccl", find_unused_parameters=False),
        precision=precision,
        max_epochs=args.epochs,
        gradient_clip_val=5.0,
        logger=CSVLogger(args.out, name="logs"),
        callbacks=[
            ModelCheckpoint(monitor="val_MAE", mode="min", save_top_k=3),
            LearningRateMonitor(logging_interval="epoch"),
        ],
        log_every_n_steps=20,
    )
    if trainer.is_global_zero:
        print(f"fine-tuning {args.pretrained} on {len(train_data)} structures, precision={precision}")
    trainer.fit(lit, train_dataloaders=train_loader, val_dataloaders=val_loader)
    trainer.test(lit, dataloaders=test_loader)

    if trainer.is_global_zero:
        lit.model.save(os.path.join(args.out, "final_model"))
        print("peak memory per GPU: %.2f GB" % (torch.cuda.max_memory_allocated() / 1024**3))


if __name__ == "__main__":
    main()
