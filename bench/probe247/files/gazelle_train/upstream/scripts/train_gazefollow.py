"""Train the Gaze-LLE decoder on GazeFollow (frozen DINOv2 backbone).

Single GPU:
    python scripts/train_gazefollow.py --config configs/gazefollow_vitb.yaml
Multi GPU (one process per GPU):
    torchrun --nproc_per_node 4 scripts/train_gazefollow.py --config configs/gazefollow_vitb.yaml
"""
import argparse
import os
import random
import time
from contextlib import nullcontext
from datetime import datetime

import numpy as np
import torch
import torch.distributed as dist
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm

from gazelle.dataloader import GazeDataset, collate_fn
from gazelle.model import get_gazelle_model
from gazelle.utils import gazefollow_auc, gazefollow_l2

try:
    import wandb
except ImportError:
    wandb = None


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default="configs/gazefollow_vitb.yaml")
    parser.add_argument("--exp_name", type=str, default=None)
    parser.add_argument("--resume", type=str, default=None)
    parser.add_argument("--no_wandb", action="store_true")
    return parser.parse_args()


def load_config(path, overrides):
    with open(path) as f:
        cfg = yaml.safe_load(f)
    for k, v in overrides.items():
        if v is not None:
            cfg[k] = v
    return cfg


def is_main():
    return not dist.is_initialized() or dist.get_rank() == 0


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_distributed(cfg):
    """Returns (device, local_rank, world_size)."""
    if "LOCAL_RANK" in os.environ:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend=cfg.get("dist_backend", "nccl"), init_method="env://")
        world_size = dist.get_world_size()
        device = torch.device("cuda", local_rank)
    else:
        local_rank, world_size = 0, 1
        device = torch.device(cfg.get("device", "cuda"))
    return device, local_rank, world_size


def pick_amp_dtype(cfg):
    if not cfg.get("amp", True):
        return None
    want = cfg.get("amp_dtype", "bfloat16")
    if want == "bfloat16":
        major, _ = torch.cuda.get_device_capability()
        if major < 8:
            # pre-Ampere cards have no bf16 tensor cores
            return torch.float16
        return torch.bfloat16
    return torch.float16


def reduce_sum(values, device):
    """Sum python floats across ranks (used for eval metrics)."""
    if not dist.is_initialized():
        return values
    on_device = dist.get_backend() == "nccl"
    t = torch.tensor(values, dtype=torch.float64, device=device if on_device else "cpu")
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.tolist()


@torch.no_grad()
def evaluate(model, eval_dl, device, amp_ctx):
    model.eval()
    sums = [0.0, 0.0, 0.0, 0.0]  # auc, min_l2, avg_l2, count
    for batch in tqdm(eval_dl, desc="eval", disable=not is_main()):
        imgs, bboxes, gazex, gazey, inout, heights, widths = batch
        with amp_ctx():
            preds = model({"images": imgs.to(device, non_blocking=True),
                           "bboxes": [[bbox] for bbox in bboxes]})
        heatmap_preds = torch.stack(preds["heatmap"]).squeeze(dim=1).float()
        for i in range(heatmap_preds.shape[0]):
            auc = gazefollow_auc(heatmap_preds[i], gazex[i], gazey[i], heights[i], widths[i])
            avg_l2, min_l2 = gazefollow_l2(heatmap_preds[i], gazex[i], gazey[i])
            sums[0] += auc
            sums[1] += min_l2
            sums[2] += avg_l2
            sums[3] += 1
    auc, min_l2, avg_l2, n = reduce_sum(sums, device)
    return auc / n, min_l2 / n, avg_l2 / n


def main():
    args = parse_args()
    cfg = load_config(args.config, {"exp_name": args.exp_name})
    device, local_rank, world_size = setup_distributed(cfg)
    seed_everything(cfg.get("seed", 0) + local_rank)

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    use_wandb = wandb is not None and not args.no_wandb and is_main()
    if use_wandb:
        wandb.init(project=cfg["wandb_project"], name=cfg["exp_name"], config=cfg)
    exp_dir = os.path.join(cfg["ckpt_save_dir"], cfg["exp_name"], datetime.now().strftime("%Y-%m-%d_%H-%M-%S"))
    if is_main():
        os.makedirs(exp_dir, exist_ok=True)

    model, transform = get_gazelle_model(cfg["model"])
    model.to(device)

    for param in model.backbone.parameters():  # freeze backbone
        param.requires_grad = False
    if is_main():
        print(f"Learnable parameters: {sum(p.numel() for p in model.parameters() if p.requires_grad)}")

    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)
    raw_model = model.module if isinstance(model, DDP) else model

    train_dataset = GazeDataset("gazefollow", cfg["data_path"], "train", transform)
    eval_dataset = GazeDataset("gazefollow", cfg["data_path"], "test", transform)
    train_sampler = DistributedSampler(train_dataset, shuffle=True) if world_size > 1 else None
    eval_sampler = DistributedSampler(eval_dataset, shuffle=False) if world_size > 1 else None
    train_dl = torch.utils.data.DataLoader(
        train_dataset, batch_size=cfg["batch_size"], shuffle=train_sampler is None, sampler=train_sampler,
        collate_fn=collate_fn, num_workers=cfg["n_workers"], pin_memory=cfg.get("pin_memory", True),
        persistent_workers=cfg["n_workers"] > 0, drop_last=True)
    eval_dl = torch.utils.data.DataLoader(
        eval_dataset, batch_size=cfg["batch_size"], shuffle=False, sampler=eval_sampler,
        collate_fn=collate_fn, num_workers=cfg["n_workers"], pin_memory=cfg.get("pin_memory", True))

    loss_fn = torch.nn.BCELoss()
    params = [p for p in raw_model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg["lr"], weight_decay=cfg.get("weight_decay", 0.0),
                                  fused=cfg.get("fused_adam", True))
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg["max_epochs"], eta_min=1e-7)

    amp_dtype = pick_amp_dtype(cfg)
    scaler = torch.cuda.amp.GradScaler(enabled=(amp_dtype == torch.float16))

    def amp_ctx():
        if amp_dtype is None:
            return nullcontext()
        return torch.autocast(device_type="cuda", dtype=amp_dtype)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        raw_model.load_gazelle_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        start_epoch = ckpt["epoch"] + 1

    best_min_l2 = 1.0
    best_epoch = None

    for epoch in range(start_epoch, cfg["max_epochs"]):
        # TRAIN EPOCH
        model.train()
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        t0 = time.time()
        for cur_iter, batch in enumerate(train_dl):
            imgs, bboxes, gazex, gazey, inout, heights, widths, heatmaps = batch

            optimizer.zero_grad(set_to_none=True)
            with amp_ctx():
                preds = model({"images": imgs.cuda(non_blocking=True), "bboxes": [[bbox] for bbox in bboxes]})
                heatmap_preds = torch.stack(preds["heatmap"]).squeeze(dim=1)
            # BCE is not autocast-safe, compute it in fp32
            loss = loss_fn(heatmap_preds.float(), heatmaps.cuda(non_blocking=True))
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

            if cur_iter % cfg["log_iter"] == 0 and is_main():
                mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
                if use_wandb:
                    wandb.log({"train/loss": loss.item(), "train/mem_gb": mem})
                print("TRAIN EPOCH {}, iter {}/{}, loss={:.4f}, mem={:.1f}G, {:.1f}s".format(
                    epoch, cur_iter, len(train_dl), loss.item(), mem, time.time() - t0))

        scheduler.step()
        torch.cuda.empty_cache()

        if is_main():
            ckpt_path = os.path.join(exp_dir, "epoch_{}.pt".format(epoch))
            torch.save({"model": raw_model.get_gazelle_state_dict(),
                        "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(),
                        "epoch": epoch}, ckpt_path)
            print("Saved checkpoint to {}".format(ckpt_path))

        # EVAL EPOCH
        auc, min_l2, avg_l2 = evaluate(model, eval_dl, device, amp_ctx)
        if is_main():
            if use_wandb:
                wandb.log({"eval/auc": auc, "eval/min_l2": min_l2, "eval/avg_l2": avg_l2, "epoch": epoch})
            print("EVAL EPOCH {}: AUC={}, Min L2={}, Avg L2={}".format(
                epoch, round(auc, 4), round(min_l2, 4), round(avg_l2, 4)))
            if min_l2 < best_min_l2:
                best_min_l2 = min_l2
                best_epoch = epoch

    if is_main():
        print("Completed training. Best Min L2 of {} obtained at epoch {}".format(round(best_min_l2, 4), best_epoch))
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
