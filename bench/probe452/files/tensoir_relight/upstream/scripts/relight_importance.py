import os
import sys
sys.path.append(os.path.join(os.path.dirname(__file__), '..'))

import imageio
import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from opt import config_parser
from dataLoader import dataset_dict
from models.relight_utils import *
from models.tensoRF_rotated_lights import TensorVMSplit
from utils import rgb_ssim, rgb_lpips

device = torch.device("cuda:0")

brdf_specular = GGX_specular


@torch.no_grad()
def relight(dataset, args):
    if not os.path.exists(args.ckpt):
        print('the checkpoint path for tensoIR does not exists!!')
        return

    ckpt = torch.load(args.ckpt, map_location=device)
    kwargs = ckpt['kwargs']
    kwargs.update({'device': device})
    tensoIR = eval(args.model_name)(**kwargs)
    tensoIR.load(ckpt)

    W, H = dataset.img_wh
    near_far = dataset.near_far

    rgb_frames_list = []
    optimized_normal_list = []

    aligned_albedo_list = []
    roughness_list = []

    envir_light = Environment_Light(args.hdrdir, dataset.light_names)

    ####
    light_rotation_idx = 0
    ####

    global_rescale_value_single, global_rescale_value_three = compute_rescale_ratio(tensoIR, dataset)
    rescale_value = global_rescale_value_three

    relight_psnr = dict()
    relight_l_alex, relight_l_vgg, relight_ssim = dict(), dict(), dict()
    for cur_light_name in dataset.light_names:
        relight_psnr[f'{cur_light_name}'] = []
        relight_l_alex[f'{cur_light_name}'] = []
        relight_l_vgg[f'{cur_light_name}'] = []
        relight_ssim[f'{cur_light_name}'] = []

    loader = torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=False, num_workers=4, pin_memory=True)
    for idx, item in enumerate(tqdm(loader)):
        cur_dir_path = os.path.join(args.geo_buffer_path, f'{dataset.split}_{idx:0>3d}')
        os.makedirs(cur_dir_path, exist_ok=True)
        frame_rays = item['rays'].squeeze(0).to(device)  # [H*W, 6]
        gt_normal = item['normals'].squeeze(0).cpu()  # [H*W, 3]
        gt_mask = item['rgbs_mask'].squeeze(0).squeeze(-1).cpu()  # [H*W]
        gt_rgb = item['rgbs'].squeeze(0).reshape(len(dataset.light_names), H, W, 3).cpu()  # [N, H, W, 3]
        gt_albedo = item['albedo'].squeeze(0).to(device)  # [H*W, 3]
        light_idx = torch.zeros((frame_rays.shape[0], 1), dtype=torch.int).to(device).fill_(light_rotation_idx)

        rgb_map, depth_map, normal_map, albedo_map, roughness_map, fresnel_map, normals_diff_map, \
            normals_orientation_loss_map = [], [], [], [], [], [], [], []
        acc_map = []

        chunk_idxs = torch.split(torch.arange(frame_rays.shape[0]), args.batch_size)
        for chunk_idx in chunk_idxs:
            with torch.enable_grad():
                rgb_chunk, depth_chunk, normal_chunk, albedo_chunk, roughness_chunk, \
                    fresnel_chunk, acc_chunk, *temp \
                    = tensoIR(frame_rays[chunk_idx], light_idx[chunk_idx], is_train=False, white_bg=True,
                              ndc_ray=False, N_samples=-1)

            relight_rgb_chunk = torch.ones_like(rgb_chunk)
            # gt_albedo_chunk = gt_albedo[chunk_idx] # use GT to debug
            acc_chunk_mask = (acc_chunk > args.acc_mask_threshold)
            rays_o_chunk, rays_d_chunk = frame_rays[chunk_idx][:, :3], frame_rays[chunk_idx][:, 3:]
            surface_xyz_chunk = rays_o_chunk + depth_chunk.unsqueeze(-1) * rays_d_chunk  # [bs, 3]
            masked_surface_pts = surface_xyz_chunk[acc_chunk_mask]  # [surface_point_num, 3]

            masked_normal_chunk = normal_chunk[acc_chunk_mask]  # [surface_point_num, 3]
            masked_albedo_chunk = albedo_chunk[acc_chunk_mask]  # [surface_point_num, 3]
            masked_roughness_chunk = roughness_chunk[acc_chunk_mask]  # [surface_point_num, 1]
            masked_fresnel_chunk = fresnel_chunk[acc_chunk_mask]  # [surface_point_num, 1]
            masked_light_idx_chunk = light_idx[chunk_idx][acc_chunk_mask]  # [surface_point_num, 1]

            ## Get incident light directions
            for idx_light, cur_light_name in enumerate(dataset.light_names):
                masked_light_dir, masked_light_rgb, masked_light_pdf = envir_light.sample_light(
                    cur_light_name, masked_normal_chunk.shape[0], 512)  # [bs, envW * envH, 3]
                surf2l = masked_light_dir  # [surface_point_num, envW * envH, 3]
                surf2c = -rays_d_chunk[acc_chunk_mask]  # [surface_point_num, 3]
                surf2c = safe_l2_normalize(surf2c, dim=-1)  # [surface_point_num, 3]

                cosine = torch.einsum("ijk,ik->ij", surf2l, masked_normal_chunk)  # surf2l:[surface_point_num, envW * envH, 3] * masked_normal_chunk:[surface_point_num, 3] -> cosine:[surface_point_num, envW * envH]
                cosine_mask = (cosine > 1e-6)  # [surface_point_num, envW * envH] mask half of the incident light that is behind the surface
                visibility = torch.zeros((*cosine_mask.shape, 1), device=device)  # [surface_point_num, envW * envH, 1]
                masked_surface_xyz = masked_surface_pts[:, None, :].expand((*cosine_mask.shape, 3))  # [surface_point_num, envW * envH, 3]

                cosine_masked_surface_pts = masked_surface_xyz[cosine_mask]  # [num_of_vis_to_get, 3]
                cosine_masked_surf2l = surf2l[cosine_mask]  # [num_of_vis_to_get, 3]
                cosine_masked_visibility = torch.zeros(cosine_masked_surf2l.shape[0], 1, device=device)  # [num_of_vis_to_get, 1]

                chunk_idxs_vis = torch.split(torch.arange(cosine_masked_surface_pts.shape[0]), 100000)

                for chunk_vis_idx in chunk_idxs_vis:
                    chunk_surface_pts = cosine_masked_surface_pts[chunk_vis_idx]  # [chunk_size, 3]
                    chunk_surf2light = cosine_masked_surf2l[chunk_vis_idx]  # [chunk_size, 3]
                    nerv_vis, nerfactor_vis = compute_transmittance(
                        tensoIR=tensoIR,
                        surf_pts=chunk_surface_pts,
                        light_in_dir=chunk_surf2light,
                        nSample=96,
                        vis_near=0.05,
                        vis_far=1.5,
                        device=device
                    )  # [chunk_size, 1]
                    if args.vis_equation == 'nerfactor':
                        cosine_masked_visibility[chunk_vis_idx] = nerfactor_vis.unsqueeze(-1)
                    elif args.vis_equation == 'nerv':
                        cosine_masked_visibility[chunk_vis_idx] = nerv_vis.unsqueeze(-1)
                    visibility[cosine_mask] = cosine_masked_visibility

                ## Get BRDF specs
                nlights = surf2l.shape[1]

                # relighting
                specular_relighting = brdf_specular(masked_normal_chunk, surf2c, surf2l, masked_roughness_chunk, masked_fresnel_chunk)  # [surface_point_num, envW * envH, 3]
                masked_albedo_chunk_rescaled = masked_albedo_chunk * rescale_value
                surface_brdf_relighting = masked_albedo_chunk_rescaled.unsqueeze(1).expand(-1, nlights, -1) / np.pi + specular_relighting  # [surface_point_num, envW * envH, 3]
                direct_light = masked_light_rgb
                light_rgbs = visibility * direct_light  # [bs, envW * envH, 3]
                light_pix_contrib = surface_brdf_relighting * light_rgbs * cosine[:, :, None] / masked_light_pdf
                surface_relight_rgb_chunk = torch.mean(light_pix_contrib, dim=1)  # [bs, 3]

                ### Tonemapping
                surface_relight_rgb_chunk = torch.clamp(surface_relight_rgb_chunk, min=0.0, max=1.0)
                ### Colorspace transform
                if surface_relight_rgb_chunk.shape[0] > 0:
                    surface_relight_rgb_chunk = linear2srgb_torch(surface_relight_rgb_chunk)
                relight_rgb_chunk[acc_chunk_mask] = surface_relight_rgb_chunk

                bg_color = envir_light.get_light(cur_light_name, rays_d_chunk)  # [bs, 3]
                bg_color = torch.clamp(bg_color, min=0.0, max=1.0)
                bg_color = linear2srgb_torch(bg_color)
                relight_without_bg = torch.ones_like(bg_color)
                relight_with_bg = torch.ones_like(bg_color)
                relight_without_bg[acc_chunk_mask] = relight_rgb_chunk[acc_chunk_mask]

                acc_temp = acc_chunk[..., None]
                acc_temp[acc_temp <= 0.9] = 0.0
                relight_with_bg = acc_temp * relight_without_bg + (1.0 - acc_temp) * bg_color

                rgb_map.append((relight_with_bg, idx_light))

            acc_map.append(acc_chunk.detach().cpu())
            normal_map.append(normal_chunk.detach().cpu())
            albedo_map.append(albedo_chunk.detach().cpu())
            roughness_map.append(roughness_chunk.detach().cpu())

        for idx_light, cur_light_name in enumerate(dataset.light_names):
            relight_img = torch.cat([chunk for chunk, i in rgb_map if i == idx_light], dim=0).reshape(H, W, 3).cpu()
            loss_relight = torch.mean((relight_img - gt_rgb[idx_light]) ** 2).item()
            relight_psnr[f'{cur_light_name}'].append(-10.0 * np.log(loss_relight) / np.log(10.0))
            relight_ssim[f'{cur_light_name}'].append(rgb_ssim(relight_img, gt_rgb[idx_light], 1))
            relight_l_alex[f'{cur_light_name}'].append(rgb_lpips(gt_rgb[idx_light].numpy(), relight_img.numpy(), 'alex', tensoIR.device))
            relight_l_vgg[f'{cur_light_name}'].append(rgb_lpips(gt_rgb[idx_light].numpy(), relight_img.numpy(), 'vgg', tensoIR.device))
            imageio.imwrite(os.path.join(cur_dir_path, f'{cur_light_name}.png'), (relight_img.numpy() * 255).astype('uint8'))

        torch.cuda.empty_cache()

    # write relighting metrics
    with open(os.path.join(args.geo_buffer_path, 'relight_metrics.txt'), 'w') as f:
        for cur_light_name in dataset.light_names:
            f.write(f'{cur_light_name}: psnr {np.mean(relight_psnr[cur_light_name]):.4f} '
                    f'ssim {np.mean(relight_ssim[cur_light_name]):.4f} '
                    f'lpips_alex {np.mean(relight_l_alex[cur_light_name]):.4f} '
                    f'lpips_vgg {np.mean(relight_l_vgg[cur_light_name]):.4f}\n')


if __name__ == "__main__":
    args = config_parser()
    print(args)
    print("*" * 80)
    print('The result will be saved in {}'.format(os.path.abspath(args.geo_buffer_path)))

    torch.set_default_dtype(torch.float32)
    torch.manual_seed(20211202)
    np.random.seed(20211202)

    # names of the environment maps used for relighting
    light_name_list = ['bridge', 'city', 'fireplace', 'forest', 'night']

    dataset = dataset_dict[args.dataset_name]
    test_dataset = dataset(
        root_dir=args.datadir,
        hdr_dir=args.hdrdir,
        split='test',
        random_test=False,
        downsample=args.downsample_test,
        light_names=light_name_list,
        light_rotation=args.light_rotation
    )
    relight(test_dataset, args)
