"""
Sequential recommender training with FBGEMM table-batched embeddings (TBE).

All sparse features are looked up by one fused TBE kernel (row-wise Adagrad applied inside
the backward), user histories are jagged and padded with FBGEMM jagged ops before a small
transformer encoder, and the next item is scored with sampled softmax.

    python recsys/train_tbe.py --tables 50000000,2000000,10000 --dim 128 --steps 20000
"""
import argparse
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import fbgemm_gpu  # noqa: F401  (registers torch.ops.fbgemm)
from fbgemm_gpu.split_table_batched_embeddings_ops_common import EmbeddingLocation, PoolingMode
from fbgemm_gpu.split_table_batched_embeddings_ops_training import (
    ComputeDevice,
    OptimType,
    SplitTableBatchedEmbeddingBagsCodegen,
)


def build_tbe(table_rows, dim, lr, device, use_uvm_cache):
    location = EmbeddingLocation.MANAGED_CACHING if use_uvm_cache else EmbeddingLocation.DEVICE
    specs = [(rows, dim, location, ComputeDevice.CUDA) for rows in table_rows]
    return SplitTableBatchedEmbeddingBagsCodegen(
        embedding_specs=specs,
        optimizer=OptimType.EXACT_ROWWISE_ADAGRAD,
        learning_rate=lr,
        eps=1e-8,
        pooling_mode=PoolingMode.NONE,  # sequence features: one vector per id
        cache_load_factor=0.2,
        device=device,
    )


class SeqEncoder(nn.Module):
    def __init__(self, dim, heads=4, layers=2, max_len=200, dropout=0.1):
        super().__init__()
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(dim)
        self.max_len = max_len

    def forward(self, seq, lengths):
        B, L, _ = seq.shape
        pos = torch.arange(L, device=seq.device)
        pad_mask = pos[None, :] >= lengths[:, None]
        causal = torch.triu(torch.ones(L, L, dtype=torch.bool, device=seq.device), 1)
        h = self.encoder(seq + self.pos(pos)[None], mask=causal, src_key_padding_mask=pad_mask)
        last = (lengths - 1).clamp(min=0)
        return self.norm(h[torch.arange(B, device=seq.device), last])


def synthetic_batch(batch_size, table_rows, max_len, device, rng):
    """History item ids (jagged), plus a next-item target per user."""
    lengths = torch.from_numpy(rng.integers(1, max_len + 1, size=batch_size)).long()
    items = torch.from_numpy(rng.integers(0, table_rows[0], size=int(lengths.sum()))).long()
    target = torch.from_numpy(rng.integers(0, table_rows[0], size=batch_size)).long()
    return items.to(device, non_blocking=True), lengths.to(device, non_blocking=True), target.to(device)


def lookup_history(tbe, items, lengths, num_tables):
    """TBE takes one flat index tensor and offsets over (tables x batch) bags; other tables get empty bags."""
    B = lengths.numel()
    zeros = torch.zeros((num_tables - 1) * B, dtype=lengths.dtype, device=lengths.device)
    all_lengths = torch.cat([lengths, zeros])
    offsets = torch.ops.fbgemm.asynchronous_complete_cumsum(all_lengths)
    rows = tbe(indices=items, offsets=offsets)  # (num ids, dim) for PoolingMode.NONE
    seq_offsets = torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)
    return rows, seq_offsets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", default="5000000,200000,1000")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--max-len", type=int, default=100)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--negatives", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--lr-sparse", type=float, default=0.05)
    ap.add_argument("--lr-dense", type=float, default=1e-3)
    ap.add_argument("--uvm-cache", action="store_true", help="keep tables in UVM with an HBM cache")
    ap.add_argument("--local-rank", type=int, default=0)
    args = ap.parse_args()

    torch.cuda.set_device(args.local_rank)
    device = torch.device("cuda", args.local_rank)
    table_rows = [int(x) for x in args.tables.split(",")]
    rng = np.random.default_rng(0)

    tbe = build_tbe(table_rows, args.dim, args.lr_sparse, device, args.uvm_cache)
    encoder = SeqEncoder(args.dim, max_len=args.max_len).to(device)
    dense_opt = torch.optim.AdamW(encoder.parameters(), lr=args.lr_dense)

    t0 = time.time()
    for step in range(1, args.steps + 1):
        items, lengths, target = synthetic_batch(args.batch_size, table_rows, args.max_len, device, rng)
        rows, seq_offsets = lookup_history(tbe, items, lengths, len(table_rows))
        seq = torch.ops.fbgemm.jagged_2d_to_dense(rows, seq_offsets, args.max_len)
        user = encoder(seq, lengths.clamp(max=args.max_len))

        # sampled softmax: target row + shared uniform negatives, all from table 0
        neg = torch.randint(0, table_rows[0], (args.negatives,), device=device)
        cand = torch.cat([target, neg])
        cand_offsets = torch.ops.fbgemm.asynchronous_complete_cumsum(
            torch.cat([torch.ones_like(cand), torch.zeros((len(table_rows) - 1) * cand.numel(),
                                                          dtype=cand.dtype, device=device)]))
        cand_emb = tbe(indices=cand, offsets=cand_offsets)
        logits = user @ cand_emb.t()
        labels = torch.arange(user.shape[0], device=device)
        logits = logits - math.log(args.negatives)  # crude logQ correction for uniform negatives
        loss = F.cross_entropy(logits, labels)

        dense_opt.zero_grad(set_to_none=True)
        loss.backward()  # TBE applies its row-wise Adagrad update inside backward
        dense_opt.step()

        if step % 100 == 0:
            torch.cuda.synchronize()
            dt = time.time() - t0
            print(f"step {step}: loss {loss.item():.4f}, {100 * args.batch_size / dt:,.0f} users/s")
            t0 = time.time()


if __name__ == "__main__":
    main()
