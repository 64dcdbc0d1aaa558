import math
from contextlib import nullcontext
from typing import Optional

import lightning as L
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import functional as F


class LayerNorm(nn.Module):
    """LayerNorm but with an optional bias. PyTorch doesn't support simply bias=False"""

    def __init__(self, shape: int, eps: float = 1e-5, bias: bool = True):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(shape))
        self.bias = nn.Parameter(torch.zeros(shape)) if bias else None
        self.eps = eps

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, self.eps)


class SelfAttention(nn.Module):
    """Collection of self-attention heads (adapted from nanoGPT).

    Args:
        embedding_dim: total dimension of the model
        num_heads: number of parallel attention heads
        causal: whether to use a causal mask
        dropout: dropout probability
        bias: whether to have bias in the linear layers
        force_flash: on A100/H100 pin SDPA to the FlashAttention-2 backend; errors out
            (instead of silently falling back to the math kernel) if flash cannot be used.
    """

    def __init__(
        self,
        embedding_dim: int,
        num_heads: int,
        causal: bool,
        dropout: float,
        bias: bool = True,
        force_flash: bool = False,
    ):
        super().__init__()
        assert embedding_dim % num_heads == 0
        # key, query, value projections for all heads, but in a batch
        self.attention = nn.Linear(embedding_dim, 3 * embedding_dim, bias=bias)
        # output projection
        self.projection = nn.Linear(embedding_dim, embedding_dim, bias=bias)
        # regularization
        self.attention_dropout = nn.Dropout(dropout)
        self.residual_dropout = nn.Dropout(dropout)
        self.embedding_dim = embedding_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.causal = causal
        self.force_flash = force_flash
        # flash attention make GPU go brrrrr but support is only in PyTorch >= 2.0
        self.flash = hasattr(torch.nn.functional, "scaled_dot_product_attention")
        if not self.flash:
            print("WARNING: using slow attention. Flash Attention requires PyTorch >= 2.0")

    def _sdp_context(self):
        if self.force_flash:
            return torch.backends.cuda.sdp_kernel(
                enable_flash=True, enable_math=False, enable_mem_efficient=False
            )
        return nullcontext()

    def forward(self, x):
        B, T, C = x.size()  # batch size, sequence length, embedding dimensionality (embedding_dim)

        # calculate query, key, values for all heads in batch and move head forward to be the batch dim
        q, k, v = self.attention(x).split(self.embedding_dim, dim=2)
        k = k.view(B, T, self.num_heads, C // self.num_heads).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.num_heads, C // self.num_heads).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.num_heads, C // self.num_heads).transpose(1, 2)  # (B, nh, T, hs)

        # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
        if self.flash:
            # efficient attention using Flash Attention CUDA kernels
            with self._sdp_context():
                y = torch.nn.functional.scaled_dot_product_attention(
                    q,
                    k,
                    v,
                    attn_mask=None,
                    dropout_p=self.dropout if self.training else 0,
                    is_causal=self.causal,
                )
        else:
            # manual implementation of attention
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            if self.causal:
                mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
                att = att.masked_fill(mask, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attention_dropout(att)
            y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs side by side

        # output projection
        y = self.residual_dropout(self.projection(y))
        return y


class MLP(nn.Module):
    """A two-layer MLP.

    This uses a fully-connected layer to encode the input, then applies a non-linearity,
    then uses another fully-connected layer to decode back to the initial dimension, and
    finally applies (optional) dropout.
    """

    def __init__(self, in_features: int, hidden_features: int, activation=None, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        self.encoder = nn.Linear(in_features, hidden_features, bias=bias)
        self.activation = activation if activation is not None else nn.GELU()
        self.decoder = nn.Linear(hidden_features, in_features, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = self.encoder(x)
        x = self.activation(x)
        x = self.decoder(x)
        x = self.dropout(x)
        return x


class TransformerBlock(nn.Module):
    """A transformer block, including layer norm, self-attention, another layer norm,
    and a two-layer MLP.
    """

    def __init__(
        self,
        embedding_dim: int,
        num_heads: int,
        causal: bool,
        dropout: float,
        bias: bool = True,
        force_flash: bool = False,
    ):
        super().__init__()
        self.layernorm1 = LayerNorm(embedding_dim, bias=bias)
        self.attention = SelfAttention(embedding_dim, num_heads, causal, dropout, bias, force_flash=force_flash)
        self.layernorm2 = LayerNorm(embedding_dim, bias=bias)
        self.mlp = MLP(embedding_dim, 4 * embedding_dim, nn.GELU(), dropout=dropout, bias=bias)

    def forward(self, x):
        x = x + self.attention(self.layernorm1(x))
        x = x + self.mlp(self.layernorm2(x))
        return x


class SpecFormer(L.LightningModule):
    """Masked transformer for DESI spectra (pretraining objective: reconstruct masked chunks)."""

    def __init__(
        self,
        input_dim: int,
        embed_dim: int,
        num_layers: int,
        num_heads: int,
        max_len: int,
        mask_num_chunks: int = 6,
        mask_chunk_width: int = 50,
        slice_section_length: int = 20,
        slice_overlap: int = 10,
        dropout: float = 0.1,
        norm_first: bool = False,
        force_flash: bool = False,
        lr: float = 1e-4,
        weight_decay: float = 0.01,
    ):
        super().__init__()
        self.save_hyperparameters()

        self.data_embed = nn.Linear(input_dim, embed_dim)
        self.position_embed = nn.Embedding(max_len, embed_dim)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            [
                TransformerBlock(
                    embedding_dim=embed_dim,
                    num_heads=num_heads,
                    causal=False,
                    dropout=dropout,
                    bias=True,
                    force_flash=force_flash,
                )
                for _ in range(num_layers)
            ]
        )
        self.final_layernorm = LayerNorm(embed_dim, bias=True)
        self.head = nn.Linear(embed_dim, input_dim, bias=True)

        self._reset_parameters_datapt()

    def forward(self, x: torch.Tensor):
        """Forward pass through the model."""
        x = self.preprocess(x)
        return self.forward_without_preprocessing(x)

    def forward_without_preprocessing(self, x: torch.Tensor):
        """Forward pass through the model.
        The training step performs masking before preprocessing,
        thus samples should not be preprocessed again as in forward()"""

        t = x.shape[1]
        if t > self.hparams.max_len:
            raise ValueError(
                f"Cannot forward sequence of length {t}, "
                f"block size is only {self.hparams.max_len}"
            )
        pos = torch.arange(0, t, dtype=torch.long, device=x.device)  # shape (t)

        # forward the GPT model itself
        data_emb = self.data_embed(x)  # to shape (b, t, embedding_dim)
        pos_emb = self.position_embed(pos)  # to shape (t, embedding_dim)

        x = self.dropout(data_emb + pos_emb)
        for block in self.blocks:
            x = block(x)
        embedding = self.final_layernorm(x)
        reconstructions = self.head(embedding)

        return {"reconstructions": reconstructions, "embedding": embedding}

    def training_step(self, batch):
        # slice the input and copy
        input = self.preprocess(batch["spectrum"])
        target = torch.clone(input)

        # mask parts of the input
        input = self.mask_sequence(input)
        # forward pass
        output = self.forward_without_preprocessing(input)["reconstructions"]

        # find the mask locations
        locs = (input != target).type_as(output)
        loss = F.mse_loss(output * locs, target * locs, reduction="mean") / locs.mean()
        self.log("training_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch):
        # slice the input and copy
        input = self.preprocess(batch["spectrum"])
        target = torch.clone(input)

        # mask parts of the input
        input = self.mask_sequence(input)
        # forward pass
        output = self.forward_without_preprocessing(input)["reconstructions"]

        # find the mask locations
        locs = (input != target).type_as(output)
        loss = F.mse_loss(output * locs, target * locs, reduction="mean") / locs.mean()
        self.log("val_training_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=self.hparams.weight_decay)

    def mask_sequence(self, x: torch.Tensor):
        """Mask batched sequence"""
        return torch.stack([self._mask_seq(el) for el in x])

    def preprocess(self, x):
        std, mean = x.std(1, keepdim=True).clip_(0.2), x.mean(1, keepdim=True)
        x = (x - mean) / std
        x = self._slice(x)
        x = F.pad(x, pad=(2, 0, 1, 0), mode="constant", value=0)
        x[:, 0, 0] = (mean.squeeze() - 2) / 2
        x[:, 0, 1] = (std.squeeze() - 2) / 8
        return x

    def _reset_parameters_datapt(self):
        # not scaling the initial embeddngs.
        for emb in [self.data_embed, self.position_embed]:
            std = 1 / math.sqrt(self.hparams.embed_dim)
            nn.init.trunc_normal_(emb.weight, std=std, a=-3 * std, b=3 * std)

        # transformer block weights
        for block in self.blocks:
            for name, p in block.named_parameters():
                if name.endswith("weight") and p.dim() > 1:
                    std = 1 / math.sqrt(p.size(-1))
                    if name.endswith("projection.weight") or name.endswith("decoder.weight"):
                        std = std / math.sqrt(2 * self.hparams.num_layers)
                    nn.init.trunc_normal_(p, std=std, a=-3 * std, b=3 * std)

        nn.init.trunc_normal_(self.head.weight, std=1 / math.sqrt(self.hparams.embed_dim))

    def _slice(self, x):
        start_indices = np.arange(
            0,
            x.shape[1] - self.hparams.slice_overlap,
            self.hparams.slice_section_length - self.hparams.slice_overlap,
        )
        sections = [
            x[:, start : start + self.hparams.slice_section_length].transpose(1, 2)
            for start in start_indices
        ]

        # If the last section is not of length 'section_length', you can decide whether to keep or discard it
        if sections[-1].shape[-1] < self.hparams.slice_section_length:
            sections.pop(-1)  # Discard the last section

        return torch.cat(sections, 1)

    def _mask_seq(self, seq: torch.Tensor) -> torch.Tensor:
        """Randomly masks contiguous sections of an unbatched sequence,
        ensuring separation between chunks is at least chunk_width."""
        len_ = seq.shape[0]
        num_chunks = self.hparams.mask_num_chunks
        chunk_width = self.hparams.mask_chunk_width

        # Ensure there's enough space for the chunks and separations
        total_width_needed = num_chunks * chunk_width + (num_chunks - 1) * chunk_width
        if total_width_needed > len_:
            raise ValueError("Sequence is too short to mask")

        masked_seq = seq.clone()

        for i in range(num_chunks):
            start = (i * len_) // num_chunks
            loc = torch.randint(0, len_ // num_chunks - chunk_width, (1,)).item()
            masked_seq[loc + start : loc + start + chunk_width] = 0

        return masked_seq
