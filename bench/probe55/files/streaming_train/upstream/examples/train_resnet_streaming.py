"""ResNet-50 on ImageNet MDS shards streamed from object storage with mosaicml-streaming.

    torchrun --nproc_per_node 8 examples/train_resnet_streaming.py --config yamls/resnet50_streaming.yaml

Shards are written once with `examples/convert_imagenet.py` (MDSWriter, columns {'x': 'jpeg', 'y': 'int'})
and uploaded to `remote`; every node keeps a local cache under `local` and StreamingDataset takes care
of the per-rank partitioning, so no DistributedSampler is used here.
"""
import argparse
import math
import os
import time
from typing import Any, Dict

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from streaming import StreamingDataLoader, StreamingDataset
from streaming.base.util import clean_stale_shared_memory
from torchvision import models
from torchvision.transforms import v2


class ImageNetStreaming(StreamingDataset):
    def __init__(self, *, transform, **kwargs):
        super().__init__(**kwargs)
        self.transform = transform

    def __getitem__(self, idx: int) -> Any:
        sample = super().__getitem__(idx)
        x = self.transform(sample["x"])  # PIL.Image decoded by the 'jpeg' MDS encoding
        return x, sample["y"]


def build_transforms(train: bool, size: int):
    if train:
        return v2.Compose([
            v2.PILToTensor(),
            v2.RandomResizedCrop(size, antialias=True),
            v2.RandomHorizontalFlip(),
        ])
    return v2.Compose([
        v2.PILToTensor(),
        v2.Resize(int(size / 0.875), antialias=True),
        v2.CenterCrop(size),
    ])


class GPUNormalize(nn.Module):
    """uint8 NCHW -> normalized float on the device; keeps the CPU workers light."""

    def __init__(self, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean).view(1, 3, 1, 1) * 255)
        self.register_buffer("std", torch.tensor(std).view(1, 3, 1, 1) * 255)

    def forward(self, x):
        return (x.float() - self.mean) / self.std


def make_loader(cfg: Dict[str, Any], split: str, batch_size: int) -> StreamingDataLoader:
    dcfg = cfg["data"]
    dataset = ImageNetStreaming(
        remote=os.path.join(dcfg["remote"], split),
        local=os.path.join(dcfg["local"], split),
        split=None,
        shuffle=(split == "train"),
        shuffle_algo=dcfg.get("shuffle_algo", "py1e"),
        shuffle_block_size=dcfg.get("shuffle_block_size", 262144),
        num_canonical_nodes=dcfg.get("num_canonical_nodes"),
        predownload=dcfg.get("predownload", 8 * batch_size),
        cache_limit=dcfg.get("cache_limit"),
        batch_size=batch_size,
        transform=build_transforms(split == "train", cfg["model"]["image_size"]),
    )
    return StreamingDataLoader(
        dataset,
        batch_size=batch_size,
        num_workers=dcfg["num_workers"],
        pin_memory=True,
        pin_memory_device=dcfg.get("pin_memory_device", ""),
        prefetch_factor=dcfg.get("prefetch_factor", 2),
        persistent_workers=True,
        drop_last=(split == "train"),
    )


def cosine_lr(step, total, base_lr, warmup):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * base_lr * (1 + math.cos(math.pi * progress))


def evaluate(model, normalize, loader, device, amp_dtype):
    model.eval()
    correct = torch.zeros((), device=device)
    count = torch.zeros((), device=device)
    with torch.no_grad():
        for x, y in loader:
            x = normalize(x.to(device, non_blocking=True))
            y = y.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=amp_dtype):
                logits = model(x)
            correct += (logits.argmax(1) == y).sum()
            count += y.numel()
    dist.all_reduce(correct)
    dist.all_reduce(count)
    model.train()
    return (correct / count).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    clean_stale_shared_memory()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend=cfg["dist_backend"])
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device(cfg["device"], local_rank)

    tcfg = cfg["train"]
    amp_dtype = getattr(torch, tcfg.get("amp_dtype", "float16"))
    model = models.__dict__[cfg["model"]["arch"]](num_classes=1000).to(device)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], gradient_as_bucket_view=True)
    if cfg.get("compile_mode"):
        model = torch.compile(model, mode=cfg["compile_mode"])
    normalize = GPUNormalize().to(device)

    train_loader = make_loader(cfg, "train", tcfg["batch_size"])
    val_loader = make_loader(cfg, "val", tcfg["eval_batch_size"])

    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (no_decay if p.ndim <= 1 else decay).append(p)
    optimizer = torch.optim.SGD(
        [{"params": decay, "weight_decay": tcfg["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}],
        lr=tcfg["lr"], momentum=0.9, nesterov=True)
    scaler = torch.amp.GradScaler("cuda", enabled=(amp_dtype == torch.float16))

    steps_per_epoch = len(train_loader)
    total_steps = tcfg["epochs"] * steps_per_epoch
    step = 0
    for epoch in range(tcfg["epochs"]):
        torch.cuda.reset_peak_memory_stats()
        t0 = time.time()
        seen = 0
        for x, y in train_loader:
            for g in optimizer.param_groups:
                g["lr"] = cosine_lr(step, total_steps, tcfg["lr"], tcfg["warmup_steps"])
            x = normalize(x.to(device, non_blocking=True))
            y = y.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=amp_dtype):  # train step
                loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            step += 1
            seen += x.size(0)
            if rank == 0 and step % tcfg["log_interval"] == 0:
                torch.cuda.synchronize()
                ips = seen * world / (time.time() - t0)
                print(f"ep {epoch} step {step}/{total_steps} loss {loss.item():.3f} {ips:.0f} img/s", flush=True)

        acc = evaluate(model, normalize, val_loader, device, amp_dtype)
        if rank == 0:
            peak = torch.cuda.max_memory_allocated(device) / 2**30
            print(f"epoch {epoch}: top1 {acc:.4f}  peak mem {peak:.1f} GiB  {time.time() - t0:.0f}s", flush=True)
            # the dataloader state makes mid-epoch resumption deterministic
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "loader": train_loader.state_dict(), "epoch": epoch},
                       os.path.join(tcfg["save_dir"], f"ep{epoch}.pt"))

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
