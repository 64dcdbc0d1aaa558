#!/usr/bin/env python
"""Fine-tune pyannote/segmentation-3.0 on an in-domain diarization corpus.

The corpus must be declared in a pyannote.database YAML file, e.g.

    Protocols:
      CallHome:
        SpeakerDiarization:
          Adapt:
            train: {uri: lists/train.lst, annotation: rttm/train.rttm, annotated: uem/train.uem}
            development: ...
            test: ...

Example (4 GPUs, one node):

    python recipes/finetune_segmentation.py --database database.yml \
        --protocol CallHome.SpeakerDiarization.Adapt --devices 4 --max-epochs 20
"""

import argparse
import os
from types import MethodType

import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import (
    EarlyStopping,
    LearningRateMonitor,
    ModelCheckpoint,
    RichProgressBar,
)
from lightning.pytorch.loggers import TensorBoardLogger
from pyannote.audio import Model
from pyannote.audio.tasks import Segmentation
from pyannote.database import FileFinder, registry


def get_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", required=True)
    parser.add_argument("--protocol", required=True)
    parser.add_argument("--pretrained", default="pyannote/segmentation-3.0")
    parser.add_argument("--exp-dir", default="exp/segmentation")
    parser.add_argument("--devices", type=int, default=1, help="number of GPUs")
    parser.add_argument("--num-nodes", type=int, default=1)
    parser.add_argument("--max-epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--num-workers", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--duration", type=float, default=10.0, help="chunk duration in seconds")
    parser.add_argument("--precision", default="auto", choices=["auto", "32", "16-mixed", "bf16-mixed"])
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def pick_precision(requested: str) -> str:
    """bf16 on Ampere and newer, fp16 on Volta/Turing, fp32 on cpu."""
    if requested != "auto":
        return requested
    if not torch.cuda.is_available():
        return "32"
    major, _ = torch.cuda.get_device_capability()
    return "bf16-mixed" if major >= 8 else "16-mixed"


def configure_optimizers(self):
    # fused AdamW is noticeably faster for the LSTM-heavy PyanNet on A100
    return torch.optim.AdamW(
        self.parameters(),
        lr=self.hparams_lr,
        weight_decay=1e-2,
        fused=torch.cuda.is_available(),
    )


def main():
    args = get_args()
    pl.seed_everything(args.seed, workers=True)

    # the NCCL watchdog tears the job down instead of hanging when a rank dies
    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
    os.environ.setdefault("NCCL_DEBUG", "WARN")

    # pyannote disables TF32 globally on import for reproducibility; training
    # is fine with it and it is ~2x faster on A100
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.set_float32_matmul_precision("high")

    registry.load_database(args.database)
    protocol = registry.get_protocol(args.protocol, preprocessors={"audio": FileFinder()})

    task = Segmentation(
        protocol,
        duration=args.duration,
        max_speakers_per_chunk=3,
        max_speakers_per_frame=2,
        batch_size=args.batch_size,
        num_workers=args.num_workers,
        pin_memory=True,
    )

    model = Model.from_pretrained(args.pretrained, use_auth_token=os.environ.get("HF_TOKEN"))
    model.task = task
    model.hparams_lr = args.lr
    model.configure_optimizers = MethodType(configure_optimizers, model)
    model.prepare_data()
    model.setup()

    monitor, direction = task.val_monitor
    checkpoint = ModelCheckpoint(
        dirpath=os.path.join(args.exp_dir, "checkpoints"),
        monitor=monitor,
        mode=direction,
        save_top_k=3,
        every_n_epochs=1,
        save_last=True,
        filename="{epoch}-{" + monitor + ":.6f}",
    )
    early_stopping = EarlyStopping(monitor=monitor, mode=direction, min_delta=0.0, patience=10, verbose=True)

    precision = pick_precision(args.precision)
    strategy = "ddp" if args.devices * args.num_nodes > 1 else "auto"

    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.devices,
        num_nodes=args.num_nodes,
        strategy=strategy,
        precision=precision,
        max_epochs=args.max_epochs,
        callbacks=[checkpoint, early_stopping, LearningRateMonitor(), RichProgressBar()],
        logger=TensorBoardLogger(args.exp_dir, name="tb"),
        gradient_clip_val=0.5,
        benchmark=True,
    )
    trainer.fit(model)

    if trainer.is_global_zero:
        print(f"best checkpoint: {checkpoint.best_model_path} ({monitor}={checkpoint.best_model_score})")
        if torch.cuda.is_available():
            print(f"peak memory: {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")


if __name__ == "__main__":
    main()
