"""Train the handwriting synthesis network on IAM-OnDB strokes.

    python train.py --config configs/train.json
    python train.py --config configs/train.json --resume checkpoints/model_10.pt
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader

from model import HandwritingSynthesisNetwork, mdn_loss, one_hot, use_cuda
from utils.data import StrokesDataset, collate_strokes
from utils.plot import plot_attention, plot_stroke


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="configs/train.json")
    parser.add_argument("--resume", default=None)
    parser.add_argument("--data_dir", default="data")
    parser.add_argument("--out_dir", default="checkpoints")
    parser.add_argument("--multi_gpu", action="store_true", help="wrap the model in nn.DataParallel")
    parser.add_argument("--seed", type=int, default=212)
    return parser.parse_args()


def set_seed(seed):
    np.random.seed(seed)
    torch.cuda.manual_seed(seed)


def evaluate(model, loader, device, vocab_size):
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for strokes, lengths, chars, chars_mask, strokes_mask in loader:
            strokes = strokes.to(device)
            chars = one_hot(chars.to(device), vocab_size)
            chars_mask = chars_mask.to(device)
            strokes_mask = strokes_mask.to(device)
            inputs = strokes[:, :-1]
            targets = strokes[:, 1:]
            params, _, _ = model(inputs, chars, chars_mask)
            loss = mdn_loss(params, targets, strokes_mask[:, 1:])
            total += loss.item() * strokes.size(0)
            n += strokes.size(0)
    model.train()
    return total / max(n, 1)


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = json.load(f)
    set_seed(args.seed)
    torch.backends.cudnn.enabled = cfg.get("cudnn", True)

    device = torch.device(cfg.get("device", "cuda:0") if use_cuda else "cpu")
    print("training on", device, "| cuda available:", use_cuda)

    train_set = StrokesDataset(args.data_dir, split="train", max_len=cfg["max_stroke_len"])
    valid_set = StrokesDataset(args.data_dir, split="valid", max_len=cfg["max_stroke_len"],
                               vocab=train_set.vocab)
    vocab_size = len(train_set.vocab)
    train_loader = DataLoader(train_set, batch_size=cfg["batch_size"], shuffle=True,
                              collate_fn=collate_strokes, num_workers=cfg.get("num_workers", 4),
                              pin_memory=use_cuda, drop_last=True)
    valid_loader = DataLoader(valid_set, batch_size=cfg["batch_size"], shuffle=False,
                              collate_fn=collate_strokes, num_workers=2)

    model = HandwritingSynthesisNetwork(vocab_size, hidden_size=cfg["hidden_size"],
                                        num_window_mixtures=cfg["window_mixtures"],
                                        num_output_mixtures=cfg["output_mixtures"],
                                        dropout=cfg.get("dropout", 0.0))
    if use_cuda:
        model = model.cuda()
    if args.multi_gpu and torch.cuda.device_count() > 1:
        print("Using", torch.cuda.device_count(), "GPUs")
        model = nn.DataParallel(model)

    optimizer = optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=cfg["lr_step"], gamma=cfg["lr_gamma"])

    start_epoch = 0
    best_valid = float("inf")
    if args.resume:
        state = torch.load(args.resume, map_location=device)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_epoch = state["epoch"] + 1
        best_valid = state.get("best_valid", best_valid)
        print("resumed from", args.resume, "epoch", start_epoch)

    os.makedirs(args.out_dir, exist_ok=True)
    step = 0
    for epoch in range(start_epoch, cfg["epochs"]):
        t0 = time.time()
        running = 0.0
        for strokes, lengths, chars, chars_mask, strokes_mask in train_loader:
            if use_cuda:
                strokes = strokes.cuda(non_blocking=True)
                chars = chars.cuda(non_blocking=True)
                chars_mask = chars_mask.cuda(non_blocking=True)
                strokes_mask = strokes_mask.cuda(non_blocking=True)
            chars = one_hot(chars, vocab_size)
            inputs = strokes[:, :-1]
            targets = strokes[:, 1:]

            optimizer.zero_grad()
            params, _, phis = model(inputs, chars, chars_mask, stroke_lengths=lengths - 1)
            loss = mdn_loss(params, targets, strokes_mask[:, 1:])
            loss.backward()
            # Graves clips the LSTM derivatives to [-10, 10] and the output ones to [-100, 100]
            nn.utils.clip_grad_value_(model.parameters(), cfg.get("grad_clip", 10.0))
            optimizer.step()

            running += loss.item()
            step += 1
            if step % cfg["log_every"] == 0:
                print("epoch {} step {} loss {:.4f} ({:.1f} s)".format(
                    epoch, step, running / cfg["log_every"], time.time() - t0))
                running = 0.0
            if step % cfg["plot_every"] == 0:
                plot_attention(phis[0].detach().cpu().numpy(), os.path.join(args.out_dir, "attn_%d.png" % step))

        scheduler.step()
        valid_loss = evaluate(model, valid_loader, device, vocab_size)
        print("epoch {} valid loss {:.4f}".format(epoch, valid_loss))

        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch,
                 "best_valid": best_valid, "vocab": train_set.vocab, "config": cfg}
        torch.save(state, os.path.join(args.out_dir, "model_%d.pt" % epoch))
        if valid_loss < best_valid:
            best_valid = valid_loss
            state["best_valid"] = best_valid
            torch.save(state, os.path.join(args.out_dir, "best_model.pt"))
        if use_cuda:
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
