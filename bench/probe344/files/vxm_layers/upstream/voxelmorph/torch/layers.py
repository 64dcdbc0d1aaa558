import torch
import torch.nn as nn
import torch.nn.functional as nnf


class SpatialTransformer(nn.Module):
    """
    N-D Spatial Transformer

    The sampling grid is registered as a (non-persistent) buffer, so it follows the module when
    the model is moved with .to(device) / .cuda() and never has to be created on the GPU by hand.
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
    Integrates a vector field via scaling and squaring.
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
    N-D affine transformer. The affine matrix is expected in voxel coordinates, with shape
    [B, N, N+1], and is converted to the normalized [-1, 1] convention used by affine_grid.
    """

    def __init__(self, inshape, mode='bilinear'):
        super().__init__()
        self.mode = mode
        self.inshape = tuple(inshape)
        self.ndims = len(inshape)

    def _to_normalized(self, affine):
        # build voxel -> normalized conversion on the same device/dtype as the affine
        ndims = self.ndims
        scale = torch.tensor([2.0 / (s - 1) for s in self.inshape],
                             dtype=affine.dtype, device=affine.device)
        to_norm = torch.eye(ndims + 1, dtype=affine.dtype, device=affine.device)
        to_norm[:ndims, :ndims] = torch.diag(scale)
        to_norm[:ndims, -1] = -1.0
        from_norm = torch.linalg.inv(to_norm)

        full = torch.eye(ndims + 1, dtype=affine.dtype, device=affine.device)
        full = full.unsqueeze(0).repeat(affine.shape[0], 1, 1)
        full[:, :ndims, :] = affine
        norm = to_norm @ full @ from_norm
        return norm[:, :ndims, :]

    def forward(self, src, affine):
        theta = self._to_normalized(affine)
        # affine_grid expects xyz ordering, the volumes are ij(k)
        perm = list(reversed(range(self.ndims)))
        theta = theta[:, perm, :][:, :, perm + [self.ndims]]
        size = [src.shape[0], src.shape[1], *self.inshape]
        grid = nnf.affine_grid(theta, size, align_corners=True)
        return nnf.grid_sample(src, grid, align_corners=True, mode=self.mode)


def compose_flows(flow_a, flow_b, transformer):
    """
    Compose two displacement fields: returns the displacement of x -> b(a(x)).
    Both flows must live on the same device; the transformer's grid is moved with the module.
    """
    return flow_a + transformer(flow_b, flow_a)


def jacobian_determinant(flow):
    """
    Jacobian determinant of a displacement field [B, 3, D, H, W], computed with forward
    differences. Stays on whatever device the flow lives on.
    """
    D_y = flow[:, :, 1:, :-1, :-1] - flow[:, :, :-1, :-1, :-1]
    D_x = flow[:, :, :-1, 1:, :-1] - flow[:, :, :-1, :-1, :-1]
    D_z = flow[:, :, :-1, :-1, 1:] - flow[:, :, :-1, :-1, :-1]

    D1 = (D_x[:, 0] + 1) * ((D_y[:, 1] + 1) * (D_z[:, 2] + 1) - D_z[:, 1] * D_y[:, 2])
    D2 = D_x[:, 1] * (D_y[:, 0] * (D_z[:, 2] + 1) - D_y[:, 2] * D_z[:, 0])
    D3 = D_x[:, 2] * (D_y[:, 0] * D_z[:, 1] - (D_y[:, 1] + 1) * D_z[:, 0])
    return D1 - D2 + D3
