# --------------------------------------------------------
# Fused kernel for window process for SwinTransformer
# Licensed under The MIT License [see LICENSE for details]
# --------------------------------------------------------
"""
Autograd wrappers around the fused CUDA kernels that merge the cyclic shift (torch.roll) with
window partition (and the reverse: window merge + roll back). Saves two full memory passes per
shifted block. Built by `python setup.py install` in this folder.

Running this file as a script checks the fused kernels against the reference PyTorch path
and times both.
"""
import argparse
import time

import torch
import swin_window_process


def window_partition(x, window_size):
    """(B, H, W, C) -> (num_windows * B, window_size, window_size, C)"""
    B, H, W, C = x.shape
    x = x.view(B, H // window_size, window_size, W // window_size, window_size, C)
    windows = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)
    return windows


def window_reverse(windows, window_size, H, W):
    """(num_windows * B, window_size, window_size, C) -> (B, H, W, C)"""
    B = int(windows.shape[0] / (H * W / window_size / window_size))
    x = windows.view(B, H // window_size, W // window_size, window_size, window_size, -1)
    x = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)
    return x


def roll_and_partition_reference(x, shift_size, window_size):
    shifted = torch.roll(x, shifts=(shift_size, shift_size), dims=(1, 2))
    return window_partition(shifted, window_size)


def merge_and_roll_reference(windows, shift_size, window_size, H, W):
    x = window_reverse(windows, window_size, H, W)
    return torch.roll(x, shifts=(shift_size, shift_size), dims=(1, 2))


class WindowProcess(torch.autograd.Function):
    """roll(x, shift) followed by window_partition, in one kernel."""

    @staticmethod
    def forward(ctx, input, B, H, W, C, shift_size, window_size):
        output = swin_window_process.roll_and_window_partition_forward(input, B, H, W, C, shift_size, window_size)

        ctx.B = B
        ctx.H = H
        ctx.W = W
        ctx.C = C
        ctx.shift_size = shift_size
        ctx.window_size = window_size
        return output

    @staticmethod
    def backward(ctx, grad_in):
        B = ctx.B
        H = ctx.H
        W = ctx.W
        C = ctx.C
        shift_size = ctx.shift_size
        window_size = ctx.window_size

        grad_out = swin_window_process.roll_and_window_partition_backward(grad_in, B, H, W, C, shift_size, window_size)
        return grad_out, None, None, None, None, None, None, None


class WindowProcessReverse(torch.autograd.Function):
    """window_reverse followed by roll(x, -shift), in one kernel."""

    @staticmethod
    def forward(ctx, input, B, H, W, C, shift_size, window_size):
        output = swin_window_process.window_merge_and_roll_forward(input, B, H, W, C, shift_size, window_size)

        ctx.B = B
        ctx.H = H
        ctx.W = W
        ctx.C = C
        ctx.shift_size = shift_size
        ctx.window_size = window_size

        return output

    @staticmethod
    def backward(ctx, grad_in):
        B = ctx.B
        H = ctx.H
        W = ctx.W
        C = ctx.C
        shift_size = ctx.shift_size
        window_size = ctx.window_size

        grad_out = swin_window_process.window_merge_and_roll_backward(grad_in, B, H, W, C, shift_size, window_size)
        return grad_out, None, None, None, None, None, None, None


def _check(dtype, B=4, H=56, W=56, C=96, shift=-3, ws=7):
    x = torch.randn(B, H, W, C, dtype=dtype, device="cuda", requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)

    out = WindowProcess.apply(x, B, H, W, C, shift, ws)
    ref = roll_and_partition_reference(x_ref, shift, ws)
    g = torch.randn_like(out)
    out.backward(g)
    ref.backward(g)
    fwd_err = (out - ref).abs().max().item()
    bwd_err = (x.grad - x_ref.grad).abs().max().item()

    merged = WindowProcessReverse.apply(out.detach(), B, H, W, C, -shift, ws)
    merged_ref = merge_and_roll_reference(ref.detach(), -shift, ws, H, W)
    rev_err = (merged - merged_ref).abs().max().item()
    print(f"{str(dtype):>14}: fwd {fwd_err:.2e}  bwd {bwd_err:.2e}  reverse {rev_err:.2e}")
    return max(fwd_err, bwd_err, rev_err)


def _time(fn, iters):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(10):
        fn()
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def main():
    parser = argparse.ArgumentParser("window process kernel check")
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()

    worst = max(_check(torch.float32), _check(torch.float16))
    assert worst < 1e-2, f"fused kernel mismatch: {worst}"

    B, H, W, C, shift, ws = args.batch, 56, 56, 96, -3, 7
    x = torch.randn(B, H, W, C, dtype=torch.float16, device=torch.device("cuda"))
    t_fused = _time(lambda: WindowProcess.apply(x, B, H, W, C, shift, ws), args.iters)
    t_ref = _time(lambda: roll_and_partition_reference(x, shift, ws), args.iters)
    print(f"roll+partition: fused {t_fused:.3f} ms, torch {t_ref:.3f} ms, speedup {t_ref / t_fused:.2f}x")
    t0 = time.time()
    _ = [WindowProcessReverse.apply(x.view(-1, ws, ws, C), B, H, W, C, -shift, ws) for _ in range(args.iters)]
    print(f"merge+roll wall time per call: {(time.time() - t0) / args.iters * 1e3:.3f} ms (unsynchronised)")


if __name__ == "__main__":
    main()
