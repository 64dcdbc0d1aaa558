# Copyright (c) 2023 Wespeaker team
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
"""MFA-Conformer speaker embedding extractor.

Reference: Y. Zhang et al., "MFA-Conformer: Multi-scale Feature Aggregation
Conformer for Automatic Speaker Verification", Interspeech 2022.

The outputs of all conformer blocks are concatenated along the feature axis
before pooling. Self-attention uses flash-attn when it is installed and the
input is fp16/bf16 on a GPU, otherwise torch's scaled_dot_product_attention.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import wespeaker.models.pooling_layers as pooling_layers

try:
    from flash_attn import flash_attn_func, flash_attn_varlen_func
    FLASH_ATTN_AVAILABLE = True
except ImportError:
    FLASH_ATTN_AVAILABLE = False


class Swish(nn.Module):
    """Construct a Swish object."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


class Conv2dSubsampling(nn.Module):
    """Convolutional 2D subsampling (to 1/2 or 1/4 length)."""

    def __init__(self, idim: int, odim: int, dropout_rate: float, rate: int = 2):
        super().__init__()
        stride2 = 2 if rate == 4 else 1
        self.conv = nn.Sequential(
            nn.Conv2d(1, odim, 3, 2),
            nn.ReLU(),
            nn.Conv2d(odim, odim, 3, stride2),
            nn.ReLU(),
        )
        f = ((idim - 1) // 2 - 1) // stride2
        self.out = nn.Linear(odim * f, odim)
        self.dropout = nn.Dropout(dropout_rate)
        self.rate = rate

    def forward(self, x: torch.Tensor, mask: torch.Tensor):
        x = x.unsqueeze(1)  # (b, c=1, t, f)
        x = self.conv(x)
        b, c, t, f = x.size()
        x = self.out(x.transpose(1, 2).contiguous().view(b, t, c * f))
        x = self.dropout(x)
        if self.rate == 4:
            mask = mask[:, :-2:2][:, :-2:2]
        else:
            mask = mask[:, :-2:2][:, :-2:1]
        return x, mask[:, :t]


class PositionalEncoding(nn.Module):
    """Absolute sinusoidal positional encoding."""

    def __init__(self, d_model: int, dropout_rate: float, max_len: int = 5000):
        super().__init__()
        self.d_model = d_model
        self.xscale = math.sqrt(self.d_model)
        self.dropout = nn.Dropout(p=dropout_rate)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float32).unsqueeze(1)
        div_term = torch.exp(
            torch.arange(0, d_model, 2, dtype=torch.float32) *
            -(math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x * self.xscale + self.pe[:, :x.size(1)].to(x.dtype)
        return self.dropout(x)


class MultiHeadedSelfAttention(nn.Module):
    """Multi-head self-attention with optional flash-attn kernels."""

    def __init__(self, n_head: int, n_feat: int, dropout_rate: float,
                 use_flash_attn: bool = True):
        super().__init__()
        assert n_feat % n_head == 0
        self.d_k = n_feat // n_head
        self.h = n_head
        self.linear_q = nn.Linear(n_feat, n_feat)
        self.linear_k = nn.Linear(n_feat, n_feat)
        self.linear_v = nn.Linear(n_feat, n_feat)
        self.linear_out = nn.Linear(n_feat, n_feat)
        self.dropout_rate = dropout_rate
        self.use_flash_attn = use_flash_attn

    def _flash_varlen(self, q, k, v, mask):
        # unpad: (B, T, H, D) -> (total, H, D) with cumulative lengths
        lengths = mask.sum(dim=1, dtype=torch.int32)
        cu_seqlens = F.pad(torch.cumsum(lengths, dim=0, dtype=torch.int32), (1, 0))
        max_len = int(lengths.max())
        idx = mask.flatten().nonzero(as_tuple=False).flatten()
        qu = q.reshape(-1, self.h, self.d_k)[idx]
        ku = k.reshape(-1, self.h, self.d_k)[idx]
        vu = v.reshape(-1, self.h, self.d_k)[idx]
        out = flash_attn_varlen_func(
            qu, ku, vu, cu_seqlens, cu_seqlens, max_len, max_len,
            dropout_p=self.dropout_rate if self.training else 0.0,
            causal=False)
        full = q.new_zeros(q.shape[0] * q.shape[1], self.h, self.d_k)
        full[idx] = out
        return full.view(q.shape)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch, time, size)
            mask: (batch, time), True for valid frames
        """
        B, T, _ = x.shape
        q = self.linear_q(x).view(B, T, self.h, self.d_k)
        k = self.linear_k(x).view(B, T, self.h, self.d_k)
        v = self.linear_v(x).view(B, T, self.h, self.d_k)

        if self.use_flash_attn and FLASH_ATTN_AVAILABLE and x.is_cuda and x.dtype in (torch.float16, torch.bfloat16):
            if bool(mask.all()):
                out = flash_attn_func(
                    q, k, v,
                    dropout_p=self.dropout_rate if self.training else 0.0,
                    causal=False)
            else:
                out = self._flash_varlen(q, k, v, mask)
        else:
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, H, T, D)
            attn_mask = mask[:, None, None, :]
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(
                    q, k, v, attn_mask=attn_mask,
                    dropout_p=self.dropout_rate if self.training else 0.0)
            out = out.transpose(1, 2)

        out = out.reshape(B, T, self.h * self.d_k)
        return self.linear_out(out)


class ConvolutionModule(nn.Module):
    """ConvolutionModule in Conformer model."""

    def __init__(self, channels: int, kernel_size: int = 15):
        super().__init__()
        assert (kernel_size - 1) % 2 == 0
        self.pointwise_conv1 = nn.Conv1d(channels, 2 * channels, 1)
        self.depthwise_conv = nn.Conv1d(channels, channels, kernel_size,
                                        padding=(kernel_size - 1) // 2,
                                        groups=channels)
        self.norm = nn.BatchNorm1d(channels)
        self.pointwise_conv2 = nn.Conv1d(channels, channels, 1)
        self.activation = Swish()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = x.transpose(1, 2)  # (B, C, T)
        x = x.masked_fill(~mask.unsqueeze(1), 0.0)
        x = self.pointwise_conv1(x)
        x = F.glu(x, dim=1)
        x = self.depthwise_conv(x)
        x = self.activation(self.norm(x))
        x = self.pointwise_conv2(x)
        x = x.masked_fill(~mask.unsqueeze(1), 0.0)
        return x.transpose(1, 2)


class FeedForward(nn.Module):

    def __init__(self, idim: int, hidden_units: int, dropout_rate: float):
        super().__init__()
        self.w_1 = nn.Linear(idim, hidden_units)
        self.activation = Swish()
        self.dropout = nn.Dropout(dropout_rate)
        self.w_2 = nn.Linear(hidden_units, idim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w_2(self.dropout(self.activation(self.w_1(x))))


class ConformerBlock(nn.Module):

    def __init__(self, size, n_head, ff_units, kernel_size, dropout_rate,
                 use_flash_attn=True):
        super().__init__()
        self.ff1 = FeedForward(size, ff_units, dropout_rate)
        self.ff2 = FeedForward(size, ff_units, dropout_rate)
        self.mhsa = MultiHeadedSelfAttention(n_head, size, dropout_rate,
                                             use_flash_attn)
        self.conv = ConvolutionModule(size, kernel_size)
        self.norm_ff1 = nn.LayerNorm(size, eps=1e-12)
        self.norm_mha = nn.LayerNorm(size, eps=1e-12)
        self.norm_conv = nn.LayerNorm(size, eps=1e-12)
        self.norm_ff2 = nn.LayerNorm(size, eps=1e-12)
        self.norm_final = nn.LayerNorm(size, eps=1e-12)
        self.dropout = nn.Dropout(dropout_rate)

    def forward(self, x, mask):
        x = x + 0.5 * self.dropout(self.ff1(self.norm_ff1(x)))
        x = x + self.dropout(self.mhsa(self.norm_mha(x), mask))
        x = x + self.dropout(self.conv(self.norm_conv(x), mask))
        x = x + 0.5 * self.dropout(self.ff2(self.norm_ff2(x)))
        return self.norm_final(x)


class MFA_Conformer(nn.Module):

    def __init__(self,
                 feat_dim=80,
                 embed_dim=192,
                 num_blocks=6,
                 output_size=256,
                 attention_heads=4,
                 linear_units=2048,
                 cnn_module_kernel=15,
                 dropout_rate=0.1,
                 input_layer_rate=2,
                 pooling_func='ASTP',
                 use_flash_attn=True):
        super().__init__()
        self.embed = Conv2dSubsampling(feat_dim, output_size, dropout_rate,
                                       input_layer_rate)
        self.pos_enc = PositionalEncoding(output_size, dropout_rate)
        self.blocks = nn.ModuleList([
            ConformerBlock(output_size, attention_heads, linear_units,
                           cnn_module_kernel, dropout_rate, use_flash_attn)
            for _ in range(num_blocks)
        ])
        concat_dim = output_size * num_blocks
        self.after_norm = nn.LayerNorm(concat_dim)
        self.pooling = getattr(pooling_layers, pooling_func)(
            in_dim=concat_dim, global_context_att=True)
        self.bn = nn.BatchNorm1d(concat_dim * 2)
        self.fc = nn.Linear(concat_dim * 2, embed_dim)

    def forward(self, feat, feat_lens=None):
        # feat: (B, T, F)
        B, T, _ = feat.shape
        if feat_lens is None:
            mask = torch.ones(B, T, dtype=torch.bool, device=feat.device)
        else:
            mask = torch.arange(T, device=feat.device)[None, :] < feat_lens[:, None]
        x, mask = self.embed(feat, mask)
        x = self.pos_enc(x)
        outs = []
        for block in self.blocks:
            x = block(x, mask)
            outs.append(x)
        x = torch.cat(outs, dim=-1)
        x = self.after_norm(x)
        x = x.transpose(1, 2)  # (B, F, T) for pooling
        stats = self.pooling(x)
        embed = self.fc(self.bn(stats))
        return embed


if __name__ == '__main__':
    # quick shape / speed check:  python -m wespeaker.models.mfa_conformer
    import time
    model = MFA_Conformer(feat_dim=80, embed_dim=192, num_blocks=6).cuda().half().eval()
    num_params = sum(p.numel() for p in model.parameters())
    print("{} M params".format(num_params / 1e6))
    x = torch.randn(32, 200, 80, device='cuda', dtype=torch.float16)
    with torch.no_grad():
        for _ in range(3):
            model(x)
        torch.cuda.synchronize()  # finish warm-up
        t0 = time.time()
        for _ in range(20):
            out = model(x)
        torch.cuda.synchronize()
    print(out.shape, "{:.2f} ms/batch".format((time.time() - t0) / 20 * 1000))
