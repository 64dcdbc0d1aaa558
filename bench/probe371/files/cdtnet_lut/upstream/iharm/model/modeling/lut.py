import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import trilinear


LUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'luts')


class Generator3DLUT_identity(nn.Module):
    """A learnable 3D LUT initialised to the identity colour mapping."""

    def __init__(self, dim=33):
        super(Generator3DLUT_identity, self).__init__()
        if dim == 33:
            file = open(os.path.join(LUT_DIR, "IdentityLUT33.txt"), 'r')
        elif dim == 64:
            file = open(os.path.join(LUT_DIR, "IdentityLUT64.txt"), 'r')
        else:
            raise ValueError(f'unsupported LUT size {dim}')
        lines = file.readlines()
        file.close()
        buffer = np.zeros((3, dim, dim, dim), dtype=np.float32)

        for i in range(0, dim):
            for j in range(0, dim):
                for k in range(0, dim):
                    n = i * dim * dim + j * dim + k
                    x = lines[n].split()
                    buffer[0, i, j, k] = float(x[0])
                    buffer[1, i, j, k] = float(x[1])
                    buffer[2, i, j, k] = float(x[2])
        self.LUT = nn.Parameter(torch.from_numpy(buffer).requires_grad_(True))
        self.TrilinearInterpolation = TrilinearInterpolation()

    def forward(self, x):
        _, output = self.TrilinearInterpolation(self.LUT, x)
        return output


class Generator3DLUT_zero(nn.Module):
    def __init__(self, dim=33):
        super(Generator3DLUT_zero, self).__init__()

        self.LUT = torch.zeros(3, dim, dim, dim, dtype=torch.float)
        self.LUT = nn.Parameter(self.LUT.clone().detach().requires_grad_(True))
        self.TrilinearInterpolation = TrilinearInterpolation()

    def forward(self, x):
        _, output = self.TrilinearInterpolation(self.LUT, x)
        return output


class TrilinearInterpolationFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, lut, x):
        x = x.contiguous()

        output = x.new(x.size())
        dim = lut.size()[-1]
        shift = dim ** 3
        binsize = 1.000001 / (dim - 1)
        W = x.size(2)
        H = x.size(3)
        batch = x.size(0)

        assert 1 == trilinear.forward(lut, x, output, dim, shift, binsize, W, H, batch)

        int_package = torch.IntTensor([dim, shift, W, H, batch])
        float_package = torch.FloatTensor([binsize])
        variables = [lut, x, int_package, float_package]

        ctx.save_for_backward(*variables)

        return lut, output

    @staticmethod
    def backward(ctx, lut_grad, x_grad):
        lut, x, int_package, float_package = ctx.saved_variables
        dim, shift, W, H, batch = int_package
        dim, shift, W, H, batch = int(dim), int(shift), int(W), int(H), int(batch)
        binsize = float(float_package[0])

        assert 1 == trilinear.backward(x, x_grad, lut_grad, dim, shift, binsize, W, H, batch)
        return lut_grad, x_grad


class TrilinearInterpolation(torch.nn.Module):
    def __init__(self):
        super(TrilinearInterpolation, self).__init__()

    def forward(self, lut, x):
        return TrilinearInterpolationFunction.apply(lut, x)


class TV_3D(nn.Module):
    """Total-variation + monotonicity regulariser for a 3D LUT."""

    def __init__(self, dim=33):
        super(TV_3D, self).__init__()

        self.weight_r = torch.ones(3, dim, dim, dim - 1, dtype=torch.float)
        self.weight_r[:, :, :, (0, dim - 2)] *= 2.0
        self.weight_g = torch.ones(3, dim, dim - 1, dim, dtype=torch.float)
        self.weight_g[:, :, (0, dim - 2), :] *= 2.0
        self.weight_b = torch.ones(3, dim - 1, dim, dim, dtype=torch.float)
        self.weight_b[:, (0, dim - 2), :, :] *= 2.0
        self.relu = torch.nn.ReLU()

    def forward(self, LUT):
        dif_r = LUT.LUT[:, :, :, :-1] - LUT.LUT[:, :, :, 1:]
        dif_g = LUT.LUT[:, :, :-1, :] - LUT.LUT[:, :, 1:, :]
        dif_b = LUT.LUT[:, :-1, :, :] - LUT.LUT[:, 1:, :, :]
        tv = torch.mean(torch.mul((dif_r ** 2), self.weight_r.to(LUT.LUT.device))) \
            + torch.mean(torch.mul((dif_g ** 2), self.weight_g.to(LUT.LUT.device))) \
            + torch.mean(torch.mul((dif_b ** 2), self.weight_b.to(LUT.LUT.device)))

        mn = torch.mean(self.relu(dif_r)) + torch.mean(self.relu(dif_g)) + torch.mean(self.relu(dif_b))

        return tv, mn


class LUTBranch(nn.Module):
    """Low-resolution colour-to-colour branch of CDTNet: weights n_lut basis LUTs from encoder features."""

    def __init__(self, in_channels, n_lut=4, dim=33):
        super(LUTBranch, self).__init__()
        self.n_lut = n_lut
        self.luts = nn.ModuleList([Generator3DLUT_identity(dim)] +
                                  [Generator3DLUT_zero(dim) for _ in range(n_lut - 1)])
        self.classifier = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(in_channels, n_lut),
        )
        self.tv = TV_3D(dim)

    def forward(self, image, features, mask):
        weights = self.classifier(features)
        image = (image * 0.5 + 0.5).clamp(0, 1)
        outputs = [lut(image) for lut in self.luts]
        combined = 0
        for i, out in enumerate(outputs):
            combined = combined + weights[:, i].view(-1, 1, 1, 1) * out
        combined = combined * 2.0 - 1.0
        return combined * mask + (image * 2.0 - 1.0) * (1 - mask)

    def regularization(self):
        tv_total, mn_total = 0, 0
        for lut in self.luts:
            tv, mn = self.tv(lut)
            tv_total = tv_total + tv
            mn_total = mn_total + mn
        return tv_total, mn_total
