# Copyright (c) OpenMMLab. All rights reserved.
"""Triton implementation of ``DynamicScatter(reduce='mean')``.

Used by the dynamic voxel feature encoders (DynamicVFE / DynamicPillarFeatureNet)
when ``MMDET3D_SCATTER_BACKEND=triton``. It avoids the sort in the CUDA op by
accumulating with atomics, which is faster for the very sparse nuScenes sweeps.
"""
import os

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_C': 32}, num_warps=1),
        triton.Config({'BLOCK_C': 64}, num_warps=2),
        triton.Config({'BLOCK_C': 128}, num_warps=4, num_stages=2),
        triton.Config({'BLOCK_C': 256}, num_warps=8, num_stages=3),
    ],
    key=['C'],
)
@triton.jit
def _scatter_sum_kernel(feats_ptr, inv_ptr, out_ptr, cnt_ptr,
                        N, C, stride_fn, stride_on,
                        BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    voxel = tl.load(inv_ptr + pid)
    offs = tl.arange(0, BLOCK_C)
    for c0 in range(0, C, BLOCK_C):
        cols = c0 + offs
        mask = cols < C
        x = tl.load(feats_ptr + pid * stride_fn + cols, mask=mask, other=0.)
        tl.atomic_add(out_ptr + voxel * stride_on + cols, x.to(tl.float32), mask=mask)
    tl.atomic_add(cnt_ptr + voxel, 1.0)


@triton.jit
def _divide_kernel(out_ptr, cnt_ptr, res_ptr, C, stride_on, stride_rn,
                   BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    cnt = tl.load(cnt_ptr + pid)
    offs = tl.arange(0, BLOCK_C)
    for c0 in range(0, C, BLOCK_C):
        cols = c0 + offs
        mask = cols < C
        s = tl.load(out_ptr + pid * stride_on + cols, mask=mask, other=0.)
        tl.store(res_ptr + pid * stride_rn + cols,
                 (s / cnt).to(res_ptr.dtype.element_ty), mask=mask)


def _next_pow2(x):
    return 1 << (x - 1).bit_length()


def dynamic_scatter_mean_triton(feats, coors):
    """Average the features of points that fall into the same voxel.

    Args:
        feats (torch.Tensor): (N, C) point features.
        coors (torch.Tensor): (N, 4) int voxel coordinates (batch, z, y, x);
            points with a negative coordinate are dropped.

    Returns:
        tuple[torch.Tensor]: voxel features (M, C) and voxel coordinates (M, 4).
    """
    assert feats.is_cuda and coors.is_cuda, 'triton scatter only supports CUDA tensors'
    assert feats.size(0) == coors.size(0)

    valid = (coors >= 0).all(dim=1)
    feats, coors = feats[valid], coors[valid]
    voxel_coors, inverse = torch.unique(coors, return_inverse=True, dim=0)
    inverse = inverse.int().contiguous()

    N, C = feats.shape
    M = voxel_coors.size(0)
    if feats.dtype == torch.bfloat16 and torch.cuda.get_device_capability(feats.device)[0] < 9:
        # bf16 atomics are emulated before Hopper; accumulate from fp32 inputs instead
        feats = feats.float()
    feats = feats.contiguous()

    acc = torch.zeros((M, C), dtype=torch.float32, device=feats.device)
    cnt = torch.zeros((M, ), dtype=torch.float32, device=feats.device)
    out = torch.empty((M, C), dtype=feats.dtype, device=feats.device)

    with torch.cuda.device(feats.device):
        _scatter_sum_kernel[(N, )](
            feats, inverse, acc, cnt, N, C,
            feats.stride(0), acc.stride(0))
        _divide_kernel[(M, )](
            acc, cnt, out, C, acc.stride(0), out.stride(0),
            BLOCK_C=min(_next_pow2(C), 256), num_warps=4)
    return out, voxel_coors


def dynamic_scatter_mean_torch(feats, coors):
    """Reference implementation with index_add_ (any device)."""
    valid = (coors >= 0).all(dim=1)
    feats, coors = feats[valid], coors[valid]
    voxel_coors, inverse = torch.unique(coors, return_inverse=True, dim=0)
    M = voxel_coors.size(0)
    acc = feats.new_zeros((M, feats.size(1)), dtype=torch.float32)
    acc.index_add_(0, inverse, feats.float())
    cnt = torch.bincount(inverse, minlength=M).clamp(min=1).unsqueeze(1)
    return (acc / cnt).to(feats.dtype), voxel_coors


_BACKEND = os.getenv('MMDET3D_SCATTER_BACKEND', 'triton')


def dynamic_scatter_mean(feats, coors):
    if _BACKEND == 'triton':
        return dynamic_scatter_mean_triton(feats, coors)
    return dynamic_scatter_mean_torch(feats, coors)


if __name__ == '__main__':
    torch.manual_seed(0)
    pts = torch.randn(100000, 64, device='cuda')
    crs = torch.randint(0, 50, (100000, 4), device='cuda', dtype=torch.int32)
    a, ca = dynamic_scatter_mean_triton(pts, crs)
    b, cb = dynamic_scatter_mean_torch(pts, crs)
    assert torch.equal(ca, cb)
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    print('ok')
