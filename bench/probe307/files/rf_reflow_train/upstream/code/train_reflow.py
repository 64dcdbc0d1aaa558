"""
2-Rectified Flow ("reflow") fine-tuning of the SD 1.5 UNet on pre-generated (noise, latent, prompt) triplets.

The teacher (SD 1.5 + DPM-Solver, CFG 6) was run offline to produce ~4M pairs stored as fp16 .npz shards
(see code/generate_pairs.py). The student learns the straight-line velocity  v = z0 - z1  between the
noise z1 and the teacher latent z0 at a uniformly sampled time t, which makes one-step Euler sampling work.

    torchrun --nproc_per_node 8 code/train_reflow.py --data /data/reflow_pairs --out runs/2rf
"""
import argparse
import contextlib
import glob
import math
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from diffusers import UNet2DConditionModel
from transformers import CLIPTextModel, CLIPTokenizer

try:
    from apex.optimizers import FusedAdam

    HAS_APEX = True
except ImportError:
    HAS_APEX = False


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--out", default="runs/2rf")
    p.add_argument("--pretrained", default="runwayml/stable-diffusion-v1-5")
    p.add_argument("--init_unet", default=None, help="start from a 1-RF / previous reflow unet")
    p.add_argument("--batch_size", type=int, default=32, help="per GPU")
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--weight_decay", type=float, default=0.0)
    p.add_argument("--max_steps", type=int, default=50000)
    p.add_argument("--grad_clip", type=float, default=1.0)
    p.add_argument("--mixed_precision", choices=["no", "fp16", "bf16"], default="fp16")
    p.add_argument("--fused_adam", action="store_true", help="use apex FusedAdam if available")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--nvtx", action="store_true", help="emit NVTX ranges for nsys")
    p.add_argument("--ema", type=float, default=0.9999)
    p.add_argument("--log_every", type=int, default=50)
    p.add_argument("--save_every", type=int, default=2500)
    p.add_argument("--num_workers", type=int, default=6)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


class ReflowPairs(Dataset):
    """Each shard holds z1 (noise), z0 (teacher latent) as fp16 [N,4,64,64] and the prompts."""

    def __init__(self, root):
        self.shards = sorted(glob.glob(os.path.join(root, "*.npz")))
        if not self.shards:
            raise FileNotFoundError(f"no .npz shards under {root}")
        self.index = []
        for si, path in enumerate(self.shards):
            with np.load(path, allow_pickle=True) as f:
                n = f["z0"].shape[0]
            self.index.extend((si, j) for j in range(n))
        self._cache = {}

    def __len__(self):
        return len(self.index)

    def _shard(self, si):
        if si not in self._cache:
            if len(self._cache) > 4:
                self._cache.pop(next(iter(self._cache)))
            self._cache[si] = dict(np.load(self.shards[si], allow_pickle=True))
        return self._cache[si]

    def __getitem__(self, i):
        si, j = self.index[i]
        s = self._shard(si)
        return {
            "z0": torch.from_numpy(s["z0"][j]),
            "z1": torch.from_numpy(s["z1"][j]),
            "input_ids": torch.from_numpy(s["input_ids"][j]).long(),
        }


class CUDAPrefetcher:
    """Overlaps host->device copies of the next batch with compute on a side stream."""

    def __init__(self, loader, device):
        self.loader = iter(loader)
        self.device = device
        self.stream = torch.cuda.Stream()
        self.batch = None
        self.preload()

    def preload(self):
        try:
            batch = next(self.loader)
        except StopIteration:
            self.batch = None
            return
        with torch.cuda.stream(self.stream):
            self.batch = {k: v.pin_memory().to(self.device, non_blocking=True) for k, v in batch.items()}

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        batch = self.batch
        self.preload()
        return batch


@contextlib.contextmanager
def nvtx_range(name, enabled):
    if enabled:
        torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        if enabled:
            torch.cuda.nvtx.range_pop()


@torch.no_grad()
def ema_update(ema_params, params, decay):
    for e, p in zip(ema_params, params):
        e.mul_(decay).add_(p.detach().float(), alpha=1 - decay)


def main():
    args = parse_args()

    dist.init_process_group(backend="nccl", init_method="env://")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(args.seed + rank)
    np.random.seed(args.seed + rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    amp_dtype = {"no": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.mixed_precision]

    tokenizer = CLIPTokenizer.from_pretrained(args.pretrained, subfolder="tokenizer")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained, subfolder="text_encoder", torch_dtype=torch.float16)
    text_encoder.to(device).requires_grad_(False)

    unet = UNet2DConditionModel.from_pretrained(args.init_unet or args.pretrained, subfolder=None if args.init_unet else "unet")
    unet.to(device)
    unet.enable_gradient_checkpointing()
    unet.train()
    ema_params = [p.detach().clone().float() for p in unet.parameters()]

    if args.compile:
        unet = torch.compile(unet, mode="max-autotune-no-cudagraphs")
    unet_ddp = DDP(unet, device_ids=[local_rank], output_device=local_rank, gradient_as_bucket_view=True)

    if args.fused_adam and HAS_APEX:
        optimizer = FusedAdam(unet.parameters(), lr=args.lr, betas=(0.9, 0.999), weight_decay=args.weight_decay, adam_w_mode=True)
    else:
        optimizer = torch.optim.AdamW(unet.parameters(), lr=args.lr, betas=(0.9, 0.999), weight_decay=args.weight_decay)
    scaler = torch.cuda.amp.GradScaler(enabled=args.mixed_precision == "fp16")

    dataset = ReflowPairs(args.data)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        sampler=sampler,
        num_workers=args.num_workers,
        drop_last=True,
        persistent_workers=True,
    )

    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        print(f"{len(dataset)} pairs, {world_size} GPUs, global batch {args.batch_size * world_size}")

    step, epoch = 0, 0
    t0 = time.time()
    while step < args.max_steps:
        sampler.set_epoch(epoch)
        prefetcher = CUDAPrefetcher(loader, device)
        batch = prefetcher.next()
        while batch is not None and step < args.max_steps:
            z0, z1 = batch["z0"], batch["z1"]
            with torch.no_grad():
                cond = text_encoder(batch["input_ids"])[0]

            t = torch.rand(z0.shape[0], device=device)
            t_ = t.view(-1, 1, 1, 1)
            x_t = t_ * z1 + (1.0 - t_) * z0
            target = z0 - z1

            with nvtx_range("forward", args.nvtx):
                with torch.cuda.amp.autocast(enabled=args.mixed_precision != "no", dtype=amp_dtype):
                    v_pred = unet_ddp(x_t, t * 999.0, encoder_hidden_states=cond).sample
                    loss = F.mse_loss(v_pred.float(), target.float())

            with nvtx_range("backward", args.nvtx):
                optimizer.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                grad_norm = torch.nn.utils.clip_grad_norm_(unet.parameters(), args.grad_clip)
                scaler.step(optimizer)
                scaler.update()
            ema_update(ema_params, unet.parameters(), args.ema)

            step += 1
            if step % args.log_every == 0:
                loss_t = loss.detach().clone()
                dist.all_reduce(loss_t, op=dist.ReduceOp.AVG)
                if rank == 0:
                    dt = (time.time() - t0) / args.log_every
                    t0 = time.time()
                    print(
                        f"step {step} loss {loss_t.item():.5f} gnorm {grad_norm.item():.3f} "
                        f"scale {scaler.get_scale():.0f} {dt:.3f}s/it "
                        f"mem {torch.cuda.max_memory_allocated(device) / 2**30:.1f}G"
                    )

            if step % args.save_every == 0 and rank == 0:
                raw = unet._orig_mod if hasattr(unet, "_orig_mod") else unet
                raw.save_pretrained(os.path.join(args.out, f"unet_{step:06d}"))
                ema_sd = {k: e.to(torch.float16).cpu() for (k, _), e in zip(raw.named_parameters(), ema_params)}
                torch.save(ema_sd, os.path.join(args.out, f"unet_ema_{step:06d}.pt"))
            batch = prefetcher.next()
        epoch += 1

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
