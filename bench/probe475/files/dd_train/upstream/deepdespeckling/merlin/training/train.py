"""Self-supervised training of MERLIN on a stack of SLC acquisitions.

    python train.py --train_dir ./data/train --eval_dir ./data/eval \
        --epochs 30 --batch_size 12 --patch_size 256 --lr 1e-3

Each training sample is a pair (real part, imaginary part) of the same SLC
patch.  The network sees one of them and the loss is the Rayleigh negative
log-likelihood of the other one.
"""
import argparse
import logging
import os
import random
import time

import numpy as np
import torch
from torch.utils.data import DataLoader

from deepdespeckling.model import Model
from deepdespeckling.merlin.training.GenerateDataset import GenerateDataset
from deepdespeckling.merlin.training.training_utils import (SLCPatchDataset, EpochTimer,
                                                            evaluate_on_folder, merlin_loss,
                                                            robust_log_bounds)

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
logger = logging.getLogger("merlin.train")


def parse_args():
    parser = argparse.ArgumentParser(description="MERLIN self-supervised despeckling")
    parser.add_argument("--train_dir", type=str, default="./data/train")
    parser.add_argument("--eval_dir", type=str, default="./data/eval")
    parser.add_argument("--save_dir", type=str, default="./checkpoints")
    parser.add_argument("--sample_dir", type=str, default="./samples")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch_size", type=int, default=12)
    parser.add_argument("--patch_size", type=int, default=256)
    parser.add_argument("--stride_size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--lr_decay_epoch", type=int, default=10)
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--real_to_imag", action="store_true",
                        help="predict the imaginary part from the real part (default: random)")
    parser.add_argument("--resume", type=str, default="")
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def save_checkpoint(model, optimizer, epoch, save_dir):
    os.makedirs(save_dir, exist_ok=True)
    path = os.path.join(save_dir, f"model_epoch_{epoch:03d}.pth")
    torch.save({"epoch": epoch,
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict()}, path)
    torch.save(model.state_dict(), os.path.join(save_dir, "model.pth"))
    logger.info("saved %s", path)


def main():
    args = parse_args()
    set_seed(args.seed)

    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    logger.info("training on %s", device)

    generator = GenerateDataset()
    train_patches = generator.generate_patches(src_dir=args.train_dir, pat_size=args.patch_size,
                                               step=0, stride=args.stride_size, bat_size=args.batch_size)
    log_min, log_max = robust_log_bounds(train_patches)
    logger.info("log-amplitude bounds for normalisation: m=%.3f M=%.3f", log_min, log_max)

    dataset = SLCPatchDataset(train_patches, log_min, log_max, real_to_imag=args.real_to_imag)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, drop_last=True,
                        num_workers=args.num_workers,
                        pin_memory=torch.cuda.is_available())

    model = Model(device, height=args.patch_size, width=args.patch_size).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=args.lr_decay_epoch, gamma=0.1)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=device)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_epoch = ckpt["epoch"] + 1
        logger.info("resumed from %s (epoch %d)", args.resume, start_epoch)

    timer = EpochTimer()
    for epoch in range(start_epoch, args.epochs):
        model.train()
        timer.start()
        running = 0.0
        for it, (inp, target) in enumerate(loader):
            inp = inp.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)

            optimizer.zero_grad(set_to_none=True)
            pred = model(inp)
            loss = merlin_loss(pred, target, log_min, log_max)
            loss.backward()
            optimizer.step()

            running += loss.item()
            if it % 50 == 0:
                logger.info("epoch %d it %d loss %.5f", epoch, it, loss.item())

        scheduler.step()
        elapsed = timer.stop()
        logger.info("epoch %d done: mean loss %.5f, %.1fs", epoch, running / max(1, len(loader)), elapsed)

        model.eval()
        evaluate_on_folder(model, args.eval_dir, args.sample_dir, epoch, device,
                           log_min, log_max, patch_size=args.patch_size)
        save_checkpoint(model, optimizer, epoch, args.save_dir)

    logger.info("finished after %d epochs", args.epochs)


if __name__ == "__main__":
    t0 = time.time()
    main()
    logger.info("total time %.1f min", (time.time() - t0) / 60)
