# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# pyre-unsafe

import abc
import logging
from typing import Dict, List, Optional

import torch

from generative_recommenders.research.modeling.initialization import truncated_normal

logger: logging.Logger = logging.getLogger(__name__)


class EmbeddingModule(torch.nn.Module):
    @abc.abstractmethod
    def debug_str(self) -> str:
        pass

    @abc.abstractmethod
    def get_item_embeddings(self, item_ids: torch.Tensor) -> torch.Tensor:
        pass

    @property
    @abc.abstractmethod
    def item_embedding_dim(self) -> int:
        pass


class LocalEmbeddingModule(EmbeddingModule):
    def __init__(
        self,
        num_items: int,
        item_embedding_dim: int,
        sparse_grad: bool = False,
    ) -> None:
        super().__init__()

        self._item_embedding_dim: int = item_embedding_dim
        self._item_emb = torch.nn.Embedding(
            num_items + 1, item_embedding_dim, padding_idx=0, sparse=sparse_grad
        )
        self.reset_params()

    def debug_str(self) -> str:
        return f"local_emb_d{self._item_embedding_dim}"

    def reset_params(self) -> None:
        for name, params in self.named_parameters():
            if "_item_emb" in name:
                print(
                    f"Initialize {name} as truncated normal: {params.data.size()} params"
                )
                truncated_normal(params, mean=0.0, std=0.02)
            else:
                print(f"Skipping initializing params {name} - not configured")

    def get_item_embeddings(self, item_ids: torch.Tensor) -> torch.Tensor:
        return self._item_emb(item_ids)

    @property
    def item_embedding_dim(self) -> int:
        return self._item_embedding_dim


class CategoricalEmbeddingModule(EmbeddingModule):
    def __init__(
        self,
        num_items: int,
        item_embedding_dim: int,
        item_id_to_category_id: torch.Tensor,
    ) -> None:
        super().__init__()

        self._item_embedding_dim: int = item_embedding_dim
        self._item_emb: torch.nn.Embedding = torch.nn.Embedding(
            num_items + 1, item_embedding_dim, padding_idx=0
        )
        self.register_buffer("_item_id_to_category_id", item_id_to_category_id)
        self.reset_params()

    def debug_str(self) -> str:
        return f"cat_emb_d{self._item_embedding_dim}"

    def reset_params(self) -> None:
        for name, params in self.named_parameters():
            if "_item_emb" in name:
                print(
                    f"Initialize {name} as truncated normal: {params.data.size()} params"
                )
                truncated_normal(params, mean=0.0, std=0.02)
            else:
                print(f"Skipping initializing params {name} - not configured")

    def get_item_embeddings(self, item_ids: torch.Tensor) -> torch.Tensor:
        item_ids = self._item_id_to_category_id[(item_ids - 1).clamp(min=0)] + 1
        return self._item_emb(item_ids)

    @property
    def item_embedding_dim(self) -> int:
        return self._item_embedding_dim


class HashedFeatureEmbeddingBag(torch.nn.Module):
    """Sum-pooled embeddings for side features (genres, tags) of each item.

    Side features are given as a flat list of hashed ids plus per-item offsets,
    i.e. the (values, offsets) layout consumed by ``EmbeddingBag``.
    """

    def __init__(
        self,
        hash_size: int,
        embedding_dim: int,
        mode: str = "sum",
    ) -> None:
        super().__init__()
        self._hash_size: int = hash_size
        self._emb_bag = torch.nn.EmbeddingBag(
            hash_size, embedding_dim, mode=mode, sparse=True
        )
        torch.nn.init.normal_(self._emb_bag.weight, mean=0.0, std=0.02)

    def forward(self, values: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self._emb_bag(values % self._hash_size, offsets)


def sparse_and_dense_params(
    module: torch.nn.Module,
) -> Dict[str, List[torch.nn.Parameter]]:
    """Splits parameters for SparseAdam (EmbeddingBag(sparse=True)) vs AdamW."""
    sparse: List[torch.nn.Parameter] = []
    dense: List[torch.nn.Parameter] = []
    for m in module.modules():
        if isinstance(m, (torch.nn.Embedding, torch.nn.EmbeddingBag)) and m.sparse:
            sparse.append(m.weight)
    sparse_ids = {id(p) for p in sparse}
    for p in module.parameters():
        if id(p) not in sparse_ids:
            dense.append(p)
    return {"sparse": sparse, "dense": dense}


def build_item_id_to_category_id(
    item_categories: Dict[int, int],
    num_items: int,
    device: Optional[torch.device] = None,
) -> torch.Tensor:
    lookup = torch.zeros((num_items,), dtype=torch.int64)
    for item_id, cat_id in item_categories.items():
        if 1 <= item_id <= num_items:
            lookup[item_id - 1] = cat_id
    if device is not None:
        lookup = lookup.to(device)
    return lookup
