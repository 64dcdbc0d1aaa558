"""Fault-tolerant training with torch.distributed.elastic (torchrun --nnodes=1:4 --max-restarts=3).

State (model, optimizer, step) is snapshotted every N steps; after a membership change every worker
restarts, reloads the snapshot and continues with the new world size.
"""
import argparse
import datetime
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.elastic.multiprocessing.errors import record
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

# NCCL settings that make elastic restarts reliable
os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
os.environ.setdefault("NCCL_BLOCKING_WAIT", "0")
os.environ.setdefault("NCCL_IB_DISABLE", "1")
os.environ.setdefault("NCCL_SOCKET_IFNAME", "eth0")
os.environ.setdefault("NCCL_DEBUG", "INFO")


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--snapshot", default="/mnt/shared/snapshot.pt")
    p.add_argument("--steps", type=int, default=100000)
    p.add_argument("--save_every", type=int, default=500)
    p.add_argument("--batch_size", type=int, default=256)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    return p.parse_args()


def build_model():
    return nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 4096), nn.GELU(), nn.Linear(4096, 10))


def synthetic_data(n=200000):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 1024, generator=g)
    y = torch.randint(0, 10, (n,), generator=g)
    return TensorDataset(x, y)


class Trainer:
    def __init__(self, args):
        self.args = args
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.rank = int(os.environ["RANK"])
        self.world = int(os.environ["WORLD_SIZE"])
        self.restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", 0))
        torch.cuda.set_device(self.local_rank)
        self.device = torch.device("cuda", self.local_rank)
        model = build_model().to(self.device)
        self.model = DDP(model, device_ids=[self.local_rank], bucket_cap_mb=100)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=args.lr, fused=True)
        self.step = 0
        ds = synthetic_data()
        self.sampler = DistributedSampler(ds, num_replicas=self.world, rank=self.rank, shuffle=True)
        self.loader = DataLoader(ds, batch_size=args.batch_size, sampler=self.sampler, num_workers=4,
                                 pin_memory=True, drop_last=True)
        if os.path.exists(args.snapshot):
            self.load()

    def load(self):
        snap = torch.load(self.args.snapshot, map_location=f"cuda:{self.local_rank}")
        self.model.module.load_state_dict(snap["model"])
        self.opt.load_state_dict(snap["opt"])
        self.step = snap["step"]
        torch.cuda.set_rng_state(snap["cuda_rng"].cpu())
        if self.rank == 0:
            print(f"[restart {self.restart}] resumed at step {self.step} with world size {self.world}")

    def save(self):
        if self.rank != 0:
            return
        tmp = self.args.snapshot + ".tmp"
        torch.save({"model": self.model.module.state_dict(), "opt": self.opt.state_dict(), "step": self.step,
                    "cuda_rng": torch.cuda.get_rng_state()}, tmp)
        os.replace(tmp, self.args.snapshot)

    def run(self):
        loss_fn = nn.CrossEntropyLoss()
        epoch = self.step // len(self.loader)
        t0 = time.time()
        while self.step < self.args.steps:
            self.sampler.set_epoch(epoch)
            for x, y in self.loader:
                x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
                with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                    loss = loss_fn(self.model(x), y)
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                self.opt.step()
                self.step += 1
                if self.step % 100 == 0 and self.rank == 0:
                    dt = time.time() - t0
                    t0 = time.time()
                    print(f"step {self.step} loss {loss.item():.4f} {100 / dt:.1f} it/s "
                          f"mem {torch.cuda.memory_reserved() / 2**30:.1f}G")
                if self.step % self.args.save_every == 0:
                    self.save()
                if self.step >= self.args.steps:
                    break
            epoch += 1


@record
def main():
    args = parse()
    dist.init_process_group(backend=args.backend, timeout=datetime.timedelta(minutes=10))
    try:
        Trainer(args).run()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
