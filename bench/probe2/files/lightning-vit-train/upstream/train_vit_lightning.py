"""Fine-tune a ViT on an ImageFolder dataset with PyTorch Lightning (DeiT-style recipe).

    python train_vit_lightning.py --data /datasets/imagenet --model vit_base_patch16_224 --devices 8
"""
import argparse
import math
import os

import lightning.pytorch as pl
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from apex.normalization import FusedLayerNorm
from apex.optimizers import FusedLAMB
from lightning.pytorch.callbacks import DeviceStatsMonitor, LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.strategies import DDPStrategy, DeepSpeedStrategy
from timm.data import Mixup, create_transform
from timm.loss import SoftTargetCrossEntropy
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder


def swap_layernorm(module: nn.Module) -> nn.Module:
    """Replace every nn.LayerNorm with apex's fused CUDA implementation."""
    for name, child in module.named_children():
        if isinstance(child, nn.LayerNorm):
            fused = FusedLayerNorm(child.normalized_shape, eps=child.eps, elementwise_affine=child.elementwise_affine)
            if child.elementwise_affine:
                fused.weight.data.copy_(child.weight.data)
                fused.bias.data.copy_(child.bias.data)
            setattr(module, name, fused)
        else:
            swap_layernorm(child)
    return module


class ViTModule(pl.LightningModule):
    def __init__(self, model_name: str, num_classes: int, lr: float, weight_decay: float, warmup_epochs: int,
                 max_epochs: int, mixup: float = 0.8, cutmix: float = 1.0, smoothing: float = 0.1,
                 compile_model: bool = False):
        super().__init__()
        self.save_hyperparameters()
        model = timm.create_model(model_name, pretrained=True, num_classes=num_classes, drop_path_rate=0.1)
        model = swap_layernorm(model)
        self.model = torch.compile(model) if compile_model else model
        self.mixup_fn = Mixup(mixup_alpha=mixup, cutmix_alpha=cutmix, label_smoothing=smoothing,
                              num_classes=num_classes)
        self.train_criterion = SoftTargetCrossEntropy()

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        images, targets = batch
        images, soft_targets = self.mixup_fn(images, targets)
        logits = self(images)
        loss = self.train_criterion(logits, soft_targets)
        self.log("train/loss", loss, prog_bar=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        images, targets = batch
        logits = self(images)
        loss = F.cross_entropy(logits, targets)
        acc1 = (logits.argmax(dim=-1) == targets).float().mean()
        self.log_dict({"val/loss": loss, "val/acc1": acc1}, prog_bar=True, sync_dist=True)

    def configure_optimizers(self):
        decay, no_decay = [], []
        for n, p in self.named_parameters():
            if not p.requires_grad:
                continue
            (no_decay if p.ndim <= 1 or n.endswith(".bias") else decay).append(p)
        optimizer = FusedLAMB([{"params": decay, "weight_decay": self.hparams.weight_decay},
                               {"params": no_decay, "weight_decay": 0.0}], lr=self.hparams.lr)
        steps_per_epoch = math.ceil(self.trainer.estimated_stepping_batches / self.hparams.max_epochs)
        warmup = self.hparams.warmup_epochs * steps_per_epoch
        total = self.trainer.estimated_stepping_batches

        def lr_lambda(step):
            if step < warmup:
                return step / max(1, warmup)
            return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))

        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


def build_loaders(data_dir, batch_size, workers, img_size=224):
    train_tf = create_transform(img_size, is_training=True, auto_augment="rand-m9-mstd0.5-inc1", re_prob=0.25)
    val_tf = create_transform(img_size, is_training=False)
    train_ds = ImageFolder(os.path.join(data_dir, "train"), transform=train_tf)
    val_ds = ImageFolder(os.path.join(data_dir, "val"), transform=val_tf)
    train_dl = DataLoader(train_ds, batch_size=batch_size, shuffle=True, num_workers=workers, pin_memory=True,
                          drop_last=True, persistent_workers=True)
    val_dl = DataLoader(val_ds, batch_size=batch_size, shuffle=False, num_workers=workers, pin_memory=True)
    return train_dl, val_dl, len(train_ds.classes)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--model", default="vit_base_patch16_224")
    parser.add_argument("--devices", type=int, default=torch.cuda.device_count())
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--weight-decay", type=float, default=0.05)
    parser.add_argument("--deepspeed", action="store_true")
    parser.add_argument("--compile", action="store_true")
    args = parser.parse_args()

    torch.set_float32_matmul_precision("high")
    pl.seed_everything(42, workers=True)

    train_dl, val_dl, num_classes = build_loaders(args.data, args.batch_size, args.workers)
    module = ViTModule(args.model, num_classes, args.lr, args.weight_decay, warmup_epochs=5, max_epochs=args.epochs,
                       compile_model=args.compile)

    precision = "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"
    if args.deepspeed:
        strategy = DeepSpeedStrategy(stage=2, offload_optimizer=False)
    else:
        strategy = DDPStrategy(find_unused_parameters=False, gradient_as_bucket_view=True, static_graph=True,
                               process_group_backend="nccl")

    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.devices,
        num_nodes=args.nodes,
        strategy=strategy,
        precision=precision,
        max_epochs=args.epochs,
        sync_batchnorm=False,
        gradient_clip_val=1.0,
        log_every_n_steps=50,
        callbacks=[LearningRateMonitor("step"), ModelCheckpoint(monitor="val/acc1", mode="max"),
                   DeviceStatsMonitor(cpu_stats=False)],
    )
    trainer.fit(module, train_dl, val_dl)
    if trainer.is_global_zero:
        print(f"max memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")


if __name__ == "__main__":
    main()
