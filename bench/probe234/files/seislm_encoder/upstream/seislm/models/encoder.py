"""
Transformer encoder for self-supervised pretraining on raw three-component
seismograms (wav2vec 2.0 style): a strided 1-D conv feature extractor, a
convolutional relative position embedding and a stack of pre-LN transformer
layers.

Attention implementations:
    "flash_attention_2"  Dao-AILab flash-attn (fp16/bf16, Ampere+), varlen for padded batches
    "sdpa"               torch.nn.functional.scaled_dot_product_attention
    "eager"              plain matmul/softmax, used for debugging and attention maps
"""
import math
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_func, flash_attn_varlen_func
    from flash_attn.bert_padding import pad_input, unpad_input

    HAS_FLASH_ATTN = True
except ImportError:
    HAS_FLASH_ATTN = False


@dataclass
class EncoderConfig:
    in_channels: int = 3
    conv_dim: List[int] = field(default_factory=lambda: [256, 256, 256, 256, 256])
    conv_kernel: List[int] = field(default_factory=lambda: [10, 5, 3, 3, 2])
    conv_stride: List[int] = field(default_factory=lambda: [5, 2, 2, 2, 2])
    hidden_size: int = 384
    num_layers: int = 8
    num_heads: int = 6
    intermediate_size: int = 1536
    dropout: float = 0.1
    attention_dropout: float = 0.0
    layerdrop: float = 0.05
    pos_conv_kernel: int = 65
    pos_conv_groups: int = 16
    attn_implementation: str = "flash_attention_2" if HAS_FLASH_ATTN else "sdpa"
    mask_prob: float = 0.65
    mask_length: int = 10


class FeatureExtractor(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        layers = []
        in_dim = cfg.in_channels
        for i, (dim, k, s) in enumerate(zip(cfg.conv_dim, cfg.conv_kernel, cfg.conv_stride)):
            layers.append(nn.Conv1d(in_dim, dim, k, stride=s, bias=False))
            layers.append(nn.GroupNorm(dim, dim) if i == 0 else nn.Identity())
            layers.append(nn.GELU())
            in_dim = dim
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return self.conv(x)

    def output_lengths(self, lengths: torch.Tensor, cfg: EncoderConfig) -> torch.Tensor:
        for k, s in zip(cfg.conv_kernel, cfg.conv_stride):
            lengths = torch.div(lengths - k, s, rounding_mode="floor") + 1
        return lengths


class PositionalConvEmbedding(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.conv = nn.Conv1d(cfg.hidden_size, cfg.hidden_size, cfg.pos_conv_kernel,
                              padding=cfg.pos_conv_kernel // 2, groups=cfg.pos_conv_groups)
        self.conv = nn.utils.parametrizations.weight_norm(self.conv, name="weight", dim=2)
        self.remove_pad = cfg.pos_conv_kernel % 2 == 0

    def forward(self, x):
        # x: (B, T, C)
        h = self.conv(x.transpose(1, 2))
        if self.remove_pad:
            h = h[:, :, :-1]
        return F.gelu(h).transpose(1, 2)


class SelfAttention(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.num_heads = cfg.num_heads
        self.head_dim = cfg.hidden_size // cfg.num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(cfg.hidden_size, 3 * cfg.hidden_size)
        self.out = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.dropout = cfg.attention_dropout
        self.impl = cfg.attn_implementation

    def _eager(self, q, k, v, key_padding_mask):
        # q, k, v: (B, H, T, D)
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        if key_padding_mask is not None:
            scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        attn = scores.softmax(dim=-1)
        attn = F.dropout(attn, p=self.dropout, training=self.training)
        return torch.matmul(attn, v), attn

    def forward(self, x, key_padding_mask: Optional[torch.Tensor] = None, output_attentions=False):
        B, T, C = x.shape
        qkv = self.qkv(x).view(B, T, 3, self.num_heads, self.head_dim)
        dropout_p = self.dropout if self.training else 0.0
        attn = None

        if self.impl == "flash_attention_2" and not output_attentions:
            q, k, v = qkv.unbind(dim=2)  # (B, T, H, D)
            if key_padding_mask is None:
                out = flash_attn_func(q, k, v, dropout_p=dropout_p, softmax_scale=self.scale, causal=False)
            else:
                valid = ~key_padding_mask
                q_u, idx, cu_seqlens, max_len = unpad_input(q, valid)[:4]
                k_u = unpad_input(k, valid)[0]
                v_u = unpad_input(v, valid)[0]
                out_u = flash_attn_varlen_func(q_u, k_u, v_u, cu_seqlens, cu_seqlens, max_len, max_len,
                                               dropout_p=dropout_p, softmax_scale=self.scale, causal=False)
                out = pad_input(out_u, idx, B, T)
            out = out.reshape(B, T, C)
        elif self.impl == "sdpa" and not output_attentions:
            q, k, v = qkv.permute(2, 0, 3, 1, 4)  # (B, H, T, D)
            mask = None
            if key_padding_mask is not None:
                mask = ~key_padding_mask[:, None, None, :]
            # force the flash / mem-efficient kernels; the math fallback OOMs for 60 s windows at 100 Hz
            with torch.backends.cuda.sdp_kernel(enable_flash=mask is None, enable_math=False, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
            out = out.transpose(1, 2).reshape(B, T, C)
        else:
            q, k, v = qkv.permute(2, 0, 3, 1, 4)
            out, attn = self._eager(q, k, v, key_padding_mask)
            out = out.transpose(1, 2).reshape(B, T, C)

        return self.out(out), attn


class EncoderLayer(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg.hidden_size)
        self.attn = SelfAttention(cfg)
        self.norm2 = nn.LayerNorm(cfg.hidden_size)
        self.ff = nn.Sequential(
            nn.Linear(cfg.hidden_size, cfg.intermediate_size),
            nn.GELU(),
            nn.Dropout(cfg.dropout),
            nn.Linear(cfg.intermediate_size, cfg.hidden_size),
        )
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x, key_padding_mask=None, output_attentions=False):
        h, attn = self.attn(self.norm1(x), key_padding_mask, output_attentions)
        x = x + self.dropout(h)
        x = x + self.dropout(self.ff(self.norm2(x)))
        return x, attn


class SeismicEncoder(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.cfg = cfg
        self.features = FeatureExtractor(cfg)
        self.proj = nn.Linear(cfg.conv_dim[-1], cfg.hidden_size)
        self.feat_norm = nn.LayerNorm(cfg.conv_dim[-1])
        self.pos = PositionalConvEmbedding(cfg)
        self.layers = nn.ModuleList([EncoderLayer(cfg) for _ in range(cfg.num_layers)])
        self.norm = nn.LayerNorm(cfg.hidden_size)
        self.mask_emb = nn.Parameter(torch.zeros(cfg.hidden_size).uniform_())

    def compute_mask(self, B, T, device) -> torch.Tensor:
        """Span masking as in wav2vec 2.0 (simplified, no minimum number of spans)."""
        n_spans = int(self.cfg.mask_prob * T / self.cfg.mask_length + torch.rand(1).item())
        mask = torch.zeros(B, T, dtype=torch.bool, device=device)
        if n_spans == 0:
            return mask
        starts = torch.randint(0, max(1, T - self.cfg.mask_length), (B, n_spans), device=device)
        offsets = torch.arange(self.cfg.mask_length, device=device)
        idx = (starts[..., None] + offsets).reshape(B, -1).clamp(max=T - 1)
        mask.scatter_(1, idx, True)
        return mask

    def forward(self, waveforms, lengths: Optional[torch.Tensor] = None, mask_time=False,
                output_attentions=False) -> Tuple[torch.Tensor, Optional[torch.Tensor], List]:
        feats = self.features(waveforms).transpose(1, 2)  # (B, T, C)
        feats = self.proj(self.feat_norm(feats))
        B, T, _ = feats.shape

        key_padding_mask = None
        if lengths is not None:
            out_len = self.features.output_lengths(lengths, self.cfg)
            key_padding_mask = torch.arange(T, device=feats.device)[None, :] >= out_len[:, None]

        time_mask = None
        if mask_time:
            time_mask = self.compute_mask(B, T, feats.device)
            feats = torch.where(time_mask[..., None], self.mask_emb.to(feats.dtype), feats)

        x = feats + self.pos(feats)
        attentions = []
        for layer in self.layers:
            if self.training and torch.rand(1).item() < self.cfg.layerdrop:
                continue
            x, attn = layer(x, key_padding_mask, output_attentions)
            if output_attentions:
                attentions.append(attn)
        return self.norm(x), time_mask, attentions


def default_amp_dtype():
    """bf16 where the hardware supports it (A100/H100), fp16 otherwise."""
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def pretrain_step(model, batch, optimizer, device, temperature=0.1):
    """
    One contrastive step (InfoNCE between masked outputs and the unmasked targets).
    Mixed precision without a loss scaler: bf16 is assumed on the training cluster.
    """
    waveforms = batch["waveforms"].to(device, non_blocking=True)
    lengths = batch.get("lengths")
    lengths = lengths.to(device) if lengths is not None else None
    with torch.autocast(device_type="cuda", dtype=default_amp_dtype()):
        with torch.no_grad():
            targets, _, _ = model(waveforms, lengths, mask_time=False)
        outputs, time_mask, _ = model(waveforms, lengths, mask_time=True)
        o = F.normalize(outputs[time_mask].float(), dim=-1)
        t = F.normalize(targets[time_mask].float(), dim=-1)
        logits = o @ t.T / temperature
        loss = F.cross_entropy(logits, torch.arange(len(o), device=o.device))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.detach()


if __name__ == "__main__":
    import time

    cfg = EncoderConfig()
    model = SeismicEncoder(cfg).cuda().to(default_amp_dtype())
    x = torch.randn(32, 3, 6000, device="cuda", dtype=default_amp_dtype())
    with torch.no_grad():
        model(x)
        torch.cuda.synchronize()
        t0 = time.time()
        for _ in range(10):
            y, _, _ = model(x)
        torch.cuda.synchronize()  # timing
    print(cfg.attn_implementation, y.shape, f"{(time.time() - t0) / 10 * 1000:.1f} ms")
