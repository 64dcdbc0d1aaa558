"""
Encode a large passage collection with one process per GPU (torch.multiprocessing.spawn) and
write one fp16 .npy shard per rank plus the matching id list.

    python tools/encode_corpus_multi_gpu.py --model BAAI/bge-m3 --corpus data/wiki_psgs.tsv \
        --out embeddings/wiki-bge-m3 --batch-size 512 --max-length 256
"""
import argparse
import csv
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModel, AutoTokenizer

csv.field_size_limit(sys.maxsize)


class PassageDataset(Dataset):
    def __init__(self, path, rank, world_size):
        with open(path) as f:
            reader = csv.reader(f, delimiter="\t")
            next(reader)  # header: id, text, title
            rows = [r for r in reader]
        # contiguous shard per rank so ids stay sorted across shards
        per_rank = (len(rows) + world_size - 1) // world_size
        self.rows = rows[rank * per_rank : (rank + 1) * per_rank]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        pid, text, title = self.rows[i]
        return pid, f"{title}\n{text}"


class Collate:
    def __init__(self, tokenizer, max_length):
        self.tokenizer = tokenizer
        self.max_length = max_length

    def __call__(self, batch):
        ids = [b[0] for b in batch]
        enc = self.tokenizer(
            [b[1] for b in batch], padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        return ids, enc


def setup(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


def worker(rank, world_size, args):
    setup(rank, world_size, args.port)
    device = torch.device(f"cuda:{rank}")

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModel.from_pretrained(args.model, torch_dtype=torch.float16).to(device).eval()
    if args.compile:
        model = torch.compile(model, mode="max-autotune", dynamic=True)

    dataset = PassageDataset(args.corpus, rank, world_size)
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        num_workers=4,
        collate_fn=Collate(tokenizer, args.max_length),
        pin_memory=True,
    )

    all_ids, chunks = [], []
    start = time.time()
    with torch.inference_mode():
        for step, (ids, enc) in enumerate(loader):
            enc = {k: v.cuda(rank, non_blocking=True) for k, v in enc.items()}
            out = model(**enc).last_hidden_state[:, 0]
            out = F.normalize(out.float(), dim=-1).half()
            chunks.append(out.cpu().numpy())
            all_ids.extend(ids)
            if rank == 0 and step % 100 == 0:
                done = (step + 1) * args.batch_size * world_size
                print(f"[{time.time() - start:7.1f}s] ~{done} passages", flush=True)

    emb = np.concatenate(chunks) if chunks else np.zeros((0, model.config.hidden_size), dtype=np.float16)
    np.save(os.path.join(args.out, f"shard_{rank:02d}.npy"), emb)
    with open(os.path.join(args.out, f"shard_{rank:02d}.ids"), "w") as f:
        f.write("\n".join(all_ids))

    # make sure every rank finished before rank 0 writes the manifest
    counts = torch.tensor([len(all_ids)], device=device)
    gathered = [torch.zeros_like(counts) for _ in range(world_size)]
    dist.all_gather(gathered, counts)
    if rank == 0:
        total = int(sum(c.item() for c in gathered))
        with open(os.path.join(args.out, "MANIFEST"), "w") as f:
            f.write(f"model={args.model}\nshards={world_size}\npassages={total}\n")
        print(f"encoded {total} passages in {time.time() - start:.1f}s", flush=True)
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--port", type=int, default=29531)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--num-gpus", type=int, default=None, help="defaults to all visible GPUs")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    world_size = args.num_gpus or torch.cuda.device_count()
    assert world_size > 0, "no GPUs found"
    mp.spawn(worker, args=(world_size, args), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()
