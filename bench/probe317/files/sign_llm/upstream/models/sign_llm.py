"""Gloss-free sign language translation with a frozen LLM (Sign2GPT / SignLLM style).

visual encoder (frozen DINOv2-S per frame) -> temporal transformer ("SignAdapter") ->
linear projection into the LLM embedding space -> LLM (LoRA) generates the spoken sentence.

The adapter uses PyTorch SDPA; on A100/H100 we force the FlashAttention backend because the
sign sequences are long (up to 400 frames) and the math kernel runs out of memory at bs=16.
"""
import math
from contextlib import nullcontext
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer

try:
    from flash_attn import flash_attn_varlen_func
    from flash_attn.bert_padding import unpad_input, pad_input
    HAS_FLASH_ATTN = True
except ImportError:
    HAS_FLASH_ATTN = False


def pick_dtype():
    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, seq_len, device):
        t = torch.arange(seq_len, device=device, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[None, None], emb.sin()[None, None]


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(q, k, cos, sin):
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class AdapterAttention(nn.Module):
    def __init__(self, dim, heads, dropout=0.0, use_flash_varlen=True):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout
        self.rope = RotaryEmbedding(self.head_dim)
        self.use_flash_varlen = use_flash_varlen and HAS_FLASH_ATTN

    def forward(self, x, key_padding_mask: Optional[torch.Tensor] = None):
        B, T, C = x.shape
        qkv = self.qkv(x).view(B, T, 3, self.heads, self.head_dim)
        q, k, v = qkv.unbind(2)  # B,T,H,D
        cos, sin = self.rope(T, x.device)
        q, k = apply_rope(q.transpose(1, 2), k.transpose(1, 2), cos, sin)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        drop = self.dropout if self.training else 0.0

        if self.use_flash_varlen and key_padding_mask is not None and x.dtype in (torch.float16, torch.bfloat16):
            # variable-length path: no compute wasted on padded frames
            valid = ~key_padding_mask
            q_u, idx, cu_q, max_q = unpad_input(q, valid)[:4]
            k_u = unpad_input(k, valid)[0]
            v_u = unpad_input(v, valid)[0]
            out = flash_attn_varlen_func(q_u, k_u, v_u, cu_q, cu_q, max_q, max_q, dropout_p=drop)
            out = pad_input(out, idx, B, T)
        else:
            attn_mask = None
            if key_padding_mask is not None:
                attn_mask = ~key_padding_mask[:, None, None, :]
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                     attn_mask=attn_mask, dropout_p=drop)
            out = out.transpose(1, 2)
        return self.proj(out.reshape(B, T, C))


class AdapterBlock(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4.0, dropout=0.1):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = AdapterAttention(dim, heads, dropout)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(),
                                 nn.Dropout(dropout), nn.Linear(int(dim * mlp_ratio), dim))

    def forward(self, x, key_padding_mask=None):
        x = x + self.attn(self.norm1(x), key_padding_mask)
        x = x + self.mlp(self.norm2(x))
        return x


class SignAdapter(nn.Module):
    """Temporal downsampling (stride 2 conv x2) + transformer over frame features."""

    def __init__(self, in_dim=384, dim=768, depth=4, heads=12, out_dim=4096):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(in_dim, dim, 5, stride=2, padding=2), nn.BatchNorm1d(dim), nn.GELU(),
            nn.Conv1d(dim, dim, 5, stride=2, padding=2), nn.BatchNorm1d(dim), nn.GELU())
        self.blocks = nn.ModuleList([AdapterBlock(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.to_llm = nn.Linear(dim, out_dim)

    def forward(self, feats, lengths):
        x = self.conv(feats.transpose(1, 2)).transpose(1, 2)
        lengths = torch.div(lengths + 1, 2, rounding_mode="floor")
        lengths = torch.div(lengths + 1, 2, rounding_mode="floor")
        T = x.shape[1]
        pad_mask = torch.arange(T, device=x.device)[None] >= lengths[:, None]
        for blk in self.blocks:
            x = blk(x, pad_mask)
        return self.to_llm(self.norm(x)), pad_mask


class SignLLM(nn.Module):
    def __init__(self, llm_name="meta-llama/Llama-2-7b-hf", visual_dim=384, lora_r=16,
                 prompt="Translate the German sign language video into German: "):
        super().__init__()
        self.dtype = pick_dtype()
        self.tokenizer = AutoTokenizer.from_pretrained(llm_name, use_fast=False)
        self.tokenizer.pad_token = self.tokenizer.unk_token
        self.llm = AutoModelForCausalLM.from_pretrained(
            llm_name,
            torch_dtype=self.dtype,
            attn_implementation="flash_attention_2",
            device_map={"": torch.cuda.current_device()},
        )
        self.llm.gradient_checkpointing_enable()
        self.llm = get_peft_model(self.llm, LoraConfig(r=lora_r, lora_alpha=2 * lora_r, lora_dropout=0.05,
                                                       target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
        self.adapter = SignAdapter(in_dim=visual_dim, out_dim=self.llm.config.hidden_size)
        self.prompt_ids = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=True).input_ids

    def build_inputs(self, sign_emb, sign_mask, text=None):
        B = sign_emb.shape[0]
        device = sign_emb.device
        emb_layer = self.llm.get_input_embeddings()
        prompt = emb_layer(self.prompt_ids.to(device)).expand(B, -1, -1)
        parts, masks = [prompt, sign_emb.to(prompt.dtype)], [
            torch.ones(B, prompt.shape[1], dtype=torch.long, device=device), (~sign_mask).long()]
        labels = None
        if text is not None:
            tok = self.tokenizer([t + self.tokenizer.eos_token for t in text], return_tensors="pt",
                                 padding=True, add_special_tokens=False).to(device)
            parts.append(emb_layer(tok.input_ids))
            masks.append(tok.attention_mask)
            ignore = torch.full((B, prompt.shape[1] + sign_emb.shape[1]), -100, dtype=torch.long, device=device)
            labels = torch.cat([ignore, tok.input_ids.masked_fill(tok.attention_mask == 0, -100)], dim=1)
        return torch.cat(parts, 1), torch.cat(masks, 1), labels

    def forward(self, feats, lengths, text):
        with torch.autocast("cuda", dtype=self.dtype):
            sign_emb, sign_mask = self.adapter(feats, lengths)
            inputs_embeds, attn_mask, labels = self.build_inputs(sign_emb, sign_mask, text)
            out = self.llm(inputs_embeds=inputs_embeds, attention_mask=attn_mask, labels=labels)
        return out.loss

    @torch.no_grad()
    def generate(self, feats, lengths, max_new_tokens=64, num_beams=4):
        with torch.autocast(device_type="cuda", dtype=self.dtype):
            sign_emb, sign_mask = self.adapter(feats, lengths)
            inputs_embeds, attn_mask, _ = self.build_inputs(sign_emb, sign_mask)
            ids = self.llm.generate(inputs_embeds=inputs_embeds, attention_mask=attn_mask,
                                    max_new_tokens=max_new_tokens, num_beams=num_beams,
                                    length_penalty=1.0, do_sample=False)
        return self.tokenizer.batch_decode(ids, skip_special_tokens=True)


def count_trainable(model):
    n = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return f"{n / 1e6:.1f}M trainable"
