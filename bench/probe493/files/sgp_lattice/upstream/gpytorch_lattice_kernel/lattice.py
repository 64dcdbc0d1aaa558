import os
import math
import torch
import gpytorch
from gpytorch.kernels import Kernel
from gpytorch.lazy import LazyTensor, delazify

try:
    # prebuilt by `pip install -e .` (see setup.py)
    from . import lattice_cuda as latticefilter
except ImportError:
    # fall back to JIT compilation of the CUDA sources
    from torch.utils.cpp_extension import load
    _src_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'csrc')
    latticefilter = load(name='lattice_cuda', sources=[os.path.join(_src_dir, 'lattice.cpp'), os.path.join(_src_dir, 'lattice_kernel.cu')], extra_cuda_cflags=['-O3', '--use_fast_math'], verbose=bool(os.environ.get('LATTICE_VERBOSE')))


class LatticeFilterGeneral(torch.autograd.Function):
    '''
    Blur `src` with the stationary kernel `coeffs` on the permutohedral
    lattice spanned by the (lengthscale-normalised) inputs `ref`.

    The forward and backward filters are both implemented in CUDA;
    ref is (n x d), src is (n x c), coeffs is (2*order+1,).
    '''

    @staticmethod
    def forward(ctx, ref, src, coeffs):
        assert src.is_cuda and ref.is_cuda, 'the lattice filter is only implemented for CUDA tensors'
        ref = ref.contiguous()
        src = src.contiguous()
        out = latticefilter.forward(ref, src, coeffs)
        ctx.save_for_backward(ref, src, coeffs)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        ref, src, coeffs = ctx.saved_tensors
        # the lattice filter is symmetric, so the gradient w.r.t. src is another blur
        grad_src = latticefilter.forward(ref, grad_output.contiguous(), coeffs)
        # gradient w.r.t. the reference positions (i.e. the lengthscales)
        grad_ref = latticefilter.backward_ref(ref, src, grad_output.contiguous(), coeffs)
        return grad_ref, grad_src, None


def _matern_coeffs(nu, order, dtype, device):
    '''Stencil coefficients of the 1-D Matern kernel sampled on the lattice spacing.'''
    dist = torch.arange(-order, order + 1, dtype=dtype, device=device).abs() * math.sqrt(2.0 / 3.0)
    if nu == 0.5:
        return torch.exp(-dist)
    if nu == 1.5:
        return (1 + math.sqrt(3) * dist) * torch.exp(-math.sqrt(3) * dist)
    if nu == 2.5:
        return (1 + math.sqrt(5) * dist + 5.0 / 3.0 * dist ** 2) * torch.exp(-math.sqrt(5) * dist)
    raise ValueError(f'unsupported nu={nu}')


def _rbf_coeffs(order, dtype, device):
    dist = torch.arange(-order, order + 1, dtype=dtype, device=device) * math.sqrt(2.0 / 3.0)
    return torch.exp(-0.5 * dist ** 2)


class LatticeFilterLazyTensor(LazyTensor):
    '''The (implicit) n x n kernel matrix; only matmuls are supported, via the lattice filter.'''

    def __init__(self, x, coeffs):
        super().__init__(x, coeffs)
        self.x = x
        self.coeffs = coeffs

    def _matmul(self, rhs):
        squeeze = rhs.dim() == 1
        if squeeze:
            rhs = rhs.unsqueeze(-1)
        out = LatticeFilterGeneral.apply(self.x, rhs, self.coeffs)
        return out.squeeze(-1) if squeeze else out

    def _size(self):
        return torch.Size((self.x.size(-2), self.x.size(-2)))

    def _transpose_nonbatch(self):
        return self

    def diag(self):
        return self.coeffs[self.coeffs.numel() // 2].expand(self.x.size(-2))


class SimplexKernel(Kernel):
    has_lengthscale = True

    def __init__(self, nu=None, order=1, **kwargs):
        super().__init__(**kwargs)
        self.nu = nu
        self.order = order

    def forward(self, x1, x2, diag=False, **params):
        if diag:
            return torch.ones(x1.shape[:-1], dtype=x1.dtype, device=x1.device)
        if not torch.equal(x1, x2):
            # cross-covariances (test vs train) are computed exactly; they are small
            if self.nu is None:
                return gpytorch.kernels.RBFKernel().forward(x1.div(self.lengthscale), x2.div(self.lengthscale))
            return gpytorch.kernels.MaternKernel(nu=self.nu).forward(x1.div(self.lengthscale), x2.div(self.lengthscale))
        x = x1.div(self.lengthscale)
        if self.nu is None:
            coeffs = _rbf_coeffs(self.order, x.dtype, x.device)
        else:
            coeffs = _matern_coeffs(self.nu, self.order, x.dtype, x.device)
        return LatticeFilterLazyTensor(x, coeffs)


class RBFLattice(SimplexKernel):
    def __init__(self, order=1, **kwargs):
        super().__init__(nu=None, order=order, **kwargs)


class MaternLattice(SimplexKernel):
    def __init__(self, nu=1.5, order=1, **kwargs):
        super().__init__(nu=nu, order=order, **kwargs)
