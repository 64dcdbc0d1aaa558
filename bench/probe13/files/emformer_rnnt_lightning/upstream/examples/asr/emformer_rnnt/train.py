"""Train an Emformer RNN-T on LibriSpeech with PyTorch Lightning (torchaudio recipe style).

    python train.py --exp-dir ./exp --librispeech-path /data/librispeech --global-stats-path global_stats.json \
        --sp-model-path spm_bpe_4096.model --nodes 1 --gpus 8 --epochs 120
"""
import logging
import pathlib
from argparse import ArgumentParser

import sentencepiece as spm
import torch
import torchaudio
from lightning.pytorch import LightningModule, Trainer, seed_everything
from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.strategies import DDPStrategy
from torchaudio.models import emformer_rnnt_base, Hypothesis, RNNTBeamSearch

from data_module import LibriSpeechDataModule
from transforms import TrainTransform, ValTransform


class WarmupLR(torch.optim.lr_scheduler._LRScheduler):
    def __init__(self, optimizer, warmup_updates, last_epoch=-1, verbose=False):
        self.warmup_updates = warmup_updates
        super().__init__(optimizer, last_epoch=last_epoch, verbose=verbose)

    def get_lr(self):
        return [(min(1.0, self._step_count / self.warmup_updates)) * base_lr for base_lr in self.base_lrs]


class ConformerRNNTModule(LightningModule):
    def __init__(self, sp_model):
        super().__init__()
        self.sp_model = sp_model
        spm_vocab_size = self.sp_model.get_piece_size()
        self.blank_idx = spm_vocab_size
        self.model = emformer_rnnt_base(num_symbols=spm_vocab_size + 1)
        self.loss = torchaudio.transforms.RNNTLoss(reduction="sum", clamp=1.0)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=5e-4, betas=(0.9, 0.999), eps=1e-8)
        self.warmup_lr_scheduler = WarmupLR(self.optimizer, 10000)

    def _step(self, batch, _, step_type):
        if batch is None:
            return None
        prepended_targets = batch.targets.new_empty([batch.targets.size(0), batch.targets.size(1) + 1])
        prepended_targets[:, 1:] = batch.targets
        prepended_targets[:, 0] = self.blank_idx
        prepended_target_lengths = batch.target_lengths + 1
        output, src_lengths, _, _ = self.model(
            batch.features,
            batch.feature_lengths,
            prepended_targets,
            prepended_target_lengths,
        )
        loss = self.loss(output, batch.targets, src_lengths, batch.target_lengths)
        self.log(f"Losses/{step_type}_loss", loss, on_step=True, on_epoch=True)
        return loss

    def configure_optimizers(self):
        return ([self.optimizer], [{"scheduler": self.warmup_lr_scheduler, "interval": "step"}])

    def forward(self, batch):
        decoder = RNNTBeamSearch(self.model, self.blank_idx)
        hypotheses = decoder(batch.features.to(self.device), batch.feature_lengths.to(self.device), 20)
        return self.sp_model.decode([h[0] for h in hypotheses[0][0][:-1]])

    def training_step(self, batch, batch_idx):
        loss = self._step(batch, batch_idx, "train")
        batch_size = batch.features.size(0)
        batch_sizes = self.all_gather(batch_size)
        self.log("Gathered batch size", batch_sizes.sum(), on_step=True, on_epoch=True)
        loss *= batch_sizes.size(0) / batch_sizes.sum()  # world size / batch size
        return loss

    def validation_step(self, batch, batch_idx):
        return self._step(batch, batch_idx, "val")


def run_train(args):
    seed_everything(1)
    checkpoint_dir = args.exp_dir / "checkpoints"
    checkpoint = ModelCheckpoint(checkpoint_dir, monitor="Losses/val_loss", mode="min", save_top_k=5, save_weights_only=False, verbose=True)
    callbacks = [checkpoint, LearningRateMonitor(logging_interval="step")]
    trainer = Trainer(
        default_root_dir=args.exp_dir,
        max_epochs=args.epochs,
        num_nodes=args.nodes,
        devices=args.gpus,
        accelerator="gpu",
        strategy=DDPStrategy(find_unused_parameters=False, process_group_backend="nccl"),
        precision="16-mixed",
        callbacks=callbacks,
        reload_dataloaders_every_n_epochs=1,
        gradient_clip_val=10.0,
    )

    sp_model = spm.SentencePieceProcessor(model_file=str(args.sp_model_path))
    model = ConformerRNNTModule(sp_model)
    data_module = LibriSpeechDataModule(
        librispeech_path=str(args.librispeech_path),
        train_transform=TrainTransform(global_stats_path=str(args.global_stats_path), sp_model_path=str(args.sp_model_path)),
        val_transform=ValTransform(global_stats_path=str(args.global_stats_path), sp_model_path=str(args.sp_model_path)),
        max_tokens=1000,
        batch_size=16,
    )
    trainer.fit(model, data_module, ckpt_path=args.checkpoint_path)


def cli_main():
    parser = ArgumentParser()
    parser.add_argument("--checkpoint-path", default=None, type=pathlib.Path)
    parser.add_argument("--exp-dir", default=pathlib.Path("./exp"), type=pathlib.Path)
    parser.add_argument("--global-stats-path", default=pathlib.Path("global_stats.json"), type=pathlib.Path)
    parser.add_argument("--librispeech-path", type=pathlib.Path, required=True)
    parser.add_argument("--sp-model-path", type=pathlib.Path, required=True)
    parser.add_argument("--nodes", default=4, type=int, help="Number of nodes to use for training.")
    parser.add_argument("--gpus", default=8, type=int, help="Number of GPUs per node to use for training.")
    parser.add_argument("--epochs", default=120, type=int)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    run_train(args)


if __name__ == "__main__":
    cli_main()
