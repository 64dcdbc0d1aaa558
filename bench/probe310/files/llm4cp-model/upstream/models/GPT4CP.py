"""LLM4CP: adapting a pre-trained GPT-2 backbone to MISO-OFDM channel prediction.

Input  : historical uplink CSI, shape [B, prev_len, K*Nt*2]   (real/imag stacked)
Output : predicted downlink CSI, shape [B, pred_len, K*Nt*2]

The GPT-2 blocks are frozen except for layer-norms and positional embeddings;
CSI-specific pre-processing (delay-domain + frequency-domain patching, channel
attention) and a light output head are trained from scratch.
"""
import math
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange
from transformers import GPT2Config, GPT2Model

try:
    from flash_attn import flash_attn_func  # optional, only used for the adapter self-attention
    _FLASH_OK = True
except ImportError:  # pragma: no cover
    flash_attn_func = None
    _FLASH_OK = False


class ChannelAttention(nn.Module):
    """Squeeze-and-excitation over the feature (antenna x subcarrier) channel."""

    def __init__(self, in_planes, ratio=4):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool1d(1)
        self.max_pool = nn.AdaptiveMaxPool1d(1)
        self.fc = nn.Sequential(
            nn.Conv1d(in_planes, in_planes // ratio, 1, bias=False),
            nn.ReLU(),
            nn.Conv1d(in_planes // ratio, in_planes, 1, bias=False),
        )
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        avg_out = self.fc(self.avg_pool(x))
        max_out = self.fc(self.max_pool(x))
        return self.sigmoid(avg_out + max_out) * x


class ResBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, 1, 1)
        self.conv2 = nn.Conv2d(channels, channels, 3, 1, 1)
        self.ca = ChannelAttention(channels)

    def forward(self, x):
        r = F.relu(self.conv1(x))
        r = self.conv2(r)
        b, c, h, w = r.shape
        r = self.ca(r.view(b, c, h * w)).view(b, c, h, w)
        return x + r


class AdapterAttention(nn.Module):
    """Small multi-head self-attention adapter placed in front of GPT-2.

    Uses FlashAttention-2 when it is installed and the inputs are fp16/bf16 on
    a GPU; otherwise the plain PyTorch path.
    """

    def __init__(self, d_model, n_heads=8, dropout=0.1, use_flash=True):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = dropout
        self.use_flash = use_flash and _FLASH_OK

    def forward(self, x):
        b, s, _ = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.n_heads, self.head_dim)
        q, k, v = qkv.unbind(dim=2)  # [b, s, h, d]
        p = self.dropout if self.training else 0.0
        if self.use_flash and x.is_cuda and x.dtype in (torch.float16, torch.bfloat16):
            out = flash_attn_func(q, k, v, dropout_p=p, causal=False)
        else:
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [b, h, s, d]
            attn = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
            attn = F.dropout(attn.softmax(dim=-1), p=p, training=self.training)
            out = (attn @ v).transpose(1, 2)
        return self.proj(out.reshape(b, s, -1))


class Model(nn.Module):
    def __init__(self, gpt_type="gpt2", d_ff=768, d_model=768, gpt_layers=6,
                 pred_len=4, prev_len=16, use_gpu=1, gpu_id=0, mlp=0, res_layers=4,
                 K=48, UQh=1, UQv=1, BQh=1, BQv=1, patch_size=4, stride=1,
                 res_dim=64, embed="timeF", freq="h", dropout=0.1, use_flash=True):
        super(Model, self).__init__()
        if use_gpu:
            device = torch.device("cuda:{}".format(gpu_id))
        else:
            device = torch.device("cpu")
        self.device = device
        self.mlp = mlp
        self.res_layers = res_layers
        self.pred_len = pred_len
        self.prev_len = prev_len
        self.patch_size = patch_size
        self.stride = stride
        self.d_ff = d_ff
        self.d_model = d_model

        self.K = K
        self.UQh, self.UQv, self.BQh, self.BQv = UQh, UQv, BQh, BQv
        self.Nt = UQh * UQv
        self.Nr = BQh * BQv
        self.mul = prev_len * K * UQh * UQv * BQh * BQv
        self.enc_in = K * UQh * UQv * BQh * BQv
        self.c_out = K * UQh * UQv * BQh * BQv

        if gpt_type == "gpt2-medium":
            self.gpt2 = GPT2Model.from_pretrained("gpt2-medium", output_attentions=True,
                                                  output_hidden_states=True)
            self.gpt2.h = self.gpt2.h[:gpt_layers]
            self.gpt_dim = 1024
        elif gpt_type == "gpt2-large":
            self.gpt2 = GPT2Model.from_pretrained("gpt2-large", output_attentions=True,
                                                  output_hidden_states=True)
            self.gpt2.h = self.gpt2.h[:gpt_layers]
            self.gpt_dim = 1280
        elif gpt_type == "gpt2-xl":
            self.gpt2 = GPT2Model.from_pretrained("gpt2-xl", output_attentions=True,
                                                  output_hidden_states=True)
            self.gpt2.h = self.gpt2.h[:gpt_layers]
            self.gpt_dim = 1600
        else:
            self.gpt2 = GPT2Model.from_pretrained("gpt2", output_attentions=True,
                                                  output_hidden_states=True)
            self.gpt2.h = self.gpt2.h[:gpt_layers]
            self.gpt_dim = 768

        # freeze everything except layer norms and position embeddings
        for i, (name, param) in enumerate(self.gpt2.named_parameters()):
            if "ln" in name or "wpe" in name:
                param.requires_grad = True
            elif "mlp" in name and mlp == 1:
                param.requires_grad = True
            else:
                param.requires_grad = False

        if use_gpu:
            self.gpt2.to(device=torch.device(f"cuda:{gpu_id}"))

        self.patch_layer = nn.Linear(self.patch_size, self.patch_size)
        self.patch_layer_fre = nn.Linear(self.patch_size, self.patch_size)
        self.predict_linear_pre = nn.Linear(self.prev_len, self.prev_len)
        self.out_layer_dim = nn.Linear(d_ff, self.c_out * 2)
        self.output_layer_time = nn.Sequential(nn.Linear(self.prev_len, self.pred_len))

        self.RB_e = nn.Sequential(nn.Conv2d(2, res_dim, 3, 1, 1))
        self.RB_f = nn.Sequential(nn.Conv2d(2, res_dim, 3, 1, 1))
        for _ in range(self.res_layers):
            self.RB_e.append(ResBlock(res_dim))
            self.RB_f.append(ResBlock(res_dim))
        self.RB_e.append(nn.Conv2d(res_dim, 2, 3, 1, 1))
        self.RB_f.append(nn.Conv2d(res_dim, 2, 3, 1, 1))

        self.enc_embedding = nn.Linear(self.enc_in * 2, self.gpt_dim)
        self.adapter = AdapterAttention(self.gpt_dim, n_heads=8, dropout=dropout, use_flash=use_flash)

    def forward(self, x_enc, x_mark_enc=None, x_dec=None, x_mark_dec=None, mask=None):
        mean = torch.mean(x_enc)
        std = torch.std(x_enc)
        x_enc = (x_enc - mean) / std
        B, L, enc_in = x_enc.shape  # [B, 16, 96]

        # ---- delay domain -------------------------------------------------
        x_enc_r = rearrange(x_enc, "b l (k o) -> b l k o", o=2)
        x_enc_complex = torch.complex(x_enc_r[:, :, :, 0], x_enc_r[:, :, :, 1])  # [B, 16, 48]
        x_enc_delay = torch.fft.ifft(x_enc_complex, dim=2)
        x_enc_delay = torch.cat([torch.real(x_enc_delay), torch.imag(x_enc_delay)], dim=2)
        x_enc_delay = x_enc_delay.reshape(B, L // self.patch_size, self.patch_size, enc_in)
        x_enc_delay = self.patch_layer(x_enc_delay.permute(0, 1, 3, 2)).permute(0, 1, 3, 2)
        x_enc_delay = x_enc_delay.reshape(B, L, enc_in)
        x_enc_delay = rearrange(x_enc_delay, "b l (k o) -> b o l k", o=2)
        x_enc_delay = self.RB_f(x_enc_delay)

        # ---- frequency domain ---------------------------------------------
        x_enc_fre = x_enc.reshape(B, L // self.patch_size, self.patch_size, enc_in)
        x_enc_fre = self.patch_layer_fre(x_enc_fre.permute(0, 1, 3, 2)).permute(0, 1, 3, 2)
        x_enc_fre = x_enc_fre.reshape(B, L, enc_in)
        x_enc_fre = rearrange(x_enc_fre, "b l (k o) -> b o l k", o=2)
        x_enc_fre = self.RB_e(x_enc_fre)

        x_enc = x_enc_fre + x_enc_delay
        x_enc = rearrange(x_enc, "b o l k -> b l (k o)", o=2)  # [B, 16, 96]

        enc_out = self.enc_embedding(x_enc)  # [B, 16, 768]
        enc_out = self.adapter(enc_out)
        enc_out = torch.nn.functional.pad(enc_out, (0, self.gpt_dim - enc_out.shape[-1]))

        dec_out = self.gpt2(inputs_embeds=enc_out).last_hidden_state  # [B, L, 768]
        dec_out = dec_out[:, :, :self.d_ff]

        dec_out = self.out_layer_dim(dec_out)
        dec_out = self.output_layer_time(dec_out.permute(0, 2, 1)).permute(0, 2, 1)

        dec_out = dec_out * std + mean
        return dec_out[:, -self.pred_len:, :]  # [B, pred_len, 96]


if __name__ == "__main__":
    device = torch.device("cuda:0")
    model = Model(UQh=1, UQv=1, BQh=1, BQv=1).to(device)
    inputs = torch.rand(3, 16, 96).to(device)
    out = model(inputs)
    total = sum(np.prod(p.size()) for p in model.parameters())
    trainable = sum(np.prod(p.size()) for p in model.parameters() if p.requires_grad)
    print(out.shape)
    print("Number of params: %.5fM, trainable %.5fM" % (total / 1e6, trainable / 1e6))
