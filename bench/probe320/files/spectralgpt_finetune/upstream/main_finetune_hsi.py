"""Fine-tune a spectral-spatial ViT foundation model (SpectralGPT / HyperSIGMA style)
on a hyperspectral patch-classification benchmark (Indian Pines, Pavia U, Houston13).

Single node, multi-GPU with torchrun:

    torchrun --nproc_per_node=4 main_finetune_hsi.py --dataset IndianPines \
        --finetune ckpt/spectral_vit_base_pretrain.pth --amp --bf16 --compile
"""
import argparse
import math
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from hsi_data import build_patch_dataset

try:
    import xformers.ops as xops
    HAS_XFORMERS = True
except ImportError:
    HAS_XFORMERS = False

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False


def get_args():
    p = argparse.ArgumentParser("HSI fine-tuning")
    p.add_argument("--dataset", default="IndianPines")
    p.add_argument("--data_root", default="./data")
    p.add_argument("--patch", type=int, default=9)
    p.add_argument("--bands", type=int, default=200)
    p.add_argument("--spectral_group", type=int, default=8, help="bands per spectral token")
    p.add_argument("--finetune", default="", help="pretrained checkpoint")
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--batch_size", type=int, default=128, help="per GPU")
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--weight_decay", type=float, default=0.05)
    p.add_argument("--warmup_epochs", type=int, default=5)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--num_workers", type=int, default=8)
    p.add_argument("--output_dir", default="./output_ft")
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


# ---------------------------------------------------------------------------
# model
# ---------------------------------------------------------------------------
class Attention(nn.Module):
    def __init__(self, dim, num_heads=12, qkv_bias=True, attn_drop=0.0, proj_drop=0.0):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = attn_drop
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim)
        if HAS_XFORMERS and x.is_cuda:
            q, k, v = qkv.unbind(2)  # B, N, H, D
            x = xops.memory_efficient_attention(q, k, v, p=self.attn_drop if self.training else 0.0, scale=self.scale)
            x = x.reshape(B, N, C)
        else:
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # B, H, N, D
            x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop if self.training else 0.0)
            x = x.transpose(1, 2).reshape(B, N, C)
        return self.proj_drop(self.proj(x))


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4.0, drop_path=0.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(), nn.Linear(int(dim * mlp_ratio), dim))
        self.drop_path = drop_path

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class SpectralSpatialViT(nn.Module):
    """3D tokenizer: (spectral group x 3 x 3) tubes -> tokens, then a plain ViT."""

    def __init__(self, bands=200, patch=9, group=8, num_classes=16, dim=768, depth=12, heads=12):
        super().__init__()
        self.tokenizer = nn.Conv3d(1, dim, kernel_size=(group, 3, 3), stride=(group, 3, 3))
        n_tokens = (bands // group) * (patch // 3) * (patch // 3)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, n_tokens + 1, dim))
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, num_classes)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)

    def forward(self, x):  # x: B, 1, bands, patch, patch
        x = self.tokenizer(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x[:, 0]))


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------
class CUDAPrefetcher:
    """Overlap host->device copies of the next batch with compute on a side stream."""

    def __init__(self, loader):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.preload()

    def preload(self):
        try:
            self.next_input, self.next_target = next(self.loader)
        except StopIteration:
            self.next_input = None
            self.next_target = None
            return
        with torch.cuda.stream(self.stream):
            self.next_input = self.next_input.cuda(non_blocking=True)
            self.next_target = self.next_target.cuda(non_blocking=True)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        inp, tgt = self.next_input, self.next_target
        if inp is not None:
            inp.record_stream(torch.cuda.current_stream())
            tgt.record_stream(torch.cuda.current_stream())
        self.preload()
        return inp, tgt


def patch_collate(batch):
    xs = torch.stack([torch.as_tensor(b[0]) for b in batch]).unsqueeze(1)
    ys = torch.as_tensor([int(b[1]) for b in batch], dtype=torch.long)
    return xs, ys


# ---------------------------------------------------------------------------
# train / eval
# ---------------------------------------------------------------------------
def cosine_lr(optimizer, epoch, args):
    if epoch < args.warmup_epochs:
        lr = args.lr * epoch / args.warmup_epochs
    else:
        lr = args.lr * 0.5 * (1.0 + math.cos(math.pi * (epoch - args.warmup_epochs) / (args.epochs - args.warmup_epochs)))
    for g in optimizer.param_groups:
        g["lr"] = lr
    return lr


def train_one_epoch(model, loader, optimizer, scaler, amp_dtype, args):
    model.train()
    prefetcher = CUDAPrefetcher(loader)
    x, y = prefetcher.next()
    total, n = 0.0, 0
    while x is not None:
        with torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype):
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        total += loss.item() * x.shape[0]
        n += x.shape[0]
        x, y = prefetcher.next()
    return total / max(n, 1)


@torch.no_grad()
def evaluate(model, loader, device, amp_dtype, args):
    model.eval()
    correct = torch.zeros(1, device=device)
    count = torch.zeros(1, device=device)
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast(device_type=device.type, enabled=args.amp, dtype=amp_dtype):
            pred = model(x).argmax(dim=1)
        correct += (pred == y).sum()
        count += y.numel()
    if dist.is_initialized():
        dist.all_reduce(correct)
        dist.all_reduce(count)
    return (correct / count).item() * 100.0


def main():
    args = get_args()

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    if world_size > 1:
        dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    rank = dist.get_rank() if dist.is_initialized() else 0

    torch.manual_seed(args.seed + rank)
    np.random.seed(args.seed + rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    if args.bf16 and not torch.cuda.is_bf16_supported():
        raise SystemExit("--bf16 needs an Ampere (sm80+) GPU")
    amp_dtype = torch.bfloat16 if args.bf16 else torch.float16

    train_set, test_set, num_classes = build_patch_dataset(args.dataset, args.data_root, patch=args.patch, bands=args.bands)
    train_sampler = DistributedSampler(train_set, shuffle=True) if dist.is_initialized() else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              shuffle=train_sampler is None, num_workers=args.num_workers,
                              collate_fn=patch_collate, pin_memory=True, drop_last=True, persistent_workers=True)
    test_loader = DataLoader(test_set, batch_size=512, num_workers=args.num_workers,
                             collate_fn=patch_collate, pin_memory=True)

    model = SpectralSpatialViT(bands=args.bands, patch=args.patch, group=args.spectral_group, num_classes=num_classes)
    if args.finetune:
        ckpt = torch.load(args.finetune, map_location="cpu")
        state = {k: v for k, v in ckpt.get("model", ckpt).items() if not k.startswith("head.")}
        msg = model.load_state_dict(state, strict=False)
        if rank == 0:
            print("loaded pretrained weights:", msg)
    model.to(device)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")
    if dist.is_initialized():
        model = DDP(model, device_ids=[local_rank])

    decay = [p for n_, p in model.named_parameters() if p.ndim > 1 and "pos_embed" not in n_]
    no_decay = [p for n_, p in model.named_parameters() if p.ndim <= 1 or "pos_embed" in n_]
    param_groups = [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    if HAS_APEX:
        optimizer = FusedAdam(param_groups, lr=args.lr, betas=(0.9, 0.999), adam_w_mode=True)
    else:
        optimizer = torch.optim.AdamW(param_groups, lr=args.lr, betas=(0.9, 0.999))
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and not args.bf16)

    os.makedirs(args.output_dir, exist_ok=True)
    best = 0.0
    # SDPA: prefer the flash / mem-efficient kernels, never the math fallback
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
        for epoch in range(args.epochs):
            if train_sampler is not None:
                train_sampler.set_epoch(epoch)
            lr = cosine_lr(optimizer, epoch, args)
            t0 = time.time()
            loss = train_one_epoch(model, train_loader, optimizer, scaler, amp_dtype, args)
            acc = evaluate(model, test_loader, device, amp_dtype, args)
            if rank == 0:
                print(f"epoch {epoch:3d} lr {lr:.2e} loss {loss:.4f} OA {acc:.2f} ({time.time() - t0:.1f}s, "
                      f"{torch.cuda.max_memory_allocated() / 2 ** 30:.1f} GB)")
                if acc > best:
                    best = acc
                    to_save = model.module if hasattr(model, "module") else model
                    torch.save({"model": to_save.state_dict(), "epoch": epoch, "OA": acc},
                               os.path.join(args.output_dir, "best.pth"))
    if rank == 0:
        print(f"best OA: {best:.2f}")
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
