""" HiFi-GAN+ training script

This script trains the HiFi-GAN+ bandwidth extension model on VCTK with
additive DNS-challenge noise. Checkpoints are written every `--ckpt_every`
steps and the full run is logged to Weights & Biases.
"""

import argparse
import itertools
import typing as T
from pathlib import Path

import numpy as np
import torch
import torchaudio
import wandb
from tqdm import tqdm

from hifi_gan_bwe import criteria, datasets, metrics, models

SAMPLE_RATE = datasets.SAMPLE_RATE


def main() -> None:
    parser = argparse.ArgumentParser("HiFi-GAN+ Bandwidth Extension Trainer")
    parser.add_argument("name", help="training run name")
    parser.add_argument(
        "--vctk_path",
        type=Path,
        default="./data/vctk/VCTK-Corpus-0.92",
        help="path to the VCTK speech dataset",
    )
    parser.add_argument(
        "--noise_path",
        type=Path,
        default="./data/dns/datasets/noise",
        help="path to the DNS challenge noise dataset",
    )
    parser.add_argument(
        "--log_path", type=Path, default="logs", help="training log root path"
    )
    parser.add_argument(
        "--ckpt_path", type=Path, default="ckpt", help="checkpoint root path"
    )
    parser.add_argument("--gpu", type=int, default=0, help="CUDA device index")
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--amp", action="store_true", help="mixed precision (fp16)")
    parser.add_argument("--gen_steps", type=int, default=250_000)
    parser.add_argument("--adv_steps", type=int, default=250_000)
    parser.add_argument("--ckpt_every", type=int, default=5000)
    parser.add_argument("--eval_every", type=int, default=1000)
    args = parser.parse_args()

    torch.backends.cudnn.benchmark = True
    torch.cuda.set_device(args.gpu)
    device = torch.device(f"cuda:{args.gpu}")

    Trainer(
        name=args.name,
        vctk_path=args.vctk_path,
        noise_path=args.noise_path,
        log_path=args.log_path / args.name,
        ckpt_path=args.ckpt_path / args.name,
        device=device,
        batch_size=args.batch_size,
        workers=args.workers,
        amp=args.amp,
        gen_steps=args.gen_steps,
        adv_steps=args.adv_steps,
        ckpt_every=args.ckpt_every,
        eval_every=args.eval_every,
    ).train()


class Trainer:
    def __init__(
        self,
        name: str,
        vctk_path: Path,
        noise_path: Path,
        log_path: Path,
        ckpt_path: Path,
        device: torch.device,
        batch_size: int,
        workers: int,
        amp: bool,
        gen_steps: int,
        adv_steps: int,
        ckpt_every: int,
        eval_every: int,
    ):
        self.name = name
        self.device = device
        self.amp = amp
        self.gen_steps = gen_steps
        self.adv_steps = adv_steps
        self.ckpt_every = ckpt_every
        self.eval_every = eval_every
        self.log_path = log_path
        self.ckpt_path = ckpt_path
        self.ckpt_path.mkdir(parents=True, exist_ok=True)

        # datasets
        noise_set = datasets.DNSDataset(noise_path)
        train_set, valid_set = datasets.VCTKDataset.split(vctk_path)
        self.train_loader = torch.utils.data.DataLoader(
            datasets.BWEDataset(train_set, noise_set, train=True),
            batch_size=batch_size,
            shuffle=True,
            num_workers=workers,
            pin_memory=True,
            persistent_workers=True,
            drop_last=True,
        )
        self.valid_loader = torch.utils.data.DataLoader(
            datasets.BWEDataset(valid_set, noise_set, train=False),
            batch_size=1,
            shuffle=False,
            num_workers=2,
        )

        # models
        self.gen_model = models.BandwidthExtender().to(device)
        self.disc_model = models.Discriminator().to(device)
        self.gen_optim = torch.optim.AdamW(self.gen_model.parameters(), lr=1e-4, betas=(0.8, 0.99))
        self.disc_optim = torch.optim.AdamW(self.disc_model.parameters(), lr=1e-4, betas=(0.8, 0.99))
        self.gen_scaler = torch.cuda.amp.GradScaler(enabled=amp)
        self.disc_scaler = torch.cuda.amp.GradScaler(enabled=amp)

        # losses
        self.mel_loss = criteria.MelLoss(SAMPLE_RATE).to(device)
        self.stft_loss = criteria.MultiResolutionSTFTLoss().to(device)

        self.step = 0
        self._load_checkpoint()

    def _load_checkpoint(self) -> None:
        ckpts = sorted(self.ckpt_path.glob("*.pt"))
        if not ckpts:
            return
        state = torch.load(ckpts[-1], map_location=self.device)
        self.gen_model.load_state_dict(state["gen_model"])
        self.disc_model.load_state_dict(state["disc_model"])
        self.gen_optim.load_state_dict(state["gen_optim"])
        self.disc_optim.load_state_dict(state["disc_optim"])
        self.gen_scaler.load_state_dict(state["gen_scaler"])
        self.disc_scaler.load_state_dict(state["disc_scaler"])
        self.step = state["step"]
        print(f"resumed from {ckpts[-1]} at step {self.step}")

    def _save_checkpoint(self) -> None:
        torch.save(
            dict(
                gen_model=self.gen_model.state_dict(),
                disc_model=self.disc_model.state_dict(),
                gen_optim=self.gen_optim.state_dict(),
                disc_optim=self.disc_optim.state_dict(),
                gen_scaler=self.gen_scaler.state_dict(),
                disc_scaler=self.disc_scaler.state_dict(),
                step=self.step,
            ),
            self.ckpt_path / f"{self.step:08d}.pt",
        )
        # also export a generator-only file for synthesis
        self.gen_model.save(self.ckpt_path / "model.pt")

    def train(self) -> None:
        wandb.init(project="hifi-gan-bwe", name=self.name, dir=str(self.log_path), resume="allow")
        total = self.gen_steps + self.adv_steps
        batches = itertools.cycle(self.train_loader)
        with tqdm(total=total, initial=self.step) as pbar:
            while self.step < total:
                x, y, r = next(batches)
                x = x.to(self.device, non_blocking=True)
                y = y.to(self.device, non_blocking=True)
                adversarial = self.step >= self.gen_steps
                losses = self.train_step(x, y, r, adversarial)
                self.step += 1
                pbar.update()

                if self.step % 100 == 0:
                    losses["gpu_mem_gb"] = torch.cuda.memory_allocated(self.device) / 2**30
                    wandb.log(losses, step=self.step)
                if self.step % self.eval_every == 0:
                    wandb.log(self.evaluate(), step=self.step)
                if self.step % self.ckpt_every == 0:
                    self._save_checkpoint()

    def train_step(self, x: torch.Tensor, y: torch.Tensor, r: T.Any, adversarial: bool) -> dict:
        self.gen_model.train()
        losses = {}

        # discriminator update
        if adversarial:
            with torch.autocast("cuda", enabled=self.amp):
                y_hat = self.gen_model(x, r).detach()
                real, _ = self.disc_model(y)
                fake, _ = self.disc_model(y_hat)
                disc_loss = criteria.discriminator_loss(real, fake)
            self.disc_optim.zero_grad(set_to_none=True)
            self.disc_scaler.scale(disc_loss).backward()
            self.disc_scaler.unscale_(self.disc_optim)
            torch.nn.utils.clip_grad_norm_(self.disc_model.parameters(), 10.0)
            self.disc_scaler.step(self.disc_optim)
            self.disc_scaler.update()
            losses["disc_loss"] = disc_loss.item()

        # generator update
        with torch.cuda.amp.autocast(enabled=self.amp):
            y_hat = self.gen_model(x, r)
            mel_loss = self.mel_loss(y_hat, y)
            sc_loss, mag_loss = self.stft_loss(y_hat.squeeze(1), y.squeeze(1))
            gen_loss = 45 * mel_loss + sc_loss + mag_loss
            if adversarial:
                _, fmap_real = self.disc_model(y)
                fake, fmap_fake = self.disc_model(y_hat)
                adv_loss = criteria.generator_loss(fake)
                fm_loss = criteria.feature_loss(fmap_real, fmap_fake)
                gen_loss = gen_loss + adv_loss + 2 * fm_loss
                losses["adv_loss"] = adv_loss.item()
                losses["fm_loss"] = fm_loss.item()
        self.gen_optim.zero_grad(set_to_none=True)
        self.gen_scaler.scale(gen_loss).backward()
        self.gen_scaler.unscale_(self.gen_optim)
        torch.nn.utils.clip_grad_norm_(self.gen_model.parameters(), 10.0)
        self.gen_scaler.step(self.gen_optim)
        self.gen_scaler.update()

        losses.update(gen_loss=gen_loss.item(), mel_loss=mel_loss.item(),
                      sc_loss=sc_loss.item(), mag_loss=mag_loss.item())
        return losses

    @torch.no_grad()
    def evaluate(self) -> dict:
        self.gen_model.eval()
        scores = {"lsd": [], "snr": []}
        examples = []
        for i, (x, y, r) in enumerate(self.valid_loader):
            if i >= 64:
                break
            x = x.to(self.device)
            y = y.to(self.device)
            y_hat = self.gen_model(x, r)
            n = min(y.shape[-1], y_hat.shape[-1])
            y, y_hat = y[..., :n], y_hat[..., :n]
            scores["lsd"].append(metrics.lsd(y_hat, y).item())
            scores["snr"].append(metrics.snr(y_hat, y).item())
            if i < 4:
                examples.append(
                    wandb.Audio(y_hat.squeeze().float().cpu().numpy(), sample_rate=SAMPLE_RATE, caption=f"valid_{i}")
                )
        result = {f"valid/{k}": float(np.mean(v)) for k, v in scores.items()}
        result["valid/audio"] = examples
        return result


if __name__ == "__main__":
    main()
