"""Train an EnCodec-style codec with adversarial + reconstruction losses.

    torchrun --nproc_per_node 8 -m encodec_train.train --config configs/encodec_24khz.yaml
"""
import argparse
import logging
import os
import time
from pathlib import Path

import torch
import torch.nn.functional as F
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP

from encodec import distrib
from encodec.balancer import Balancer
from encodec.model import EncodecModel
from encodec.msstftd import MultiScaleSTFTDiscriminator
from .data import build_loader, CUDAPrefetcher
from .losses import mel_loss, feature_matching_loss, hinge_disc_loss, hinge_gen_loss

logger = logging.getLogger("encodec_train")

try:
    from apex.optimizers import FusedAdam
    HAVE_APEX = True
except ImportError:
    HAVE_APEX = False


class Config(dict):
    __getattr__ = dict.__getitem__

    @classmethod
    def load(cls, path):
        with open(path) as f:
            raw = yaml.safe_load(f)
        def wrap(x):
            return cls({k: wrap(v) for k, v in x.items()}) if isinstance(x, dict) else x
        return wrap(raw)


def get_device(cfg) -> torch.device:
    if cfg.device == "cuda" and torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    return torch.device("cpu")


def make_optimizer(params, cfg):
    if cfg.optim.fused and HAVE_APEX:
        return FusedAdam(params, lr=cfg.optim.lr, betas=tuple(cfg.optim.betas))
    return torch.optim.Adam(params, lr=cfg.optim.lr, betas=tuple(cfg.optim.betas),
                            fused=torch.cuda.is_available())


def save_checkpoint(path: Path, model, disc, opt_g, opt_d, scaler, epoch: int):
    if distrib.rank() != 0:
        return
    state = {
        "model": model.state_dict(),
        "disc": disc.state_dict(),
        "opt_g": opt_g.state_dict(),
        "opt_d": opt_d.state_dict(),
        "scaler": scaler.state_dict(),
        "epoch": epoch,
    }
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.rename(path)


def train(cfg):
    distrib.init()
    device = get_device(cfg)
    torch.manual_seed(cfg.seed + distrib.rank())
    torch.backends.cudnn.benchmark = True

    model = EncodecModel._get_model(cfg.target_bandwidths, cfg.sample_rate, cfg.channels,
                                    causal=cfg.causal, model_norm=cfg.norm).to(device)
    disc = MultiScaleSTFTDiscriminator(filters=32).to(device)
    distrib.broadcast_tensors(model.parameters())
    if distrib.is_distributed():
        model = DDP(model, device_ids=[device.index], broadcast_buffers=False)
        disc = DDP(disc, device_ids=[device.index])
    raw_model = model.module if hasattr(model, "module") else model

    opt_g = make_optimizer(model.parameters(), cfg)
    opt_d = make_optimizer(disc.parameters(), cfg)
    use_amp = cfg.amp and device.type == "cuda"
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    balancer = Balancer(dict(cfg.loss_weights), rescale_grads=True, total_norm=1.0)

    loader = build_loader(cfg, "train")
    start_epoch = 0
    ckpt = Path(cfg.checkpoint)
    if ckpt.exists():
        state = torch.load(ckpt, map_location=device)
        raw_model.load_state_dict(state["model"])
        disc.load_state_dict(state["disc"])
        opt_g.load_state_dict(state["opt_g"])
        opt_d.load_state_dict(state["opt_d"])
        scaler.load_state_dict(state["scaler"])
        start_epoch = state["epoch"] + 1
        logger.info("Resumed from %s (epoch %d)", ckpt, start_epoch)

    for epoch in range(start_epoch, cfg.epochs):
        if hasattr(loader.sampler, "set_epoch"):
            loader.sampler.set_epoch(epoch)
        batches = CUDAPrefetcher(loader, device) if device.type == "cuda" else loader
        t0 = time.time()
        for step, wav in enumerate(batches):
            wav = wav.to(device, non_blocking=True)
            bw = cfg.target_bandwidths[step % len(cfg.target_bandwidths)]
            raw_model.set_target_bandwidth(bw)

            with torch.cuda.amp.autocast(enabled=use_amp):  # codec forward
                frames = raw_model.encode(wav)
                recon = raw_model.decode(frames)[..., :wav.shape[-1]]

            # discriminator
            if step % cfg.disc_every == 0:
                with torch.cuda.amp.autocast(enabled=use_amp):  # discriminator step
                    real_logits, _ = disc(wav)
                    fake_logits, _ = disc(recon.detach())
                    d_loss = hinge_disc_loss(real_logits, fake_logits)
                opt_d.zero_grad(set_to_none=True)
                scaler.scale(d_loss).backward()
                scaler.step(opt_d)

            # generator
            with torch.cuda.amp.autocast(enabled=use_amp):  # generator losses
                real_logits, real_feats = disc(wav)
                fake_logits, fake_feats = disc(recon)
                losses = {
                    "l1": F.l1_loss(recon, wav),
                    "mel": mel_loss(recon, wav, cfg.sample_rate),
                    "adv": hinge_gen_loss(fake_logits),
                    "feat": feature_matching_loss(real_feats, fake_feats),
                }
            opt_g.zero_grad(set_to_none=True)
            balancer.backward(losses, recon)
            scaler.step(opt_g)
            scaler.update()

            if step % cfg.log_every == 0 and distrib.rank() == 0:
                mem = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else 0.0
                metrics = {k: v.item() for k, v in losses.items()}
                metrics = distrib.average_metrics(metrics)
                logger.info("epoch %d step %d bw %.1f %s | %.2fs/it | %.1f GiB",
                            epoch, step, bw, " ".join(f"{k}={v:.4f}" for k, v in metrics.items()),
                            (time.time() - t0) / (step + 1), mem)
        save_checkpoint(ckpt, raw_model, disc, opt_g, opt_d, scaler, epoch)
        distrib.barrier()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--device", default=None, help="override cfg.device (cuda / cpu)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    cfg = Config.load(args.config)
    if args.device:
        cfg["device"] = args.device
    train(cfg)


if __name__ == "__main__":
    main()
