'''
Greedy (SyN-style, compositive) deformable registration with Riemannian gradient descent.

The warp is a displacement field on the fixed image grid, optimized scale by scale. All tensors
live on the device of the fixed images; nothing here is GPU-specific except the memory housekeeping
between scales, which matters for 4+ images of 256^3 on a 24 GB card.
'''
from typing import List, Optional, Union, Callable
from time import time

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from tqdm import tqdm

from fireants.io.image import BatchedImages
from fireants.registration.abstract import AbstractRegistration
from fireants.registration.deformation.compositive import CompositiveWarp
from fireants.registration.deformation.svf import StationaryVelocity
from fireants.losses.cc import gaussian_1d, separable_filtering
from fireants.utils.imageutils import downsample
from fireants.utils.util import compose_warp
from fireants.registration.deformablemixin import DeformableMixin


class GreedyRegistration(AbstractRegistration, DeformableMixin):
    '''
    Greedy deformable registration.

    Args:
        scales: downsampling factors, coarse to fine (e.g. [4, 2, 1])
        iterations: iterations per scale
        fixed_images, moving_images: BatchedImages on the same device
        loss_type: 'cc', 'mi', 'mse' or 'custom'
        deformation_type: 'geodesic' (SVF) or 'compositive'
        optimizer / optimizer_lr / optimizer_params: warp optimizer settings
        smooth_warp_sigma / smooth_grad_sigma: Gaussian smoothing of the warp and its gradient
        init_affine: optional [N, d+1, d+1] affine initialization (physical space)
        progress_bar: show a tqdm bar per scale
    '''

    def __init__(self, scales: List[int], iterations: List[float],
                 fixed_images: BatchedImages, moving_images: BatchedImages,
                 loss_type: str = "cc",
                 deformation_type: str = 'compositive',
                 optimizer: str = 'Adam', optimizer_params: dict = {},
                 optimizer_lr: float = 0.5,
                 integrator_n: Union[str, int] = 7,
                 mi_kernel_type: str = 'b-spline', cc_kernel_type: str = 'rectangular',
                 cc_kernel_size: int = 3,
                 smooth_warp_sigma: float = 0.5,
                 smooth_grad_sigma: float = 1.0,
                 loss_params: dict = {},
                 reduction: str = 'sum',
                 tolerance: float = 1e-6, max_tolerance_iters: int = 10,
                 init_affine: Optional[torch.Tensor] = None,
                 blur: bool = True,
                 custom_loss: nn.Module = None,
                 progress_bar: bool = True,
                 ) -> None:
        # initialize abstract registration
        super().__init__(scales=scales, iterations=iterations, fixed_images=fixed_images,
                         moving_images=moving_images, loss_type=loss_type, mi_kernel_type=mi_kernel_type,
                         cc_kernel_type=cc_kernel_type, custom_loss=custom_loss, loss_params=loss_params,
                         cc_kernel_size=cc_kernel_size, reduction=reduction,
                         tolerance=tolerance, max_tolerance_iters=max_tolerance_iters)
        self.dims = fixed_images.dims
        self.blur = blur
        self.reduction = reduction
        self.progress_bar = progress_bar
        # specify deformation type
        if deformation_type == 'geodesic':
            warp = StationaryVelocity(fixed_images, moving_images, integrator_n=integrator_n,
                                      optimizer=optimizer, optimizer_lr=optimizer_lr,
                                      optimizer_params=optimizer_params,
                                      smoothing_grad_sigma=smooth_grad_sigma)
        elif deformation_type == 'compositive':
            warp = CompositiveWarp(fixed_images, moving_images, optimizer=optimizer, optimizer_lr=optimizer_lr,
                                   optimizer_params=optimizer_params,
                                   smoothing_grad_sigma=smooth_grad_sigma,
                                   smoothing_warp_sigma=smooth_warp_sigma)
            smooth_warp_sigma = 0  # this work is delegated to compositive warp
        else:
            raise ValueError('Invalid deformation type: {}'.format(deformation_type))
        self.warp = warp
        self.smooth_warp_sigma = smooth_warp_sigma  # in voxels
        # initialize affine
        if init_affine is None:
            init_affine = torch.eye(self.dims + 1, device=fixed_images.device).unsqueeze(0).repeat(
                fixed_images.size(), 1, 1)  # [N, D+1, D+1]
        B, D1, D2 = init_affine.shape
        # affine can be [N, D, D+1] or [N, D+1, D+1]
        if D1 == self.dims + 1 and D2 == self.dims + 1:
            self.affine = init_affine.detach()
        elif D1 == self.dims and D2 == self.dims + 1:
            # attach row to affine
            row = torch.zeros(self.opt_size, 1, self.dims + 1, device=fixed_images.device)
            row[:, 0, -1] = 1.0
            self.affine = torch.cat([init_affine.detach(), row], dim=1)
        else:
            raise ValueError('Invalid initial affine shape: {}'.format(init_affine.shape))

    def get_warped_coordinates(self, fixed_images: BatchedImages, moving_images: BatchedImages,
                               shape=None, displacement=False):
        ''' Get the transformed coordinates for warping the moving image. '''
        fixed_arrays = fixed_images()
        if shape is None:
            shape = fixed_images.shape
        else:
            shape = [fixed_arrays.shape[0], 1] + list(shape)

        fixed_t2p = fixed_images.get_torch2phy()
        moving_p2t = moving_images.get_phy2torch()
        # save initial affine transform to initialize grid
        affine_map_init = torch.matmul(moving_p2t, torch.matmul(self.affine, fixed_t2p))[:, :-1]
        # set affine coordinates
        fixed_image_affinecoords = F.affine_grid(affine_map_init, shape, align_corners=True)
        warp_field = self.warp.get_warp().detach().clone()
        if tuple(warp_field.shape[1:-1]) != tuple(shape[2:]):
            # interpolate this
            warp_field = F.interpolate(warp_field.permute(*self.warp.permute_vtoimg), size=shape[2:],
                                       mode='trilinear' if self.dims == 3 else 'bilinear',
                                       align_corners=True).permute(*self.warp.permute_imgtov)
        # smooth out the warp field if asked to
        if self.smooth_warp_sigma > 0:
            warp_gaussian = [gaussian_1d(s, truncated=2) for s in (torch.zeros(self.dims,
                                                                             device=fixed_arrays.device) + self.smooth_warp_sigma)]
            warp_field = separable_filtering(warp_field.permute(*self.warp.permute_vtoimg), warp_gaussian).permute(
                *self.warp.permute_imgtov)
        if displacement:
            return warp_field
        return fixed_image_affinecoords + warp_field

    def optimize(self, save_transformed=False):
        ''' Optimize the warp field to match the two images. '''
        fixed_arrays = self.fixed_images()
        moving_arrays = self.moving_images()
        fixed_t2p = self.fixed_images.get_torch2phy()
        moving_p2t = self.moving_images.get_phy2torch()
        fixed_size = fixed_arrays.shape[2:]
        # save initial affine transform to initialize grid
        affine_map_init = torch.matmul(moving_p2t, torch.matmul(self.affine, fixed_t2p))[:, :-1]

        # to save transformed images
        transformed_images = []
        # gaussian filter for smoothing the velocity field
        warp_gaussian = [gaussian_1d(s, truncated=2) for s in
                         (torch.zeros(self.dims, device=fixed_arrays.device) + self.smooth_warp_sigma)]
        # multi-scale optimization
        for scale, iters in zip(self.scales, self.iterations):
            self.convergence_monitor.reset()
            # resize images
            size_down = [max(int(s / scale), 8) for s in fixed_size]
            if self.blur and scale > 1:
                sigmas = 0.5 * torch.tensor([sz / szdown for sz, szdown in zip(fixed_size, size_down)],
                                            device=fixed_arrays.device)
                gaussians = [gaussian_1d(s, truncated=2) for s in sigmas]
                fixed_image_down = downsample(fixed_arrays, size=size_down, mode=self.fixed_images.interpolate_mode,
                                              gaussians=gaussians)
                moving_image_blur = separable_filtering(moving_arrays, gaussians)
            else:
                fixed_image_down = F.interpolate(fixed_arrays, size=size_down,
                                                 mode=self.fixed_images.interpolate_mode, align_corners=True)
                moving_image_blur = moving_arrays

            # Get coordinates to transform
            fixed_image_affinecoords = F.affine_grid(affine_map_init, fixed_image_down.shape, align_corners=True)
            pbar = tqdm(range(iters)) if self.progress_bar else range(iters)
            # reduce
            if self.reduction == 'mean':
                scale_factor = 1
            else:
                scale_factor = np.prod(fixed_image_down.shape)

            for i in pbar:
                self.warp.set_zero_grad()
                warp_field = self.warp.get_warp()  # [N, HWD, 3]
                warp_field = F.interpolate(warp_field.permute(*self.warp.permute_vtoimg), size=size_down,
                                           mode=self.fixed_images.interpolate_mode, align_corners=True).permute(
                    *self.warp.permute_imgtov)
                # smooth out the warp field if asked to
                if self.smooth_warp_sigma > 0:
                    warp_field = separable_filtering(warp_field.permute(*self.warp.permute_vtoimg),
                                                     warp_gaussian).permute(*self.warp.permute_imgtov)
                moved_coords = fixed_image_affinecoords + warp_field  # affine transform + warp field
                # moved_coords.retain_grad()
                moved_image = F.grid_sample(moving_image_blur, moved_coords, mode='bilinear',
                                            align_corners=True)  # [N, C, H, W, [D]]
                if self.custom_loss is None:
                    loss = self.loss_fn(moved_image, fixed_image_down)
                else:
                    loss = self.custom_loss(moved_image, fixed_image_down)
                loss.backward()
                if self.progress_bar:
                    pbar.set_description("scale: {}, iter: {}/{}, loss: {:4f}".format(scale, i, iters,
                                                                                       loss.item() / scale_factor))
                # optimize the velocity field
                self.warp.step()
                # check for convergence
                if self.convergence_monitor.converged(loss.item()):
                    break

            # save transformed image
            if save_transformed:
                transformed_images.append(moved_image.detach())

            # free the per-scale intermediates before moving to the next (larger) scale
            del fixed_image_down, moving_image_blur, fixed_image_affinecoords
            torch.cuda.empty_cache()

        if save_transformed:
            return transformed_images


if __name__ == '__main__':
    import argparse
    from fireants.io.image import Image
    from fireants.registration.affine import AffineRegistration

    parser = argparse.ArgumentParser(description="Register one moving image to one fixed image")
    parser.add_argument("fixed")
    parser.add_argument("moving")
    parser.add_argument("--device", default="cuda:0", help="torch device, e.g. cuda:0 or cpu")
    parser.add_argument("--scales", type=int, nargs="+", default=[4, 2, 1])
    parser.add_argument("--iterations", type=int, nargs="+", default=[200, 100, 50])
    args = parser.parse_args()

    img1 = Image.load_file(args.fixed, device=args.device)
    img2 = Image.load_file(args.moving, device=args.device)
    fixed = BatchedImages([img1])
    moving = BatchedImages([img2])

    torch.cuda.reset_peak_memory_stats()
    start = time()
    affine = AffineRegistration([8, 4, 2, 1], [200, 100, 50, 20], fixed, moving, loss_type='cc',
                                optimizer='Adam', optimizer_lr=3e-3)
    affine.optimize()
    reg = GreedyRegistration(scales=args.scales, iterations=args.iterations, fixed_images=fixed,
                             moving_images=moving, cc_kernel_size=5, deformation_type='compositive',
                             smooth_grad_sigma=1, optimizer='adam', optimizer_lr=0.5,
                             init_affine=affine.get_affine_matrix().detach())
    reg.optimize()
    torch.cuda.synchronize()
    print(f"registration took {time() - start:.2f}s, "
          f"peak memory {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB")
