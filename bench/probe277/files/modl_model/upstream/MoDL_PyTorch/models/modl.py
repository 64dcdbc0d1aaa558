"""MoDL: Model-based deep learning architecture for inverse problems.

PyTorch re-implementation of H.K. Aggarwal, M.P. Mani, M. Jacob,
IEEE TMI 2019. The forward model is the multi-coil SENSE operator
A = M F S, the regulariser is a 5-layer CNN denoiser D_w, and each
unrolled iteration solves

    x_{k+1} = argmin_x ||Ax - b||^2 + lam ||x - D_w(x_k)||^2

with a few steps of conjugate gradient (the data-consistency block).

Tensors that go in and out of the network are real-valued with the
real/imag parts in the channel dimension ([B, 2, H, W]); inside the
DC block everything is complex64 ([B, H, W] images, [B, C, H, W] k-space).
"""
import torch
import torch.nn as nn


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def r2c(x, axis=1):
    """[B, 2, H, W] real -> [B, H, W] complex"""
    if axis == 1:
        x = x.permute(0, 2, 3, 1).contiguous()
    return torch.view_as_complex(x)


def c2r(x, axis=1):
    """[B, H, W] complex -> [B, 2, H, W] real"""
    x = torch.view_as_real(x)
    if axis == 1:
        x = x.permute(0, 3, 1, 2).contiguous()
    return x


def fft2c(x):
    """orthonormal centred 2D FFT over the last two dims of a complex tensor"""
    return torch.fft.fftshift(torch.fft.fft2(torch.fft.ifftshift(x, dim=(-2, -1)), norm="ortho"), dim=(-2, -1))


def ifft2c(x):
    """orthonormal centred 2D IFFT over the last two dims of a complex tensor"""
    return torch.fft.fftshift(torch.fft.ifft2(torch.fft.ifftshift(x, dim=(-2, -1)), norm="ortho"), dim=(-2, -1))


# ---------------------------------------------------------------------------
# CNN denoiser
# ---------------------------------------------------------------------------

def conv_block(in_channels, out_channels):
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, 3, padding=1),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(inplace=True),
    )


class cnn_denoiser(nn.Module):
    """Residual CNN: x -> x + D(x). The last layer has no BN/ReLU."""

    def __init__(self, n_layers, n_filters=64):
        super().__init__()
        layers = [conv_block(2, n_filters)]
        for _ in range(n_layers - 2):
            layers.append(conv_block(n_filters, n_filters))
        layers += [nn.Conv2d(n_filters, 2, 3, padding=1), nn.BatchNorm2d(2)]
        self.nw = nn.Sequential(*layers)

    def forward(self, x):
        idt = x  # (2, nrow, ncol)
        dw = self.nw(x) + idt  # (2, nrow, ncol)
        return dw


# ---------------------------------------------------------------------------
# data consistency (CG on the normal equations)
# ---------------------------------------------------------------------------

class myAtA(nn.Module):
    """
    Normal operator (A^H A + lam I) for the multi-coil SENSE model.

    csm:  [B, C, H, W] complex coil sensitivities
    mask: [B, H, W]    real sampling mask (0/1)
    """

    def __init__(self, csm, mask, lam):
        super().__init__()
        self.csm = csm
        self.mask = mask
        self.lam = lam

    def forward(self, im):
        """
        im: [B, H, W] complex
        """
        im_coil = self.csm * im.unsqueeze(1)  # [B, C, H, W]
        k_full = fft2c(im_coil)
        k_u = k_full * self.mask.unsqueeze(1)
        im_u_coil = ifft2c(k_u)
        im_u = torch.sum(im_u_coil * self.csm.conj(), dim=1)
        return im_u + self.lam * im


def myCG(AtA, rhs, max_iter=10, tol=1e-10):
    """
    Batched conjugate gradient for the complex system AtA(x) = rhs.
    rhs: [B, H, W] complex
    """
    x = torch.zeros_like(rhs)
    i, r, p = 0, rhs, rhs
    rTr = torch.sum(r.conj() * r, dim=(-2, -1)).real
    while i < max_iter and rTr.max() > tol:
        Ap = AtA(p)
        alpha = rTr / torch.sum(p.conj() * Ap, dim=(-2, -1)).real
        alpha = alpha.view(-1, 1, 1)
        x = x + alpha * p
        r = r - alpha * Ap
        rTrNew = torch.sum(r.conj() * r, dim=(-2, -1)).real
        beta = rTrNew / rTr
        beta = beta.view(-1, 1, 1)
        p = r + beta * p
        i += 1
        rTr = rTrNew
    return x


class data_consistency(nn.Module):
    def __init__(self, lam_init=0.05, cg_iters=10, learn_lam=True):
        super().__init__()
        # lambda lives on the GPU from the start so CG does not need a transfer
        self.lam = nn.Parameter(torch.tensor(lam_init).cuda(), requires_grad=learn_lam)
        self.cg_iters = cg_iters

    def forward(self, z_k, x0, csm, mask):
        rhs = r2c(x0) + self.lam * r2c(z_k)  # (2, nrow, ncol)
        AtA = myAtA(csm, mask, self.lam)
        rec = myCG(AtA, rhs, max_iter=self.cg_iters)
        return c2r(rec)


# ---------------------------------------------------------------------------
# unrolled network
# ---------------------------------------------------------------------------

class MoDL(nn.Module):
    def __init__(self, n_layers, k_iters, lam_init=0.05, cg_iters=10, share_weights=True):
        """
        :param n_layers: number of layers of the CNN denoiser
        :param k_iters: number of unrolled iterations
        :param share_weights: MoDL shares D_w and lambda across iterations
        """
        super().__init__()
        self.k_iters = k_iters
        self.share_weights = share_weights
        if share_weights:
            self.dw = cnn_denoiser(n_layers)
        else:
            self.dw = nn.ModuleList([cnn_denoiser(n_layers) for _ in range(k_iters)])
        self.dc = data_consistency(lam_init=lam_init, cg_iters=cg_iters)

    def forward(self, x0, csm, mask):
        """
        :param x0: zero-filled reconstruction (= A^H b), [B, 2, H, W] real
        :param csm: coil sensitivity maps, [B, C, H, W] complex
        :param mask: sampling mask, [B, H, W] real
        :return: reconstruction after k_iters, [B, 2, H, W] real
        """
        x_k = x0.clone()
        for k in range(self.k_iters):
            dw = self.dw if self.share_weights else self.dw[k]
            # dw
            z_k = dw(x_k)  # (2, nrow, ncol)
            # dc
            x_k = self.dc(z_k, x0, csm, mask)  # (2, nrow, ncol)
        return x_k


def zero_filled(kspace, csm, mask):
    """A^H b for a batch; used by the dataset and by the eval script."""
    im_coil = ifft2c(kspace * mask.unsqueeze(1))
    return c2r(torch.sum(im_coil * csm.conj(), dim=1))


if __name__ == "__main__":
    # quick shape test
    B, C, H, W = 2, 12, 256, 232
    net = MoDL(n_layers=5, k_iters=2).cuda()
    csm = torch.randn(B, C, H, W, dtype=torch.complex64, device="cuda")
    mask = (torch.rand(B, H, W, device="cuda") > 0.75).float()
    k = torch.randn(B, C, H, W, dtype=torch.complex64, device="cuda")
    x0 = zero_filled(k, csm, mask)
    out = net(x0, csm, mask)
    print(out.shape, net.dc.lam.item())
