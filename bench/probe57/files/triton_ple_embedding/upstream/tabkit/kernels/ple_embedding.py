"""Fused piecewise-linear encoding (PLE) + per-feature linear embedding for numerical features.

PLE (Gorishniy et al., "On Embeddings for Numerical Features in Tabular Deep Learning") maps a scalar
x with bin edges b_0 < ... < b_T to a T-dim vector e_t = clamp((x - b_{t-1}) / (b_t - b_{t-1}), 0, 1)
(first/last bins unclamped on the outer side). The embedding is then e @ W_j + c_j for feature j.
Materialising e is [B, F, T] and dominates memory for wide tables, so the kernel fuses both steps.
"""
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_B": 32, "BLOCK_D": 64}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_B": 64, "BLOCK_D": 64}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_B": 64, "BLOCK_D": 128}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_B": 128, "BLOCK_D": 128}, num_warps=8, num_stages=4),
    ],
    key=["B", "D", "T"],
)
@triton.jit
def _ple_embed_fwd(
    X, EDGES, W, C, OUT,
    B, F, T, D,
    stride_xb, stride_xf,
    stride_ef, stride_et,
    stride_wf, stride_wt, stride_wd,
    stride_cf, stride_cd,
    stride_ob, stride_of, stride_od,
    BLOCK_B: tl.constexpr, BLOCK_D: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_f = tl.program_id(1)
    pid_d = tl.program_id(2)
    offs_b = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask_b = offs_b < B
    mask_d = offs_d < D

    x = tl.load(X + offs_b * stride_xb + pid_f * stride_xf, mask=mask_b, other=0.0).to(tl.float32)
    acc = tl.zeros((BLOCK_B, BLOCK_D), dtype=tl.float32)
    lo = tl.load(EDGES + pid_f * stride_ef)
    for t in range(0, T):
        hi = tl.load(EDGES + pid_f * stride_ef + (t + 1) * stride_et)
        width = tl.maximum(hi - lo, 1e-12)
        e = (x - lo) / width
        if t == 0:
            e = tl.minimum(e, 1.0)
        elif t == T - 1:
            e = tl.maximum(e, 0.0)
        else:
            e = tl.minimum(tl.maximum(e, 0.0), 1.0)
        w = tl.load(W + pid_f * stride_wf + t * stride_wt + offs_d * stride_wd, mask=mask_d, other=0.0)
        acc += e[:, None] * w[None, :].to(tl.float32)
        lo = hi
    c = tl.load(C + pid_f * stride_cf + offs_d * stride_cd, mask=mask_d, other=0.0).to(tl.float32)
    acc += c[None, :]
    out_ptrs = OUT + offs_b[:, None] * stride_ob + pid_f * stride_of + offs_d[None, :] * stride_od
    tl.store(out_ptrs, acc.to(OUT.dtype.element_ty), mask=mask_b[:, None] & mask_d[None, :])


def ple_encode_reference(x, edges):
    """Pure PyTorch PLE, used for the backward pass and on the CPU. x: [B, F], edges: [F, T+1]."""
    lo = edges[:, :-1].unsqueeze(0)
    hi = edges[:, 1:].unsqueeze(0)
    e = (x.unsqueeze(-1) - lo) / (hi - lo).clamp_min(1e-12)
    T = edges.shape[1] - 1
    e_first = e[..., :1].clamp(max=1.0)
    e_mid = e[..., 1:T - 1].clamp(0.0, 1.0)
    e_last = e[..., T - 1:].clamp(min=0.0)
    return torch.cat([e_first, e_mid, e_last], dim=-1) if T > 1 else e


def ple_embed_reference(x, edges, weight, bias):
    return torch.einsum("bft,ftd->bfd", ple_encode_reference(x, edges), weight) + bias


def _sm_count(device):
    return torch.cuda.get_device_properties(device).multi_processor_count


def _out_dtype(x):
    # bf16 output on Ampere+, fp16 otherwise
    major, _ = torch.cuda.get_device_capability(x.device)
    return torch.bfloat16 if major >= 8 else torch.float16


def ple_embed_triton(x, edges, weight, bias, out_dtype=None):
    assert x.is_cuda, "the Triton PLE kernel runs on CUDA tensors only"
    B, F = x.shape
    T = edges.shape[1] - 1
    D = weight.shape[-1]
    out_dtype = out_dtype or _out_dtype(x)
    out = torch.empty((B, F, D), device=x.device, dtype=out_dtype)
    if B * F < 4 * _sm_count(x.device):
        # too little work to fill the GPU: the launch overhead dominates
        return ple_embed_reference(x, edges, weight, bias).to(out_dtype)

    def grid(meta):
        return (triton.cdiv(B, meta["BLOCK_B"]), F, triton.cdiv(D, meta["BLOCK_D"]))

    _ple_embed_fwd[grid](
        x, edges, weight, bias, out,
        B, F, T, D,
        x.stride(0), x.stride(1),
        edges.stride(0), edges.stride(1),
        weight.stride(0), weight.stride(1), weight.stride(2),
        bias.stride(0), bias.stride(1),
        out.stride(0), out.stride(1), out.stride(2),
    )
    return out


class PLEEmbeddingFunction(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x, edges, weight, bias):
        ctx.save_for_backward(x, edges, weight)
        return ple_embed_triton(x, edges, weight, bias, out_dtype=torch.float32)

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_out):
        x, edges, weight = ctx.saved_tensors
        enc = ple_encode_reference(x, edges)                      # [B, F, T]
        grad_w = torch.einsum("bft,bfd->ftd", enc, grad_out)
        grad_b = grad_out.sum(0)
        return None, None, grad_w, grad_b


class PLEEmbeddings(torch.nn.Module):
    """Drop-in replacement for rtdl's PiecewiseLinearEmbeddings (fused on the GPU)."""

    def __init__(self, bins, d_embedding, fused=True):
        super().__init__()
        self.fused = fused
        edges = torch.stack([torch.as_tensor(b, dtype=torch.float32) for b in bins])
        self.register_buffer("edges", edges)
        n_features, n_edges = edges.shape
        self.weight = torch.nn.Parameter(torch.empty(n_features, n_edges - 1, d_embedding))
        self.bias = torch.nn.Parameter(torch.zeros(n_features, d_embedding))
        torch.nn.init.normal_(self.weight, std=(n_edges - 1) ** -0.5)

    def forward(self, x):
        if x.device.type == "cpu" or not self.fused:
            return ple_embed_reference(x, self.edges, self.weight, self.bias)
        return PLEEmbeddingFunction.apply(x, self.edges, self.weight, self.bias)


def compute_bins(X, n_bins=48):
    """Quantile bin edges per feature (unique, sorted), computed on the host."""
    X = torch.as_tensor(X, dtype=torch.float32)
    qs = torch.linspace(0.0, 1.0, n_bins + 1)
    bins = []
    for j in range(X.shape[1]):
        edges = torch.unique(torch.quantile(X[:, j], qs))
        if len(edges) < 3:
            edges = torch.tensor([edges[0] - 1.0, edges[0], edges[-1] + 1.0])
        bins.append(edges)
    max_len = max(len(b) for b in bins)
    # pad with +inf-ish edges so every feature has the same number of bins
    return [torch.cat([b, b[-1] + torch.arange(1, max_len - len(b) + 1)]) for b in bins]
