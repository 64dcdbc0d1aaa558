# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

"""
DLRM built on TorchRec's EmbeddingBagCollection, with NVTX ranges around the
sparse / dense / interaction stages so that nsys timelines line up with the
sharded all-to-alls.
"""

from typing import Dict, List, Optional

import torch
from torch import nn
from torchrec.modules.embedding_configs import EmbeddingBagConfig
from torchrec.modules.embedding_modules import EmbeddingBagCollection
from torchrec.modules.mlp import MLP
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor, KeyedTensor


def choose(n: int, k: int) -> int:
    if 0 <= k <= n:
        ntok = 1
        ktok = 1
        for t in range(1, min(k, n - k) + 1):
            ntok *= n
            ktok *= t
            n -= 1
        return ntok // ktok
    else:
        return 0


class SparseArch(nn.Module):
    def __init__(self, embedding_bag_collection: EmbeddingBagCollection) -> None:
        super().__init__()
        self.embedding_bag_collection: EmbeddingBagCollection = embedding_bag_collection
        assert self.embedding_bag_collection.embedding_bag_configs, "Embedding bag collection cannot be empty!"
        self.D: int = self.embedding_bag_collection.embedding_bag_configs()[0].embedding_dim
        self._sparse_feature_names: List[str] = [
            name
            for conf in embedding_bag_collection.embedding_bag_configs()
            for name in conf.feature_names
        ]
        self.F: int = len(self._sparse_feature_names)

    def forward(self, features: KeyedJaggedTensor) -> torch.Tensor:
        sparse_features: KeyedTensor = self.embedding_bag_collection(features)
        sparse: Dict[str, torch.Tensor] = sparse_features.to_dict()
        sparse_values: List[torch.Tensor] = []
        for name in self._sparse_feature_names:
            sparse_values.append(sparse[name])
        return torch.cat(sparse_values, dim=1).reshape(-1, self.F, self.D)


class DenseArch(nn.Module):
    def __init__(self, in_features: int, layer_sizes: List[int], device: Optional[torch.device] = None) -> None:
        super().__init__()
        self.model: nn.Module = MLP(in_features, layer_sizes, bias=True, activation="relu", device=device)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.model(features)


class InteractionArch(nn.Module):
    def __init__(self, num_sparse_features: int) -> None:
        super().__init__()
        self.F: int = num_sparse_features
        self.register_buffer(
            "triu_indices",
            torch.triu_indices(self.F + 1, self.F + 1, offset=1),
            persistent=False,
        )

    def forward(self, dense_features: torch.Tensor, sparse_features: torch.Tensor) -> torch.Tensor:
        if self.F <= 0:
            return dense_features
        (B, D) = dense_features.shape
        combined_values = torch.cat((dense_features.unsqueeze(1), sparse_features), dim=1)
        # dense/sparse + sparse/sparse interaction
        # size B X (F + F choose 2)
        interactions = torch.bmm(combined_values, torch.transpose(combined_values, 1, 2))
        interactions_flat = interactions[:, self.triu_indices[0], self.triu_indices[1]]
        return torch.cat((dense_features, interactions_flat), dim=1)


class OverArch(nn.Module):
    def __init__(self, in_features: int, layer_sizes: List[int], device: Optional[torch.device] = None) -> None:
        super().__init__()
        if len(layer_sizes) <= 1:
            raise ValueError("OverArch must have multiple layers.")
        self.model: nn.Module = nn.Sequential(
            MLP(in_features, layer_sizes[:-1], bias=True, activation="relu", device=device),
            nn.Linear(layer_sizes[-2], layer_sizes[-1], bias=True, device=device),
        )

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.model(features)


class DLRM(nn.Module):
    def __init__(
        self,
        embedding_bag_collection: EmbeddingBagCollection,
        dense_in_features: int,
        dense_arch_layer_sizes: List[int],
        over_arch_layer_sizes: List[int],
        dense_device: Optional[torch.device] = None,
        enable_nvtx: bool = True,
    ) -> None:
        super().__init__()
        assert len(embedding_bag_collection.embedding_bag_configs()) > 0, "At least one embedding bag is required"
        for i in range(1, len(embedding_bag_collection.embedding_bag_configs())):
            conf_prev = embedding_bag_collection.embedding_bag_configs()[i - 1]
            conf = embedding_bag_collection.embedding_bag_configs()[i]
            assert conf_prev.embedding_dim == conf.embedding_dim, "All EmbeddingBagConfigs must have the same dimension"
        embedding_dim: int = embedding_bag_collection.embedding_bag_configs()[0].embedding_dim
        if dense_arch_layer_sizes[-1] != embedding_dim:
            raise ValueError(f"embedding_bag_collection dimension ({embedding_dim}) and final dense arch layer size ({dense_arch_layer_sizes[-1]}) must match.")
        self.sparse_arch: SparseArch = SparseArch(embedding_bag_collection)
        num_sparse_features: int = len(self.sparse_arch._sparse_feature_names)
        self.dense_arch = DenseArch(dense_in_features, dense_arch_layer_sizes, dense_device)
        self.inter_arch = InteractionArch(num_sparse_features=num_sparse_features)
        over_in_features: int = embedding_dim + choose(num_sparse_features, 2) + num_sparse_features
        self.over_arch = OverArch(over_in_features, over_arch_layer_sizes, dense_device)
        self._enable_nvtx = enable_nvtx

    def forward(self, dense_features: torch.Tensor, sparse_features: KeyedJaggedTensor) -> torch.Tensor:
        if self._enable_nvtx:
            with torch.cuda.nvtx.range("dlrm/dense_arch"):
                embedded_dense = self.dense_arch(dense_features)
            with torch.cuda.nvtx.range("dlrm/sparse_arch"):
                embedded_sparse = self.sparse_arch(sparse_features)
            with torch.cuda.nvtx.range("dlrm/interaction+over"):
                concatenated_dense = self.inter_arch(dense_features=embedded_dense, sparse_features=embedded_sparse)
                logits = self.over_arch(concatenated_dense)
            return logits
        embedded_dense = self.dense_arch(dense_features)
        embedded_sparse = self.sparse_arch(sparse_features)
        concatenated_dense = self.inter_arch(dense_features=embedded_dense, sparse_features=embedded_sparse)
        return self.over_arch(concatenated_dense)


class DLRMTrain(nn.Module):
    def __init__(self, dlrm_module: DLRM) -> None:
        super().__init__()
        self.model = dlrm_module
        self.loss_fn: nn.Module = nn.BCEWithLogitsLoss()

    def forward(self, batch) -> tuple:
        logits = self.model(batch.dense_features, batch.sparse_features)
        logits = logits.squeeze(-1)
        loss = self.loss_fn(logits, batch.labels.float())
        return loss, (loss.detach(), logits.detach(), batch.labels.detach())


def _smoke_test() -> None:
    B, D = 4, 8
    tables = [
        EmbeddingBagConfig(name="t1", embedding_dim=D, num_embeddings=100, feature_names=["f1", "f3"]),
        EmbeddingBagConfig(name="t2", embedding_dim=D, num_embeddings=100, feature_names=["f2"]),
    ]
    ebc = EmbeddingBagCollection(tables=tables)
    model = DLRM(
        embedding_bag_collection=ebc,
        dense_in_features=13,
        dense_arch_layer_sizes=[16, D],
        over_arch_layer_sizes=[32, 1],
    ).cuda()
    dense = torch.rand((B, 13)).cuda()
    kjt = KeyedJaggedTensor.from_lengths_sync(
        keys=["f1", "f3", "f2"],
        values=torch.randint(0, 100, (12,)),
        lengths=torch.tensor([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
    ).to("cuda")
    logits = model(dense_features=dense, sparse_features=kjt)
    assert logits.shape == (B, 1)
    print("ok", logits.flatten().tolist())


if __name__ == "__main__":
    _smoke_test()
