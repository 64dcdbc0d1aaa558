'''
Local normalized cross-correlation loss (as in ANTs SyN), with an optional fused CUDA kernel.

The pure PyTorch path computes the five local sums (I, J, I^2, J^2, IJ) with separable box or
Gaussian filters. For a 256^3 volume this allocates ~10 full-size intermediates; the fused kernel in
`fireants_fused_ops` computes them in one pass and recomputes in the backward pass instead of
storing them.
'''
from typing import Optional, Union, List
from functools import partial

import torch
from torch import nn
from torch.nn import functional as F

from fireants.types import ItemOrList
from fireants.losses.cc_utils import separable_filtering, gaussian_1d, _get_rectangular_kernel
from fireants.utils.globals import MIN_IMG_SIZE

try:
    import fireants_fused_ops as ffo
except ImportError:
    ffo = None


@torch.jit.script
def _cc_from_sums(t2: torch.Tensor, p2: torch.Tensor, tp: torch.Tensor, t_sum: torch.Tensor,
                  p_sum: torch.Tensor, kernel_vol: float, nr: float, dr: float):
    t_avg = t_sum / kernel_vol
    p_avg = p_sum / kernel_vol
    cross = tp - p_avg * t_sum
    t_var = torch.clamp(t2 - t_avg * t_sum, min=0.0)
    p_var = torch.clamp(p2 - p_avg * p_sum, min=0.0)
    return (cross * cross + nr) / (t_var * p_var + dr)


class FusedNCC3d(torch.autograd.Function):
    '''
    Fused forward/backward for 3D local NCC with a rectangular window.

    forward stores only the inputs and a small intermediate; backward recomputes the local sums.
    '''

    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, pred, target, kernel_size: int, nr: float, dr: float, reduction: str):
        assert pred.is_contiguous() and target.is_contiguous(), "fused NCC needs contiguous inputs"
        stream = torch.cuda.current_stream(pred.device).cuda_stream
        interm = torch.empty((pred.shape[0], 5) + tuple(pred.shape[2:]), device=pred.device,
                             dtype=pred.dtype)
        out = ffo.cc3d_fwd_interm_v1(interm, pred, target, kernel_size, nr, dr, stream)
        ctx.save_for_backward(interm, pred, target, out)
        ctx.kernel_size = kernel_size
        ctx.nr = nr
        ctx.dr = dr
        ctx.reduction = reduction
        if reduction == 'mean':
            return out.mean()
        elif reduction == 'sum':
            return out.sum()
        return out

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_output):
        interm, pred, target, out = ctx.saved_tensors
        if ctx.reduction == 'mean':
            grad_output = grad_output / out.numel()
        grad_pred = ffo.cc3d_bwd_modify_interm_v1(interm, pred, target, out, grad_output,
                                                  ctx.kernel_size, ctx.nr, ctx.dr)
        return grad_pred, None, None, None, None, None


class LocalNormalizedCrossCorrelationLoss(nn.Module):
    """
    Local squared zero-normalized cross-correlation.

    Args:
        spatial_dims: 2 or 3.
        kernel_size: window size (odd).
        kernel_type: {"rectangular", "triangular", "gaussian"}.
        reduction: {"mean", "sum", "none"}.
        smooth_nr / smooth_dr: numerator / denominator smoothing.
        unsigned: use squared CC (default) or signed CC.
        use_fused: use the fused CUDA kernel when it is installed and the inputs are on a GPU.
    """

    def __init__(
        self,
        spatial_dims: int = 3,
        kernel_size: int = 3,
        kernel_type: str = "rectangular",
        reduction: str = "mean",
        smooth_nr: float = 1e-5,
        smooth_dr: float = 1e-5,
        unsigned: bool = True,
        checkpointing: bool = False,
        use_fused: bool = True,
    ) -> None:
        super().__init__()
        self.ndim = spatial_dims
        if self.ndim not in {2, 3}:
            raise ValueError(f"Unsupported ndim: {self.ndim}-d, only 2-d and 3-d inputs are supported")
        self.reduction = reduction
        self.unsigned = unsigned

        self.kernel_size = kernel_size
        if self.kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd, got {self.kernel_size}")

        self.kernel_type = kernel_type
        if kernel_type == "rectangular":
            _kernel = _get_rectangular_kernel
        elif kernel_type == "gaussian":
            _kernel = partial(gaussian_1d, truncated=2)
        else:
            raise ValueError(f"Unsupported kernel_type: {kernel_type}")
        self.kernel = _kernel(self.kernel_size)
        self.kernel.requires_grad = False
        self.kernel_nd, self.kernel_vol = self.get_kernel_vol()
        self.smooth_nr = float(smooth_nr)
        self.smooth_dr = float(smooth_dr)
        self.checkpointing = checkpointing
        self.use_fused = use_fused and ffo is not None and kernel_type == "rectangular" and spatial_dims == 3
        if use_fused and ffo is None:
            print("fireants_fused_ops not found, falling back to the PyTorch implementation of local CC")

    def get_kernel_vol(self):
        vol = self.kernel
        for _ in range(self.ndim - 1):
            vol = torch.matmul(vol.unsqueeze(-1), self.kernel.unsqueeze(0))
        return vol, torch.sum(vol)

    def _sums(self, pred, target):
        kernel, kernel_vol = self.kernel.to(pred), self.kernel_vol.to(pred)
        kernels = [kernel] * self.ndim
        t2, p2, tp = target * target, pred * pred, target * pred
        # B x 5C x *spatial: one filtering pass for all five maps
        all_maps = torch.cat([target, pred, t2, p2, tp], dim=1)
        sums = separable_filtering(all_maps, kernels=kernels)
        t_sum, p_sum, t2_sum, p2_sum, tp_sum = torch.split(sums, target.shape[1], dim=1)
        return t2_sum, p2_sum, tp_sum, t_sum, p_sum, float(kernel_vol)

    def forward(self, pred: torch.Tensor, target: torch.Tensor, mask: Optional[torch.Tensor] = None):
        if pred.ndim - 2 != self.ndim:
            raise ValueError(f"expecting pred with {self.ndim} spatial dimensions, got pred of shape {pred.shape}")
        if target.shape != pred.shape:
            raise ValueError(f"ground truth has differing shape ({target.shape}) from pred ({pred.shape})")

        # fused path: rectangular window, 3D, CUDA tensors, no mask
        if self.use_fused and pred.is_cuda and mask is None:
            out = FusedNCC3d.apply(pred.contiguous(), target.contiguous(), self.kernel_size,
                                   self.smooth_nr, self.smooth_dr, self.reduction)
            return 1.0 - out if self.reduction in ('mean', 'sum') else 1.0 - out

        if self.checkpointing:
            sums = torch.utils.checkpoint.checkpoint(self._sums, pred, target, use_reentrant=False)
        else:
            sums = self._sums(pred, target)
        t2_sum, p2_sum, tp_sum, t_sum, p_sum, kernel_vol = sums
        ncc = _cc_from_sums(t2_sum, p2_sum, tp_sum, t_sum, p_sum, kernel_vol, self.smooth_nr, self.smooth_dr)
        if not self.unsigned:
            ncc = torch.sign(tp_sum - p_sum * t_sum / kernel_vol) * torch.sqrt(ncc)

        if mask is not None:
            maskmean = mask.flatten(2).mean(2)
            for _ in range(self.ndim):
                maskmean = maskmean.unsqueeze(-1)
            ncc = ncc * mask / maskmean

        if self.reduction == 'sum':
            return 1.0 - torch.sum(ncc)
        elif self.reduction == 'none':
            return 1.0 - ncc
        elif self.reduction == 'mean':
            return 1.0 - torch.mean(ncc)
        raise ValueError(f'Unsupported reduction: {self.reduction}, available options are ["mean", "sum", "none"].')


def fused_grid_sample_3d(image, affine, disp, out_shape, align_corners=True):
    """
    grid_sample(image, affine_grid(affine) + disp) without materializing the full grid.
    Falls back to torch when the fused kernels are not available.
    """
    if ffo is not None and image.is_cuda:
        return ffo.fused_grid_sampler_3d_forward(image, affine, disp, None, out_shape, align_corners, 0, 0, True)
    grid = F.affine_grid(affine, [image.shape[0], 3] + list(out_shape), align_corners=align_corners)
    if disp is not None:
        grid = grid + disp
    return F.grid_sample(image, grid, mode='bilinear', padding_mode='zeros', align_corners=align_corners)


if __name__ == '__main__':
    # quick consistency + speed check of the fused and the reference implementation
    import time
    torch.manual_seed(0)
    size = (1, 1, 192, 192, 192)
    img1 = torch.rand(size, device='cuda', requires_grad=True)
    img2 = torch.rand(size, device='cuda')
    for fused in (False, True):
        loss_fn = LocalNormalizedCrossCorrelationLoss(kernel_size=5, use_fused=fused)
        torch.cuda.synchronize(img1.device)
        t0 = time.time()
        for _ in range(10):
            loss = loss_fn(img1, img2)
            loss.backward()
        torch.cuda.synchronize()
        print(f'fused={fused}: loss {loss.item():.6f}, {(time.time() - t0) / 10 * 1000:.1f} ms/iter, '
              f'peak {torch.cuda.max_memory_allocated() / 2 ** 20:.0f} MiB')
        torch.cuda.reset_peak_memory_stats()
