"""Fine-tune / evaluate Enformer (enformer-pytorch) on new genomic tracks.

Single GPU:
    python scripts/finetune_eval.py --bed data/sequences.bed --fasta data/hg38.ml.fa \
        --targets data/targets.npy --num-tracks 10

Multi GPU (DDP):
    torchrun --nproc_per_node 4 scripts/finetune_eval.py ... --ddp

Only the new head (and optionally the last transformer blocks) is trained; the trunk is
frozen and run under autocast to save memory (196,608 bp context per sample).
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from enformer_pytorch import from_pretrained, GenomeIntervalDataset
from enformer_pytorch.finetune import HeadAdapterWrapper
from enformer_pytorch.modeling_enformer import pearson_corr_coef


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--bed", required=True)
    p.add_argument("--fasta", required=True)
    p.add_argument("--targets", required=True, help=".npy of shape (num_intervals, 896, num_tracks)")
    p.add_argument("--num-tracks", type=int, default=10)
    p.add_argument("--pretrained", default="EleutherAI/enformer-official-rough")
    p.add_argument("--batch-size", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--unfreeze-last", type=int, default=0, help="number of transformer blocks to unfreeze")
    p.add_argument("--amp", action="store_true", default=True)
    p.add_argument("--ddp", action="store_true")
    p.add_argument("--eval-only", action="store_true")
    p.add_argument("--ckpt", default="checkpoints/enformer_head.pt")
    p.add_argument("--num-workers", type=int, default=4)
    return p.parse_args()


class IntervalTargets(Dataset):
    """Pairs one-hot sequence intervals with precomputed target tracks."""

    def __init__(self, bed, fasta, targets_path, split="train"):
        self.seqs = GenomeIntervalDataset(
            bed_file=bed,
            fasta_file=fasta,
            filter_df_fn=lambda df: df.filter(df["column_4"] == split),
            return_seq_indices=True,
            shift_augs=(-2, 2) if split == "train" else None,
            context_length=196_608,
        )
        all_targets = np.load(targets_path, mmap_mode="r")
        self.targets = all_targets
        self.index = np.arange(len(self.seqs))

    def __len__(self):
        return len(self.seqs)

    def __getitem__(self, i):
        seq = self.seqs[i]
        target = torch.from_numpy(np.asarray(self.targets[self.index[i]], dtype=np.float32))
        return seq, target


def setup_distributed(args):
    if not args.ddp:
        return 0, 1, 0
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return rank, world_size, local_rank


def build_model(args, device):
    enformer = from_pretrained(args.pretrained, target_length=896, use_tf_gamma=False)
    model = HeadAdapterWrapper(
        enformer=enformer,
        num_tracks=args.num_tracks,
        post_transformer_embed=False,
    )
    # freeze the trunk except for the last N transformer blocks
    for p in model.enformer.parameters():
        p.requires_grad = False
    if args.unfreeze_last > 0:
        for block in model.enformer.transformer[-args.unfreeze_last:]:
            for p in block.parameters():
                p.requires_grad = True
    return model.to(device)


def evaluate(model, loader, device, amp=True):
    model.eval()
    corrs = []
    with torch.no_grad():
        for seq, target in loader:
            seq = seq.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            with torch.cuda.amp.autocast(enabled=amp):
                pred = model(seq, freeze_enformer=True)
            corr = pearson_corr_coef(pred.float(), target)
            corrs.append(corr.detach().cpu())
    corr = torch.cat(corrs).mean(dim=0)
    return corr


def main():
    args = parse_args()
    rank, world_size, local_rank = setup_distributed(args)
    device = torch.device("cuda", local_rank)
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(42 + rank)

    train_ds = IntervalTargets(args.bed, args.fasta, args.targets, split="train")
    valid_ds = IntervalTargets(args.bed, args.fasta, args.targets, split="valid")
    train_sampler = DistributedSampler(train_ds, shuffle=True) if args.ddp else None
    train_loader = DataLoader(
        train_ds,
        batch_size=args.batch_size,
        sampler=train_sampler,
        shuffle=train_sampler is None,
        num_workers=args.num_workers,
        pin_memory=True,
        drop_last=True,
    )
    valid_loader = DataLoader(valid_ds, batch_size=args.batch_size, num_workers=args.num_workers, pin_memory=True)

    model = build_model(args, device)
    if args.ddp:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=True)

    if args.eval_only:
        state = torch.load(args.ckpt, map_location="cuda:{}".format(local_rank))
        (model.module if args.ddp else model).load_state_dict(state, strict=False)
        corr = evaluate(model, valid_loader, device, amp=args.amp)
        if rank == 0:
            print(f"valid pearson r (mean over tracks): {corr.mean().item():.4f}")
        return

    params = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.Adam(params, lr=args.lr)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        t0 = time.time()
        for seq, target in train_loader:
            seq = seq.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            with torch.cuda.amp.autocast(enabled=args.amp):
                pred = model(seq, freeze_enformer=args.unfreeze_last == 0)
            # poisson loss in fp32
            loss = F.poisson_nll_loss(pred.float(), target, log_input=False)
            optim.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optim)
            torch.nn.utils.clip_grad_norm_(params, 0.2)
            scaler.step(optim)
            scaler.update()
            step += 1
            if rank == 0 and step % 50 == 0:
                mem = torch.cuda.max_memory_allocated(device) / 2**30
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} "
                      f"{(time.time() - t0) / 50:.2f}s/it max_mem {mem:.1f}GiB")
                t0 = time.time()

        corr = evaluate(model, valid_loader, device, amp=args.amp)
        if args.ddp:
            corr = corr.to(device)
            dist.all_reduce(corr)
            corr = corr / world_size
        if rank == 0:
            print(f"epoch {epoch}: valid pearson r {corr.mean().item():.4f}")
            os.makedirs(os.path.dirname(args.ckpt), exist_ok=True)
            torch.save((model.module if args.ddp else model).state_dict(), args.ckpt)

    if args.ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
