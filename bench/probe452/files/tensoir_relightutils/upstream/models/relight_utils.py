import os
import math

import cv2
import numpy as np
import torch
import torch.nn.functional as F

brdf_specular = None  # set lazily by the importer


def read_hdr(path):
    """Reads an HDR map from disk.

    Args:
        path (str): Path to the .hdr file.

    Returns:
        numpy.ndarray: Loaded (float) HDR map with RGB channels in order.
    """
    with open(path, 'rb') as h:
        buffer_ = np.frombuffer(h.read(), np.uint8)
    bgr = cv2.imdecode(buffer_, cv2.IMREAD_UNCHANGED)
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    return rgb


def safe_l2_normalize(x, dim=None, eps=1e-6):
    return F.normalize(x, p=2, dim=dim, eps=eps)


class Environment_Light():
    def __init__(self, hdr_directory, light_names=None, device='cuda'):
        if light_names is None:
            light_names = ['sunset', 'snow', 'courtyard', 'sunrise', 'night', 'fireplace', 'forest', 'city']
        self.light_names = light_names
        self.device = device
        self.hdr_rgbs = dict()
        self.hdr_pdf_sample = dict()
        self.hdr_pdf_return = dict()
        self.hdr_dir = dict()

        for light_name in light_names:
            hdr_path = os.path.join(hdr_directory, light_name + '.hdr')
            hdr_rgb = torch.from_numpy(read_hdr(hdr_path)).float()
            self.hdr_rgbs[light_name] = hdr_rgb.to(device)

            # importance sampling weights: luminance * sin(theta)
            envir_map_h, envir_map_w = hdr_rgb.shape[:2]
            light_area_weight, fixed_viewdirs = generate_envir_map_dir(envir_map_h, envir_map_w)
            luminance = 0.2126 * hdr_rgb[..., 0] + 0.7152 * hdr_rgb[..., 1] + 0.0722 * hdr_rgb[..., 2]
            pdf = luminance.reshape(-1) * light_area_weight.cpu() + 1e-8
            pdf_to_sample = pdf / torch.sum(pdf)
            pdf_to_return = pdf_to_sample / light_area_weight.cpu() * (envir_map_h * envir_map_w) / (4 * math.pi)

            self.hdr_pdf_sample[light_name] = pdf_to_sample.to(device)
            self.hdr_pdf_return[light_name] = pdf_to_return.to(device)
            self.hdr_dir[light_name] = fixed_viewdirs.to(device)

    @torch.no_grad()
    def sample_light(self, light_name, bs, num_samples, sample_type="importance"):
        """Sample light directions for each surface point. Return [bs, num_samples, 3] dirs and pdfs."""
        environment_map = self.hdr_rgbs[light_name]
        environment_map_h, environment_map_w, _ = environment_map.shape
        if sample_type == "importance":
            pdf = self.hdr_pdf_sample[light_name]
            light_dir_idx = torch.multinomial(pdf, bs * num_samples, replacement=True)
            light_dir = self.hdr_dir[light_name][light_dir_idx].reshape(bs, num_samples, 3)
            light_rgb = environment_map.reshape(-1, 3)[light_dir_idx].reshape(bs, num_samples, 3)
            light_pdf = self.hdr_pdf_return[light_name][light_dir_idx].reshape(bs, num_samples, 1)
        else:
            # uniform over the sphere
            light_dir = torch.randn(bs, num_samples, 3, device=self.device)
            light_dir = safe_l2_normalize(light_dir, dim=-1)
            light_rgb = self.get_light(light_name, light_dir)
            light_pdf = torch.ones_like(light_dir[..., :1]) / (4 * math.pi)
        return light_dir, light_rgb, light_pdf

    def get_light(self, light_name, incident_dir):
        envir_map = self.hdr_rgbs[light_name]
        envir_map = envir_map.permute(2, 0, 1).unsqueeze(0)  # [1, 3, H, W]
        phi = torch.arccos(incident_dir[..., 2]).reshape(-1) - 1e-6
        theta = torch.atan2(incident_dir[..., 1], incident_dir[..., 0]).reshape(-1)
        # normalize to [-1, 1]
        query_y = (phi / np.pi) * 2 - 1
        query_x = - theta / np.pi
        grid = torch.stack((query_x, query_y)).permute(1, 0).unsqueeze(0).unsqueeze(0)
        light_rgbs = F.grid_sample(envir_map, grid, align_corners=False).squeeze().permute(1, 0).reshape(*incident_dir.shape)
        return light_rgbs


def generate_envir_map_dir(envmap_h, envmap_w):
    lat_step_size = np.pi / envmap_h
    lng_step_size = 2 * np.pi / envmap_w
    phi, theta = torch.meshgrid([torch.linspace(np.pi / 2 - 0.5 * lat_step_size, -np.pi / 2 + 0.5 * lat_step_size, envmap_h),
                                 torch.linspace(np.pi - 0.5 * lng_step_size, -np.pi + 0.5 * lng_step_size, envmap_w)], indexing='ij')

    sin_phi = torch.sin(torch.pi / 2 - phi)  # [envH, envW]
    light_area_weight = 4 * torch.pi * sin_phi / torch.sum(sin_phi)  # [envH, envW]
    assert 0 not in light_area_weight, "There shouldn't be light pixel that doesn't contribute"
    light_area_weight = light_area_weight.to(torch.float32).reshape(-1)  # [envH * envW, ]

    view_dirs = torch.stack([torch.cos(theta) * torch.cos(phi),
                             torch.sin(theta) * torch.cos(phi),
                             torch.sin(phi)], dim=-1).view(-1, 3)  # [envH * envW, 3]
    light_area_weight = light_area_weight.cuda()
    view_dirs = view_dirs.cuda()
    return light_area_weight, view_dirs


def GGX_specular(normal, pts2c, pts2l, roughness, fresnel):
    L = F.normalize(pts2l, dim=-1)  # [nrays, nlights, 3]
    V = F.normalize(pts2c, dim=-1)  # [nrays, 3]
    H = F.normalize((L + V[:, None, :]) / 2.0, dim=-1)  # [nrays, nlights, 3]
    N = F.normalize(normal, dim=-1)  # [nrays, 3]

    NoV = torch.sum(V * N, dim=-1, keepdim=True)  # [nrays, 1]
    N = N * NoV.sign()  # [nrays, 3]

    NoL = torch.sum(N[:, None, :] * L, dim=-1, keepdim=True).clamp_(1e-6, 1)  # [nrays, nlights, 1]
    NoV = torch.sum(N * V, dim=-1, keepdim=True).clamp_(1e-6, 1)  # [nrays, 1]
    NoH = torch.sum(N[:, None, :] * H, dim=-1, keepdim=True).clamp_(1e-6, 1)  # [nrays, nlights, 1]
    VoH = torch.sum(V[:, None, :] * H, dim=-1, keepdim=True).clamp_(1e-6, 1)  # [nrays, nlights, 1]

    alpha = roughness * roughness  # [nrays, 3]
    alpha2 = alpha * alpha  # [nrays, 3]
    k = (alpha + 2 * roughness + 1.0) / 8.0
    FMi = ((-5.55473) * VoH - 6.98316) * VoH
    frac0 = fresnel + (1 - fresnel) * torch.pow(2.0, FMi)  # [nrays, nlights, 3]

    frac = frac0 * alpha2[:, None, :]  # [nrays, 1]
    nom0 = NoH * NoH * (alpha2[:, None, :] - 1) + 1

    nom1 = NoV * (1 - k) + k
    nom2 = NoL * (1 - k[:, None, :]) + k[:, None, :]
    nom = (4 * np.pi * nom0 * nom0 * nom1[:, None, :] * nom2).clamp_(1e-6, 4 * np.pi)
    spec = frac / nom
    return spec


def compute_secondary_shading_effects(
        tensoIR,
        surface_pts,
        surf2light,
        light_idx,
        nSample=96,
        vis_near=0.05,
        vis_far=1.5,
        chunk_size=15000,
        device='cuda'
):
    '''compute visibility for each point at each direction without visbility network
    - args:
        - tensoIR: tensoIR model is used to compute the visibility and indirect lighting
        - surface_pts: [N, 3] surface points location
        - surf2light: [N, 3], light incident direction for each surface point, pointing from surface to light
        - light_idx: [N, 1], index of lighitng
        - nSample: number of samples for each ray along incident light direction
    - return:
        - visibility_compute: [N, 1] visibility result by choosing some directions and then computing the density
        - indirect_light: [N, 3] indirect light in the corresponding direction
    '''
    visibility_compute = torch.zeros((surf2light.shape[0]), dtype=torch.float32).to(device)  # [N, 1]
    indirect_light = torch.zeros((surf2light.shape[0], 3), dtype=torch.float32).to(device)  # [N, 3]

    chunk_idxs_vis_compute = torch.split(torch.arange(surf2light.shape[0]), chunk_size)
    for chunk_idx in chunk_idxs_vis_compute:
        chunk_surface_pts = surface_pts[chunk_idx]  # [chunk_size, 3]
        chunk_surf2light = surf2light[chunk_idx]  # [chunk_size, 3]
        chunk_light_idx = light_idx[chunk_idx]  # [chunk_size, 1]
        nerv_vis_chunk, nerfactor_vis_chunk, indirect_light_chunk = tensoIR.compute_relative_visibility_and_indirect_light(
            chunk_surface_pts, chunk_surf2light, chunk_light_idx,
            near=vis_near, far=vis_far, N_samples=nSample,
            white_bg=False, ndc_ray=False, is_train=False
        )
        visibility_chunk = nerv_vis_chunk
        visibility_compute[chunk_idx] = visibility_chunk.to(device)
        indirect_light[chunk_idx] = indirect_light_chunk.to(device)
    visibility_compute = visibility_compute.reshape(-1, 1)  # [N, 1]
    return visibility_compute, indirect_light


def render_with_BRDF(
        depth_map,
        normal_map,
        albedo_map,
        roughness_map,
        fresnel_map,
        rays,
        tensoIR,
        light_idx,
        sample_method='fixed_envirmap',
        chunk_size=15000,
        device='cuda',
        args=None
):
    # Relight module
    ## Sample surface points using depth prediction
    surface_z = depth_map  # [bs,]
    rays_o, rays_d = rays[..., :3].to(device), rays[..., 3:].to(device)  # [bs, 3]
    surface_xyz = rays_o + (surface_z).unsqueeze(-1) * rays_d  # [bs, 3]

    ## Get incident light direction
    light_area_weight = tensoIR.light_area_weight.to(device)  # [envW * envH, ]
    incident_light_dirs = tensoIR.gen_light_incident_dirs(method=sample_method).to(device)  # [envW * envH, 3]
    surf2l = incident_light_dirs.reshape(1, -1, 3).repeat(surface_xyz.shape[0], 1, 1)  # [bs, envW * envH, 3]
    surf2c = -rays_d  # [bs, 3]
    surf2c = safe_l2_normalize(surf2c, dim=-1)  # [bs, 3]

    ## get visibilty map from visibility network or compute it using density
    cosine = torch.einsum("ijk,ik->ij", surf2l, normal_map)  # surf2l:[bs, envW * envH, 3] * normal_map:[bs, 3] -> cosine:[bs, envW * envH]
    cosine_mask = (cosine > 1e-6)  # [bs, envW * envH], mask half of the incident light that is behind the surface
    visibility = torch.zeros((*cosine_mask.shape, 1), device=device)  # [bs, envW * envH, 1]
    indirect_light = torch.zeros((*cosine_mask.shape, 3), device=device)  # [bs, envW * envH, 3]
    visibility[cosine_mask], indirect_light[cosine_mask] = compute_secondary_shading_effects(
        tensoIR=tensoIR,
        surface_pts=surface_xyz.unsqueeze(1).expand(-1, surf2l.shape[1], -1)[cosine_mask],
        surf2light=surf2l[cosine_mask],
        light_idx=light_idx.view(-1, 1, 1).expand((*cosine_mask.shape, 1))[cosine_mask],
        nSample=args.second_nSample,
        vis_near=args.second_near,
        vis_far=args.second_far,
        chunk_size=chunk_size,
        device=device
    )
    visibility_to_use = visibility

    ## Get BRDF specs
    nlights = surf2l.shape[1]
    specular = GGX_specular(normal_map, surf2c, surf2l, roughness_map, fresnel_map)  # [bs, envW * envH, 3]
    surface_brdf = albedo_map.unsqueeze(1).expand(-1, nlights, -1) / np.pi + specular  # [bs, envW * envH, 3]

    ## Compute rendering equation
    envir_map_light_rgbs = tensoIR.get_light_rgbs(incident_light_dirs, device=device).to(device)  # [light_num, envW * envH, 3]
    direct_light_rgbs = torch.index_select(envir_map_light_rgbs, dim=0, index=light_idx.squeeze(-1)).to(device)  # [bs, envW * envH, 3]
    light_rgbs = visibility_to_use * direct_light_rgbs + indirect_light  # [bs, envW * envH, 3]

    # # no visibility and indirect light
    # light_rgbs = direct_light_rgbs

    light_pix_contrib = surface_brdf * light_rgbs * cosine[:, :, None] * light_area_weight[None, :, None]  # [bs, envW * envH, 3]
    rgb_with_brdf = torch.sum(light_pix_contrib, dim=1)  # [bs, 3]

    ### Tonemapping
    rgb_with_brdf = torch.clamp(rgb_with_brdf, min=0.0, max=1.0)
    ### Colorspace transform
    if rgb_with_brdf.shape[0] > 0:
        rgb_with_brdf = linear2srgb_torch(rgb_with_brdf)

    return rgb_with_brdf


def linear2srgb_torch(tensor_0to1):
    if isinstance(tensor_0to1, torch.Tensor):
        pow_func = torch.pow
        where_func = torch.where
    elif isinstance(tensor_0to1, np.ndarray):
        pow_func = np.power
        where_func = np.where
    else:
        raise NotImplementedError(f'Do not support dtype {type(tensor_0to1)}')

    srgb_linear_thres = 0.0031308
    srgb_linear_coeff = 12.92
    srgb_exponential_coeff = 1.055
    srgb_exponent = 2.4

    tensor_0to1 = _clip_0to1_warn_torch(tensor_0to1)

    tensor_linear = tensor_0to1 * srgb_linear_coeff

    tensor_nonlinear = srgb_exponential_coeff * (
        pow_func(tensor_0to1 + 1e-6, 1 / srgb_exponent)
    ) - (srgb_exponential_coeff - 1)

    is_linear = tensor_0to1 <= srgb_linear_thres
    tensor_srgb = where_func(is_linear, tensor_linear, tensor_nonlinear)

    return tensor_srgb


def _clip_0to1_warn_torch(tensor_0to1):
    """Enforces [0, 1] on a tensor/array that should be already [0, 1]."""
    msg = "Some values outside [0, 1], so clipping happened"
    if isinstance(tensor_0to1, torch.Tensor):
        if torch.min(tensor_0to1) < 0 or torch.max(tensor_0to1) > 1:
            tensor_0to1 = torch.clamp(tensor_0to1, min=0, max=1)
    elif isinstance(tensor_0to1, np.ndarray):
        if tensor_0to1.min() < 0 or tensor_0to1.max() > 1:
            tensor_0to1 = np.clip(tensor_0to1, 0, 1)
    else:
        raise NotImplementedError(f'Do not support dtype {type(tensor_0to1)}')
    return tensor_0to1
