"""Semi-Lagrangian advection of precipitation fields by a motion field.

`semi_lagrangian_advect(field, flow, n_steps)` moves `field` (B, 1, H, W) along the
backward trajectories defined by `flow` (B, 2, H, W, in pixels per step). The fused CUDA
kernel integrates the trajectory with the 2nd-order midpoint scheme in one pass; the
pure PyTorch fallback does the same with repeated grid_sample calls (about 6x slower at
1024x1024 with 20 steps, but numerically equivalent up to interpolation round-off).
"""
import warnings

import torch
import torch.nn.functional as F

try:
    import sl_advect_cuda as _sl_ext
    _HAS_EXT = True
except ImportError:  # extension not built
    _sl_ext = None
    _HAS_EXT = False


class _SLAdvectFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, field, flow, n_steps, interp):
        field = field.contiguous()
        flow = flow.contiguous()
        out, coords = _sl_ext.forward(field, flow, int(n_steps), interp == "bilinear")
        ctx.save_for_backward(flow, coords)
        ctx.n_steps = n_steps
        ctx.interp = interp
        ctx.field_shape = field.shape
        return out

    @staticmethod
    def backward(ctx, grad_out):
        flow, coords = ctx.saved_tensors
        grad_field, grad_flow = _sl_ext.backward(grad_out.contiguous(), flow, coords, int(ctx.n_steps),
                                                 ctx.interp == "bilinear")
        return grad_field, grad_flow, None, None


def _base_grid(b, h, w, device, dtype):
    yy, xx = torch.meshgrid(torch.arange(h, device=device, dtype=dtype),
                            torch.arange(w, device=device, dtype=dtype), indexing="ij")
    return torch.stack((xx, yy), dim=0).unsqueeze(0).expand(b, -1, -1, -1)


def _normalize(coords, h, w):
    x = 2.0 * coords[:, 0] / max(w - 1, 1) - 1.0
    y = 2.0 * coords[:, 1] / max(h - 1, 1) - 1.0
    return torch.stack((x, y), dim=-1)


def _advect_torch(field, flow, n_steps, interp="bilinear"):
    b, _, h, w = field.shape
    grid = _base_grid(b, h, w, field.device, field.dtype)
    coords = grid.clone()
    for _ in range(int(n_steps)):
        # midpoint rule: sample the velocity half a step back
        mid = coords - 0.5 * F.grid_sample(flow, _normalize(coords, h, w), mode="bilinear",
                                           padding_mode="border", align_corners=True)
        vel = F.grid_sample(flow, _normalize(mid, h, w), mode="bilinear", padding_mode="border",
                            align_corners=True)
        coords = coords - vel
    return F.grid_sample(field, _normalize(coords, h, w), mode=interp, padding_mode="zeros",
                         align_corners=True)


def semi_lagrangian_advect(field, flow, n_steps=1, interp="bilinear", use_ext=True):
    """Advect `field` by `flow` for `n_steps` time steps.

    Args:
        field: (B, 1, H, W) rain rate or reflectivity.
        flow: (B, 2, H, W) motion in pixels / step (u, v).
        n_steps: number of steps to integrate.
        interp: "bilinear" or "nearest".
        use_ext: use the fused kernel when it is available.
    """
    assert field.dim() == 4 and flow.dim() == 4 and flow.shape[1] == 2
    if use_ext and _HAS_EXT and field.is_cuda:
        return _SLAdvectFunction.apply(field, flow.to(field.dtype), n_steps, interp)
    if use_ext and not _HAS_EXT:
        warnings.warn("sl_advect_cuda is not built; using the grid_sample fallback", stacklevel=2)
    return _advect_torch(field, flow.to(field.dtype), n_steps, interp)


def extrapolation_nowcast(last_frame, flow, lead_times):
    """Lagrangian persistence nowcast: one advected field per lead time."""
    return torch.stack([semi_lagrangian_advect(last_frame, flow, n) for n in lead_times], dim=1)
