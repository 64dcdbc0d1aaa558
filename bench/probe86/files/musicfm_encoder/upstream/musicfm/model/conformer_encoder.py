"""Conformer encoder for self-supervised music representation learning (MusicFM / MERT style).

Two front-ends are supported:
  * ``cqt``  - constant-Q transform from nnAudio, used as the reconstruction target of the
               acoustic teacher (MERT), always computed in fp32;
  * ``mel``  - 128-bin log-mel spectrogram with per-utterance normalisation (MusicFM / BEST-RQ).

The encoder stacks conformer blocks with rotary self-attention.  Attention runs through
flash-attn's variable-length kernel by default so that padded batches of songs with very
different lengths do not waste compute.
"""
import math
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from einops import rearrange
from nnAudio import features as nnAudioFeatures

from flash_attn import flash_attn_varlen_func
from flash_attn.bert_padding import pad_input, unpad_input

try:
    import xformers.ops as xops
except ImportError:  # optional memory-efficient path
    xops = None

try:
    from apex.normalization import FusedLayerNorm as LayerNorm
except ImportError:
    LayerNorm = nn.LayerNorm


class CQTFrontend(nn.Module):
    """nnAudio CQT target. Kept in fp32: half precision destroys the low-energy bins."""

    def __init__(self, sample_rate=24000, hop_length=240, n_bins=336, bins_per_octave=48,
                 fmin=32.7):
        super().__init__()
        self.cqt = nnAudioFeatures.cqt.CQT(
            sr=sample_rate, hop_length=hop_length, fmin=fmin, n_bins=n_bins,
            bins_per_octave=bins_per_octave, filter_scale=1, norm=1, window="hann",
            center=True, pad_mode="constant", trainable=False, output_format="Magnitude",
            verbose=False)

    @torch.no_grad()
    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        with torch.cuda.amp.autocast(enabled=False):
            cqt = self.cqt(wav.float())            # (B, n_bins, T)
            cqt = torch.log1p(cqt)
        return cqt.transpose(1, 2)                  # (B, T, n_bins)


class MelFrontend(nn.Module):
    def __init__(self, sample_rate=24000, n_fft=2048, hop_length=240, n_mels=128):
        super().__init__()
        self.spec = torchaudio.transforms.MelSpectrogram(
            sample_rate=sample_rate, n_fft=n_fft, hop_length=hop_length, n_mels=n_mels,
            power=2.0, norm="slaney", mel_scale="slaney")
        self.amp_to_db = torchaudio.transforms.AmplitudeToDB(stype="power", top_db=80)

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        mel = self.amp_to_db(self.spec(wav.float()))        # (B, n_mels, T)
        std, mean = torch.std_mean(mel, dim=(1, 2), keepdim=True)
        mel = (mel - mean) / (std + 1e-5)
        return mel.transpose(1, 2)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim: int, base: float = 10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, seq_len: int, device: torch.device) -> Tuple[torch.Tensor, torch.Tensor]:
        t = torch.arange(seq_len, device=device, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[None, :, None, :], emb.sin()[None, :, None, :]


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(x, cos, sin):
    return (x * cos) + (rotate_half(x) * sin)


class SelfAttention(nn.Module):
    def __init__(self, dim: int, n_heads: int, dropout: float = 0.0, attn_impl: str = "flash"):
        super().__init__()
        assert dim % n_heads == 0
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout
        self.attn_impl = attn_impl
        self.rotary = RotaryEmbedding(self.head_dim)

    def forward(self, x: torch.Tensor, padding_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        B, T, C = x.shape
        qkv = self.qkv(x).view(B, T, 3, self.n_heads, self.head_dim)
        q, k, v = qkv.unbind(dim=2)                          # (B, T, H, D)
        cos, sin = self.rotary(T, x.device)
        q = apply_rotary(q, cos.to(q.dtype), sin.to(q.dtype))
        k = apply_rotary(k, cos.to(k.dtype), sin.to(k.dtype))
        dropout_p = self.dropout if self.training else 0.0

        if self.attn_impl == "flash":
            # padding_mask: True = padded frame
            keep = ~padding_mask if padding_mask is not None else torch.ones(B, T, dtype=torch.bool, device=x.device)
            q_u, indices, cu_seqlens, max_seqlen = unpad_input(q, keep)[:4]
            k_u = unpad_input(k, keep)[0]
            v_u = unpad_input(v, keep)[0]
            out = flash_attn_varlen_func(
                q_u, k_u, v_u, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen,
                dropout_p=dropout_p, softmax_scale=None, causal=False)
            out = pad_input(out, indices, B, T)              # (B, T, H, D)
        elif self.attn_impl == "xformers" and xops is not None:
            bias = None
            if padding_mask is not None:
                bias = torch.zeros(B, self.n_heads, T, T, device=x.device, dtype=q.dtype)
                bias.masked_fill_(padding_mask[:, None, None, :], float("-inf"))
            out = xops.memory_efficient_attention(q, k, v, attn_bias=bias, p=dropout_p)
        else:
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, H, T, D)
            mask = None
            if padding_mask is not None:
                mask = ~padding_mask[:, None, None, :]
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True,
                                                enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
            out = out.transpose(1, 2)
        return self.proj(out.reshape(B, T, C))


class SwiGLUFeedForward(nn.Module):
    def __init__(self, dim: int, mult: int = 4, dropout: float = 0.0):
        super().__init__()
        hidden = int(2 * dim * mult / 3)
        self.w12 = nn.Linear(dim, 2 * hidden)
        self.w3 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        a, b = self.w12(x).chunk(2, dim=-1)
        return self.w3(self.drop(F.silu(a) * b))


class ConvModule(nn.Module):
    def __init__(self, dim: int, kernel_size: int = 31, dropout: float = 0.0):
        super().__init__()
        self.norm = LayerNorm(dim)
        self.pw1 = nn.Conv1d(dim, 2 * dim, 1)
        self.dw = nn.Conv1d(dim, dim, kernel_size, padding=kernel_size // 2, groups=dim)
        self.bn = nn.BatchNorm1d(dim)
        self.pw2 = nn.Conv1d(dim, dim, 1)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, padding_mask=None):
        x = self.norm(x)
        if padding_mask is not None:
            x = x.masked_fill(padding_mask.unsqueeze(-1), 0.0)
        x = x.transpose(1, 2)
        x = F.glu(self.pw1(x), dim=1)
        x = F.silu(self.bn(self.dw(x)))
        x = self.drop(self.pw2(x))
        return x.transpose(1, 2)


class ConformerBlock(nn.Module):
    def __init__(self, dim, n_heads, ff_mult=4, conv_kernel=31, dropout=0.1, attn_impl="flash"):
        super().__init__()
        self.ff1_norm = LayerNorm(dim)
        self.ff1 = SwiGLUFeedForward(dim, ff_mult, dropout)
        self.attn_norm = LayerNorm(dim)
        self.attn = SelfAttention(dim, n_heads, dropout, attn_impl)
        self.conv = ConvModule(dim, conv_kernel, dropout)
        self.ff2_norm = LayerNorm(dim)
        self.ff2 = SwiGLUFeedForward(dim, ff_mult, dropout)
        self.final_norm = LayerNorm(dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, padding_mask=None):
        x = x + 0.5 * self.ff1(self.ff1_norm(x))
        x = x + self.drop(self.attn(self.attn_norm(x), padding_mask))
        x = x + self.conv(x, padding_mask)
        x = x + 0.5 * self.ff2(self.ff2_norm(x))
        return self.final_norm(x)


class RandomProjectionQuantizer(nn.Module):
    """BEST-RQ target: frozen random projection + codebook lookup on normalised features."""

    def __init__(self, in_dim, codebook_dim=16, codebook_size=4096, seed=142):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("proj", nn.init.xavier_normal_(torch.empty(in_dim, codebook_dim), generator=g))
        self.register_buffer("codebook", F.normalize(torch.randn(codebook_size, codebook_dim, generator=g), dim=-1))

    @torch.no_grad()
    def forward(self, feats):
        z = F.normalize(feats.float() @ self.proj, dim=-1)
        dist = torch.cdist(z, self.codebook.unsqueeze(0).expand(z.size(0), -1, -1))
        return dist.argmin(dim=-1)


class MusicConformer(nn.Module):
    def __init__(self, frontend="mel", dim=1024, depth=12, n_heads=16, stride=4,
                 codebook_size=4096, num_codebooks=1, mask_prob=0.6, mask_len=5,
                 attn_impl="flash", dropout=0.1):
        super().__init__()
        self.frontend = MelFrontend() if frontend == "mel" else CQTFrontend()
        in_dim = 128 if frontend == "mel" else 336
        self.stride = stride
        self.subsample = nn.Sequential(
            nn.Conv2d(1, dim // 8, 3, stride=2, padding=1), nn.GELU(),
            nn.Conv2d(dim // 8, dim // 8, 3, stride=2, padding=1), nn.GELU())
        self.in_proj = nn.Linear((dim // 8) * math.ceil(in_dim / 4), dim)
        self.blocks = nn.ModuleList(
            [ConformerBlock(dim, n_heads, dropout=dropout, attn_impl=attn_impl) for _ in range(depth)])
        self.mask_emb = nn.Parameter(torch.randn(dim) * 0.02)
        self.quantizers = nn.ModuleList(
            [RandomProjectionQuantizer(in_dim * stride, codebook_size=codebook_size, seed=142 + i)
             for i in range(num_codebooks)])
        self.heads = nn.ModuleList([nn.Linear(dim, codebook_size) for _ in range(num_codebooks)])
        self.mask_prob = mask_prob
        self.mask_len = mask_len

    def _mask(self, B, T, device):
        starts = torch.rand(B, T, device=device) < (self.mask_prob / self.mask_len)
        mask = torch.zeros(B, T, dtype=torch.bool, device=device)
        for offs in range(self.mask_len):
            mask[:, offs:] |= starts[:, : T - offs]
        return mask

    def forward(self, wav: torch.Tensor, lengths: Optional[torch.Tensor] = None):
        feats = self.frontend(wav)                                   # (B, T, F)
        B, T, Fdim = feats.shape
        x = self.subsample(feats.unsqueeze(1))                       # (B, C, T/4, F/4)
        x = rearrange(x, "b c t f -> b t (c f)")
        x = self.in_proj(x)
        Tq = x.size(1)
        padding_mask = None
        if lengths is not None:
            frame_len = torch.div(lengths, self.frontend_hop * self.stride, rounding_mode="floor")
            padding_mask = torch.arange(Tq, device=x.device)[None, :] >= frame_len[:, None]

        mask = self._mask(B, Tq, x.device)
        x = torch.where(mask.unsqueeze(-1), self.mask_emb.to(x.dtype), x)
        for blk in self.blocks:
            x = blk(x, padding_mask)

        targets_in = feats[:, : Tq * self.stride].reshape(B, Tq, self.stride * Fdim)
        losses = []
        for q, head in zip(self.quantizers, self.heads):
            tgt = q(targets_in)
            logits = head(x)
            sel = mask if padding_mask is None else (mask & ~padding_mask)
            losses.append(F.cross_entropy(logits[sel].float(), tgt[sel]))
        return sum(losses) / len(losses), x

    @property
    def frontend_hop(self):
        return 240
