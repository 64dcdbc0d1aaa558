import time
from typing import Optional

import numpy as np
import torch
import torch.nn
import torch.nn.functional as F

from hexplane.model.mlp import General_MLP
from hexplane.model.sh import eval_sh_bases


def raw2alpha(sigma, dist):
    alpha = 1.0 - torch.exp(-sigma * dist)

    T = torch.cumprod(
        torch.cat(
            [torch.ones(alpha.shape[0], 1).to(alpha.device), 1.0 - alpha + 1e-10], -1
        ),
        -1,
    )

    weights = alpha * T[:, :-1]  # [N_rays, N_samples]
    return alpha, weights, T[:, -1:]


def SHRender(xyz_sampled, viewdirs, features):
    sh_mult = eval_sh_bases(2, viewdirs)[:, None]
    rgb_sh = features.view(-1, 3, sh_mult.shape[-1])
    rgb = torch.relu(torch.sum(sh_mult * rgb_sh, dim=-1) + 0.5)
    return rgb


def RGBRender(xyz_sampled, viewdirs, features):
    rgb = features
    return rgb


class EmptyGridMask(torch.nn.Module):
    def __init__(
        self, aabb: torch.Tensor, empty_volume: torch.Tensor, device: torch.device
    ):
        super().__init__()
        self.device = device

        self.aabb = aabb.to(self.device)
        self.aabbSize = self.aabb[1] - self.aabb[0]
        self.invgridSize = 1.0 / self.aabbSize * 2
        self.empty_volume = empty_volume.view(1, 1, *empty_volume.shape[-3:])
        self.gridSize = torch.LongTensor(
            [empty_volume.shape[-1], empty_volume.shape[-2], empty_volume.shape[-3]]
        ).to(self.device)

    def sample_empty(self, xyz_sampled):
        empty_vals = F.grid_sample(
            self.empty_volume, xyz_sampled.view(1, -1, 1, 1, 3), align_corners=True
        ).view(-1)
        return empty_vals

    def normalize_coord(self, xyz_sampled):
        return (xyz_sampled - self.aabb[0]) * self.invgridSize - 1


class HexPlane_Base(torch.nn.Module):
    """
    HexPlane Base Class.
    """

    def __init__(
        self,
        aabb: torch.Tensor,
        gridSize: torch.Tensor,
        device: torch.device,
        time_grid: int,
        near_far: list,
        **kargs,
    ):
        super().__init__()
        self.aabb = aabb
        self.device = device
        self.time_grid = time_grid
        self.near_far = near_far
        self.near_far_org = near_far
        self.step_ratio = kargs.get("step_ratio", 2.0)
        self.update_stepSize(gridSize)

        # Density and Appearance HexPlane components numbers and value regression mode.
        self.density_n_comp = kargs.get("density_n_comp", 8)
        self.app_n_comp = kargs.get("app_n_comp", 24)
        self.density_dim = kargs.get("density_dim", 1)
        self.app_dim = kargs.get("app_dim", 27)
        self.DensityMode = kargs.get("DensityMode", "plain")
        self.AppMode = kargs.get("AppMode", "general_MLP")
        self.init_scale = kargs.get("init_scale", 0.1)
        self.init_shift = kargs.get("init_shift", 0.0)

        # Plane Index
        self.matMode = [[0, 1], [0, 2], [1, 2]]
        self.vecMode = [2, 1, 0]

        # Coordinate normalization type.
        self.normalize_type = kargs.get("normalize_type", "normal")

        # Plane initialization.
        self.init_planes(gridSize[0], device)

        # Density calculation settings.
        self.fea2denseAct = kargs.get("fea2denseAct", "softplus")
        self.density_shift = kargs.get("density_shift", -10.0)
        self.distance_scale = kargs.get("distance_scale", 25.0)

        if self.DensityMode == "plain":
            assert self.density_dim == 1  # Assert the last dimension of density is 1.
        elif self.DensityMode == "general_MLP":
            self.density_regressor = General_MLP(
                self.density_dim,
                1,
                -1,
                kargs.get("density_t_pe", -1),
                kargs.get("density_fea_pe", 6),
                kargs.get("density_pos_pe", -1),
                kargs.get("density_view_pe", -1),
                kargs.get("density_featureC", 128),
                kargs.get("density_n_layers", 1),
                False,
            ).to(device)
        else:
            raise NotImplementedError("No such Density Regression Mode")

        self.emptyMask = None
        self.emptyMask_thres = kargs.get("emptyMask_thes", 0.001)
        self.rayMarch_weight_thres = kargs.get("rayMarch_weight_thres", 0.0001)

        self.app_regressor = General_MLP(
            self.app_dim,
            3,
            3,
            kargs.get("app_t_pe", -1),
            kargs.get("app_fea_pe", 6),
            kargs.get("app_pos_pe", -1),
            kargs.get("app_view_pe", 6),
            kargs.get("app_featureC", 128),
            kargs.get("app_n_layers", 3),
            True,
            use_sigmoid=True,
        ).to(device)

        print("DensityMode:", self.DensityMode, "AppMode:", self.AppMode)

    def update_stepSize(self, gridSize):
        print("aabb", self.aabb.view(-1))
        print("grid size", gridSize)
        self.aabbSize = self.aabb[1] - self.aabb[0]
        self.invaabbSize = 2.0 / self.aabbSize
        self.gridSize = torch.LongTensor(gridSize).to(self.device)
        self.units = self.aabbSize / (self.gridSize - 1)
        self.stepSize = torch.mean(self.units) * self.step_ratio
        self.aabbDiag = torch.sqrt(torch.sum(torch.square(self.aabbSize)))
        self.nSamples = int((self.aabbDiag / self.stepSize).item()) + 1
        print("sampling step size: ", self.stepSize)
        print("sampling number: ", self.nSamples)

    def init_planes(self, res, device):
        raise NotImplementedError

    def compute_densityfeature(self, xyz_sampled, frame_time):
        raise NotImplementedError

    def compute_appfeature(self, xyz_sampled, frame_time):
        raise NotImplementedError

    def normalize_coord(self, xyz_sampled):
        if self.normalize_type == "normal":
            return (xyz_sampled - self.aabb[0]) * self.invaabbSize - 1

    def feature2density(self, density_features: torch.tensor) -> torch.tensor:
        if self.fea2denseAct == "softplus":
            return F.softplus(density_features + self.density_shift)
        elif self.fea2denseAct == "relu":
            return F.relu(density_features)
        else:
            raise NotImplementedError("No such activation function for density feature")

    def sample_point_ndc(self, rays_o, rays_d, is_train=True, N_samples=-1):
        N_samples = N_samples if N_samples > 0 else self.nSamples
        near, far = self.near_far
        interpx = torch.linspace(near, far, N_samples).unsqueeze(0).to(rays_o)
        if is_train:
            interpx += torch.rand_like(interpx).to(rays_o) * ((far - near) / N_samples)

        rays_pts = rays_o[..., None, :] + rays_d[..., None, :] * interpx[..., None]
        mask_outbbox = ((self.aabb[0] > rays_pts) | (rays_pts > self.aabb[1])).any(dim=-1)
        return rays_pts, interpx, ~mask_outbbox

    def sample_point(self, rays_o, rays_d, is_train=True, N_samples=-1):
        N_samples = N_samples if N_samples > 0 else self.nSamples
        stepsize = self.stepSize
        near, far = self.near_far
        vec = torch.where(rays_d == 0, torch.full_like(rays_d, 1e-6), rays_d)
        rate_a = (self.aabb[1] - rays_o) / vec
        rate_b = (self.aabb[0] - rays_o) / vec
        t_min = torch.minimum(rate_a, rate_b).amax(-1).clamp(min=near, max=far)

        rng = torch.arange(N_samples)[None].float()
        if is_train:
            rng = rng.repeat(rays_d.shape[-2], 1)
            rng += torch.rand_like(rng[:, [0]])
        step = stepsize * rng.to(rays_o.device)
        interpx = t_min[..., None] + step

        rays_pts = rays_o[..., None, :] + rays_d[..., None, :] * interpx[..., None]
        mask_outbbox = ((self.aabb[0] > rays_pts) | (rays_pts > self.aabb[1])).any(dim=-1)

        return rays_pts, interpx, ~mask_outbbox

    @torch.no_grad()
    def getDenseEmpty(self, gridSize=None, time_grid=64):
        """
        For a 4D volume, we sample the opacity values of discrete spacetime points and store them in a 3D volume.
        Note that we always assume the 4D volume is in the range of [-1, 1] for each axis.
        """
        gridSize = self.gridSize if gridSize is None else gridSize

        samples = torch.stack(
            torch.meshgrid(
                torch.linspace(0, 1, gridSize[0]),
                torch.linspace(0, 1, gridSize[1]),
                torch.linspace(0, 1, gridSize[2]),
            ),
            -1,
        ).to(self.device)
        dense_xyz = self.aabb[0] * (1 - samples) + self.aabb[1] * samples

        dense_xyz = dense_xyz.transpose(0, 2).contiguous()
        emptiness = torch.zeros_like(dense_xyz[..., 0])
        for i in range(gridSize[2]):
            emptiness[i] = self.compute_emptiness(
                dense_xyz[i].view(-1, 3).contiguous(), time_grid, self.stepSize
            ).view((gridSize[1], gridSize[0]))
        return emptiness, dense_xyz

    @torch.no_grad()
    def updateEmptyMask(self, gridSize=(200, 200, 200), time_grid=64):
        """
        Like TensoRF, we compute the emptiness voxel to store the opacities of the scene and skip computing the opacities of rays with low opacities.
        For HexPlane, the emptiness voxel is the union of the density volumes of all the frames.
        """
        emptiness, dense_xyz = self.getDenseEmpty(gridSize, time_grid)
        dense_xyz = dense_xyz.transpose(0, 2).contiguous()
        emptiness = emptiness.clamp(0, 1).transpose(0, 2).contiguous()[None, None]

        ks = 3
        emptiness = F.max_pool3d(emptiness, kernel_size=ks, padding=ks // 2, stride=1).view(gridSize[::-1])
        emptiness[emptiness >= self.emptyMask_thres] = 1
        emptiness[emptiness < self.emptyMask_thres] = 0

        self.emptyMask = EmptyGridMask(self.aabb, emptiness, self.device)

        valid_xyz = dense_xyz[emptiness > 0.5]
        xyz_min = valid_xyz.amin(0)
        xyz_max = valid_xyz.amax(0)

        new_aabb = torch.stack((xyz_min, xyz_max))
        total = torch.sum(emptiness)
        print(f"bbox: {xyz_min, xyz_max} emptiness: {total / gridSize[0] / gridSize[1] / gridSize[2] * 100:.2f}%")
        return new_aabb

    @torch.no_grad()
    def filtering_rays(self, all_rays, all_rgbs, all_times, all_depths=None, N_samples=256, chunk=10240 * 5,
                       bbox_only=False):
        """
        Filter out rays that have no intersection with the bounding box (or fall into empty space).
        """
        print("========> filtering rays ...")
        tt = time.time()
        N = torch.tensor(all_rays.shape[:-1]).prod()
        mask_filtered = []
        length_current = 0
        idx_chunks = torch.split(torch.arange(N), chunk)
        for idx_chunk in idx_chunks:
            rays_chunk = all_rays[idx_chunk].to(self.device)

            rays_o, rays_d = rays_chunk[..., :3], rays_chunk[..., 3:6]
            if bbox_only:
                vec = torch.where(rays_d == 0, torch.full_like(rays_d, 1e-6), rays_d)
                rate_a = (self.aabb[1] - rays_o) / vec
                rate_b = (self.aabb[0] - rays_o) / vec
                t_min = torch.minimum(rate_a, rate_b).amax(-1)
                t_max = torch.maximum(rate_a, rate_b).amin(-1)
                mask_inbbox = t_max > t_min
            else:
                xyz_sampled, _, _ = self.sample_point(rays_o, rays_d, N_samples=N_samples, is_train=False)
                mask_inbbox = (self.emptyMask.sample_empty(xyz_sampled).view(xyz_sampled.shape[:-1]) > 0).any(-1)

            mask_filtered.append(mask_inbbox.cpu())
            length_current += len(idx_chunk)

        mask_filtered = torch.cat(mask_filtered).view(all_rgbs.shape[:-1])
        print(f"Ray filtering done! takes {time.time() - tt} s. ray mask ratio: {torch.sum(mask_filtered) / N}")
        torch.cuda.empty_cache()
        if all_depths is not None:
            return all_rays[mask_filtered], all_rgbs[mask_filtered], all_times[mask_filtered], all_depths[mask_filtered]
        return all_rays[mask_filtered], all_rgbs[mask_filtered], all_times[mask_filtered], None

    def forward(self, rays_chunk, frame_time, white_bg=True, is_train=False, ndc_ray=False, N_samples=-1):
        """
        Forward passes through HexPlane: sample points, query density/appearance planes, volume-render.
        """
        # Prepare the sampling points.
        viewdirs = rays_chunk[:, 3:6]
        if ndc_ray:
            xyz_sampled, z_vals, ray_valid = self.sample_point_ndc(
                rays_chunk[:, :3], viewdirs, is_train=is_train, N_samples=N_samples)
            dists = torch.cat((z_vals[:, 1:] - z_vals[:, :-1], torch.zeros_like(z_vals[:, :1])), dim=-1)
            rays_norm = torch.norm(viewdirs, dim=-1, keepdim=True)
            dists = dists * rays_norm
            viewdirs = viewdirs / rays_norm
        else:
            xyz_sampled, z_vals, ray_valid = self.sample_point(
                rays_chunk[:, :3], viewdirs, is_train=is_train, N_samples=N_samples)
            dists = torch.cat((z_vals[:, 1:] - z_vals[:, :-1], torch.zeros_like(z_vals[:, :1])), dim=-1)
        viewdirs = viewdirs.view(-1, 1, 3).expand(xyz_sampled.shape)
        frame_time = frame_time.view(-1, 1, 1).expand(xyz_sampled.shape[0], xyz_sampled.shape[1], 1)

        # If emptiness mask is availabe, we first filter out rays with low opacities.
        if self.emptyMask is not None:
            emptiness = self.emptyMask.sample_empty(xyz_sampled[ray_valid])
            empty_mask = emptiness > 0
            ray_invalid = ~ray_valid
            ray_invalid[ray_valid] |= ~empty_mask
            ray_valid = ~ray_invalid

        # Initialize sigma and rgb values.
        sigma = torch.zeros(xyz_sampled.shape[:-1], device=xyz_sampled.device)
        rgb = torch.zeros((*xyz_sampled.shape[:2], 3), device=xyz_sampled.device)

        # Compute density feature and density if there are valid rays.
        if ray_valid.any():
            xyz_sampled = self.normalize_coord(xyz_sampled)
            density_feature = self.compute_densityfeature(xyz_sampled[ray_valid], frame_time[ray_valid])
            if self.DensityMode == "general_MLP":
                density_feature = self.density_regressor(
                    xyz_sampled[ray_valid], viewdirs[ray_valid], density_feature, frame_time[ray_valid])
            validsigma = self.feature2density(density_feature)
            sigma[ray_valid] = validsigma.view(-1)
        alpha, weight, bg_weight = raw2alpha(sigma, dists * self.distance_scale)
        app_mask = weight > self.rayMarch_weight_thres

        # Compute appearance feature and rgb if there are valid rays (whose weight are above a threshold).
        if app_mask.any():
            app_features = self.compute_appfeature(xyz_sampled[app_mask], frame_time[app_mask])
            valid_rgbs = self.app_regressor(
                xyz_sampled[app_mask], viewdirs[app_mask], app_features, frame_time[app_mask])
            rgb[app_mask] = valid_rgbs
        acc_map = torch.sum(weight, -1)
        rgb_map = torch.sum(weight[..., None] * rgb, -2)

        # If white_bg or (is_train and torch.rand((1,))<0.5):
        if white_bg or not is_train:
            rgb_map = rgb_map + (1.0 - acc_map[..., None])
        else:
            rgb_map = rgb_map + (1.0 - acc_map[..., None]) * torch.rand(size=(1, 3), device=rgb_map.device)
        rgb_map = rgb_map.clamp(0, 1)

        # Calculate depth.
        with torch.no_grad():
            depth_map = torch.sum(weight * z_vals, -1)
            depth_map = depth_map + (1.0 - acc_map) * rays_chunk[..., -1]
        return rgb_map, depth_map, alpha, z_vals
