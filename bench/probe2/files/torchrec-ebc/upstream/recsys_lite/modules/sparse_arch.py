"""Sparse (embedding) architecture of a DLRM/torchrec-style ranking model.

Two back-ends: fbgemm_gpu's table-batched embedding (TBE) kernels for production, and a plain
nn.EmbeddingBag fallback used in unit tests. Features arrive as a KeyedJaggedTensor.
"""
from typing import Dict, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

import fbgemm_gpu  # noqa: F401  (registers torch.ops.fbgemm.*)
from fbgemm_gpu.split_table_batched_embeddings_ops_common import EmbeddingLocation, PoolingMode
from fbgemm_gpu.split_table_batched_embeddings_ops_training import (ComputeDevice,
                                                                    SplitTableBatchedEmbeddingBagsCodegen)
from torchrec.distributed.model_parallel import DistributedModelParallel
from torchrec.modules.embedding_configs import EmbeddingBagConfig
from torchrec.modules.embedding_modules import EmbeddingBagCollection
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor


class TBESparseArch(nn.Module):
    """Table-batched embedding bags (fbgemm TBE) with fused SGD/Adagrad in the backward pass."""

    def __init__(self, tables: List[EmbeddingBagConfig], learning_rate: float = 0.01,
                 use_uvm: bool = False, device: Optional[torch.device] = None):
        super().__init__()
        self.feature_names = [name for t in tables for name in t.feature_names]
        location = EmbeddingLocation.MANAGED_CACHING if use_uvm else EmbeddingLocation.DEVICE
        self.emb = SplitTableBatchedEmbeddingBagsCodegen(
            embedding_specs=[(t.num_embeddings, t.embedding_dim, location, ComputeDevice.CUDA) for t in tables],
            pooling_mode=PoolingMode.SUM,
            learning_rate=learning_rate,
            device=device or torch.device("cuda", torch.cuda.current_device()),
        )
        self.dims = [t.embedding_dim for t in tables]

    def forward(self, features: KeyedJaggedTensor) -> torch.Tensor:
        # TBE expects int64 indices and cumulative offsets over (table, sample)
        indices = features.values().long()
        offsets = torch.ops.fbgemm.asynchronous_complete_cumsum(features.lengths().int()).long()
        return self.emb(indices=indices, offsets=offsets)


class EmbeddingBagFallback(nn.Module):
    """Reference implementation with one nn.EmbeddingBag per table (CPU tests / small models)."""

    def __init__(self, tables: List[EmbeddingBagConfig], sparse_grad: bool = True):
        super().__init__()
        self.tables = tables
        self.bags = nn.ModuleDict({
            t.name: nn.EmbeddingBag(t.num_embeddings, t.embedding_dim, mode="sum", sparse=sparse_grad,
                                    include_last_offset=True)
            for t in tables
        })

    def forward(self, features: KeyedJaggedTensor) -> torch.Tensor:
        outs = []
        kjt_dict: Dict[str, object] = features.to_dict()
        for t in self.tables:
            for fname in t.feature_names:
                jt = kjt_dict[fname]
                offsets = torch.cat([jt.offsets().new_zeros(1), jt.lengths().cumsum(0)]) if jt.offsets() is None \
                    else jt.offsets()
                outs.append(self.bags[t.name](jt.values(), offsets))
        return torch.cat(outs, dim=1)


def pooled_lookup(weight: torch.Tensor, values: torch.Tensor, offsets: torch.Tensor,
                  per_sample_weights: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Functional weighted-sum pooling (used for position-weighted features)."""
    return F.embedding_bag(values, weight, offsets, mode="sum", per_sample_weights=per_sample_weights,
                           include_last_offset=True)


def build_sharded_model(dense_arch: nn.Module, tables: List[EmbeddingBagConfig], pg=None):
    """Wrap an EmbeddingBagCollection model with torchrec's DistributedModelParallel."""
    ebc = EmbeddingBagCollection(tables=tables, device=torch.device("meta"))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.ebc = ebc
            self.dense = dense_arch

        def forward(self, dense_features, sparse_features):
            pooled = self.ebc(sparse_features).values()
            return self.dense(torch.cat([dense_features, pooled], dim=1))

    device = torch.device("cuda", torch.cuda.current_device())
    return DistributedModelParallel(module=Model(), device=device, env=None, init_data_parallel=True)


def build_optimizers(model: nn.Module, lr: float = 0.01):
    """Sparse parameters (EmbeddingBag with sparse grads) get SparseAdam; dense ones get Adagrad."""
    sparse_params, dense_params = [], []
    for name, p in model.named_parameters():
        if "bags." in name:
            sparse_params.append(p)
        else:
            dense_params.append(p)
    return [torch.optim.SparseAdam(sparse_params, lr=lr),
            torch.optim.Adagrad(dense_params, lr=lr)]


def make_batch(num_features: int, batch_size: int, max_len: int = 20, num_embeddings: int = 1000,
               device: str = "cuda") -> KeyedJaggedTensor:
    """Random KJT for benchmarking."""
    lengths = torch.randint(0, max_len, (num_features * batch_size,), dtype=torch.int32)
    values = torch.randint(0, num_embeddings, (int(lengths.sum()),), dtype=torch.int64)
    return KeyedJaggedTensor.from_lengths_sync(
        keys=[f"f{i}" for i in range(num_features)],
        values=values.to(device),
        lengths=lengths.to(device),
    )


if __name__ == "__main__":
    tables = [EmbeddingBagConfig(name=f"t{i}", embedding_dim=64, num_embeddings=1000, feature_names=[f"f{i}"])
              for i in range(4)]
    arch = TBESparseArch(tables)
    kjt = make_batch(4, 128)
    out = arch(kjt)
    print(out.shape, torch.cuda.max_memory_allocated() / 2**20, "MiB")
