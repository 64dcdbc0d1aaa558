import torch

import triton
import triton.language as tl
import math


@triton.jit
def _fwd_kernel_token_att1(
    Q,
    K,
    sm_scale,
    Req_to_tokens,
    B_req_idx,
    B_Start_Loc,
    B_Seqlen,
    Att_Out,
    stride_req_to_tokens_b,
    stride_req_to_tokens_s,
    stride_qbs,
    stride_qh,
    stride_qd,
    stride_kbs,
    stride_kh,
    stride_kd,
    att_stride_h,
    att_stride_bs,
    kv_group_num,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    start_n = tl.program_id(2)

    cur_kv_head = cur_head // kv_group_num

    offs_d = tl.arange(0, BLOCK_DMODEL)
    cur_batch_seq_len = tl.load(B_Seqlen + cur_batch)
    cur_batch_in_all_start_index = tl.load(B_Start_Loc + cur_batch)
    cur_batch_req_idx = tl.load(B_req_idx + cur_batch)

    cur_batch_start_index = 0
    cur_batch_end_index = cur_batch_seq_len

    off_q = cur_batch * stride_qbs + cur_head * stride_qh + offs_d * stride_qd

    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)

    block_stard_index = start_n * BLOCK_N
    block_mask = tl.where(block_stard_index < cur_batch_seq_len, 1, 0)

    for start_mark in range(0, block_mask, 1):
        q = tl.load(Q + off_q + start_mark)
        offs_n_new = cur_batch_start_index + offs_n
        k_loc = tl.load(
            Req_to_tokens + stride_req_to_tokens_b * cur_batch_req_idx + stride_req_to_tokens_s * offs_n_new,
            mask=offs_n_new < cur_batch_end_index,
            other=0,
        )
        off_k = k_loc[:, None] * stride_kbs + cur_kv_head * stride_kh + offs_d[None, :] * stride_kd
        k = tl.load(K + off_k, mask=offs_n_new[:, None] < cur_batch_end_index, other=0.0)
        att_value = tl.sum(q[None, :] * k, 1)
        att_value *= sm_scale
        off_o = cur_head * att_stride_h + (cur_batch_in_all_start_index + offs_n) * att_stride_bs
        tl.store(Att_Out + off_o, att_value, mask=offs_n_new < cur_batch_end_index)
    return


@torch.no_grad()
def token_att_fwd(q, k, att_out, Req_to_tokens, B_req_idx, B_Start_Loc, B_Seqlen, max_len_in_batch):
    BLOCK = 32
    # shape constraints
    Lq, Lk = q.shape[-1], k.shape[-1]
    assert Lq == Lk
    assert Lk in {16, 32, 64, 128, 256}
    sm_scale = 1.0 / (Lk ** 0.5)

    batch, head_num = B_req_idx.shape[0], q.shape[1]

    grid = (batch, head_num, triton.cdiv(max_len_in_batch, BLOCK))
    kv_group_num = q.shape[1] // k.shape[1]

    # GQA heads share one K row per program, so fewer warps are enough
    num_warps = 4 if kv_group_num == 1 else 2

    _fwd_kernel_token_att1[grid](
        q,
        k,
        sm_scale,
        Req_to_tokens,
        B_req_idx,
        B_Start_Loc,
        B_Seqlen,
        att_out,
        Req_to_tokens.stride(0),
        Req_to_tokens.stride(1),
        q.stride(0),
        q.stride(1),
        q.stride(2),
        k.stride(0),
        k.stride(1),
        k.stride(2),
        att_out.stride(0),
        att_out.stride(1),
        kv_group_num=kv_group_num,
        BLOCK_DMODEL=Lk,
        BLOCK_N=BLOCK,
        num_warps=num_warps,
        num_stages=1,
    )
    return


def token_att_fwd_alloc(q, k, req_to_tokens, b_req_idx, b_start_loc, b_seq_len, max_len_in_batch, total_token_num):
    """Allocate the [head, total_token] score buffer on the same device as q and run stage 1."""
    head_num = q.shape[1]
    att_out = torch.empty((head_num, total_token_num), dtype=q.dtype, device=q.device)
    token_att_fwd(q, k, att_out, req_to_tokens, b_req_idx, b_start_loc, b_seq_len, max_len_in_batch)
    return att_out


def torch_att(xq, xk, bs, seqlen, num_head, head_dim):
    xq = xq.view(bs, 1, num_head, head_dim)
    xk = xk.view(bs, seqlen, num_head, head_dim)
    keys = xk
    xq = xq.transpose(1, 2)
    keys = keys.transpose(1, 2)
    scores = (torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(head_dim)).squeeze().transpose(0, 1).reshape(num_head, -1)
    return scores


def test1():
    import time

    batch_size, seq_len, head_num, head_dim = 17, 1025, 12, 128

    dtype = torch.float16

    q = torch.empty((batch_size, head_num, head_dim), dtype=dtype).normal_(mean=0.1, std=0.2).cuda()
    k = torch.empty((batch_size * seq_len, head_num, head_dim), dtype=dtype).normal_(mean=0.1, std=0.2).cuda()
    att_out = torch.empty((head_num, batch_size * seq_len), dtype=dtype).cuda()

    req_to_tokens = torch.arange(batch_size * seq_len, dtype=torch.int32).view(batch_size, seq_len).cuda()
    b_req_idx = torch.arange(batch_size, dtype=torch.int32).cuda()
    b_start_loc = torch.zeros((batch_size,), dtype=torch.int32).cuda()
    b_seq_len = torch.zeros((batch_size,), dtype=torch.int32).cuda()
    for i in range(batch_size):
        b_start_loc[i] = i * seq_len
        b_seq_len[i] = seq_len

    # warmup
    for _ in range(10):
        token_att_fwd(q, k, att_out, req_to_tokens, b_req_idx, b_start_loc, b_seq_len, seq_len)
    torch.cuda.synchronize()
    t1 = time.time()
    run_iters = 1000
    for _ in range(run_iters):
        token_att_fwd(q, k, att_out, req_to_tokens, b_req_idx, b_start_loc, b_seq_len, seq_len)
    torch.cuda.synchronize()  # kernel launches are async
    t2 = time.time()
    print("Time cost {}".format((t2 - t1) / run_iters))

    torch_out = torch_att(q, k, batch_size, seq_len, head_num, head_dim).squeeze()
    o = att_out.squeeze()
    print("max ", torch.max(torch.abs(torch_out - o)))
    print("mean ", torch.mean(torch.abs(torch_out - o)))
    assert torch.allclose(torch_out, o, atol=1e-2, rtol=0)


if __name__ == "__main__":
    test1()
