"""Hashed multi-field embedding with a fused CUDA gather kernel.

Criteo-style categorical ids are 32-bit hashes. Instead of remapping them through a vocabulary we hash
each (field, id) pair into one shared table with `num_hashes` independent hash functions and sum the rows
(the "hashing trick" with multiple probes, a.k.a. Bloom / compositional embedding). The CUDA kernel fuses
hash -> gather -> sum for all fields of a batch in one launch and accumulates the backward into the
table with atomics; on CPU the same arithmetic runs as plain torch ops (slow but identical).

The extension is JIT-compiled on first use; set CTR_OPS_VERBOSE=1 to see the nvcc command line.
"""
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load

_HERE = os.path.dirname(os.path.abspath(__file__))
_ext = None

# 64-bit multiplicative hash constants (odd, from splitmix64); one per probe
_HASH_MULT = [0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xD6E8FEB86659FD93]


def _load_ext():
    global _ext
    if _ext is None:
        _ext = load(
            name="ctr_hash_embedding",
            sources=[os.path.join(_HERE, "csrc", "hash_embedding.cpp"),
                     os.path.join(_HERE, "csrc", "hash_embedding_kernel.cu")],
            extra_cflags=["-O3"],
            extra_cuda_cflags=["-O3", "--use_fast_math", "-lineinfo"],
            verbose=os.environ.get("CTR_OPS_VERBOSE", "0") == "1",
        )
    return _ext


def _hash_rows(ids, field_offsets, num_hashes, num_rows):
    """Reference hashing: (B, F) int64 ids -> (B, F, H) row indices into the shared table."""
    keyed = ids + field_offsets.view(1, -1)
    rows = []
    for h in range(num_hashes):
        mult = _HASH_MULT[h] & 0x7FFFFFFFFFFFFFFF
        rows.append(torch.remainder(keyed * mult + h, num_rows))
    return torch.stack(rows, dim=-1)


class _FusedHashEmbeddingFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, ids, weight, field_offsets, num_hashes):
        ext = _load_ext()
        stream = torch.cuda.current_stream(ids.device).cuda_stream
        out, rows = ext.forward(ids.contiguous(), weight, field_offsets, num_hashes, stream)
        ctx.save_for_backward(rows)
        ctx.weight_shape = weight.shape
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (rows,) = ctx.saved_tensors
        ext = _load_ext()
        grad_weight = torch.zeros(ctx.weight_shape, dtype=grad_out.dtype, device=grad_out.device)
        ext.backward(grad_out.contiguous(), rows, grad_weight)
        return None, grad_weight, None, None


class HashEmbedding(nn.Module):
    """(B, F) raw categorical ids -> (B, F, D) embeddings from one shared hashed table.

    Args:
        num_fields: number of categorical fields F.
        num_rows: rows of the shared table (memory = num_rows * embedding_dim * 4 bytes).
        embedding_dim: D.
        num_hashes: probes per id (2 is a good default; 1 = plain hashing trick).
    """

    def __init__(self, num_fields, num_rows, embedding_dim, num_hashes=2, init_std=1e-4):
        super().__init__()
        if not 1 <= num_hashes <= len(_HASH_MULT):
            raise ValueError(f"num_hashes must be in [1, {len(_HASH_MULT)}]")
        self.num_fields = num_fields
        self.num_rows = num_rows
        self.embedding_dim = embedding_dim
        self.num_hashes = num_hashes
        self.weight = nn.Parameter(torch.empty(num_rows, embedding_dim))
        nn.init.normal_(self.weight, std=init_std)
        # distinct offset per field so equal ids in different fields land in different rows
        self.register_buffer("field_offsets", torch.arange(num_fields, dtype=torch.int64) * 0x5BD1E995,
                             persistent=False)

    def extra_repr(self):
        return (f"num_fields={self.num_fields}, num_rows={self.num_rows}, "
                f"embedding_dim={self.embedding_dim}, num_hashes={self.num_hashes}")

    def _reference(self, ids):
        rows = _hash_rows(ids, self.field_offsets, self.num_hashes, self.num_rows)
        return self.weight[rows].sum(dim=-2)

    def forward(self, ids):
        if ids.dim() != 2 or ids.size(1) != self.num_fields:
            raise ValueError(f"expected ids of shape (B, {self.num_fields}), got {tuple(ids.shape)}")
        if ids.device.type == "cpu":
            return self._reference(ids.long())
        return _FusedHashEmbeddingFn.apply(ids.long(), self.weight, self.field_offsets, self.num_hashes)


class HashEmbeddingBag(HashEmbedding):
    """Multi-hot variant: (B, F, L) padded ids with -1 padding, mean-pooled over L."""

    def forward(self, ids):
        B, F, L = ids.shape
        valid = ids >= 0
        flat = ids.clamp_min(0).permute(0, 2, 1).reshape(B * L, F)
        emb = super().forward(flat).view(B, L, F, self.embedding_dim).permute(0, 2, 1, 3)
        emb = emb * valid.unsqueeze(-1).to(emb.dtype)
        denom = valid.sum(dim=-1, keepdim=True).clamp_min(1).to(emb.dtype)
        return emb.sum(dim=2) / denom


def benchmark(batch=65536, fields=26, rows=1 << 22, dim=16, iters=50):
    """Quick throughput check: python -c 'from ctr_ops.hash_embedding import benchmark; benchmark()'"""
    import time

    dev = torch.device("cuda")
    emb = HashEmbedding(fields, rows, dim).to(dev)
    ids = torch.randint(0, 1 << 31, (batch, fields), device=dev)
    for _ in range(5):
        emb(ids).sum().backward()
    torch.cuda.synchronize()  # drain warm-up
    t0 = time.time()
    for _ in range(iters):
        emb(ids).sum().backward()
    torch.cuda.synchronize()
    dt = (time.time() - t0) / iters
    print(f"fwd+bwd {dt * 1e3:.2f} ms/iter, {batch / dt / 1e6:.1f} M rows/s")


def check_against_reference(batch=1024, fields=8, rows=1 << 16, dim=8):
    dev = torch.device("cuda:0")
    emb = HashEmbedding(fields, rows, dim).to(dev)
    ids = torch.randint(0, 1 << 31, (batch, fields), device=dev)
    fused = emb(ids)
    ref = emb._reference(ids)
    torch.testing.assert_close(fused, ref, rtol=1e-5, atol=1e-6)
    print("fused kernel matches reference")
