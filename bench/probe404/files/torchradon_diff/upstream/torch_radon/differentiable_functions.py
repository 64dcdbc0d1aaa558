import torch
from torch.autograd import Function

import torch_radon_cuda


class RadonForward(Function):
    @staticmethod
    def forward(ctx, x, angles, tex_cache, rays_cfg):
        sinogram = torch_radon_cuda.forward(x, angles, tex_cache, rays_cfg)
        ctx.tex_cache = tex_cache
        ctx.rays_cfg = rays_cfg
        ctx.save_for_backward(angles)

        return sinogram

    @staticmethod
    def backward(ctx, grad_x):
        if not grad_x.is_contiguous():
            grad_x = grad_x.contiguous()

        angles, = ctx.saved_variables
        grad = torch_radon_cuda.backward(grad_x, angles, ctx.tex_cache, ctx.rays_cfg)
        return grad, None, None, None


class RadonBackprojection(Function):
    @staticmethod
    def forward(ctx, x, angles, tex_cache, rays_cfg):
        image = torch_radon_cuda.backward(x, angles, tex_cache, rays_cfg)
        ctx.tex_cache = tex_cache
        ctx.rays_cfg = rays_cfg
        ctx.save_for_backward(angles)

        return image

    @staticmethod
    def backward(ctx, grad_x):
        if not grad_x.is_contiguous():
            grad_x = grad_x.contiguous()

        angles, = ctx.saved_variables
        grad = torch_radon_cuda.forward(grad_x, angles, ctx.tex_cache, ctx.rays_cfg)
        return grad, None, None, None


class RadonForwardBatch(Function):
    """Same as RadonForward but the angles differ per batch element (used by the
    tilted-geometry experiments); angles has shape (batch, n_angles)."""

    @staticmethod
    def forward(ctx, x, angles, tex_cache, rays_cfg):
        sinograms = [torch_radon_cuda.forward(x[i:i + 1].contiguous(), angles[i], tex_cache, rays_cfg)
                     for i in range(x.size(0))]
        ctx.tex_cache = tex_cache
        ctx.rays_cfg = rays_cfg
        ctx.save_for_backward(angles)
        return torch.cat(sinograms, dim=0)

    @staticmethod
    def backward(ctx, grad_x):
        grad_x = grad_x.contiguous()
        angles, = ctx.saved_tensors
        grads = [torch_radon_cuda.backward(grad_x[i:i + 1].contiguous(), angles[i], ctx.tex_cache, ctx.rays_cfg)
                 for i in range(grad_x.size(0))]
        return torch.cat(grads, dim=0), None, None, None
