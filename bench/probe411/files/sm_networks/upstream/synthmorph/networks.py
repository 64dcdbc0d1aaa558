"""SynthMorph networks: an affine/rigid feature-detector model and a hyper-network
conditioned deformable U-Net (HyperMorph style), plus a joint wrapper.

All modules are device-agnostic: buffers are registered so that `.to(device)`
moves them together with the weights."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv(ndim, cin, cout, stride=1):
    return getattr(nn, f'Conv{ndim}d')(cin, cout, kernel_size=3, stride=stride, padding=1)


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, stride=1, ndim=3):
        super().__init__()
        self.conv = conv(ndim, cin, cout, stride)
        self.act = nn.LeakyReLU(0.2)

    def forward(self, x):
        return self.act(self.conv(x))


class HyperConv(nn.Module):
    """3x3x3 convolution whose kernel and bias are produced by a small MLP from the
    regularisation weight lambda (HyperMorph)."""

    def __init__(self, cin, cout, hyper_dim=32, stride=1):
        super().__init__()
        self.cin, self.cout, self.stride = cin, cout, stride
        self.kernel = nn.Linear(hyper_dim, cout * cin * 27)
        self.bias = nn.Linear(hyper_dim, cout)

    def forward(self, x, h):
        # one hyper-parameter value per batch; assume the batch shares it
        k = self.kernel(h[:1]).view(self.cout, self.cin, 3, 3, 3)
        b = self.bias(h[:1]).view(self.cout)
        return F.leaky_relu(F.conv3d(x, k, b, stride=self.stride, padding=1), 0.2)


class HyperVxmDense(nn.Module):
    def __init__(self, in_shape, enc=(256,) * 4, dec=(256,) * 4, add=(256,) * 2, int_steps=5,
                 hyper_dim=32):
        super().__init__()
        self.in_shape = tuple(in_shape)
        self.int_steps = int_steps
        self.hyper = nn.Sequential(nn.Linear(1, hyper_dim), nn.ReLU(), nn.Linear(hyper_dim, hyper_dim),
                                   nn.ReLU(), nn.Linear(hyper_dim, hyper_dim), nn.ReLU())

        self.down = nn.ModuleList()
        prev = 2
        skips = []
        for nf in enc:
            self.down.append(HyperConv(prev, nf, hyper_dim, stride=2))
            skips.append(nf)
            prev = nf
        self.up = nn.ModuleList()
        for nf, skip in zip(dec, reversed(skips[:-1] + [2])):
            self.up.append(HyperConv(prev + skip, nf, hyper_dim))
            prev = nf
        self.extra = nn.ModuleList()
        for nf in add:
            self.extra.append(HyperConv(prev, nf, hyper_dim))
            prev = nf
        self.flow = nn.Conv3d(prev, 3, kernel_size=3, padding=1)
        nn.init.normal_(self.flow.weight, 0, 1e-5)
        nn.init.zeros_(self.flow.bias)

        grid = torch.stack(torch.meshgrid(*[torch.arange(s, dtype=torch.float32) for s in in_shape],
                                          indexing='ij'))
        self.register_buffer('grid', grid[None], persistent=False)

    def transform(self, img, disp):
        loc = self.grid + disp
        shape = disp.shape[2:]
        loc = torch.stack([2 * loc[:, i] / (s - 1) - 1 for i, s in enumerate(shape)], dim=-1)
        return F.grid_sample(img, loc.flip(-1), align_corners=True, mode='bilinear')

    def integrate(self, vel):
        disp = vel / (2 ** self.int_steps)
        for _ in range(self.int_steps):
            disp = disp + self.transform(disp, disp)
        return disp

    def forward(self, mov, fix, lam):
        h = self.hyper(lam)
        x = torch.cat([mov, fix], dim=1)
        hist = [x]
        for layer in self.down:
            x = layer(x, h)
            hist.append(x)
        hist.pop()
        for layer in self.up:
            x = F.interpolate(x, scale_factor=2, mode='nearest')
            x = torch.cat([x, hist.pop()], dim=1)
            x = layer(x, h)
        for layer in self.extra:
            x = layer(x, h)
        # half-resolution stationary velocity field -> full-resolution displacement
        vel = self.flow(x)
        disp = self.integrate(vel)
        return disp


class AffineModel(nn.Module):
    """Feature detector: predicts K feature maps per image, derives their centres of
    mass, and fits the least-squares (or rigid) transform between the point sets."""

    def __init__(self, in_shape, nb_feat=64, rigid=False):
        super().__init__()
        self.rigid = rigid
        chans = (256,) * 4
        layers = []
        prev = 1
        for nf in chans:
            layers += [ConvBlock(prev, nf), ConvBlock(nf, nf, stride=2)]
            prev = nf
        layers += [ConvBlock(prev, 256)]
        self.encoder = nn.Sequential(*layers)
        self.head = nn.Conv3d(256, nb_feat, 3, padding=1)
        self.in_shape = tuple(in_shape)

    def _com(self, feat):
        b, k = feat.shape[:2]
        w = F.relu(feat).flatten(2)
        w = w / (w.sum(-1, keepdim=True) + 1e-6)
        coords = torch.stack(torch.meshgrid(*[torch.linspace(-1, 1, s, device=feat.device)
                                              for s in feat.shape[2:]], indexing='ij'), dim=-1)
        coords = coords.reshape(-1, 3)
        return w @ coords, w.sum(-1)

    @staticmethod
    def fit(x, y, weights, rigid=False):
        # weighted least squares: y ~ A x + t
        w = weights[..., None]
        xm = (w * x).sum(1, keepdim=True) / w.sum(1, keepdim=True)
        ym = (w * y).sum(1, keepdim=True) / w.sum(1, keepdim=True)
        xc, yc = x - xm, y - ym
        cov = (w * xc).transpose(1, 2) @ yc
        if rigid:
            u, _, vh = torch.linalg.svd(cov)
            r = (u @ vh).transpose(1, 2)
        else:
            xx = (w * xc).transpose(1, 2) @ xc
            r = torch.linalg.solve(xx, cov).transpose(1, 2)
        t = ym.transpose(1, 2) - r @ xm.transpose(1, 2)
        mat = torch.cat([r, t], dim=2)
        last = torch.tensor([[[0, 0, 0, 1]]], dtype=mat.dtype, device=mat.device).expand(mat.shape[0], 1, 4)
        return torch.cat([mat, last], dim=1)

    def forward(self, mov, fix):
        fm = self.head(self.encoder(mov))
        ff = self.head(self.encoder(fix))
        pm, wm = self._com(fm)
        pf, wf = self._com(ff)
        # fit in float32 even under autocast: the normal equations are ill-conditioned in half
        with torch.autocast(device_type=mov.device.type, enabled=False):
            return self.fit(pf.float(), pm.float(), (wm * wf).float(), rigid=self.rigid)


class JointModel(nn.Module):
    def __init__(self, affine, deform):
        super().__init__()
        self.affine = affine
        self.deform = deform

    def forward(self, mov, fix, lam):
        aff = self.affine(mov, fix)
        grid = F.affine_grid(aff[:, :3], mov.shape, align_corners=True)
        mov_aff = F.grid_sample(mov, grid, align_corners=True)
        disp = self.deform(mov_aff, fix, lam)
        return aff, disp
