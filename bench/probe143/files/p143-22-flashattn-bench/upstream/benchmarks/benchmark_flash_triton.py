# Compare the Triton FlashAttention against the CUDA FlashAttention-2 kernels,
# PyTorch's SDPA (flash backend) and xformers' memory-efficient attention.
#
#   python benchmarks/benchmark_flash_triton.py --causal --headdim 64 128
import argparse
import math
import pickle

import torch
import torch.nn.functional as F
from einops import rearrange

from flash_attn import flash_attn_qkvpacked_func
from flash_attn_triton import flash_attn_func as flash_attn_triton  # local copy of flash_attn/flash_attn_triton.py

try:
    import xformers.ops as xops
except ImportError:
    xops = None


def flops(batch, seqlen, headdim, nheads, causal, mode="fwd"):
    assert mode in ["fwd", "bwd", "fwd_bwd"]
    f = 4 * batch * seqlen**2 * nheads * headdim // (2 if causal else 1)
    return f if mode == "fwd" else (2.5 * f if mode == "bwd" else 3.5 * f)


def efficiency(flop, time):
    return (flop / time / 10**12) if not math.isnan(time) else 0.0


def attention_pytorch(qkv, dropout_p=0.0, causal=True):
    """
    Arguments:
        qkv: (batch_size, seqlen, 3, nheads, head_dim)
        dropout_p: float
    Output:
        output: (batch_size, seqlen, nheads, head_dim)
    """
    batch_size, seqlen, _, nheads, d = qkv.shape
    q, k, v = qkv.unbind(dim=2)
    q = rearrange(q, "b t h d -> (b h) t d")
    k = rearrange(k, "b s h d -> (b h) d s")
    softmax_scale = 1.0 / math.sqrt(d)
    # Preallocate attn_weights for `baddbmm`
    scores = torch.empty(batch_size * nheads, seqlen, seqlen, dtype=qkv.dtype, device=qkv.device)
    scores = rearrange(
        torch.baddbmm(scores, q, k, beta=0, alpha=softmax_scale), "(b h) t s -> b h t s", h=nheads
    )
    if causal:
        # "triu_tril_cuda_template" not implemented for 'BFloat16'
        # So we have to construct the mask in float
        causal_mask = torch.triu(torch.full((seqlen, seqlen), -10000.0, device=scores.device), 1)
        # TD [2022-09-30]: Adding is faster than masked_fill_ (idk why, just better kernel I guess)
        scores = scores + causal_mask.to(dtype=scores.dtype)
    attention = torch.softmax(scores, dim=-1)
    attention_drop = F.dropout(attention, dropout_p)
    output = torch.einsum("bhts,bshd->bthd", attention_drop, v)
    return output.to(dtype=qkv.dtype)


def time_fwd_bwd(func, *inputs, repeats=30, **kwinputs):
    """Median forward and backward time in seconds, measured with CUDA events."""
    out = func(*inputs, **kwinputs)  # warmup + compile
    grad = torch.randn_like(out)
    out.backward(grad, retain_graph=True)

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    fwd_times, bwd_times = [], []
    for _ in range(repeats):
        start.record()
        out = func(*inputs, **kwinputs)
        end.record()
        torch.cuda.synchronize()
        fwd_times.append(start.elapsed_time(end) / 1000)

        start.record()
        out.backward(grad, retain_graph=True)
        end.record()
        torch.cuda.synchronize()  # backward done
        bwd_times.append(start.elapsed_time(end) / 1000)
    fwd_times.sort()
    bwd_times.sort()
    return fwd_times[len(fwd_times) // 2], bwd_times[len(bwd_times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--headdim", type=int, nargs="+", default=[64, 128])
    parser.add_argument("--dim", type=int, default=2048)
    parser.add_argument("--dropout-p", type=float, default=0.0)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--out", type=str, default="flash_triton_benchmark.pkl")
    args = parser.parse_args()

    device = "cuda"
    dtype = torch.float16
    torch.manual_seed(0)

    bs_seqlen_vals = [(32, 512), (16, 1024), (8, 2048), (4, 4096), (2, 8192), (1, 16384)]
    methods = ["Flash2", "Triton", "Pytorch", "SDPA-flash"] + (["xformers"] if xops is not None else [])

    time_f, time_b, speed_f, speed_b = {}, {}, {}, {}
    print(f"### {torch.cuda.get_device_name()} ###")
    for headdim in args.headdim:
        nheads = args.dim // headdim
        for batch_size, seqlen in bs_seqlen_vals:
            config = (args.causal, headdim, batch_size, seqlen)
            qkv = torch.randn(batch_size, seqlen, 3, nheads, headdim, device=device, dtype=dtype,
                              requires_grad=True)

            f, b = time_fwd_bwd(flash_attn_qkvpacked_func, qkv, args.dropout_p, causal=args.causal,
                                repeats=args.repeats)
            time_f[config, "Flash2"], time_b[config, "Flash2"] = f, b

            q, k, v = [x.detach().requires_grad_(True) for x in qkv.unbind(dim=2)]
            f, b = time_fwd_bwd(flash_attn_triton, q, k, v, None, args.causal, repeats=args.repeats)
            time_f[config, "Triton"], time_b[config, "Triton"] = f, b

            try:
                f, b = time_fwd_bwd(attention_pytorch, qkv, args.dropout_p, causal=args.causal,
                                    repeats=args.repeats)
            except torch.cuda.OutOfMemoryError:
                f, b = float("nan"), float("nan")
            time_f[config, "Pytorch"], time_b[config, "Pytorch"] = f, b

            q_t, k_t, v_t = [x.detach().transpose(1, 2).requires_grad_(True) for x in qkv.unbind(dim=2)]
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
                f, b = time_fwd_bwd(F.scaled_dot_product_attention, q_t, k_t, v_t,
                                    dropout_p=args.dropout_p, is_causal=args.causal, repeats=args.repeats)
            time_f[config, "SDPA-flash"], time_b[config, "SDPA-flash"] = f, b

            if xops is not None:
                q, k, v = [x.detach().requires_grad_(True) for x in qkv.unbind(dim=2)]
                f, b = time_fwd_bwd(
                    xops.memory_efficient_attention, q, k, v,
                    attn_bias=xops.LowerTriangularMask() if args.causal else None,
                    repeats=args.repeats,
                )
                time_f[config, "xformers"], time_b[config, "xformers"] = f, b

            print(f"### causal={args.causal}, headdim={headdim}, batch_size={batch_size}, seqlen={seqlen} ###")
            for method in methods:
                speed_f[config, method] = efficiency(
                    flops(batch_size, seqlen, headdim, nheads, args.causal, mode="fwd"),
                    time_f[config, method],
                )
                speed_b[config, method] = efficiency(
                    flops(batch_size, seqlen, headdim, nheads, args.causal, mode="bwd"),
                    time_b[config, method],
                )
                print(
                    f"{method} fwd: {speed_f[config, method]:.2f} TFLOPs/s, "
                    f"bwd: {speed_b[config, method]:.2f} TFLOPs/s"
                )
            del qkv
            torch.cuda.empty_cache()

    with open(args.out, "wb") as fp:
        pickle.dump((speed_f, speed_b, time_f, time_b), fp, protocol=pickle.HIGHEST_PROTOCOL)


if __name__ == "__main__":
    main()
