"""Train, test and export one anomalib model on one or more GPUs (anomalib >= 1.0).

Example:
    python tools/train_engine.py --model Patchcore --category screw --devices 1
    python tools/train_engine.py --model EfficientAd --category pcb1 --dataset visa --devices 4
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.strategies import DDPStrategy

from anomalib import TaskType
from anomalib.data import MVTec, Visa
from anomalib.deploy import ExportType
from anomalib.engine import Engine
from anomalib.models import get_model

logger = logging.getLogger("train_engine")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="Patchcore")
    parser.add_argument("--dataset", choices=["mvtec", "visa"], default="mvtec")
    parser.add_argument("--root", type=Path, default=Path("./datasets"))
    parser.add_argument("--category", default="bottle")
    parser.add_argument("--devices", type=int, default=1, help="number of GPUs (DDP when > 1)")
    parser.add_argument("--max-epochs", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--export", choices=["none", "torch", "onnx", "openvino"], default="openvino")
    parser.add_argument("--output", type=Path, default=Path("./results"))
    return parser.parse_args()


def build_datamodule(args: argparse.Namespace):
    kwargs = dict(
        category=args.category,
        train_batch_size=args.batch_size,
        eval_batch_size=args.batch_size,
        num_workers=8,
        task=TaskType.SEGMENTATION,
    )
    if args.dataset == "mvtec":
        return MVTec(root=args.root / "MVTec", **kwargs)
    return Visa(root=args.root / "VisA", **kwargs)


def main() -> None:
    args = parse_args()
    logging.basicConfig(level=logging.INFO)

    # TF32 matmuls on Ampere+; PatchCore's feature extraction is ~1.6x faster with it
    torch.set_float32_matmul_precision("high")

    datamodule = build_datamodule(args)
    model = get_model(args.model)

    if args.devices > 1:
        # memory-bank models (PatchCore/PaDiM) gather embeddings on rank 0, so unused params are expected
        strategy = DDPStrategy(find_unused_parameters=True, process_group_backend="nccl")
    else:
        strategy = "auto"

    default_root = args.output / args.model / args.dataset / args.category
    engine = Engine(
        accelerator="gpu",
        devices=args.devices,
        strategy=strategy,
        max_epochs=args.max_epochs,
        default_root_dir=default_root,
        callbacks=[ModelCheckpoint(monitor="image_AUROC", mode="max")],
    )

    tic = time.time()
    engine.fit(model=model, datamodule=datamodule)
    fit_time = time.time() - tic

    tic = time.time()
    results = engine.test(model=model, datamodule=datamodule)
    test_time = time.time() - tic

    summary = {
        "model": args.model,
        "dataset": args.dataset,
        "category": args.category,
        "fit_time_s": round(fit_time, 1),
        "test_time_s": round(test_time, 1),
        "peak_mem_gb": round(torch.cuda.max_memory_reserved() / 2**30, 2),
        **{k: float(v) for k, v in results[0].items()},
    }
    logger.info("results: %s", summary)
    default_root.mkdir(parents=True, exist_ok=True)
    (default_root / "summary.json").write_text(json.dumps(summary, indent=2))

    if args.export != "none":
        export_path = engine.export(
            model=model,
            export_type=ExportType(args.export),
            export_root=default_root / "export",
        )
        logger.info("exported %s model to %s", args.export, export_path)


if __name__ == "__main__":
    main()
