"""Evoformer stack (MSA row/column attention, outer product mean, triangle updates).

Attention can run through the DeepSpeed4Science EvoformerAttention kernel (CUTLASS based, fused
pair bias + mask, O(N) memory) which is what makes crops > 512 residues fit on 80 GB cards.
"""
import math
from functools import partial
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

try:
    from deepspeed.ops.deepspeed4science import DS4Sci_EvoformerAttention
    HAS_DS4SCI = True
except ImportError:
    HAS_DS4SCI = False

from unifold.modules.common import Linear, LayerNorm, Transition, chunk_layer, permute_final_dims


def bf16_supported() -> bool:
    major, _ = torch.cuda.get_device_capability()
    return major >= 8


def softmax_no_cast(t: torch.Tensor, dim: int = -1) -> torch.Tensor:
    # softmax in the input dtype; autocast would otherwise promote to fp32 and double activation memory
    if t.dtype in (torch.float16, torch.bfloat16):
        with torch.cuda.amp.autocast(enabled=False):  # keep the input dtype
            return torch.softmax(t, dim=dim)
    return torch.softmax(t, dim=dim)


def _attention_reference(q, k, v, biases):
    # q, k, v: [*, H, Q/K, C]
    a = torch.matmul(q, k.transpose(-1, -2))
    for b in biases:
        a = a + b
    a = softmax_no_cast(a, -1)
    return torch.matmul(a, v)


class Attention(nn.Module):

    def __init__(self, c_q, c_k, c_v, c_hidden, no_heads, gating=True, use_ds4sci=True):
        super().__init__()
        self.c_hidden = c_hidden
        self.no_heads = no_heads
        self.gating = gating
        self.use_ds4sci = use_ds4sci and HAS_DS4SCI
        self.linear_q = Linear(c_q, c_hidden * no_heads, bias=False, init="glorot")
        self.linear_k = Linear(c_k, c_hidden * no_heads, bias=False, init="glorot")
        self.linear_v = Linear(c_v, c_hidden * no_heads, bias=False, init="glorot")
        self.linear_o = Linear(c_hidden * no_heads, c_q, init="final")
        self.linear_g = Linear(c_q, c_hidden * no_heads, init="gating") if gating else None

    def forward(self, q_x, kv_x, mask_bias, pair_bias=None):
        q = self.linear_q(q_x).view(q_x.shape[:-1] + (self.no_heads, -1))
        k = self.linear_k(kv_x).view(kv_x.shape[:-1] + (self.no_heads, -1))
        v = self.linear_v(kv_x).view(kv_x.shape[:-1] + (self.no_heads, -1))
        q = q * (self.c_hidden ** -0.5)

        if self.use_ds4sci and q.is_cuda:
            # kernel expects [B, N, S, H, C] and fp16/bf16 inputs
            biases = [mask_bias] if pair_bias is None else [mask_bias, pair_bias]
            o = DS4Sci_EvoformerAttention(q.to(torch.bfloat16), k.to(torch.bfloat16), v.to(torch.bfloat16),
                                          [b.to(torch.bfloat16) for b in biases])
            o = o.to(q_x.dtype)
        else:
            q, k, v = (t.transpose(-2, -3) for t in (q, k, v))
            biases = [mask_bias] if pair_bias is None else [mask_bias, pair_bias]
            o = _attention_reference(q, k, v, biases).transpose(-2, -3)

        if self.gating:
            g = torch.sigmoid(self.linear_g(q_x))
            o = o * g.view(g.shape[:-1] + (self.no_heads, -1))
        o = o.reshape(o.shape[:-2] + (-1,))
        return self.linear_o(o)


class MSARowAttentionWithPairBias(nn.Module):

    def __init__(self, c_m, c_z, c_hidden, no_heads, inf=1e9):
        super().__init__()
        self.inf = inf
        self.layer_norm_m = LayerNorm(c_m)
        self.layer_norm_z = LayerNorm(c_z)
        self.linear_z = Linear(c_z, no_heads, bias=False, init="normal")
        self.mha = Attention(c_m, c_m, c_m, c_hidden, no_heads)

    def forward(self, m, z, msa_mask):
        m = self.layer_norm_m(m)
        mask_bias = (self.inf * (msa_mask.to(m.dtype) - 1))[..., :, None, None, :]
        z = self.linear_z(self.layer_norm_z(z))
        pair_bias = permute_final_dims(z, (2, 0, 1)).unsqueeze(-4)
        return self.mha(m, m, mask_bias, pair_bias)


class MSAColumnAttention(nn.Module):

    def __init__(self, c_m, c_hidden, no_heads, inf=1e9):
        super().__init__()
        self.inf = inf
        self.layer_norm_m = LayerNorm(c_m)
        self.mha = Attention(c_m, c_m, c_m, c_hidden, no_heads)

    def forward(self, m, msa_mask, chunk_size: Optional[int] = None):
        m = m.transpose(-2, -3)
        msa_mask = msa_mask.transpose(-1, -2)
        m = self.layer_norm_m(m)
        mask_bias = (self.inf * (msa_mask.to(m.dtype) - 1))[..., :, None, None, :]
        if chunk_size is not None:
            m = chunk_layer(partial(self.mha), {"q_x": m, "kv_x": m, "mask_bias": mask_bias},
                            chunk_size=chunk_size, no_batch_dims=len(m.shape[:-2]))
        else:
            m = self.mha(m, m, mask_bias)
        return m.transpose(-2, -3)


class OuterProductMean(nn.Module):

    def __init__(self, c_m, c_z, c_hidden, eps=1e-3):
        super().__init__()
        self.eps = eps
        self.layer_norm = LayerNorm(c_m)
        self.linear_1 = Linear(c_m, c_hidden)
        self.linear_2 = Linear(c_m, c_hidden)
        self.linear_out = Linear(c_hidden ** 2, c_z, init="final")

    def forward(self, m, mask):
        m = self.layer_norm(m)
        mask = mask.unsqueeze(-1)
        a = self.linear_1(m) * mask
        b = self.linear_2(m) * mask
        # the outer product is accumulated in fp32: fp16 overflows for deep MSAs
        with torch.cuda.amp.autocast(enabled=False):
            a, b = a.float(), b.float()
            outer = torch.einsum("...bac,...dae->...bdce", a, b)
            outer = outer.reshape(outer.shape[:-2] + (-1,))
            outer = self.linear_out(outer)
            norm = torch.einsum("...abc,...adc->...bdc", mask.float(), mask.float())
        return outer / (norm + self.eps)


class TriangleMultiplication(nn.Module):

    def __init__(self, c_z, c_hidden, outgoing=True):
        super().__init__()
        self.outgoing = outgoing
        self.layer_norm_in = LayerNorm(c_z)
        self.layer_norm_out = LayerNorm(c_hidden)
        self.linear_ab_p = Linear(c_z, c_hidden * 2)
        self.linear_ab_g = Linear(c_z, c_hidden * 2, init="gating")
        self.linear_g = Linear(c_z, c_z, init="gating")
        self.linear_z = Linear(c_hidden, c_z, init="final")

    def forward(self, z, mask):
        mask = mask.unsqueeze(-1)
        z = self.layer_norm_in(z)
        ab = self.linear_ab_p(z) * torch.sigmoid(self.linear_ab_g(z)) * mask
        a, b = ab.chunk(2, dim=-1)
        with torch.autocast(device_type="cuda", enabled=False):
            a, b = a.float(), b.float()
            if self.outgoing:
                x = torch.einsum("...ikc,...jkc->...ijc", a, b)
            else:
                x = torch.einsum("...kic,...kjc->...ijc", a, b)
        x = self.layer_norm_out(x.to(z.dtype))
        return self.linear_z(x) * torch.sigmoid(self.linear_g(z))


class EvoformerBlock(nn.Module):

    def __init__(self, c_m, c_z, c_hidden_msa_att=32, c_hidden_opm=32, c_hidden_mul=128,
                 c_hidden_pair_att=32, no_heads_msa=8, no_heads_pair=4, transition_n=4):
        super().__init__()
        self.msa_att_row = MSARowAttentionWithPairBias(c_m, c_z, c_hidden_msa_att, no_heads_msa)
        self.msa_att_col = MSAColumnAttention(c_m, c_hidden_msa_att, no_heads_msa)
        self.msa_transition = Transition(c_m, transition_n)
        self.outer_product_mean = OuterProductMean(c_m, c_z, c_hidden_opm)
        self.tri_mul_out = TriangleMultiplication(c_z, c_hidden_mul, outgoing=True)
        self.tri_mul_in = TriangleMultiplication(c_z, c_hidden_mul, outgoing=False)
        self.tri_att_start = MSARowAttentionWithPairBias(c_z, c_z, c_hidden_pair_att, no_heads_pair)
        self.pair_transition = Transition(c_z, transition_n)

    def forward(self, m, z, msa_mask, pair_mask, chunk_size=None):
        m = m + self.msa_att_row(m, z, msa_mask)
        m = m + self.msa_att_col(m, msa_mask, chunk_size=chunk_size)
        m = m + self.msa_transition(m)
        z = z + self.outer_product_mean(m, msa_mask)
        z = z + self.tri_mul_out(z, pair_mask)
        z = z + self.tri_mul_in(z, pair_mask)
        z = z + self.tri_att_start(z, z, pair_mask)
        z = z + self.pair_transition(z)
        return m, z


class EvoformerStack(nn.Module):

    def __init__(self, no_blocks, c_m, c_z, c_s, checkpoint_every=1, **kwargs):
        super().__init__()
        self.blocks = nn.ModuleList([EvoformerBlock(c_m, c_z, **kwargs) for _ in range(no_blocks)])
        self.linear_s = Linear(c_m, c_s)
        self.checkpoint_every = checkpoint_every
        self.dtype = torch.bfloat16 if bf16_supported() else torch.float16

    def forward(self, m, z, msa_mask, pair_mask, chunk_size=None):
        for i, block in enumerate(self.blocks):
            if self.training and self.checkpoint_every and i % self.checkpoint_every == 0:
                m, z = checkpoint(block, m, z, msa_mask, pair_mask, chunk_size, use_reentrant=False)
            else:
                m, z = block(m, z, msa_mask, pair_mask, chunk_size)
        s = self.linear_s(m[..., 0, :, :])
        return m, z, s
