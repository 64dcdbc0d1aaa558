import os
import math
import importlib
from functools import partial, wraps

import torch
from torch import einsum
import torch.nn.functional as F
from torch.autograd import Function

exec(open(os.path.dirname(os.path.abspath(__file__)) + '/version.py').read())

# try to import cuda

try:
    cuda_pkg = importlib.import_module(__cuda_pkg_name__)

    forward = cuda_pkg.forward
    backward = cuda_pkg.backward
    debug = cuda_pkg.debug

except ImportError:
    print('CUDA extension for flash-cosine-sim-attention was not compiled correctly - please run `pip install flash-cosine-sim-attention --force-reinstall --no-cache-dir`')

# helper functions

def exists(val):
    return val is not None

def default(val, d):
    return val if exists(val) else d

def l2norm_cpu(t):
    eps = 1e-12 if t.dtype == torch.float32 else 1e-3
    norm = t.norm(dim = -1)
    norm_clamped = torch.where(norm > eps, norm, eps)
    return t / norm_clamped[..., None]

def l2norm(t):
    if t.data.is_cuda:
        return F.normalize(t, dim = -1)

    return l2norm_cpu(t)

def grouped_l2norm(t, groups = 1):
    shape = t.shape
    dim = shape[-1]
    t = t.reshape(*shape[:-1], groups, dim // groups)
    t = l2norm(t)
    return t.reshape(shape)

def l2norm_tensors(*tensors, groups = 1):
    assert len(tensors) > 0
    dtype = tensors[0].dtype

    fn = partial(grouped_l2norm, groups = groups)

    tensors = tuple(map(fn, tensors))
    tensors = tuple(map(lambda t: t.type(dtype), tensors))
    return tensors

# original cosine sim attention

def plain_cosine_sim_attention(q, k, v, mask = None, attn_bias = None, scale = 8, causal = False, attn_bias_batch_dim = False):
    assert not (causal and exists(mask)), 'mask should not be supplied if causality is needed'

    single_head_kv = k.ndim == 3
    kv_einsum_eq = 'b j d' if single_head_kv else 'b h j d'

    sim = einsum(f'b h i d, {kv_einsum_eq} -> b h i j', q, k)
    sim = sim * scale

    if exists(attn_bias):
        attn_bias = attn_bias.unsqueeze(1 if attn_bias_batch_dim else 0)
        sim = sim + attn_bias

    mask_value = -torch.finfo(sim.dtype).max

    if causal:
        i, j = sim.shape[-2:]
        causal_mask = torch.ones((i, j), device = q.device, dtype = torch.bool).triu(j - i + 1)
        sim = sim.masked_fill(causal_mask, mask_value)

    if exists(mask):
        sim = sim.masked_fill(~mask[:, None, None, :], mask_value)

    attn = sim.softmax(dim = -1)
    return einsum(f'b h i j, {kv_einsum_eq} -> b h i d', attn, v)

# cuda forward / backward, the fused kernel never materializes the full attention matrix

class FlashCosineSimAttention(Function):
    @staticmethod
    def forward(ctx, q, k, v, mask, attn_bias, scale, causal, attn_bias_batch_dim):
        o, inv_l, should_backwards = forward(
            q, k, v,
            mask,
            attn_bias,
            attn_bias_batch_dim,
            scale,
            causal
        )

        if not should_backwards:
            return o

        ctx.should_backwards = should_backwards
        ctx.save_for_backward(o, inv_l, q, k, v, mask, attn_bias)
        ctx.params = (scale, causal, attn_bias_batch_dim)

        return o

    @staticmethod
    def backward(ctx, do):
        assert ctx.should_backwards

        o, inv_l, q, k, v, mask, attn_bias = ctx.saved_tensors
        scale, causal, attn_bias_batch_dim = ctx.params

        attn_bias_requires_grad = exists(attn_bias) and attn_bias.requires_grad

        dq, dk, dv, db = backward(
            do, o, inv_l,
            q, k, v,
            mask,
            attn_bias,
            attn_bias_batch_dim,
            scale,
            causal,
            attn_bias_requires_grad
        )

        db = db if attn_bias_requires_grad else None

        return dq, dk, dv, None, db, None, None, None

flash_cosine_sim_attention_cuda = FlashCosineSimAttention.apply

# wrapper function

def flash_cosine_sim_attention(q, k, v, mask = None, attn_bias = None, scale = 8, groups = 1, causal = False, l2norm_qk = True, attn_bias_batch_dim = False):
    if l2norm_qk:
        q, k = l2norm_tensors(q, k, groups = groups)

    fn = flash_cosine_sim_attention_cuda if q.data.is_cuda else plain_cosine_sim_attention

    o = fn(q, k, v, mask, attn_bias, scale, causal, attn_bias_batch_dim)
    return o
