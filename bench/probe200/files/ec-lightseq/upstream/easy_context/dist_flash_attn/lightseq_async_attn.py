"""DistFlashAttn (LightSeq) -- load-balanced, communication-overlapped attention.

Every rank holds a contiguous chunk of the sequence. At time step ``t`` a rank
either computes attention for its local query against a remote KV chunk, or
helps a busier rank by computing a remote query against its local KV; partial
outputs are merged with the running (m, l) softmax statistics by a small Triton
kernel. P2P traffic runs on a dedicated CUDA stream so that NCCL kernels overlap
with the flash-attention kernels on the default stream.
"""
import math
import os
import threading

import torch
import torch.distributed as dist
import triton
import triton.language as tl
from einops import rearrange
from torch.distributed import P2POp, batch_isend_irecv, irecv, isend

from flash_attn.flash_attn_interface import _flash_attn_forward, _flash_attn_backward

# ---------------------------------------------------------------------------
# sequence-parallel state
# ---------------------------------------------------------------------------
_SEQUENCE_PARALLEL_GROUP = None
_SEQUENCE_PARALLEL_SIZE = None
_SEQUENCE_PARALLEL_RANK = None
_COMM_STREAM = None

# stats
_fwd_send_volume = 0
_fwd_recv_volume = 0
_bwd_send_volume = 0
_bwd_recv_volume = 0


def initialize_distributed():
    global _SEQUENCE_PARALLEL_GROUP, _SEQUENCE_PARALLEL_SIZE, _SEQUENCE_PARALLEL_RANK, _COMM_STREAM
    if dist.is_initialized():
        if dist.get_rank() == 0:
            print("torch distributed is already initialized, skipping initialization ...", flush=True)
    else:
        if int(os.environ["RANK"]) == 0:
            print("Initializing Torch distributed.")
        dist.init_process_group(backend="nccl")
        local_world_size = int(os.environ["LOCAL_WORLD_SIZE"])
        global_world_size = dist.get_world_size()
        torch.cuda.set_device(dist.get_rank() % local_world_size)

    _SEQUENCE_PARALLEL_GROUP = dist.group.WORLD
    _SEQUENCE_PARALLEL_SIZE = dist.get_world_size()
    _SEQUENCE_PARALLEL_RANK = dist.get_rank()
    # one side stream for all P2P traffic; kernels on it overlap with compute
    _COMM_STREAM = torch.cuda.Stream()


def get_sequence_parallel_size():
    return _SEQUENCE_PARALLEL_SIZE


def get_sequence_parallel_rank():
    return _SEQUENCE_PARALLEL_RANK


# ---------------------------------------------------------------------------
# schedule helpers
# ---------------------------------------------------------------------------
def is_last_time(time_step):
    return time_step == get_sequence_parallel_size() // 2


def is_compute_for_local_query(time_step):
    return get_sequence_parallel_rank() >= min(get_sequence_parallel_size() // 2, time_step)


def is_idle(time_step):
    if time_step == 0:
        return False
    return get_sequence_parallel_rank() < time_step and get_sequence_parallel_rank() >= get_sequence_parallel_size() // 2


def is_sync_from_remote(time_step):
    if time_step == 0:
        return False
    return get_sequence_parallel_rank() < time_step and time_step <= get_sequence_parallel_size() // 2


def maybe_send_recv_fwd_qkvo(q, k, v, peer_buffers, time_step, comm_mode):
    """Post the P2P ops for one time step on the comm stream; returns the requests."""
    global _fwd_send_volume, _fwd_recv_volume
    seq_rank = get_sequence_parallel_rank()
    seq_world_size = get_sequence_parallel_size()
    ops = []
    if time_step + 1 >= seq_world_size:
        return []
    send_to = (seq_rank + time_step + 1) % seq_world_size
    recv_from = (seq_rank - time_step - 1) % seq_world_size
    q_recv, k_recv, v_recv = peer_buffers
    with torch.cuda.stream(_COMM_STREAM):
        # the comm stream must not read k/v before the compute stream produced them
        _COMM_STREAM.wait_stream(torch.cuda.current_stream())
        for t in (q, k, v):
            ops.append(P2POp(isend, t, send_to, group=_SEQUENCE_PARALLEL_GROUP))
            _fwd_send_volume += t.numel() * t.element_size()
        for t in (q_recv, k_recv, v_recv):
            ops.append(P2POp(irecv, t, recv_from, group=_SEQUENCE_PARALLEL_GROUP))
            _fwd_recv_volume += t.numel() * t.element_size()
        reqs = batch_isend_irecv(ops)
    return reqs


def wait_async_handles(reqs):
    if reqs:
        for req in reqs:
            req.wait()
    torch.cuda.current_stream().wait_stream(_COMM_STREAM)


def print_and_reset_comm_stats():
    global _fwd_send_volume, _fwd_recv_volume, _bwd_send_volume, _bwd_recv_volume
    if dist.get_rank() == 0:
        print(
            f"fwd send {_fwd_send_volume / 1e9:.3f} GB, recv {_fwd_recv_volume / 1e9:.3f} GB; "
            f"bwd send {_bwd_send_volume / 1e9:.3f} GB, recv {_bwd_recv_volume / 1e9:.3f} GB"
        )
    _fwd_send_volume = _fwd_recv_volume = _bwd_send_volume = _bwd_recv_volume = 0


# ---------------------------------------------------------------------------
# rescale kernel: merge (o, m, l) from a peer into the local accumulators
# ---------------------------------------------------------------------------
@triton.jit
def _rescale_kernel(
    peer_m,
    m,
    peer_l,
    l,
    peer_o,
    o,
    L,
    stride_oz, stride_oh, stride_om, stride_on,
    Z, H, N_CTX,
    BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr,
    BLOCK_N: tl.constexpr,
    LAST_STEP: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    o_offset = off_hz * stride_oh
    peer_o_block_ptr = tl.make_block_ptr(
        base=peer_o + o_offset,
        shape=(N_CTX, BLOCK_DMODEL),
        strides=(stride_om, stride_on),
        offsets=(start_m * BLOCK_M, 0),
        block_shape=(BLOCK_M, BLOCK_DMODEL),
        order=(1, 0),
    )
    o_block_ptr = tl.make_block_ptr(
        base=o + o_offset,
        shape=(N_CTX, BLOCK_DMODEL),
        strides=(stride_om, stride_on),
        offsets=(start_m * BLOCK_M, 0),
        block_shape=(BLOCK_M, BLOCK_DMODEL),
        order=(1, 0),
    )
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)

    peer_m_ptrs = peer_m + off_hz * N_CTX + offs_m
    m_ptrs = m + off_hz * N_CTX + offs_m
    peer_l_ptrs = peer_l + off_hz * N_CTX + offs_m
    l_ptrs = l + off_hz * N_CTX + offs_m

    peer_m_i = tl.load(peer_m_ptrs).to(tl.float32)
    m_i = tl.load(m_ptrs).to(tl.float32)
    peer_l_i = tl.load(peer_l_ptrs).to(tl.float32)
    l_i = tl.load(l_ptrs).to(tl.float32)

    peer_acc = tl.load(peer_o_block_ptr).to(tl.float32)
    acc = tl.load(o_block_ptr).to(tl.float32)

    lo = 0
    hi = N_CTX
    m_i_sync = tl.maximum(m_i, peer_m_i)
    alpha = tl.math.exp2(m_i - m_i_sync)
    peer_alpha = tl.math.exp2(peer_m_i - m_i_sync)
    # -- scale and update acc --
    acc_scale = l_i * 0 + alpha  # workaround some compiler bug
    peer_acc_scale = peer_l_i * 0 + peer_alpha  # workaround some compiler bug

    acc *= acc_scale[:, None]
    peer_acc *= peer_acc_scale[:, None]
    acc += peer_acc
    l_i = l_i * acc_scale + peer_l_i * peer_acc_scale
    # write back O, l, m
    tl.store(m_ptrs, m_i_sync)
    tl.store(l_ptrs, l_i)
    if LAST_STEP:
        acc = acc / l_i[:, None]
        L_ptrs = L + off_hz * N_CTX + offs_m
        tl.store(L_ptrs, m_i_sync / 1.44269504 + tl.math.log(l_i))
    tl.store(o_block_ptr, acc.to(tl.bfloat16))


def rescale(q, peer_m, m, peer_l, l, peer_o, o, L, last_time):
    BLOCK_M = 128
    BLOCK_N = 64
    Lk = q.shape[-1]
    grid = (triton.cdiv(q.shape[2], BLOCK_M), q.shape[0] * q.shape[1], 1)
    with torch.cuda.device(q.device.index):
        _rescale_kernel[grid](
            peer_m, m, peer_l, l, peer_o, o, L,
            o.stride(0), o.stride(1), o.stride(2), o.stride(3),
            o.shape[0], o.shape[1], o.shape[2],
            BLOCK_M=BLOCK_M, BLOCK_DMODEL=Lk, BLOCK_N=BLOCK_N,
            LAST_STEP=last_time,
            num_warps=4,
            num_stages=4,
        )


# ---------------------------------------------------------------------------
# local block attention through FA2
# ---------------------------------------------------------------------------
def _local_attn_fwd(q, k, v, causal, sm_scale):
    # FA2 wants (b, s, h, d); we keep (b, h, s, d) around for the rescale kernel
    q, k, v = [rearrange(x, "b h s d -> b s h d").contiguous() for x in (q, k, v)]
    out, _, _, _, _, lse, _, _ = _flash_attn_forward(
        q, k, v, 0.0, sm_scale, causal=causal, window_size=(-1, -1),
        softcap=0.0, alibi_slopes=None, return_softmax=False,
    )
    return rearrange(out, "b s h d -> b h s d"), lse


def _lightseq_forward(q, k, v, causal, sm_scale, comm_mode):
    bsz, nh, seq_len, hdim = q.shape
    # running statistics, in log2 space like the Triton FA tutorial
    m = torch.full((bsz * nh, seq_len), fill_value=-float("inf"), device=q.device, dtype=torch.float32)
    l = torch.zeros_like(m)
    L = torch.zeros_like(m)
    o = torch.zeros_like(q)

    seq_rank = get_sequence_parallel_rank()
    seq_world_size = get_sequence_parallel_size()

    peer_q = torch.empty_like(q)
    peer_k = torch.empty_like(k)
    peer_v = torch.empty_like(v)

    for time_step in range(seq_world_size // 2 + 1):
        # This is important for cuda scheduler to execute nccl calls first.
        torch.cuda.synchronize()
        reqs = maybe_send_recv_fwd_qkvo(q, k, v, (peer_q, peer_k, peer_v), time_step, comm_mode)
        if comm_mode == "sync":
            wait_async_handles(reqs)

        if is_compute_for_local_query(time_step):
            block_o, block_lse = _local_attn_fwd(q, k, v, causal=(time_step == 0), sm_scale=sm_scale)
            block_m = (block_lse * 1.44269504).reshape(bsz * nh, seq_len)
            block_l = torch.ones_like(block_m)
            rescale(q, block_m, m, block_l, l, block_o, o, L, is_last_time(time_step))
        elif is_idle(time_step):
            pass
        else:
            # help a busier rank: remote query against local kv
            block_o, block_lse = _local_attn_fwd(peer_q, k, v, causal=False, sm_scale=sm_scale)

        if comm_mode == "lightseq":
            # Make sure tensors for next steps are ready
            wait_async_handles(reqs)

    return q, k, v, o, L


def _lightseq_backward(do, q, k, v, o, L, sm_scale, comm_mode, backward_engine):
    dq = torch.zeros_like(q, dtype=torch.float32)
    dk = torch.zeros_like(k, dtype=torch.float32)
    dv = torch.zeros_like(v, dtype=torch.float32)
    seq_world_size = get_sequence_parallel_size()

    dq_delta = torch.empty_like(q)
    dk_delta = torch.empty_like(k)
    dv_delta = torch.empty_like(v)

    for time_step in range(seq_world_size // 2 + 1):
        torch.cuda.synchronize(q.device)
        if is_idle(time_step):
            continue
        q_, k_, v_, o_, do_ = [
            rearrange(x, "b h s d -> b s h d").contiguous() for x in (q, k, v, o, do)
        ]
        lse = L.reshape(q.shape[0], q.shape[1], q.shape[2])
        if backward_engine == "flash":
            _flash_attn_backward(
                do_, q_, k_, v_, o_, lse,
                dq_delta, dk_delta, dv_delta,
                0.0, sm_scale, time_step == 0, (-1, -1), 0.0, None, False, None,
            )
        else:
            raise NotImplementedError(f"backward engine {backward_engine}")
        dq += dq_delta
        dk += dk_delta
        dv += dv_delta

    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)


class _attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal, sm_scale):
        try:
            global args
            comm_mode = args.comm_mode
            backward_engine = args.backward_engine
        except:
            comm_mode = "lightseq"
            backward_engine = "flash"

        q, k, v, o, L = _lightseq_forward(q, k, v, causal, sm_scale, comm_mode)

        ctx.save_for_backward(q, k, v, o, L)
        ctx.sm_scale = sm_scale
        ctx.comm_mode = comm_mode
        ctx.backward_engine = backward_engine
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, L = ctx.saved_tensors
        sm_scale = ctx.sm_scale

        dq, dk, dv = _lightseq_backward(do, q, k, v, o, L, sm_scale, ctx.comm_mode, ctx.backward_engine)
        return dq, dk, dv, None, None


dist_attn = _attention.apply
