"""
Alignment search kernels for TTS training.

* maximum_path: monotonic alignment search (MAS) between text and mel frames, used by
  Glow-TTS / VITS-style models to derive durations from the prior log-likelihood matrix.
* forced_align: CTC-style Viterbi forced alignment of a token sequence to frame-level
  emissions (used to bootstrap durations from an ASR aligner).

Both have a numba CPU implementation; CUDA tensors are processed in place with numba.cuda
kernels sharing PyTorch's current stream (one thread per batch item).
"""
import math

import numpy as np
import torch
from numba import cuda, jit, prange


# ---------------------------------------------------------------------------------------------
# monotonic alignment search
# ---------------------------------------------------------------------------------------------

@jit(nopython=True, nogil=True)
def _mas_single(path, value, t_y, t_x, max_neg_val=-1e9):
    index = t_x - 1
    for y in range(t_y):
        for x in range(max(0, t_x + y - t_y), min(t_x, y + 1)):
            v_cur = max_neg_val if x == y else value[y - 1, x]
            if x == 0:
                v_prev = 0.0 if y == 0 else max_neg_val
            else:
                v_prev = value[y - 1, x - 1]
            value[y, x] += max(v_prev, v_cur)

    for y in range(t_y - 1, -1, -1):
        path[y, index] = 1
        if index != 0 and (index == y or value[y - 1, index] < value[y - 1, index - 1]):
            index = index - 1


@jit(nopython=True, parallel=True)
def _mas_batch(paths, values, t_ys, t_xs):
    for i in prange(paths.shape[0]):
        _mas_single(paths[i], values[i], t_ys[i], t_xs[i])


@cuda.jit
def _mas_cuda_kernel(paths, values, t_ys, t_xs, max_neg_val):
    b = cuda.grid(1)
    if b >= paths.shape[0]:
        return
    path, value, t_y, t_x = paths[b], values[b], t_ys[b], t_xs[b]
    index = t_x - 1
    for y in range(t_y):
        for x in range(max(0, t_x + y - t_y), min(t_x, y + 1)):
            v_cur = max_neg_val if x == y else value[y - 1, x]
            if x == 0:
                v_prev = 0.0 if y == 0 else max_neg_val
            else:
                v_prev = value[y - 1, x - 1]
            value[y, x] += max(v_prev, v_cur)
    for y in range(t_y - 1, -1, -1):
        path[y, index] = 1
        if index != 0 and (index == y or value[y - 1, index] < value[y - 1, index - 1]):
            index = index - 1


def maximum_path(neg_cent, mask):
    """neg_cent: [b, t_t, t_s] log-likelihoods; mask: [b, t_t, t_s]. Returns a 0/1 path of the same shape."""
    if neg_cent.is_cuda:
        return _maximum_path_cuda(neg_cent, mask)
    device, dtype = neg_cent.device, neg_cent.dtype
    values = neg_cent.data.cpu().numpy().astype(np.float32)
    path = np.zeros(values.shape, dtype=np.int32)
    t_t_max = mask.sum(1)[:, 0].data.cpu().numpy().astype(np.int32)
    t_s_max = mask.sum(2)[:, 0].data.cpu().numpy().astype(np.int32)
    _mas_batch(path, values, t_t_max, t_s_max)
    return torch.from_numpy(path).to(device=device, dtype=dtype)


def _maximum_path_cuda(neg_cent, mask, threads=64):
    dtype = neg_cent.dtype
    values = neg_cent.detach().float().contiguous().clone()
    path = torch.zeros(values.shape, dtype=torch.int32, device=values.device)
    t_t_max = mask.sum(1)[:, 0].to(torch.int32).contiguous()
    t_s_max = mask.sum(2)[:, 0].to(torch.int32).contiguous()
    stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
    blocks = math.ceil(values.shape[0] / threads)
    _mas_cuda_kernel[blocks, threads, stream](
        cuda.as_cuda_array(path), cuda.as_cuda_array(values),
        cuda.as_cuda_array(t_t_max), cuda.as_cuda_array(t_s_max), -1e9)
    return path.to(dtype)


# ---------------------------------------------------------------------------------------------
# CTC Viterbi forced alignment
# ---------------------------------------------------------------------------------------------

@cuda.jit
def _viterbi_kernel(emissions, targets, in_lens, tgt_lens, trellis, backptr, out_frames, blank):
    """emissions [B, T, C] log-probs; targets [B, S]; trellis/backptr [B, T, 2S+1]; out_frames [B, T]."""
    b = cuda.grid(1)
    if b >= emissions.shape[0]:
        return
    T = in_lens[b]
    S = 2 * tgt_lens[b] + 1
    neg_inf = -1e30
    for s in range(S):
        trellis[b, 0, s] = neg_inf
    trellis[b, 0, 0] = emissions[b, 0, blank]
    if S > 1:
        trellis[b, 0, 1] = emissions[b, 0, targets[b, 0]]
    for t in range(1, T):
        for s in range(S):
            label = blank if s % 2 == 0 else targets[b, s // 2]
            best = trellis[b, t - 1, s]
            arg = s
            if s > 0 and trellis[b, t - 1, s - 1] > best:
                best = trellis[b, t - 1, s - 1]
                arg = s - 1
            if s > 1 and s % 2 == 1 and targets[b, s // 2] != targets[b, s // 2 - 1]:
                if trellis[b, t - 1, s - 2] > best:
                    best = trellis[b, t - 1, s - 2]
                    arg = s - 2
            trellis[b, t, s] = best + emissions[b, t, label]
            backptr[b, t, s] = arg
    s = S - 1
    if S > 1 and trellis[b, T - 1, S - 2] > trellis[b, T - 1, S - 1]:
        s = S - 2
    for t in range(T - 1, -1, -1):
        out_frames[b, t] = s
        s = backptr[b, t, s]


def forced_align(log_probs, targets, input_lengths, target_lengths, blank=0, threads=32):
    """
    log_probs: [B, T, C] (log-softmax output of the aligner, on the GPU); targets: [B, S].
    Returns the trellis state index per frame ([B, T], int32); even states are blanks.
    """
    B, T, _ = log_probs.shape
    S = targets.shape[1]
    emissions = log_probs.detach().float().contiguous()
    targets = targets.to(torch.int32).contiguous()
    in_lens = input_lengths.to(torch.int32).contiguous()
    tgt_lens = target_lengths.to(torch.int32).contiguous()
    trellis = torch.empty((B, T, 2 * S + 1), dtype=torch.float32, device=emissions.device)
    backptr = torch.zeros((B, T, 2 * S + 1), dtype=torch.int32, device=emissions.device)
    frames = torch.full((B, T), -1, dtype=torch.int32, device=emissions.device)

    launch_stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
    d_emissions = cuda.as_cuda_array(emissions)
    d_targets = cuda.as_cuda_array(targets)
    blocks = math.ceil(B / threads)
    _viterbi_kernel[blocks, threads, launch_stream](
        d_emissions, d_targets, cuda.as_cuda_array(in_lens), cuda.as_cuda_array(tgt_lens),
        cuda.as_cuda_array(trellis), cuda.as_cuda_array(backptr), cuda.as_cuda_array(frames), blank)
    return frames


def frames_to_durations(frames, target_lengths):
    """Count frames per token (odd trellis states); blanks are merged into the following token."""
    B = frames.shape[0]
    S = int(target_lengths.max())
    durations = torch.zeros((B, S), dtype=torch.long, device=frames.device)
    token = torch.div(frames.clamp(min=0), 2, rounding_mode="floor").clamp(max=S - 1).long()
    valid = (frames >= 0).long()
    durations.scatter_add_(1, token, valid)
    return durations
