# MiniCPM-V style vision tower + perceiver resampler, with xformers attention in the ViT,
# and the chat() entry point used by the demo (image slicing handled by the processor).
import math
from functools import partial
from typing import List, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import xformers.ops as xops
from PIL import Image
from torch.nn.init import trunc_normal_


def get_2d_sincos_pos_embed(embed_dim, image_size):
    grid_h_size, grid_w_size = image_size
    grid_h = np.arange(grid_h_size, dtype=np.float32)
    grid_w = np.arange(grid_w_size, dtype=np.float32)
    grid = np.meshgrid(grid_w, grid_h)
    grid = np.stack(grid, axis=0)
    emb_h = _1d_sincos(embed_dim // 2, grid[0])
    emb_w = _1d_sincos(embed_dim // 2, grid[1])
    return np.concatenate([emb_h, emb_w], axis=-1)


def _1d_sincos(embed_dim, pos):
    omega = np.arange(embed_dim // 2, dtype=np.float32)
    omega /= embed_dim / 2.0
    omega = 1.0 / 10000 ** omega
    out = np.einsum("hw,d->hwd", pos, omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=-1)


class ViTAttention(nn.Module):
    def __init__(self, dim, num_heads=16, qkv_bias=True, attn_drop=0.0):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)
        self.attn_drop = attn_drop

    def forward(self, x, attn_bias=None):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.unbind(2)  # B, N, H, D
        out = xops.memory_efficient_attention(q, k, v, attn_bias=attn_bias,
                                              p=self.attn_drop if self.training else 0.0, scale=self.scale)
        return self.proj(out.reshape(B, N, C))


class ViTBlock(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = ViTAttention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(approximate="tanh"), nn.Linear(hidden, dim))

    def forward(self, x, attn_bias=None):
        x = x + self.attn(self.norm1(x), attn_bias)
        return x + self.mlp(self.norm2(x))


class Resampler(nn.Module):
    """Perceiver resampler: a fixed number of learnable queries cross-attend to the patch features."""

    def __init__(self, num_queries, embed_dim, num_heads, kv_dim=None, max_size=(70, 70)):
        super().__init__()
        self.num_queries = num_queries
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.max_size = max_size
        self.query = nn.Parameter(torch.zeros(self.num_queries, embed_dim))
        trunc_normal_(self.query, std=0.02)
        self.kv_proj = nn.Linear(kv_dim, embed_dim, bias=False) if kv_dim and kv_dim != embed_dim else nn.Identity()
        self.attn = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
        self.ln_q = nn.LayerNorm(embed_dim, eps=1e-6)
        self.ln_kv = nn.LayerNorm(embed_dim, eps=1e-6)
        self.ln_post = nn.LayerNorm(embed_dim, eps=1e-6)
        self.proj = nn.Parameter((embed_dim ** -0.5) * torch.randn(embed_dim, embed_dim))
        pos = torch.from_numpy(get_2d_sincos_pos_embed(embed_dim, max_size)).float()
        self.register_buffer("pos_embed", pos, persistent=False)

    def forward(self, x, tgt_sizes):
        bs = x.shape[0]
        device, dtype = x.device, x.dtype
        patch_len = tgt_sizes[:, 0] * tgt_sizes[:, 1]
        max_patch_len = int(torch.max(patch_len))
        key_padding_mask = torch.zeros((bs, max_patch_len), dtype=torch.bool, device=device)
        pos_embed = []
        for i in range(bs):
            tgt_h, tgt_w = tgt_sizes[i].tolist()
            pos_embed.append(self.pos_embed[:tgt_h, :tgt_w, :].reshape((tgt_h * tgt_w, -1)).to(dtype))
            key_padding_mask[i, patch_len[i]:] = True
        pos_embed = nn.utils.rnn.pad_sequence(pos_embed, batch_first=True, padding_value=0.0)
        x = self.ln_kv(self.kv_proj(x))
        q = self.ln_q(self.query)
        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
            out = self.attn(q.unsqueeze(0).repeat(bs, 1, 1), x + pos_embed, x,
                            key_padding_mask=key_padding_mask)[0]
        x = self.ln_post(out)
        return x @ self.proj


class VisionChat(nn.Module):
    def __init__(self, vit_dim=1152, depth=27, heads=16, llm=None, tokenizer=None, processor=None,
                 query_num=64):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, vit_dim, kernel_size=14, stride=14)
        self.blocks = nn.ModuleList([ViTBlock(vit_dim, heads) for _ in range(depth)])
        self.resampler = Resampler(query_num, llm.config.hidden_size, llm.config.hidden_size // 128, kv_dim=vit_dim)
        self.llm = llm
        self.tokenizer = tokenizer
        self.processor = processor

    def get_vision_embedding(self, pixel_values: List[torch.Tensor], tgt_sizes):
        feats = []
        for pv in pixel_values:
            x = self.patch_embed(pv.unsqueeze(0)).flatten(2).transpose(1, 2)
            for blk in self.blocks:
                x = blk(x)
            feats.append(x.squeeze(0))
        padded = nn.utils.rnn.pad_sequence(feats, batch_first=True)
        return self.resampler(padded, tgt_sizes)

    @torch.inference_mode()
    def chat(self, image: Image.Image, msgs, max_new_tokens=1024, sampling=True, **kwargs):
        inputs = self.processor(msgs, [image], return_tensors="pt").to("cuda")
        with torch.cuda.amp.autocast(dtype=torch.bfloat16):
            vision = self.get_vision_embedding(inputs["pixel_values"], inputs["tgt_sizes"])
            inputs_embeds = self.llm.get_input_embeddings()(inputs["input_ids"])
            image_bound = inputs["image_bound"]
            for start, end in image_bound.tolist():
                inputs_embeds[0, start:end] = vision[0, : end - start]
            gen_kwargs = dict(top_p=0.8, top_k=100, temperature=0.7, do_sample=True, repetition_penalty=1.05) \
                if sampling else dict(num_beams=3, repetition_penalty=1.2)
            out = self.llm.generate(inputs_embeds=inputs_embeds, attention_mask=inputs["attention_mask"],
                                    max_new_tokens=max_new_tokens, **gen_kwargs, **kwargs)
        return self.tokenizer.decode(out[0], skip_special_tokens=True)
