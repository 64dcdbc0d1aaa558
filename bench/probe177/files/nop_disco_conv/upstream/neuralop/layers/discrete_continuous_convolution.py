"""Discrete-continuous (DISCO) convolutions on regular and irregular grids.

The filter basis is evaluated once at construction time and stored as a sparse
(kernel_size, n_out, n_in) tensor ``psi``; the forward pass is a sparse-dense
batched matmul. On CUDA the optional ``disco_cuda_extension`` (from
torch-harmonics) is used when available, otherwise the pure-torch path below.
"""
import abc
import math
from typing import List, Optional, Tuple, Union

import torch
import torch.nn as nn

try:
    import disco_cuda_extension  # noqa: F401  (built by torch-harmonics with nvcc)
    from torch_harmonics.distributed import _disco_s2_contraction_cuda

    _cuda_extension_available = True
except ImportError:
    _cuda_extension_available = False


def _normalize_convolution_filter_matrix(
    psi_idx, psi_vals, grid_in, grid_out, kernel_shape, quadrature_weights, transpose_normalization=False, eps=1e-9
):
    """Discretely normalizes the convolution tensor so that each output point
    integrates the kernel to one (up to quadrature)."""
    n_in = grid_in.shape[-1]
    n_out = grid_out.shape[-2]

    if len(kernel_shape) == 1:
        kernel_size = math.ceil(kernel_shape[0] / 2)
    elif len(kernel_shape) == 2:
        kernel_size = (kernel_shape[0] // 2) * kernel_shape[1] + kernel_shape[0] % 2

    # reshape the indices implicitly to be ikernel, n_in, n_out
    idx = torch.stack([psi_idx[0], psi_idx[1], psi_idx[2] // n_in, psi_idx[2] % n_in], dim=0)

    if transpose_normalization:
        # pre-compute the quadrature weights
        q = quadrature_weights[idx[1]].reshape(-1)

        # loop through dimensions which require normalization
        for ik in range(kernel_size):
            for iin in range(n_in):
                # get relevant entries
                iidx = torch.argwhere((idx[0] == ik) & (idx[2] == iin))
                # normalize, while summing also over the input longitude dimension here as this is not available for the output
                vnorm = torch.sum(psi_vals[iidx] * q[iidx])
                psi_vals[iidx] = psi_vals[iidx] / (vnorm + eps)
    else:
        # pre-compute the quadrature weights
        q = quadrature_weights[idx[2]].reshape(-1)

        # loop through dimensions which require normalization
        for ik in range(kernel_size):
            for iout in range(n_out):
                # get relevant entries
                iidx = torch.argwhere((idx[0] == ik) & (idx[1] == iout))
                # normalize
                vnorm = torch.sum(psi_vals[iidx] * q[iidx])
                psi_vals[iidx] = psi_vals[iidx] / (vnorm + eps)

    return psi_vals


def _compute_support_vals_isotropic(r: torch.Tensor, phi: torch.Tensor, nr: int, r_cutoff: float):
    """Computes the index set that falls into the isotropic kernel's support and
    returns both indices and values (linear hat functions in r)."""
    kernel_size = (nr // 2) + nr % 2
    ikernel = torch.arange(kernel_size).reshape(-1, 1, 1)
    dr = 2 * r_cutoff / (nr + 1)

    # compute the support
    if nr % 2 == 1:
        ir = ikernel * dr
    else:
        ir = (ikernel + 0.5) * dr

    # find the indices where the rotated position falls into the support of the kernel
    iidx = torch.argwhere(((r - ir).abs() <= dr) & (r <= r_cutoff))
    vals = 1 - (r[iidx[:, 1], iidx[:, 2]] - ir[iidx[:, 0], 0, 0]).abs() / dr
    return iidx, vals


def _precompute_convolution_filter_matrix(
    grid_in, grid_out, kernel_shape, quadrature_weights, normalize=True, radius_cutoff=0.01, periodic=False
):
    """Precomputes the values stored in Psi, the local convolution filter matrix."""
    assert len(grid_in.shape) == 2
    assert len(grid_out.shape) == 2

    if len(kernel_shape) == 1:
        kernel_handle = lambda r, phi: _compute_support_vals_isotropic(r, phi, kernel_shape[0], radius_cutoff)
        kernel_size = math.ceil(kernel_shape[0] / 2)
    else:
        raise ValueError("kernel_shape should be of length 1 for the isotropic basis")

    grid_in = grid_in.reshape(2, 1, -1)
    grid_out = grid_out.reshape(2, -1, 1)

    diffs = grid_in - grid_out
    if periodic:
        periodic_diffs = torch.where(diffs > 0.0, diffs - 1, diffs + 1)
        diffs = torch.where(diffs.abs() < periodic_diffs.abs(), diffs, periodic_diffs)

    r = torch.sqrt(diffs[0] ** 2 + diffs[1] ** 2)
    phi = torch.arctan2(diffs[1], diffs[0]) + torch.pi

    idx, vals = kernel_handle(r, phi)
    idx = idx.permute(1, 0)

    if normalize:
        vals = _normalize_convolution_filter_matrix(
            idx, vals, grid_in, grid_out, kernel_shape, quadrature_weights
        )

    return idx, vals


class DiscreteContinuousConv(nn.Module, metaclass=abc.ABCMeta):
    """Abstract base class for DISCO convolutions."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_shape: Union[int, List[int]],
        groups: Optional[int] = 1,
        bias: Optional[bool] = True,
    ):
        super().__init__()

        if isinstance(kernel_shape, int):
            self.kernel_shape = [kernel_shape]
        else:
            self.kernel_shape = kernel_shape

        if len(self.kernel_shape) == 1:
            self.kernel_size = math.ceil(self.kernel_shape[0] / 2)
        elif len(self.kernel_shape) == 2:
            self.kernel_size = (self.kernel_shape[0] // 2) * self.kernel_shape[1] + self.kernel_shape[0] % 2
        else:
            raise ValueError("kernel_shape should be either one- or two-dimensional.")

        # groups
        self.groups = groups

        # weight tensor
        if in_channels % self.groups != 0:
            raise ValueError("Error, the number of input channels has to be an integer multiple of the group size")
        if out_channels % self.groups != 0:
            raise ValueError("Error, the number of output channels has to be an integer multiple of the group size")
        self.groupsize = in_channels // self.groups
        scale = math.sqrt(1.0 / self.groupsize)
        self.weight = nn.Parameter(scale * torch.randn(out_channels, self.groupsize, self.kernel_size))

        if bias:
            self.bias = nn.Parameter(torch.zeros(out_channels))
        else:
            self.bias = None

    @abc.abstractmethod
    def forward(self, x: torch.Tensor):
        raise NotImplementedError


class DiscreteContinuousConv2d(DiscreteContinuousConv):
    """Discrete-continuous convolution for irregular 2D point clouds mapped onto
    an output point cloud (e.g. for GINO / irregular-mesh FNO encoders)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        grid_in: torch.Tensor,
        grid_out: torch.Tensor,
        kernel_shape: Union[int, List[int]],
        n_in: Optional[Tuple[int]] = None,
        n_out: Optional[Tuple[int]] = None,
        quadrature_weights: Optional[torch.Tensor] = None,
        periodic: Optional[bool] = False,
        groups: Optional[int] = 1,
        bias: Optional[bool] = True,
        radius_cutoff: Optional[float] = None,
    ):
        super().__init__(in_channels, out_channels, kernel_shape, groups, bias)

        # the instantiator supplies the input and output grids
        self.n_in = n_in if n_in is not None else grid_in.shape[-1]
        self.n_out = n_out if n_out is not None else grid_out.shape[-1]

        if quadrature_weights is None:
            quadrature_weights = torch.ones(grid_in.shape[-1]) / grid_in.shape[-1]

        if radius_cutoff is None:
            radius_cutoff = 2 / float(math.sqrt(self.n_out) - 1)

        if radius_cutoff <= 0.0:
            raise ValueError("Error, radius_cutoff has to be positive.")

        # integration weights
        self.register_buffer("quadrature_weights", quadrature_weights, persistent=False)

        idx, vals = _precompute_convolution_filter_matrix(
            grid_in,
            grid_out,
            self.kernel_shape,
            quadrature_weights,
            radius_cutoff=radius_cutoff,
            periodic=periodic,
        )

        # to improve performance, we make psi a matrix by merging the first two dimensions
        # This has to be accounted for in the forward pass
        idx = torch.stack([idx[0] * self.n_out + idx[1], idx[2]], dim=0)

        self.register_buffer("psi_idx", idx.contiguous(), persistent=False)
        self.register_buffer("psi_vals", vals.contiguous(), persistent=False)

    def get_psi(self):
        psi = torch.sparse_coo_tensor(self.psi_idx, self.psi_vals, size=(self.kernel_size * self.n_out, self.n_in))
        return psi

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # pre-multiply x with the quadrature weights
        x = self.quadrature_weights * x

        psi = self.get_psi()

        # extract shape
        B, C, _ = x.shape

        # bring into the right shape for the bmm (batch * channels, n_in) and perform it
        x = x.reshape(B * C, self.n_in).permute(1, 0).contiguous()
        x = torch.mm(psi, x)
        x = x.permute(1, 0).reshape(B, C, self.kernel_size, self.n_out)
        x = x.reshape(B, self.groups, self.groupsize, self.kernel_size, self.n_out)

        # do weight multiplication
        out = torch.einsum("bgckx,gock->bgox", x, self.weight.reshape(self.groups, -1, self.weight.shape[1], self.weight.shape[2]))
        out = out.reshape(B, -1, self.n_out)

        if self.bias is not None:
            out = out + self.bias.unsqueeze(-1)

        return out


class EquidistantDiscreteContinuousConv2d(DiscreteContinuousConv):
    """DISCO convolution on a regular, periodic 2D grid. The filter matrix is
    translation invariant in the longitudinal direction so psi only needs to be
    stored for one output column and is rolled along the input."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        in_shape: Tuple[int],
        out_shape: Tuple[int],
        kernel_shape: Union[int, List[int]],
        domain_length: Optional[Tuple[float]] = None,
        periodic: Optional[bool] = False,
        groups: Optional[int] = 1,
        bias: Optional[bool] = True,
        radius_cutoff: Optional[float] = None,
        padding_mode: str = "circular",
        use_cuda_extension: bool = True,
        **kwargs
    ):
        super().__init__(in_channels, out_channels, kernel_shape, groups, bias)

        self.padding_mode = padding_mode
        self.use_cuda_extension = use_cuda_extension and _cuda_extension_available

        # torch ordering, i.e. H, W
        self.nx_in, self.ny_in = in_shape
        self.nx_out, self.ny_out = out_shape

        if domain_length is None:
            domain_length = [2.0, 2.0]

        if radius_cutoff is None:
            radius_cutoff = 2.0 * (self.kernel_shape[0] + 1) / float(max(*in_shape))

        if radius_cutoff <= 0.0:
            raise ValueError("Error, radius_cutoff has to be positive.")

        # compute how big the discrete kernel needs to be for the 2d convolution kernel to work
        self.psi_local_h = math.floor(2 * radius_cutoff * self.nx_in / domain_length[0]) + 1
        self.psi_local_w = math.floor(2 * radius_cutoff * self.ny_in / domain_length[1]) + 1

        # compute the scale_factor
        assert (self.nx_in % self.nx_out == 0) and (self.ny_in % self.ny_out == 0)
        self.scale_h = self.nx_in // self.nx_out
        self.scale_w = self.ny_in // self.ny_out

        # psi_local is essentially the support of the hat functions evaluated locally
        x = torch.linspace(-radius_cutoff, radius_cutoff, self.psi_local_h)
        y = torch.linspace(-radius_cutoff, radius_cutoff, self.psi_local_w)
        x, y = torch.meshgrid(x, y, indexing="ij")
        grid_in = torch.stack([x, y])
        grid_out = torch.Tensor([[0.0], [0.0]])

        # compute quadrature weights on the incoming grid
        self.q_weight = domain_length[0] * domain_length[1] / (self.nx_in * self.ny_in)
        quadrature_weights = self.q_weight * torch.ones(self.psi_local_h * self.psi_local_w)

        idx, vals = _precompute_convolution_filter_matrix(
            grid_in, grid_out, self.kernel_shape, quadrature_weights, radius_cutoff=radius_cutoff, periodic=False
        )

        psi_loc = torch.zeros(self.kernel_size, self.psi_local_h * self.psi_local_w)
        for ie in range(len(vals)):
            f = idx[0, ie]
            j = idx[2, ie]
            v = vals[ie]
            psi_loc[f, j] = v

        # compute local version of the filter matrix
        psi_loc = psi_loc.reshape(self.kernel_size, self.psi_local_h, self.psi_local_w)
        # normalization by the quadrature weights
        psi_loc = self.q_weight * psi_loc

        self.register_buffer("psi_loc", psi_loc, persistent=False)

    def get_local_filter_matrix(self):
        return self.psi_loc.permute(0, 2, 1).flip(dims=(-1, -2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kernel = torch.einsum("kxy,ogk->ogxy", self.get_local_filter_matrix(), self.weight)

        # padding is rather large since we use circular padding by default
        left_pad = self.psi_local_w // 2
        right_pad = (self.psi_local_w + 1) // 2 - 1
        top_pad = self.psi_local_h // 2
        bottom_pad = (self.psi_local_h + 1) // 2 - 1

        if x.is_cuda and self.use_cuda_extension:
            # the fused kernel handles the stride and the circular padding itself
            out = _disco_s2_contraction_cuda(x, kernel, self.scale_h, self.scale_w)
        else:
            x = nn.functional.pad(x, (left_pad, right_pad, top_pad, bottom_pad), mode=self.padding_mode)
            out = nn.functional.conv2d(x, kernel, self.bias, stride=[self.scale_h, self.scale_w], dilation=1, padding=0, groups=self.groups)

        return out
