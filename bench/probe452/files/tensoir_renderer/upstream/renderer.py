import os
import sys

import imageio
import numpy as np
import torch
from tqdm.auto import tqdm

from utils import *
from models.relight_utils import render_with_BRDF, linear2srgb_torch


def Renderer_TensoIR_train(
        rays,
        normal_gt,
        light_idx,
        tensoIR,
        N_samples=-1,
        ndc_ray=False,
        white_bg=True,
        is_train=False,
        is_relight=True,
        sample_method='fixed_envirmap',
        chunk_size=15000,
        device='cuda',
        args=None,
):
    rays = rays.to(device)
    light_idx = light_idx.to(device, torch.int32)
    rgb_map, depth_map, normal_map, albedo_map, roughness_map, \
        fresnel_map, normals_diff_map, normals_orientation_loss_map, \
        acc_map, albedo_smoothness_loss, roughness_smoothness_loss = tensoIR(rays, light_idx,
                                                                           is_train=is_train,
                                                                           white_bg=white_bg,
                                                                           is_relight=is_relight,
                                                                           ndc_ray=ndc_ray,
                                                                           N_samples=N_samples)

    ret_kw = {
        "rgb_map": rgb_map,
        "depth_map": depth_map,
        "normal_map": normal_map,
        "albedo_map": albedo_map,
        "acc_map": acc_map,
        "roughness_map": roughness_map,
        "fresnel_map": fresnel_map,
        "normals_diff_map": normals_diff_map,
        "normals_orientation_loss_map": normals_orientation_loss_map,
        "albedo_smoothness_loss": albedo_smoothness_loss,
        "roughness_smoothness_loss": roughness_smoothness_loss,
    }

    if is_relight:
        # only shade the rays that hit the surface
        acc_mask = (acc_map > 0.5)
        rgb_with_brdf = torch.ones_like(rgb_map)
        if acc_mask.any():
            rgb_with_brdf_masked = render_with_BRDF(
                depth_map[acc_mask],
                normal_map[acc_mask],
                albedo_map[acc_mask],
                roughness_map[acc_mask].repeat(1, 3),
                fresnel_map[acc_mask],
                rays[acc_mask],
                tensoIR,
                light_idx[acc_mask],
                sample_method,
                chunk_size=chunk_size,
                device=device,
                args=args
            )
            rgb_with_brdf[acc_mask] = rgb_with_brdf_masked
        ret_kw['rgb_with_brdf_map'] = rgb_with_brdf

    return ret_kw


@torch.no_grad()
def evaluation_iter_TensoIR(
        test_dataset,
        tensoIR,
        args,
        renderer,
        savePath=None,
        prtx='',
        N_samples=-1,
        white_bg=False,
        ndc_ray=False,
        compute_extra_metrics=True,
        device="cuda",
        logger=None,
        step=None,
        test_all=False,
        N_vis=-1,
):
    PSNRs_rgb, rgb_maps, depth_maps = [], [], []
    PSNRs_rgb_brdf = []
    ssims, l_alex, l_vgg = [], [], []

    os.makedirs(savePath, exist_ok=True)
    os.makedirs(savePath + "/nvs_with_radiance_field", exist_ok=True)
    os.makedirs(savePath + "/nvs_with_brdf", exist_ok=True)
    os.makedirs(savePath + "/normal", exist_ok=True)
    os.makedirs(savePath + "/albedo", exist_ok=True)
    os.makedirs(savePath + "/roughness", exist_ok=True)

    try:
        tqdm._instances.clear()
    except Exception:
        pass

    near_far = test_dataset.near_far
    W, H = test_dataset.img_wh

    num_test = len(test_dataset) if test_all else min(args.N_vis, len(test_dataset))
    gt_rgb_list = []
    for idx in tqdm(range(num_test), file=sys.stdout, desc='evaluating'):
        item = test_dataset.__getitem__(idx)
        rays = item['rays'].squeeze(0)  # [H*W, 6]
        gt_rgb = item['rgbs'].squeeze(0).reshape(len(test_dataset.light_names), H, W, 3)
        light_idx = torch.zeros((rays.shape[0], 1), dtype=torch.int)

        rgb_map, acc_map, depth_map, normal_map, albedo_map, roughness_map, rgb_with_brdf_map = \
            [], [], [], [], [], [], []

        chunk_idxs = torch.split(torch.arange(rays.shape[0]), args.batch_size)
        for chunk_idx in chunk_idxs:
            ret_kw = renderer(rays[chunk_idx], None, light_idx[chunk_idx], tensoIR,
                              N_samples=N_samples, ndc_ray=ndc_ray, white_bg=white_bg,
                              sample_method='fixed_envirmap', chunk_size=args.relight_chunk_size,
                              device=device, args=args)
            rgb_map.append(ret_kw['rgb_map'].detach().cpu())
            depth_map.append(ret_kw['depth_map'].detach().cpu())
            normal_map.append(ret_kw['normal_map'].detach().cpu())
            albedo_map.append(ret_kw['albedo_map'].detach().cpu())
            roughness_map.append(ret_kw['roughness_map'].detach().cpu())
            rgb_with_brdf_map.append(ret_kw['rgb_with_brdf_map'].detach().cpu())
            acc_map.append(ret_kw['acc_map'].detach().cpu())

        rgb_map = torch.cat(rgb_map).reshape(H, W, 3)
        depth_map = torch.cat(depth_map).reshape(H, W)
        normal_map = torch.cat(normal_map).reshape(H, W, 3)
        albedo_map = torch.cat(albedo_map).reshape(H, W, 3)
        roughness_map = torch.cat(roughness_map).reshape(H, W, 1)
        rgb_with_brdf_map = torch.cat(rgb_with_brdf_map).reshape(H, W, 3)
        acc_map = torch.cat(acc_map).reshape(H, W)

        loss_rgb = torch.mean((rgb_map - gt_rgb[0]) ** 2)
        loss_rgb_brdf = torch.mean((rgb_with_brdf_map - gt_rgb[0]) ** 2)
        PSNRs_rgb.append(-10.0 * np.log(loss_rgb.item()) / np.log(10.0))
        PSNRs_rgb_brdf.append(-10.0 * np.log(loss_rgb_brdf.item()) / np.log(10.0))

        if compute_extra_metrics:
            ssim = rgb_ssim(rgb_map, gt_rgb[0], 1)
            l_a = rgb_lpips(gt_rgb[0].numpy(), rgb_map.numpy(), 'alex', tensoIR.device)
            l_v = rgb_lpips(gt_rgb[0].numpy(), rgb_map.numpy(), 'vgg', tensoIR.device)
            ssims.append(ssim)
            l_alex.append(l_a)
            l_vgg.append(l_v)

        depth_map, _ = visualize_depth_numpy(depth_map.numpy(), near_far)
        rgb_map = (rgb_map.numpy() * 255).astype('uint8')
        rgb_with_brdf_map = (rgb_with_brdf_map.numpy() * 255).astype('uint8')
        normal_vis = ((normal_map.numpy() + 1) / 2 * 255).astype('uint8')
        albedo_vis = (linear2srgb_torch(albedo_map).numpy() * 255).astype('uint8')
        roughness_vis = (roughness_map.expand(-1, -1, 3).numpy() * 255).astype('uint8')

        if savePath is not None:
            imageio.imwrite(f'{savePath}/nvs_with_radiance_field/{prtx}{idx:03d}.png', rgb_map)
            imageio.imwrite(f'{savePath}/nvs_with_brdf/{prtx}{idx:03d}.png', rgb_with_brdf_map)
            imageio.imwrite(f'{savePath}/normal/{prtx}{idx:03d}.png', normal_vis)
            imageio.imwrite(f'{savePath}/albedo/{prtx}{idx:03d}.png', albedo_vis)
            imageio.imwrite(f'{savePath}/roughness/{prtx}{idx:03d}.png', roughness_vis)
            imageio.imwrite(f'{savePath}/{prtx}depth_{idx:03d}.png', depth_map)

        if logger is not None and idx == 0:
            logger.add_image('test/rgb', rgb_map, global_step=step, dataformats='HWC')
            logger.add_image('test/rgb_brdf', rgb_with_brdf_map, global_step=step, dataformats='HWC')
            logger.add_image('test/normal', normal_vis, global_step=step, dataformats='HWC')

    psnr = np.mean(np.asarray(PSNRs_rgb))
    psnr_brdf = np.mean(np.asarray(PSNRs_rgb_brdf))
    if compute_extra_metrics:
        ssim = np.mean(np.asarray(ssims))
        l_a = np.mean(np.asarray(l_alex))
        l_v = np.mean(np.asarray(l_vgg))
        np.savetxt(f'{savePath}/{prtx}mean.txt', np.asarray([psnr, psnr_brdf, ssim, l_a, l_v]))
    else:
        np.savetxt(f'{savePath}/{prtx}mean.txt', np.asarray([psnr, psnr_brdf]))

    return PSNRs_rgb
