from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Tuple

import lightning as L
import torch
import torch.nn as nn
from torch import Tensor
from torchmetrics.classification import Accuracy, F1Score

from vap.modules.VAP import VAP, load_model_from_state_dict
from vap.objective import VAPObjective
from vap.utils.utils import everything_deterministic, vad_list_to_onehot

everything_deterministic()

Batch = Dict[str, Tensor]


@dataclass
class VAPOptimConfig:
    learning_rate: float = 3.63e-4
    betas: Tuple[float, float] = (0.9, 0.999)
    weight_decay: float = 0.001
    lr_scheduler_interval: str = "step"
    lr_scheduler_freq: int = 100
    lr_scheduler_tmax: int = 2500
    lr_scheduler_patience: int = 2
    lr_scheduler_factor: float = 0.5
    # early stopping
    early_stopping: bool = True
    patience: int = 10
    monitor: str = "val_loss"
    mode: str = "min"
    save_top_k: int = 2


class VAPModule(L.LightningModule):
    def __init__(
        self,
        model: VAP,
        opt_conf: Optional[VAPOptimConfig] = None,
        event_conf: Optional[Mapping] = None,
    ):
        super().__init__()
        self.model = model
        self.opt_conf = opt_conf if opt_conf is not None else VAPOptimConfig()
        self.event_conf = event_conf
        self.objective = VAPObjective(bin_times=model.bin_times, frame_hz=model.frame_hz)
        self.save_hyperparameters(ignore=["model"])

        self.val_vad_acc = Accuracy(task="binary")
        self.val_shift_f1 = F1Score(task="multiclass", num_classes=2, average="weighted")

    def forward(self, waveform: Tensor, *args, **kwargs) -> Dict[str, Tensor]:
        return self.model(waveform, *args, **kwargs)

    @staticmethod
    def load_model(path: str, *args, **kwargs) -> VAP:
        return VAPModule.load_from_checkpoint(path, *args, **kwargs).model

    def configure_optimizers(self) -> Dict:
        opt = torch.optim.AdamW(
            self.parameters(),
            lr=self.opt_conf.learning_rate,
            betas=self.opt_conf.betas,
            weight_decay=self.opt_conf.weight_decay,
        )
        lr_scheduler = {
            "scheduler": torch.optim.lr_scheduler.CosineAnnealingLR(
                optimizer=opt, T_max=self.opt_conf.lr_scheduler_tmax
            ),
            "interval": self.opt_conf.lr_scheduler_interval,
            "frequency": self.opt_conf.lr_scheduler_freq,
        }
        return {"optimizer": opt, "lr_scheduler": lr_scheduler}

    def metric_update(self, logits, vad, split: str = "val"):
        m = getattr(self, f"{split}_metric", None)
        if m:
            probs = self.objective.get_probs(logits)
            m.update_batch(probs, vad)

    def shared_step(self, batch: Batch, reduction: str = "mean") -> Dict[str, Tensor]:
        """
        Arguments:
            batch:      dict, containing 'waveform', va, va_history

        Returns:
            out:        dict, ['logits', 'vad', 'vap_loss', 'vad_loss']
        """
        labels = self.objective.get_labels(batch["vad"])
        out = self(batch["waveform"])
        out["vap_loss"] = self.objective.loss_vap(out["logits"], labels, reduction=reduction)
        out["vad_loss"] = self.objective.loss_vad(out["vad"], batch["vad"])
        return out

    def training_step(self, batch: Batch, *args, **kwargs):
        out = self.shared_step(batch)
        batch_size = batch["waveform"].shape[0]
        self.log("loss", out["vap_loss"], batch_size=batch_size, sync_dist=True)
        self.log("loss_va", out["vad_loss"], batch_size=batch_size, sync_dist=True)
        loss = out["vap_loss"] + out["vad_loss"]
        return {"loss": loss}

    def validation_step(self, batch: Batch, *args, **kwargs):
        """validation step"""

        # Regular Loss
        out = self.shared_step(batch)
        batch_size = batch["waveform"].shape[0]
        self.log("val_loss", out["vap_loss"], batch_size=batch_size, sync_dist=True)
        self.log("val_loss_va", out["vad_loss"], batch_size=batch_size, sync_dist=True)

        vad_frames = batch["vad"][:, : out["vad"].shape[1]]
        self.val_vad_acc.update(out["vad"].sigmoid().round(), vad_frames.round())
        self.log("val_vad_acc", self.val_vad_acc, batch_size=batch_size, sync_dist=True)

        # Event Metrics
        if self.event_conf is not None:
            self.metric_update(out["logits"], batch["vad"], split="val")

    def test_step(self, batch: Batch, *args, **kwargs):
        out = self.shared_step(batch)
        batch_size = batch["waveform"].shape[0]
        self.log("test_loss", out["vap_loss"], batch_size=batch_size, sync_dist=True)
        self.log("test_loss_va", out["vad_loss"], batch_size=batch_size, sync_dist=True)

    def on_train_epoch_end(self) -> None:
        if torch.cuda.is_available():
            mem = torch.cuda.max_memory_reserved() / 2**30
            self.log("gpu_mem_reserved_gb", mem, rank_zero_only=True)
            torch.cuda.reset_peak_memory_stats()


def load_vap_model(checkpoint: str, device: str = "cuda") -> VAP:
    """
    Load a trained VAP model either from a lightning checkpoint (.ckpt) or a plain
    state_dict (.pt) exported with `vap/utils/export.py`.
    """
    if checkpoint.endswith(".ckpt"):
        model = VAPModule.load_model(checkpoint, map_location=device)
    else:
        sd = torch.load(checkpoint, map_location=device)
        model = load_model_from_state_dict(sd)
    model = model.to(device)
    return model.eval()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", type=str, required=True)
    parser.add_argument("--out", type=str, default="example/VAP_state_dict.pt")
    args = parser.parse_args()

    model = load_vap_model(args.checkpoint, device="cpu")
    torch.save(model.state_dict(), args.out)
    print("Saved state dict -> ", args.out)
