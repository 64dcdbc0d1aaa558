"""TabR: retrieval-augmented tabular model (encoder -> nearest training rows -> value module -> predictor).

The context search uses faiss; on the GPU the candidate keys are indexed with a flat L2 index that
lives on the same card as the model, so no host round-trip happens per batch.
"""
import math
from typing import Optional, Union

import delu
import faiss
import faiss.contrib.torch_utils  # noqa: F401  (lets faiss indices take torch tensors)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def get_device() -> torch.device:
    return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def get_amp_dtype() -> torch.dtype:
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def make_mlp_block(d_in: int, d_out: int, dropout: float) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, d_out), nn.ReLU(), nn.Dropout(dropout), nn.Linear(d_out, d_in))


class Model(nn.Module):
    def __init__(
        self,
        *,
        n_num_features: int,
        n_bin_features: int,
        cat_cardinalities: list,
        n_classes: Optional[int],
        d_main: int = 265,
        d_multiplier: float = 2.0,
        encoder_n_blocks: int = 0,
        predictor_n_blocks: int = 1,
        mixer_normalization: Union[bool, str] = "auto",
        context_dropout: float = 0.38,
        dropout0: float = 0.39,
        dropout1: Union[float, str] = "dropout0",
        normalization: str = "LayerNorm",
        activation: str = "ReLU",
        memory_efficient: bool = False,
        candidate_encoding_batch_size: Optional[int] = None,
    ) -> None:
        super().__init__()
        if dropout1 == "dropout0":
            dropout1 = dropout0
        self.one_hot_encoder = None
        d_in = n_num_features + n_bin_features + sum(cat_cardinalities)
        d_block = int(d_main * d_multiplier)
        Normalization = getattr(nn, normalization)
        Activation = getattr(nn, activation)

        def make_block(prenorm: bool) -> nn.Sequential:
            return nn.Sequential(
                *([Normalization(d_main)] if prenorm else []),
                nn.Linear(d_main, d_block),
                Activation(),
                nn.Dropout(dropout0),
                nn.Linear(d_block, d_main),
                nn.Dropout(dropout1),
            )

        self.linear = nn.Linear(d_in, d_main)
        self.blocks0 = nn.ModuleList([make_block(i > 0) for i in range(encoder_n_blocks)])

        self.normalization = Normalization(d_main) if mixer_normalization else None
        self.label_encoder = (
            nn.Linear(1, d_main)
            if n_classes is None
            else nn.Sequential(nn.Embedding(n_classes, d_main), delu.nn.Lambda(lambda x: x.squeeze(-2)))
        )
        self.K = nn.Linear(d_main, d_main)
        self.T = nn.Sequential(nn.Linear(d_main, d_block), Activation(), nn.Dropout(dropout0),
                               nn.Linear(d_block, d_main, bias=False))
        self.dropout = nn.Dropout(context_dropout)

        self.blocks1 = nn.ModuleList([make_block(True) for _ in range(predictor_n_blocks)])
        self.head = nn.Sequential(Normalization(d_main), Activation(),
                                  nn.Linear(d_main, 1 if n_classes is None else n_classes))

        self.search_index = None
        self.memory_efficient = memory_efficient
        self.candidate_encoding_batch_size = candidate_encoding_batch_size
        self.reset_parameters()

    def reset_parameters(self):
        if isinstance(self.label_encoder, nn.Linear):
            bound = 1 / math.sqrt(2.0)
            nn.init.uniform_(self.label_encoder.weight, -bound, bound)
            nn.init.uniform_(self.label_encoder.bias, -bound, bound)
        else:
            nn.init.uniform_(self.label_encoder[0].weight, -1.0, 1.0)

    def _encode(self, x_: dict):
        x_num = x_.get("num")
        x_bin = x_.get("bin")
        x_cat = x_.get("cat")
        x = [t for t in (x_num, x_bin, x_cat) if t is not None]
        x = torch.cat(x, dim=1).float()
        x = self.linear(x)
        for block in self.blocks0:
            x = x + block(x)
        k = self.K(x if self.normalization is None else self.normalization(x))
        return x, k

    def forward(self, *, x_: dict, y: Optional[Tensor], candidate_x_: dict, candidate_y: Tensor,
                context_size: int, is_train: bool) -> Tensor:
        with torch.set_grad_enabled(torch.is_grad_enabled() and not self.memory_efficient):
            candidate_k = (
                self._encode(candidate_x_)[1]
                if self.candidate_encoding_batch_size is None
                else torch.cat([
                    self._encode(x)[1]
                    for x in delu.iter_batches(candidate_x_, self.candidate_encoding_batch_size)
                ])
            )
        x, k = self._encode(x_)
        if is_train:
            assert y is not None
            candidate_k = torch.cat([k, candidate_k])
            candidate_y = torch.cat([y, candidate_y])
        else:
            assert y is None

        batch_size, d_main = k.shape
        device = k.device
        with torch.no_grad():
            if self.search_index is None:
                self.search_index = (
                    faiss.GpuIndexFlatL2(faiss.StandardGpuResources(), d_main)
                    if device.type == "cuda"
                    else faiss.IndexFlatL2(d_main)
                )
            # updating the index is much faster than creating a new one
            self.search_index.reset()
            self.search_index.add(candidate_k)
            distances: Tensor
            context_idx: Tensor
            distances, context_idx = self.search_index.search(k, context_size + (1 if is_train else 0))
            if is_train:
                # the batch itself is in the candidates: drop each row's own match
                distances[context_idx == torch.arange(batch_size, device=device)[:, None]] = torch.inf
                context_idx = context_idx.gather(-1, distances.argsort()[:, :-1])

        if self.memory_efficient and torch.is_grad_enabled():
            assert is_train
            context_k = self._encode({
                ftype: torch.cat([x_[ftype], candidate_x_[ftype]])[context_idx].flatten(0, 1)
                for ftype in x_
            })[1].reshape(batch_size, context_size, -1)
        else:
            context_k = candidate_k[context_idx]

        similarities = (-k.square().sum(-1, keepdim=True) + (2 * (k[..., None, :] @ context_k.transpose(-1, -2))).squeeze(-2)
                        - context_k.square().sum(-1))
        probs = F.softmax(similarities, dim=-1)
        probs = self.dropout(probs)

        context_y_emb = self.label_encoder(candidate_y[context_idx][..., None])
        values = context_y_emb + self.T(k[:, None] - context_k)
        context_x = (probs[:, None] @ values).squeeze(1)
        x = x + context_x

        for block in self.blocks1:
            x = x + block(x)
        return self.head(x)


def train_step(model, optimizer, batch, candidates, context_size, loss_fn, amp_enabled: bool):
    model.train()
    optimizer.zero_grad()
    device = next(model.parameters()).device
    with torch.autocast(device.type, enabled=amp_enabled, dtype=get_amp_dtype()):
        out = model(x_=batch["x"], y=batch["y"], candidate_x_=candidates["x"], candidate_y=candidates["y"],
                    context_size=context_size, is_train=True)
    loss = loss_fn(out.squeeze(-1).float(), batch["y"])
    loss.backward()
    optimizer.step()
    return loss.detach()
