"""CT simulation helpers built on torch-radon (fan beam).

All operators work on batched tensors of shape (B, 1, H, W) / (B, 1, views, dets)
that already live on the training device: torch-radon launches its own CUDA
kernels and never copies to the host.
"""
import numpy as np
import torch
import torch.nn.functional as F
from torch_radon import RadonFanbeam


class CTTools(object):
    def __init__(self, img_size=256, num_views=18, num_full_views=720, det_count=363,
                 source_distance=1075, det_distance=1075, min_hu=-1024, max_hu=3072,
                 mu_water=0.192, pixel_spacing=None):
        self.img_size = img_size
        self.num_views = num_views
        self.num_full_views = num_full_views
        self.det_count = det_count
        self.min_hu = min_hu
        self.max_hu = max_hu
        self.mu_water = mu_water
        self.pixel_spacing = pixel_spacing

        full_angles = np.linspace(0, 2 * np.pi, num_full_views, endpoint=False)
        step = num_full_views // num_views
        sparse_angles = full_angles[::step][:num_views]
        # radon objects hold the angle tensors; they are moved lazily to the input device
        self.radon_full = RadonFanbeam(img_size, full_angles, source_distance=source_distance,
                                       det_distance=det_distance, det_count=det_count)
        self.radon_sparse = RadonFanbeam(img_size, sparse_angles, source_distance=source_distance,
                                         det_distance=det_distance, det_count=det_count)
        self.sparse_idx = np.arange(0, num_full_views, step)[:num_views]

    # ----------------------------------------------------------- units
    def hu2mu(self, hu):
        return self.mu_water * (1.0 + hu / 1000.0)

    def mu2hu(self, mu):
        return (mu / self.mu_water - 1.0) * 1000.0

    def normalize_hu(self, hu):
        return (hu - self.min_hu) / (self.max_hu - self.min_hu)

    def denormalize_hu(self, x):
        return x * (self.max_hu - self.min_hu) + self.min_hu

    # ----------------------------------------------------------- operators
    def _radon(self, sparse):
        return self.radon_sparse if sparse else self.radon_full

    def image_radon(self, mu, sparse=False):
        """Forward projection; torch-radon expects a contiguous float32 tensor."""
        return self._radon(sparse).forward(mu.float().contiguous())

    def sinogram_filter(self, sino, sparse=False, filter_name='ramp'):
        return self._radon(sparse).filter_sinogram(sino, filter_name=filter_name)

    def image_fbp(self, sino, sparse=False, filter_name='ramp'):
        radon = self._radon(sparse)
        filtered = radon.filter_sinogram(sino, filter_name=filter_name)
        fbp = radon.backprojection(filtered)
        # torch-radon's back-projection is not normalised by the number of views
        return fbp * np.pi / (2 * sino.shape[-2])

    def backprojection(self, sino, sparse=False):
        return self._radon(sparse).backprojection(sino)

    def sparsify(self, full_sino):
        return full_sino[..., self.sparse_idx, :]

    def upsample_sinogram(self, sparse_sino):
        """Linear interpolation of the missing views (used by the dual-domain variant)."""
        b, c, v, d = sparse_sino.shape
        wrapped = torch.cat([sparse_sino, sparse_sino[..., :1, :]], dim=-2)
        up = F.interpolate(wrapped, size=(self.num_full_views + self.num_full_views // v, d),
                           mode='bilinear', align_corners=True)
        return up[..., :self.num_full_views, :]


def add_poisson_noise(sino, I0=1e5, sigma_e=0.0, eps=1.0):
    """Low-dose simulation in the transmission domain (used for the noisy-sparse ablation)."""
    counts = torch.poisson(I0 * torch.exp(-sino))
    if sigma_e > 0:
        counts = counts + sigma_e * torch.randn_like(counts)
    counts = counts.clamp(min=eps)
    return -torch.log(counts / I0)


def view_mask(num_full_views, num_views, device):
    """Binary mask (1, 1, V, 1) marking the measured views inside the full-view grid."""
    mask = torch.zeros(1, 1, num_full_views, 1, device=device)
    mask[:, :, ::num_full_views // num_views] = 1.0
    return mask


def hu_window(x, center=40, width=400):
    lo, hi = center - width / 2.0, center + width / 2.0
    return ((x.clamp(lo, hi) - lo) / (hi - lo))


def check_adjoint(ct_tools, device):
    """<Ax, y> == <x, A^T y> sanity check for the projector pair."""
    x = torch.rand(1, 1, ct_tools.img_size, ct_tools.img_size, device=device)
    y = torch.rand(1, 1, ct_tools.num_full_views, ct_tools.det_count, device=device)
    lhs = (ct_tools.image_radon(x) * y).sum()
    rhs = (x * ct_tools.backprojection(y)).sum()
    return (lhs - rhs).abs().item() / rhs.abs().item()


if __name__ == '__main__':
    tools = CTTools()
    print('relative adjoint mismatch: {:.2e}'.format(check_adjoint(tools, torch.device('cuda'))))
