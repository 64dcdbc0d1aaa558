# -*- coding: utf-8 -*-

from typing import Optional

import torch
import torch.nn.functional as F


def ceildiv(a, b):
    return -(a // -b)


def naive_recurrent_gla(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    gk: torch.Tensor,
    initial_state: Optional[torch.Tensor] = None,
    output_final_state: bool = False
):
    """Token-by-token reference for GLA. Slow, fp32, runs on whatever device the inputs live on."""
    dtype = q.dtype
    q, k, v, gk = map(lambda x: x.transpose(1, 2).float(), (q, k, v, gk))
    B, H, T, K, V = *q.shape, v.shape[-1]
    o = torch.zeros_like(v)
    scale = K ** -0.5

    h = q.new_zeros(B, H, K, V, dtype=torch.float32)
    if initial_state is not None:
        h += initial_state.float()

    for i in range(T):
        q_i = q[:, :, i] * scale
        k_i = k[:, :, i]
        v_i = v[:, :, i]
        gk_i = gk[:, :, i].exp()
        kv_i = k_i[..., None] * v_i[..., None, :]
        h = h * gk_i[..., None] + kv_i
        o[:, :, i] = (q_i[..., None] * h).sum(-2)

    if not output_final_state:
        h = None
    return o.transpose(1, 2).to(dtype), h


def naive_chunk_gla(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    chunk_size: int = 64,
):
    """Chunked reference (no initial state). Used to sanity-check the chunk kernels on small shapes."""
    dtype = q.dtype
    q, k, v, g = map(lambda x: x.transpose(1, 2).float(), (q, k, v, g))
    B, H, T, K, V = *q.shape, v.shape[-1]
    BT = chunk_size
    NT = ceildiv(T, BT)
    pad = NT * BT - T
    if pad > 0:
        q, k, v, g = map(lambda x: F.pad(x, (0, 0, 0, pad)), (q, k, v, g))
    q = q * K ** -0.5
    q, k, v, g = map(lambda x: x.view(B, H, NT, BT, -1), (q, k, v, g))
    g = g.cumsum(-2)

    h = q.new_zeros(B, H, K, V)
    o = torch.zeros_like(v)
    mask = torch.triu(torch.ones(BT, BT, dtype=torch.bool, device=q.device), diagonal=1)
    for i in range(NT):
        q_i, k_i, v_i, g_i = q[:, :, i], k[:, :, i], v[:, :, i], g[:, :, i]
        # inter-chunk contribution from the running state
        o_inter = (q_i * g_i.exp()) @ h
        # intra-chunk attention with relative decay
        A = torch.einsum('bhik,bhjk->bhij', q_i * g_i.exp(), k_i * (-g_i).exp())
        A = A.masked_fill(mask, 0)
        o[:, :, i] = o_inter + A @ v_i
        g_last = g_i[:, :, -1]
        h = h * g_last.exp()[..., None] + (k_i * (g_last[:, :, None] - g_i).exp()).transpose(-1, -2) @ v_i
    o = o.view(B, H, NT * BT, V)[:, :, :T]
    return o.transpose(1, 2).to(dtype)


if __name__ == "__main__":
    B, T, H, K, V = 2, 512, 4, 64, 64
    dtype = torch.float32
    torch.manual_seed(42)
    q = torch.randn(B, T, H, K, dtype=dtype).cuda().requires_grad_()
    k = torch.randn(B, T, H, K, dtype=dtype).cuda().requires_grad_()
    v = torch.randn(B, T, H, V, dtype=dtype).cuda().requires_grad_()
    g = F.logsigmoid(torch.rand(B, T, H, K, dtype=dtype)).cuda().requires_grad_()

    ref, _ = naive_recurrent_gla(q, k, v, g)
    tri = naive_chunk_gla(q, k, v, g)
    print("max abs diff (recurrent vs chunk):", (ref - tri).abs().max().item())
    do = torch.randn_like(ref)
    ref.backward(do)
    ref_dq, q.grad = q.grad.clone(), None
    tri.backward(do)
    print("max abs diff dq:", (ref_dq - q.grad).abs().max().item())
