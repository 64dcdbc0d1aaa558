import torch
import torch.nn as nn
import torch.nn.functional as nnf


class SpatialTransformer(nn.Module):
    """
    N-D Spatial Transformer.

    The sampling grid is registered as a (non-persistent) buffer, so it follows the module
    when the model is moved with .to(device) / .cuda() and is not written to checkpoints.
    """

    def __init__(self, size, mode='bilinear'):
        super().__init__()

        self.mode = mode

        # create sampling grid
        vectors = [torch.arange(0, s) for s in size]
        grids = torch.meshgrid(vectors, indexing='ij')
        grid = torch.stack(grids)
        grid = torch.unsqueeze(grid, 0)
        grid = grid.type(torch.FloatTensor)

        # registering the grid as a buffer cleanly moves it to the GPU, but it also
        # adds it to the state dict. this is annoying since everything in the state dict
        # is included when saving weights to disk, so the model files are way bigger
        # than they need to be. so far, there does not appear to be an elegant solution.
        # see: https://discuss.pytorch.org/t/how-to-register-buffer-without-polluting-state-dict
        self.register_buffer('grid', grid, persistent=False)

    def forward(self, src, flow):
        # new locations
        new_locs = self.grid + flow
        shape = flow.shape[2:]

        # need to normalize grid values to [-1, 1] for resampler
        for i in range(len(shape)):
            new_locs[:, i, ...] = 2 * (new_locs[:, i, ...] / (shape[i] - 1) - 0.5)

        # move channels dim to last position
        # also not sure why, but the channels need to be reversed
        if len(shape) == 2:
            new_locs = new_locs.permute(0, 2, 3, 1)
            new_locs = new_locs[..., [1, 0]]
        elif len(shape) == 3:
            new_locs = new_locs.permute(0, 2, 3, 4, 1)
            new_locs = new_locs[..., [2, 1, 0]]

        return nnf.grid_sample(src, new_locs, align_corners=True, mode=self.mode)


class VecInt(nn.Module):
    """
    Integrates a stationary velocity field via scaling and squaring.
    """

    def __init__(self, inshape, nsteps):
        super().__init__()

        assert nsteps >= 0, 'nsteps should be >= 0, found: %d' % nsteps
        self.nsteps = nsteps
        self.scale = 1.0 / (2 ** self.nsteps)
        self.transformer = SpatialTransformer(inshape)

    def forward(self, vec):
        vec = vec * self.scale
        for _ in range(self.nsteps):
            vec = vec + self.transformer(vec, vec)
        return vec


class ResizeTransform(nn.Module):
    """
    Resize a transform, which involves resizing the vector field *and* rescaling it.
    """

    def __init__(self, vel_resize, ndims):
        super().__init__()
        self.factor = 1.0 / vel_resize
        self.mode = 'linear'
        if ndims == 2:
            self.mode = 'bi' + self.mode
        elif ndims == 3:
            self.mode = 'tri' + self.mode

    def forward(self, x):
        if self.factor < 1:
            # resize first to save memory
            x = nnf.interpolate(x, align_corners=True, scale_factor=self.factor, mode=self.mode)
            x = self.factor * x

        elif self.factor > 1:
            # multiply first to save memory
            x = self.factor * x
            x = nnf.interpolate(x, align_corners=True, scale_factor=self.factor, mode=self.mode)

        # don't do anything if resize is 1
        return x


class AffineTransformer(nn.Module):
    """
    Applies a batch of (N+1)x(N+1) or Nx(N+1) affine matrices in voxel space.

    Matrices are converted to the normalised [-1, 1] convention of affine_grid.
    Everything is created with device=mat.device, so nothing here is tied to a GPU.
    """

    def __init__(self, inshape, mode='bilinear'):
        super().__init__()
        self.inshape = tuple(inshape)
        self.ndims = len(inshape)
        self.mode = mode

    def _voxel_to_normalised(self, mat):
        ndims = self.ndims
        shape = torch.tensor(self.inshape, dtype=mat.dtype, device=mat.device)
        scale = torch.eye(ndims + 1, dtype=mat.dtype, device=mat.device)
        scale[:ndims, :ndims] = torch.diag(2.0 / (shape - 1))
        scale[:ndims, ndims] = -1.0
        inv = torch.linalg.inv(scale)
        return scale @ mat @ inv

    def forward(self, src, mat):
        if mat.shape[-2] == self.ndims:
            bottom = torch.zeros_like(mat[:, :1, :])
            bottom[..., -1] = 1
            mat = torch.cat([mat, bottom], dim=1)
        theta = self._voxel_to_normalised(mat)
        # affine_grid expects xyz ordering of the spatial axes
        flip = list(range(self.ndims))[::-1]
        theta = theta[:, flip + [self.ndims]][:, :, flip + [self.ndims]]
        theta = theta[:, :self.ndims, :]
        grid = nnf.affine_grid(theta, [src.shape[0], src.shape[1], *self.inshape],
                               align_corners=True)
        return nnf.grid_sample(src, grid, mode=self.mode, align_corners=True)
