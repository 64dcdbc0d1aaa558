"""
DPR-style dense retriever training with GradCache on several GPUs.

    torchrun --nproc_per_node 8 examples/train_dense_retriever_ddp.py \
        --model_name bert-base-uncased --train_file data/nq-train.jsonl \
        --batch_size 512 --chunk_size 64 --fp16

Each rank computes representations for its shard of the batch; the contrastive loss
is taken over the all-gathered representations (in-batch negatives across GPUs).
"""
import argparse
import json
import logging
import os
import random

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModel, AutoTokenizer, get_linear_schedule_with_warmup

from grad_cache import GradCache
from grad_cache.loss import DistributedContrastiveLoss, SimpleContrastiveLoss

try:
    from apex.optimizers import FusedAdam as AdamW  # noqa: N811
except ImportError:
    from torch.optim import AdamW

logger = logging.getLogger("train_dpr_gc")


class QPDataset(Dataset):
    """jsonl with {"question": str, "positive_ctxs": [{"title", "text"}], "hard_negative_ctxs": [...]}"""

    def __init__(self, path, n_hard_negatives=1):
        with open(path) as f:
            self.examples = [json.loads(line) for line in f]
        self.n_hard_negatives = n_hard_negatives

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, idx):
        ex = self.examples[idx]
        pos = random.choice(ex["positive_ctxs"])
        negs = random.sample(ex["hard_negative_ctxs"], k=min(self.n_hard_negatives, len(ex["hard_negative_ctxs"])))
        passages = [pos] + negs
        return ex["question"], [p["title"] + " [SEP] " + p["text"] for p in passages]


class Collator:
    def __init__(self, tokenizer, q_max_len=32, p_max_len=256):
        self.tokenizer = tokenizer
        self.q_max_len = q_max_len
        self.p_max_len = p_max_len

    def __call__(self, batch):
        questions = [q for q, _ in batch]
        passages = [p for _, ps in batch for p in ps]
        q = self.tokenizer(questions, max_length=self.q_max_len, truncation=True, padding=True, return_tensors="pt")
        p = self.tokenizer(passages, max_length=self.p_max_len, truncation=True, padding=True, return_tensors="pt")
        return dict(q), dict(p)


class Encoder(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.bert = AutoModel.from_pretrained(name)

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        return out.last_hidden_state[:, 0]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", default="bert-base-uncased")
    p.add_argument("--train_file", required=True)
    p.add_argument("--output_dir", default="outputs/dpr-gc")
    p.add_argument("--batch_size", type=int, default=128, help="per-GPU batch size")
    p.add_argument("--chunk_size", type=int, default=32)
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--warmup_steps", type=int, default=1237)
    p.add_argument("--n_hard_negatives", type=int, default=1)
    p.add_argument("--num_workers", type=int, default=4)
    p.add_argument("--seed", type=int, default=12345)
    p.add_argument("--fp16", action="store_true")
    return p.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def all_reduce_mean(value: float) -> float:
    # object-free reduction; NCCL can only reduce device tensors
    device = torch.device("cuda") if dist.get_backend() == "nccl" else torch.device("cpu")
    t = torch.tensor([value], dtype=torch.float32, device=device)
    dist.all_reduce(t)
    return (t / dist.get_world_size()).item()


def main():
    args = parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1

    if distributed:
        dist.init_process_group(backend="nccl")
        torch.cuda.set_device(local_rank)
    rank = dist.get_rank() if distributed else 0
    logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARN)
    set_seed(args.seed + rank)

    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    q_encoder = Encoder(args.model_name).cuda()
    p_encoder = Encoder(args.model_name).cuda()
    if distributed:
        q_encoder = DDP(q_encoder, device_ids=[local_rank], output_device=local_rank)
        p_encoder = DDP(p_encoder, device_ids=[local_rank], output_device=local_rank)

    dataset = QPDataset(args.train_file, n_hard_negatives=args.n_hard_negatives)
    sampler = DistributedSampler(dataset, shuffle=True) if distributed else None
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        sampler=sampler,
        shuffle=sampler is None,
        collate_fn=Collator(tokenizer),
        num_workers=args.num_workers,
        pin_memory=True,
        drop_last=True,
    )

    params = list(q_encoder.parameters()) + list(p_encoder.parameters())
    optimizer = AdamW(params, lr=args.lr, weight_decay=0.0)
    total_steps = len(loader) * args.epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, total_steps)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    n_target = 1 + args.n_hard_negatives
    loss_fn = DistributedContrastiveLoss(n_target=n_target) if distributed else SimpleContrastiveLoss(n_target=n_target)
    gc = GradCache(
        models=[q_encoder, p_encoder],
        chunk_sizes=args.chunk_size,
        loss_fn=loss_fn,
        fp16=args.fp16,
        scaler=scaler,
    )

    step = 0
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        q_encoder.train()
        p_encoder.train()
        for q_batch, p_batch in loader:
            q_batch = {k: v.cuda(non_blocking=True) for k, v in q_batch.items()}
            p_batch = {k: v.cuda(non_blocking=True) for k, v in p_batch.items()}

            optimizer.zero_grad(set_to_none=True)
            loss = gc(q_batch, p_batch, no_sync_except_last=distributed)
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(params, 2.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1

            if step % 50 == 0:
                loss_value = all_reduce_mean(loss.item()) if distributed else loss.item()
                if rank == 0:
                    mem = torch.cuda.max_memory_allocated() / 2**30
                    logger.info(f"epoch {epoch} step {step}/{total_steps} loss {loss_value:.4f} mem {mem:.1f}GiB")

        if rank == 0:
            save_dir = os.path.join(args.output_dir, f"epoch-{epoch}")
            os.makedirs(save_dir, exist_ok=True)
            q_model = q_encoder.module if distributed else q_encoder
            p_model = p_encoder.module if distributed else p_encoder
            q_model.bert.save_pretrained(os.path.join(save_dir, "query_encoder"))
            p_model.bert.save_pretrained(os.path.join(save_dir, "passage_encoder"))
            tokenizer.save_pretrained(save_dir)
        if distributed:
            dist.barrier()

    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
