"""
Dimensional + categorical SER on MSP-Podcast with a wav2vec2-large encoder.

Multi-task head (arousal / valence / dominance CCC + 8-way categorical CE),
trained with NVIDIA apex mixed precision and FusedAdam, one process per GPU:

    python -m torch.distributed.launch --nproc_per_node=8 msp_podcast/train_ser_apex.py \
        --data /data/MSP-PODCAST-1.11 --opt-level O1 --batch-size 16
"""
import argparse
import json
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

try:
    from apex import amp
    from apex.optimizers import FusedAdam
    from apex.parallel import convert_syncbn_model
except ImportError:
    raise ImportError("Please install apex from https://www.github.com/nvidia/apex to run this example.")

from msp_data import MSPPodcastDataset, collate_wavs
from models import Wav2Vec2MultiTask, ccc_loss

EMOTIONS = ["A", "S", "H", "U", "F", "D", "C", "N"]


def parse():
    parser = argparse.ArgumentParser(description="MSP-Podcast SER training (apex)")
    parser.add_argument("--data", required=True)
    parser.add_argument("--ssl", default="facebook/wav2vec2-large-robust")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=16, help="per GPU")
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--head-lr", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=1e-2)
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--opt-level", type=str, default="O1")
    parser.add_argument("--keep-batchnorm-fp32", type=str, default=None)
    parser.add_argument("--loss-scale", type=str, default="dynamic")
    parser.add_argument("--sync_bn", action="store_true")
    parser.add_argument("--local_rank", default=int(os.environ.get("LOCAL_RANK", 0)), type=int)
    parser.add_argument("--out", default="exp/msp_w2v2_large")
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args()


class data_prefetcher:
    """Overlaps host->device copies of the next batch with compute on a side stream."""

    def __init__(self, loader):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.preload()

    def preload(self):
        try:
            self.next_wav, self.next_mask, self.next_dim, self.next_cat = next(self.loader)
        except StopIteration:
            self.next_wav = None
            return
        with torch.cuda.stream(self.stream):
            self.next_wav = self.next_wav.cuda(non_blocking=True)
            self.next_mask = self.next_mask.cuda(non_blocking=True)
            self.next_dim = self.next_dim.cuda(non_blocking=True).float()
            self.next_cat = self.next_cat.cuda(non_blocking=True)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        wav, mask, dim, cat = self.next_wav, self.next_mask, self.next_dim, self.next_cat
        if wav is not None:
            wav.record_stream(torch.cuda.current_stream())
            mask.record_stream(torch.cuda.current_stream())
            dim.record_stream(torch.cuda.current_stream())
            cat.record_stream(torch.cuda.current_stream())
        self.preload()
        return wav, mask, dim, cat


def reduce_tensor(tensor, world_size):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= world_size
    return rt


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train_epoch(args, loader, model, optimizer, epoch, cat_weights):
    model.train()
    prefetcher = data_prefetcher(loader)
    wav, mask, dim, cat = prefetcher.next()
    step, t0 = 0, time.time()
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    start_evt.record()
    while wav is not None:
        arousal, valence, dominance, logits = model(wav, mask)
        loss_dim = ccc_loss(arousal, dim[:, 0]) + ccc_loss(valence, dim[:, 1]) + ccc_loss(dominance, dim[:, 2])
        loss_cat = F.cross_entropy(logits, cat, weight=cat_weights)
        loss = loss_dim + 0.5 * loss_cat

        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        optimizer.step()

        if step % 50 == 0:
            end_evt.record()
            torch.cuda.synchronize()
            ms = start_evt.elapsed_time(end_evt) / 50
            reduced = reduce_tensor(loss.data, args.world_size) if args.distributed else loss.data
            if args.local_rank == 0:
                print(f"epoch {epoch} step {step}: loss {reduced.item():.4f} ({ms:.0f} ms/it, "
                      f"{torch.cuda.max_memory_allocated() / 2**30:.1f} GiB)")
            start_evt.record()
        step += 1
        wav, mask, dim, cat = prefetcher.next()
    return step


@torch.no_grad()
def validate(args, loader, model):
    model.eval()
    preds, golds, cats, cat_gold = [], [], [], []
    for wav, mask, dim, cat in loader:
        wav, mask = wav.cuda(non_blocking=True), mask.cuda(non_blocking=True)
        a, v, d, logits = model(wav, mask)
        preds.append(torch.stack([a, v, d], dim=-1).float().cpu())
        golds.append(dim.float())
        cats.append(logits.argmax(-1).cpu())
        cat_gold.append(cat)
    preds, golds = torch.cat(preds), torch.cat(golds)
    ccc = [1 - ccc_loss(preds[:, i], golds[:, i]).item() for i in range(3)]
    acc = (torch.cat(cats) == torch.cat(cat_gold)).float().mean().item()
    return {"ccc_aro": ccc[0], "ccc_val": ccc[1], "ccc_dom": ccc[2], "cat_acc": acc}


def main():
    args = parse()
    set_seed(args.seed)
    torch.backends.cudnn.benchmark = True

    args.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    args.gpu = 0
    args.world_size = 1
    if args.distributed:
        args.gpu = args.local_rank
        torch.cuda.set_device(args.gpu)
        dist.init_process_group(backend="nccl", init_method="env://")
        args.world_size = dist.get_world_size()

    assert torch.backends.cudnn.enabled, "Amp requires cudnn backend to be enabled."

    model = Wav2Vec2MultiTask(args.ssl, num_classes=len(EMOTIONS))
    if args.sync_bn:
        model = convert_syncbn_model(model)
    model = model.cuda()

    head_params = [p for n, p in model.named_parameters() if not n.startswith("ssl.")]
    ssl_params = [p for n, p in model.named_parameters() if n.startswith("ssl.") and p.requires_grad]
    optimizer = FusedAdam(
        [{"params": ssl_params, "lr": args.lr}, {"params": head_params, "lr": args.head_lr}],
        weight_decay=args.weight_decay,
        adam_w_mode=True,
    )

    model, optimizer = amp.initialize(
        model,
        optimizer,
        opt_level=args.opt_level,
        keep_batchnorm_fp32=args.keep_batchnorm_fp32,
        loss_scale=args.loss_scale,
    )

    if args.distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu], find_unused_parameters=True)

    train_set = MSPPodcastDataset(args.data, split="Train", max_sec=12.0)
    dev_set = MSPPodcastDataset(args.data, split="Development", max_sec=30.0)
    train_sampler = DistributedSampler(train_set) if args.distributed else None
    train_loader = DataLoader(
        train_set, batch_size=args.batch_size, shuffle=(train_sampler is None), sampler=train_sampler,
        num_workers=args.workers, pin_memory=True, collate_fn=collate_wavs, drop_last=True,
    )
    dev_loader = DataLoader(dev_set, batch_size=8, shuffle=False, num_workers=args.workers,
                            pin_memory=True, collate_fn=collate_wavs)

    counts = np.bincount(train_set.cat_labels, minlength=len(EMOTIONS)).astype(np.float32)
    cat_weights = torch.from_numpy(counts.sum() / (len(counts) * np.maximum(counts, 1))).cuda()

    os.makedirs(args.out, exist_ok=True)
    best = -1.0
    for epoch in range(args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        train_epoch(args, train_loader, model, optimizer, epoch, cat_weights)
        if args.local_rank == 0:
            metrics = validate(args, dev_loader, model)
            print(json.dumps({"epoch": epoch, **metrics}))
            score = (metrics["ccc_aro"] + metrics["ccc_val"] + metrics["ccc_dom"]) / 3
            if score > best:
                best = score
                state = model.module.state_dict() if args.distributed else model.state_dict()
                torch.save({"model": state, "amp": amp.state_dict(), "epoch": epoch, "metrics": metrics},
                           os.path.join(args.out, "best.pt"))
        if args.distributed:
            dist.barrier()


if __name__ == "__main__":
    main()
