"""Transformer encoder layer for PFNs with train/test attention separation.

Training points attend to each other; test points attend only to the training points (never to
each other), which is what makes the PFN's predictions for different test points independent.
With ``efficient_eval_masking`` this is done with two attention calls instead of one masked
call.  On GPUs we route both calls through FlashAttention-2 (packed QKV for the train part,
varlen-free cross attention for the test part).
"""
from functools import partial
from typing import Optional

import torch
import torch.nn.functional as F
from flash_attn import flash_attn_func, flash_attn_qkvpacked_func
from torch import Tensor, nn
from torch.nn.modules.transformer import Dropout, LayerNorm, Linear, Module, _get_activation_fn
from torch.utils.checkpoint import checkpoint


class FlashMultiheadAttention(nn.Module):
    """Drop-in for nn.MultiheadAttention (batch_first=False) backed by flash-attn."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0):
        super().__init__()
        assert embed_dim % num_heads == 0
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj = nn.Linear(embed_dim, 3 * embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.dropout = dropout

    def _split(self, x: Tensor, n: int) -> Tensor:
        # (seq, batch, n*embed) -> (batch, seq, n, heads, head_dim)
        s, b, _ = x.shape
        return x.transpose(0, 1).reshape(b, s, n, self.num_heads, self.head_dim)

    def self_attention(self, x: Tensor) -> Tensor:
        qkv = self._split(self.in_proj(x), 3)
        out = flash_attn_qkvpacked_func(qkv.half() if qkv.dtype == torch.float32 else qkv,
                                        dropout_p=self.dropout if self.training else 0.0)
        b, s = out.shape[:2]
        return self.out_proj(out.reshape(b, s, self.embed_dim).to(x.dtype).transpose(0, 1))

    def cross_attention(self, q_in: Tensor, kv_in: Tensor) -> Tensor:
        w_q, w_kv = self.in_proj.weight.split([self.embed_dim, 2 * self.embed_dim])
        b_q, b_kv = self.in_proj.bias.split([self.embed_dim, 2 * self.embed_dim])
        q = self._split(F.linear(q_in, w_q, b_q), 1)[:, :, 0]
        kv = self._split(F.linear(kv_in, w_kv, b_kv), 2)
        k, v = kv[:, :, 0], kv[:, :, 1]
        dt = torch.float16 if q.dtype == torch.float32 else q.dtype
        out = flash_attn_func(q.to(dt), k.to(dt), v.to(dt),
                              dropout_p=self.dropout if self.training else 0.0, causal=False)
        b, s = out.shape[:2]
        return self.out_proj(out.reshape(b, s, self.embed_dim).to(q_in.dtype).transpose(0, 1))


class TransformerEncoderLayer(Module):
    r"""TransformerEncoderLayer is made up of self-attn and feedforward network.

    Args:
        d_model: the number of expected features in the input (required).
        nhead: the number of heads in the multiheadattention models (required).
        dim_feedforward: the dimension of the feedforward network model (default=2048).
        dropout: the dropout value (default=0.1).
        activation: the activation function of intermediate layer, relu or gelu (default=relu).
        layer_norm_eps: the eps value in layer normalization components (default=1e-5).
        pre_norm: apply layer norm before the sublayers.
        recompute_attn: recompute attention in the backward pass (saves memory).
        save_trainingset_representations: cache the keys/values of the training set.
    """
    __constants__ = ["batch_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, pre_norm=False,
                 device=None, dtype=None, recompute_attn=False, save_trainingset_representations=False,
                 use_flash_attention=True, profile_ranges=False) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.use_flash_attention = use_flash_attention
        if use_flash_attention:
            self.self_attn = FlashMultiheadAttention(d_model, nhead, dropout=dropout)
        else:
            self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout,
                                                   batch_first=batch_first, **factory_kwargs)
        # Implementation of Feedforward model
        self.linear1 = Linear(d_model, dim_feedforward, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **factory_kwargs)

        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.pre_norm = pre_norm
        self.recompute_attn = recompute_attn
        self.save_trainingset_representations = save_trainingset_representations
        self.saved_src_to_attend_to = None
        self.profile_ranges = profile_ranges

        self.activation = _get_activation_fn(activation)

    def __setstate__(self, state):
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def _attend(self, src_left, src_right, single_eval_position):
        if self.use_flash_attention:
            left = self.self_attn.self_attention(src_left)
            right = self.self_attn.cross_attention(src_right, src_left) if src_right.shape[0] else src_right
            return left, right
        attn = partial(checkpoint, self.self_attn) if self.recompute_attn else self.self_attn
        left = attn(src_left, src_left, src_left)[0]
        right = attn(src_right, src_left, src_left)[0]
        return left, right

    def forward(self, src: Tensor, src_mask: Optional[Tensor] = None,
                src_key_padding_mask: Optional[Tensor] = None) -> Tensor:
        r"""Pass the input through the encoder layer.

        Args:
            src: the sequence to the encoder layer (required).
            src_mask: an int (the single eval position) for efficient eval masking, or a mask.
            src_key_padding_mask: the mask for the src keys per batch (optional).
        """
        if self.save_trainingset_representations:
            assert isinstance(src_mask, int) and not self.training, \
                "save_trainingset_representations is only supported in eval mode and requires src_mask to be an int"

        if self.pre_norm:
            src_ = self.norm1(src)
        else:
            src_ = src

        if self.profile_ranges:
            torch.cuda.nvtx.range_push("pfn_attention")
        if isinstance(src_mask, tuple):
            # global attention setup
            assert not self.self_attn.batch_first
            assert src_key_padding_mask is None

            global_src_mask, trainset_src_mask, valset_src_mask = src_mask

            num_global_tokens = global_src_mask.shape[0]
            num_train_tokens = trainset_src_mask.shape[0]

            global_tokens_src = src_[:num_global_tokens]
            train_tokens_src = src_[num_global_tokens:num_global_tokens + num_train_tokens]
            global_and_train_tokens_src = src_[:num_global_tokens + num_train_tokens]
            eval_tokens_src = src_[num_global_tokens + num_train_tokens:]

            attn = partial(checkpoint, self.self_attn) if self.recompute_attn else self.self_attn

            global_tokens_src2 = attn(global_tokens_src, global_and_train_tokens_src, global_and_train_tokens_src,
                                      None, True, global_src_mask)[0]
            train_tokens_src2 = attn(train_tokens_src, global_tokens_src, global_tokens_src, None, True,
                                     trainset_src_mask)[0]
            eval_tokens_src2 = attn(eval_tokens_src, src_, src_,
                                    None, True, valset_src_mask)[0]

            src2 = torch.cat([global_tokens_src2, train_tokens_src2, eval_tokens_src2], dim=0)

        elif isinstance(src_mask, int):
            assert src_key_padding_mask is None
            single_eval_position = src_mask
            src_to_attend_to = src_[:single_eval_position]
            if self.save_trainingset_representations:
                if single_eval_position == src_.shape[0] or single_eval_position is None:
                    self.saved_src_to_attend_to = src_to_attend_to
                elif single_eval_position == 0:
                    if self.saved_src_to_attend_to is None:
                        raise ValueError("First save the trainingset representations by passing in a src_mask of None or the length of the src")
                    src_to_attend_to = self.saved_src_to_attend_to
                else:
                    raise ValueError("save_trainingset_representations only supports single_eval_position == 0 or single_eval_position == src.shape[0]")
            src_left, src_right = self._attend(src_to_attend_to, src_[single_eval_position:], single_eval_position)
            src2 = torch.cat([src_left, src_right], dim=0)
        else:
            if self.recompute_attn:
                src2 = checkpoint(self.self_attn, src_, src_, src_, src_key_padding_mask, True, src_mask)[0]
            else:
                src2 = self.self_attn(src_, src_, src_, attn_mask=src_mask,
                                      key_padding_mask=src_key_padding_mask)[0]
        if self.profile_ranges:
            torch.cuda.nvtx.range_pop()
        src = src + self.dropout1(src2)
        if not self.pre_norm:
            src = self.norm1(src)

        if self.pre_norm:
            src_ = self.norm2(src)
        else:
            src_ = src
        src2 = self.linear2(self.dropout(self.activation(self.linear1(src_))))
        src = src + self.dropout2(src2)

        if not self.pre_norm:
            src = self.norm2(src)
        return src
