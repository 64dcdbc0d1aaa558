import numpy as np
import torch
import torch.nn.functional as F


def quantize_verts(verts, canvas_size):
    """Convert vertices from their continuous range [0, 1] to the discrete
    canvas grid [0, canvas_size - 1]."""
    min_range = 0
    max_range = 1
    range_quantize = canvas_size - 1

    verts_ratio = (verts - min_range) / (max_range - min_range)
    verts_quantize = verts_ratio * range_quantize

    return verts_quantize.long()


def dequantize_verts(verts, canvas_size, add_noise=False):
    """Convert quantized vertices back to the continuous range [0, 1]."""
    min_range = 0
    max_range = 1
    range_quantize = canvas_size - 1
    verts = verts.float()
    verts = verts * (max_range - min_range) / range_quantize + min_range
    if add_noise:
        verts += torch.rand_like(verts) / range_quantize
    return verts


def top_k_logits(logits, k):
    """Masks logits such that logits not in top-k are small."""
    if k == 0:
        return logits
    values, _ = torch.topk(logits, k=k)
    k_largest = torch.min(values)
    logits = torch.where(logits < k_largest, torch.ones_like(logits) * -1e9, logits)
    return logits


def top_p_logits(logits, p):
    """Masks logits using nucleus (top-p) sampling."""
    if p == 1:
        return logits
    seq, dim = logits.shape[1:]
    logits = logits.view(-1, dim)
    sort_indices = torch.argsort(logits, dim=-1, descending=True)
    probs = F.softmax(logits, dim=-1).gather(-1, sort_indices)
    cumprobs = torch.cumsum(probs, dim=-1) - probs
    # The top 1 candidate always will not be masked.
    # This way ensures at least 1 indices will be selected.
    sort_mask = (cumprobs > p).type(logits.dtype)
    top_p_mask = torch.zeros_like(logits)
    top_p_mask = top_p_mask.scatter_add(-1, sort_indices, sort_mask)
    logits -= top_p_mask * 1e9
    return logits.view(-1, seq, dim)


def generate_square_subsequent_mask(sz, device='cuda'):
    r"""Generate a square mask for the sequence. The masked positions are filled with float('-inf').
        Unmasked positions are filled with float(0.0).
    """
    mask = (torch.triu(torch.ones(sz, sz, device=device)) == 1).transpose(0, 1)
    mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
    return mask


def polyline_to_tokens(polyline, canvas_size, stop_token):
    """Flatten a [N, 2] polyline (normalized) into the token sequence
    x0 y0 x1 y1 ... STOP used by the generator."""
    verts = quantize_verts(polyline, canvas_size)
    tokens = verts.reshape(-1)
    return torch.cat([tokens, tokens.new_tensor([stop_token])])


def pad_sequences(seqs, max_len, pad_value=0):
    """Right-pad a list of 1-D LongTensors to [B, max_len] and return masks."""
    out = seqs[0].new_full((len(seqs), max_len), pad_value)
    mask = torch.zeros((len(seqs), max_len), dtype=torch.bool, device=seqs[0].device)
    for i, s in enumerate(seqs):
        n = min(len(s), max_len)
        out[i, :n] = s[:n]
        mask[i, :n] = True
    return out, mask


def get_seq_lengths(masks):
    return masks.long().sum(-1).cpu().numpy().astype(np.int64)
