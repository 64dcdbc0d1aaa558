# Copyright (c) OpenMMLab. All rights reserved.
# modify from: https://github.com/ModelTC/lightllm
import functools
import math

import torch
import triton
import triton.language as tl
from packaging import version
from torch import Tensor

from lmdeploy.utils import get_logger

logger = get_logger('lmdeploy')

TRITON_VERSION = version.parse(triton.__version__)
VERSION_300 = version.parse('3.0.0')

assert TRITON_VERSION >= version.parse('2.2.0')

# TODO: fast op might not work on non-nv device
if TRITON_VERSION >= VERSION_300:
    tanh = tl.extra.cuda.libdevice.tanh
    fast_expf = tl.extra.cuda.libdevice.fast_expf
else:
    tanh = tl.math.tanh
    fast_expf = tl.math.fast_expf


@functools.lru_cache
def get_device_props(device=None):
    if device is None:
        device = torch.cuda.current_device()

    props = torch.cuda.get_device_properties(device)
    out = dict(multi_processor_count=props.multi_processor_count, )
    return out


def get_kernel_meta(tensor: torch.Tensor):
    """kernel meta."""
    from triton.runtime.jit import get_cuda_stream

    device = tensor.device
    device_idx = device.index
    device_type = device.type
    stream = get_cuda_stream(device_idx)
    return dict(device=device, device_type=device_type, stream=stream)


@triton.jit
def _fwd_grouped_split_kernel(
    Q,
    K,
    V,
    sm_scale,
    KV_seqlens,
    Block_offsets,
    Acc_out,
    stride_qbs: tl.constexpr,
    stride_qh: tl.constexpr,
    stride_qd: tl.constexpr,
    stride_kp: tl.constexpr,
    stride_kbs: tl.constexpr,
    stride_kh: tl.constexpr,
    stride_kd: tl.constexpr,
    stride_vp: tl.constexpr,
    stride_vbs: tl.constexpr,
    stride_vh: tl.constexpr,
    stride_vd: tl.constexpr,
    stride_ok: tl.constexpr,
    stride_obs: tl.constexpr,
    stride_oh: tl.constexpr,
    stride_od: tl.constexpr,
    stride_boffb,
    kv_group_num: tl.constexpr,
    logit_softcapping: tl.constexpr,
    SPLIT_K: tl.constexpr,
    BLOCK: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    BLOCK_H: tl.constexpr,
):
    """first step kernel of split k attention."""
    cur_batch = tl.program_id(2)
    cur_kv_head = tl.program_id(0)
    split_k_id = tl.program_id(1)

    heads_per_cta = min(BLOCK_H, kv_group_num)
    cur_head = cur_kv_head * heads_per_cta + tl.arange(0, BLOCK_H)
    mask_h = cur_head < cur_kv_head * heads_per_cta + heads_per_cta
    mask_h = mask_h & (cur_head < tl.num_programs(0) * kv_group_num)

    q_seqlen = 1
    kv_seqlen = tl.load(KV_seqlens + cur_batch)
    if kv_seqlen <= 0:
        return
    history_len = kv_seqlen - q_seqlen

    # initialize offsets
    offs_n = tl.arange(0, BLOCK)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_dv = tl.arange(0, BLOCK_DV)
    off_q = (cur_batch * stride_qbs + cur_head[:, None] * stride_qh + offs_d[None, :] * stride_qd)
    off_k = (cur_kv_head * stride_kh + offs_d[:, None] * stride_kd + offs_n[None, :] * stride_kbs)
    off_v = (cur_kv_head * stride_vh + offs_dv[None, :] * stride_vd + offs_n[:, None] * stride_vbs)

    q = tl.load(Q + off_q, mask=mask_h[:, None], other=0)
    k_ptrs = K + off_k
    v_ptrs = V + off_v
    block_offset_ptrs = Block_offsets + cur_batch * stride_boffb

    # initialize pointer to m and l
    m_i = tl.zeros([BLOCK_H], dtype=tl.float32) - float('inf')
    l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_DV], dtype=tl.float32)

    num_total_blocks = tl.cdiv(kv_seqlen, BLOCK)
    BLOCK_PER_CTA = tl.cdiv(num_total_blocks, SPLIT_K)
    kv_len_per_prog = BLOCK_PER_CTA * BLOCK
    loop_start = kv_len_per_prog * split_k_id
    loop_end = tl.minimum(loop_start + kv_len_per_prog, kv_seqlen)

    for start_n in range(loop_start, loop_end, BLOCK):
        start_n = tl.multiple_of(start_n, BLOCK)
        b_offset = tl.load(block_offset_ptrs + start_n // BLOCK)

        # -- compute qk ----
        k = tl.load(k_ptrs + b_offset * stride_kp)
        v = tl.load(v_ptrs + b_offset * stride_vp)

        qk = tl.zeros([BLOCK_H, BLOCK], dtype=tl.float32)
        qk += tl.dot(q, k)
        qk *= sm_scale
        if logit_softcapping > 0.0:
            qk = qk / logit_softcapping
            qk = tanh(qk)
            qk = qk * logit_softcapping
        # NOTE: inf - inf = nan, and nan will leads to error
        if start_n + BLOCK > history_len:
            qk_mask = history_len >= (start_n + offs_n)
            qk = tl.where(qk_mask[None, :], qk, -float('inf'))

        # -- compute p, m_i and l_i
        m_i_new = tl.maximum(m_i, tl.max(qk, 1))
        p = fast_expf(qk - m_i_new[:, None])
        alpha = fast_expf(m_i - m_i_new)
        l_i_new = alpha * l_i + tl.sum(p, 1)

        # -- update output accumulator --
        acc = acc * alpha[:, None]
        p, v = _convert_pv(p, v)
        acc += tl.dot(p, v)
        # update m_i and l_i
        l_i = l_i_new
        m_i = m_i_new

    # initialize pointers to output
    off_acc = (cur_batch * stride_obs + split_k_id * stride_ok + cur_head[:, None] * stride_oh + offs_dv[None, :] * stride_od)
    tl.store(Acc_out + off_acc, acc, mask=mask_h[:, None])

    off_meta = (cur_batch * stride_obs + split_k_id * stride_ok + cur_head * stride_oh + BLOCK_DV)
    tl.store(Acc_out + off_meta, m_i, mask=mask_h)
    tl.store(Acc_out + off_meta + 1, l_i, mask=mask_h)


def _get_convert_pv(nv_capability):
    """lazy load convert_pv."""
    global _convert_pv
    if nv_capability[0] >= 8:

        @triton.jit
        def __convert_pv(p, v):
            """convert pv."""
            p = p.to(v.dtype)
            return p, v
    else:

        @triton.jit
        def __convert_pv(p, v):
            """convert pv."""
            v = v.to(p.dtype)
            return p, v

    _convert_pv = __convert_pv
    return _convert_pv


_convert_pv = None
_nv_cap = None


def paged_attention_fwd(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    o: Tensor,
    block_offsets: Tensor,
    kv_seqlens: Tensor,
    sm_scale: float = None,
    logit_softcapping: float = None,
):
    """Paged Attention forward (decoding only).

    Args:
        q (Tensor): Query state.
        k (Tensor): Key state caches.
        v (Tensor): Value state caches.
        o (Tensor): Output state.
        block_offsets (Tensor): The block offset of key and value.
        kv_seqlens (Tensor): The key/value sequence lengths.
    """
    global _convert_pv, _nv_cap
    if _convert_pv is None:
        nv_cap = torch.cuda.get_device_capability()
        _nv_cap = nv_cap
        _get_convert_pv(nv_cap)

    if logit_softcapping is None:
        logit_softcapping = -1.0

    def _get_block_d(Lk):
        """get block d."""
        BLOCK_DMODEL = triton.next_power_of_2(Lk)
        BLOCK_DV = triton.next_power_of_2(Lv)
        return BLOCK_DMODEL, BLOCK_DV

    # shape constraints
    Lq, Lk, Lv = q.shape[-1], k.shape[-1], v.shape[-1]
    assert Lq == Lk
    o.data = torch.empty_like(q, dtype=v.dtype)

    if sm_scale is None:
        sm_scale = 1.0 / (Lq**0.5)
    batch, head = kv_seqlens.shape[0], q.shape[-2]
    kv_group_num = q.shape[-2] // k.shape[-2]

    BLOCK = k.size(1)
    assert BLOCK >= 16
    BLOCK_DMODEL, BLOCK_DV = _get_block_d(Lk)
    num_warps = 4
    num_stages = 2
    kernel_meta = get_kernel_meta(q)

    props = get_device_props(q.device.index)
    num_sm = props['multi_processor_count']
    if _nv_cap[0] < 8:
        BLOCK_H = 16
    else:
        BLOCK_H = max(16, min(BLOCK, triton.next_power_of_2(kv_group_num)))
    grid_1 = triton.cdiv(head, min(BLOCK_H, kv_group_num))
    SPLIT_K = triton.next_power_of_2(max(1, num_sm // max(1, batch * grid_1)))
    SPLIT_K = min(SPLIT_K, 16)

    acc = q.new_empty(batch, head, SPLIT_K, BLOCK_DV + 2, dtype=torch.float32)
    grid = (grid_1, SPLIT_K, batch)
    _fwd_grouped_split_kernel[grid](q,
                                    k,
                                    v,
                                    sm_scale,
                                    kv_seqlens,
                                    block_offsets,
                                    acc,
                                    stride_qbs=q.stride(-3),
                                    stride_qh=q.stride(-2),
                                    stride_qd=q.stride(-1),
                                    stride_kp=k.stride(-4),
                                    stride_kbs=k.stride(-3),
                                    stride_kh=k.stride(-2),
                                    stride_kd=k.stride(-1),
                                    stride_vp=v.stride(-4),
                                    stride_vbs=v.stride(-3),
                                    stride_vh=v.stride(-2),
                                    stride_vd=v.stride(-1),
                                    stride_ok=acc.stride(-2),
                                    stride_obs=acc.stride(-4),
                                    stride_oh=acc.stride(-3),
                                    stride_od=acc.stride(-1),
                                    stride_boffb=block_offsets.stride(0),
                                    kv_group_num=kv_group_num,
                                    logit_softcapping=logit_softcapping,
                                    SPLIT_K=SPLIT_K,
                                    BLOCK_DMODEL=BLOCK_DMODEL,
                                    BLOCK_DV=BLOCK_DV,
                                    BLOCK=BLOCK,
                                    BLOCK_H=BLOCK_H,
                                    num_warps=num_warps,
                                    num_stages=num_stages,
                                    **kernel_meta)

    # reduce the split-k partial results
    acc_o = acc[..., :BLOCK_DV]
    m = acc[..., BLOCK_DV]
    l = acc[..., BLOCK_DV + 1]
    m_max = m.max(dim=2, keepdim=True).values
    scale = torch.exp(m - m_max) * l
    o.copy_((acc_o * torch.exp(m - m_max)[..., None]).sum(2) / scale.sum(2, keepdim=True))
    return o
