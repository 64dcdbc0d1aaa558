"""EHR transformer encoder with pluggable attention kernels.

attn_impl:
  "eager" - reference implementation (materialises the full attention matrix)
  "sdpa"  - torch.nn.functional.scaled_dot_product_attention (flash / mem-efficient kernels on GPU)
  "flash" - Dao-AILab flash-attn 2 varlen kernel on unpadded tokens (fastest on A100/H100)
"""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_varlen_func
    from flash_attn.bert_padding import unpad_input, pad_input
    HAS_FLASH_ATTN = True
except ImportError:  # flash-attn is optional (needs CUDA >= 11.6 and sm80+)
    HAS_FLASH_ATTN = False


@dataclass
class EHRTransformerConfig:
    vocab_size: int = 30000
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 12
    intermediate_size: int = 3072
    max_len: int = 512
    max_age: int = 120
    n_segments: int = 2
    dropout: float = 0.1
    attn_dropout: float = 0.1
    layer_norm_eps: float = 1e-12
    attn_impl: str = "sdpa"
    pad_token_id: int = 0


def _flash_supported(device):
    if not HAS_FLASH_ATTN or device.type != "cuda":
        return False
    major, _ = torch.cuda.get_device_capability(device)
    return major >= 8


class EHREmbeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.code = nn.Embedding(cfg.vocab_size, cfg.hidden_size, padding_idx=cfg.pad_token_id)
        self.age = nn.Embedding(cfg.max_age + 1, cfg.hidden_size)
        self.segment = nn.Embedding(cfg.n_segments, cfg.hidden_size)
        self.position = nn.Embedding(cfg.max_len, cfg.hidden_size)
        self.norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.dropout = nn.Dropout(cfg.dropout)
        self.register_buffer("position_ids", torch.arange(cfg.max_len).unsqueeze(0), persistent=False)

    def forward(self, input_ids, ages, visit_segments):
        L = input_ids.size(1)
        pos = self.position_ids[:, :L]
        x = self.code(input_ids) + self.age(ages.clamp(0, self.age.num_embeddings - 1)) \
            + self.segment(visit_segments) + self.position(pos)
        return self.dropout(self.norm(x))


class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        assert cfg.hidden_size % cfg.num_heads == 0
        self.num_heads = cfg.num_heads
        self.head_dim = cfg.hidden_size // cfg.num_heads
        self.qkv = nn.Linear(cfg.hidden_size, 3 * cfg.hidden_size)
        self.out = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.attn_dropout = cfg.attn_dropout
        self.impl = cfg.attn_impl

    def _eager(self, q, k, v, key_padding_mask):
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~key_padding_mask[:, None, None, :], torch.finfo(scores.dtype).min)
        probs = F.dropout(scores.softmax(-1), p=self.attn_dropout, training=self.training)
        return torch.matmul(probs, v)

    def _sdpa(self, q, k, v, key_padding_mask):
        mask = key_padding_mask[:, None, None, :]
        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                  dropout_p=self.attn_dropout if self.training else 0.0)

    def _flash(self, x, key_padding_mask):
        B, L, H = x.shape
        x_unpad, indices, cu_seqlens, max_seqlen = unpad_input(x, key_padding_mask)[:4]
        qkv = self.qkv(x_unpad).view(-1, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.unbind(dim=1)
        out = flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen,
                                     dropout_p=self.attn_dropout if self.training else 0.0,
                                     softmax_scale=1.0 / math.sqrt(self.head_dim), causal=False)
        out = self.out(out.reshape(-1, H))
        return pad_input(out, indices, B, L)

    def forward(self, x, key_padding_mask):
        if self.impl == "flash" and _flash_supported(x.device) and x.dtype in (torch.float16, torch.bfloat16):
            return self._flash(x, key_padding_mask)
        B, L, H = x.shape
        qkv = self.qkv(x).view(B, L, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        if self.impl == "eager":
            ctx = self._eager(q, k, v, key_padding_mask)
        else:
            ctx = self._sdpa(q, k, v, key_padding_mask)
        ctx = ctx.transpose(1, 2).reshape(B, L, H)
        return self.out(ctx)


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attn = SelfAttention(cfg)
        self.norm1 = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.ffn = nn.Sequential(
            nn.Linear(cfg.hidden_size, cfg.intermediate_size),
            nn.GELU(),
            nn.Linear(cfg.intermediate_size, cfg.hidden_size),
        )
        self.norm2 = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x, key_padding_mask):
        x = self.norm1(x + self.dropout(self.attn(x, key_padding_mask)))
        x = self.norm2(x + self.dropout(self.ffn(x)))
        return x


class EHRTransformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embeddings = EHREmbeddings(cfg)
        self.layers = nn.ModuleList([TransformerBlock(cfg) for _ in range(cfg.num_layers)])
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            module.weight.data.normal_(mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            module.bias.data.zero_()
        if isinstance(module, nn.Embedding) and module.padding_idx is not None:
            module.weight.data[module.padding_idx].zero_()

    def forward(self, input_ids, ages, visit_segments, attention_mask):
        key_padding_mask = attention_mask.bool()
        x = self.embeddings(input_ids, ages, visit_segments)
        for layer in self.layers:
            x = layer(x, key_padding_mask)
        return x


class EHRTransformerForMLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.encoder = EHRTransformer(cfg)
        self.transform = nn.Sequential(nn.Linear(cfg.hidden_size, cfg.hidden_size), nn.GELU(),
                                       nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps))
        self.decoder = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=True)
        self.decoder.weight = self.encoder.embeddings.code.weight  # tie weights

    def forward(self, input_ids, ages, visit_segments, attention_mask, labels=None):
        h = self.encoder(input_ids, ages, visit_segments, attention_mask)
        if labels is not None:
            sel = labels != -100
            logits = self.decoder(self.transform(h[sel]))
            loss = F.cross_entropy(logits.float(), labels[sel])
            return {"loss": loss, "logits": logits}
        return {"logits": self.decoder(self.transform(h))}
