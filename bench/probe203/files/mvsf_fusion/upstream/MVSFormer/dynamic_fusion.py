"""Dynamic point-cloud fusion (DPCD) on the GPU.

Adapted from D2HC-RMVSNet / GBi-Net: every reference view is checked against all of its
source views with a set of (pixel, relative-depth) thresholds; a pixel survives if it is
consistent with at least `thres_view` views for *some* threshold level. The projection
math runs batched over the source views as torch tensors, which is ~20x faster than the
numpy version in test.py for Tanks&Temples sized images.
"""
import argparse
import glob
import os
import sys
import time

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from plyfile import PlyData, PlyElement

from datasets.data_io import read_pfm, save_pfm

parser = argparse.ArgumentParser(description='dynamic point cloud fusion')
parser.add_argument('--testpath', type=str, default='/data/TankandTemples/intermediate')
parser.add_argument('--outdir', type=str, default='./outputs_tnt')
parser.add_argument('--device', type=str, default='cuda', help='device to run the fusion on')
parser.add_argument('--test_dataset', type=str, default='tank', choices=['dtu', 'tank', 'eth3d'])
parser.add_argument('--scans', type=str, nargs='*', default=None)
parser.add_argument('--photo_threshold', type=float, default=0.3)
parser.add_argument('--thres_view', type=int, default=5)
parser.add_argument('--dist_base', type=float, default=1 / 4)
parser.add_argument('--rel_diff_base', type=float, default=1 / 1300)
parser.add_argument('--max_dist', type=float, default=0.5)
parser.add_argument('--max_rel_diff', type=float, default=0.01)
parser.add_argument('--num_levels', type=int, default=10, help='number of dynamic threshold levels')
parser.add_argument('--downsample', type=int, default=1)
parser.add_argument('--save_mask', action='store_true')
parser.add_argument('--half', action='store_true', help='run the reprojection in fp16 (saves GPU memory)')
args = parser.parse_args()

# avoid TF32 in the reprojection matmuls, it moves points by up to a few mm on DTU
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def read_camera_parameters(filename):
    with open(filename) as f:
        lines = f.readlines()
        lines = [line.rstrip() for line in lines]
    # extrinsics: line [1,5), 4x4 matrix
    extrinsics = np.fromstring(' '.join(lines[1:5]), dtype=np.float32, sep=' ').reshape((4, 4))
    # intrinsics: line [7-10), 3x3 matrix
    intrinsics = np.fromstring(' '.join(lines[7:10]), dtype=np.float32, sep=' ').reshape((3, 3))
    return intrinsics, extrinsics


def read_img(filename):
    img = Image.open(filename)
    # scale 0~255 to 0~1
    np_img = np.array(img, dtype=np.float32) / 255.
    return np_img


def read_pair_file(filename):
    data = []
    with open(filename) as f:
        num_viewpoint = int(f.readline())
        for view_idx in range(num_viewpoint):
            ref_view = int(f.readline().rstrip())
            src_views = [int(x) for x in f.readline().rstrip().split()[1::2]]
            if len(src_views) > 0:
                data.append((ref_view, src_views))
    return data


def save_mask(filename, mask):
    assert mask.dtype == np.bool_
    mask = mask.astype(np.uint8) * 255
    Image.fromarray(mask).save(filename)


def reproject_with_depth(depth_ref, intrinsics_ref, extrinsics_ref, depth_src, intrinsics_src, extrinsics_src):
    """
    depth_ref: [1, H, W]; depth_src: [N, H, W]
    intrinsics_*/extrinsics_*: [N, 3, 3] / [N, 4, 4] (ref ones repeated N times)
    """
    batch, height, width = depth_src.shape
    device = depth_ref.device

    ## step1. project reference pixels to the source view
    y_ref, x_ref = torch.meshgrid([torch.arange(0, height, device=device), torch.arange(0, width, device=device)])
    x_ref, y_ref = x_ref.reshape([-1]).float(), y_ref.reshape([-1]).float()
    x_ref = x_ref.unsqueeze(0).repeat(batch, 1)
    y_ref = y_ref.unsqueeze(0).repeat(batch, 1)

    # reference 3D space
    A = torch.inverse(intrinsics_ref)
    B = torch.stack((x_ref, y_ref, torch.ones_like(x_ref)), dim=1) * depth_ref.view(1, 1, -1)
    xyz_ref = torch.matmul(A, B)

    # source 3D space
    xyz_src = torch.matmul(torch.matmul(extrinsics_src, torch.inverse(extrinsics_ref)),
                           torch.cat((xyz_ref, torch.ones_like(x_ref.unsqueeze(1))), dim=1))[:, :3]

    # source view x, y
    K_xyz_src = torch.matmul(intrinsics_src, xyz_src)
    xy_src = K_xyz_src[:, :2] / K_xyz_src[:, 2:3]

    ## step2. reproject the source view points with source view depth estimation
    x_src = xy_src[:, 0].view([batch, height, width])
    y_src = xy_src[:, 1].view([batch, height, width])
    x_src_norm = x_src / ((width - 1) / 2) - 1
    y_src_norm = y_src / ((height - 1) / 2) - 1
    xy_src_norm = torch.stack([x_src_norm, y_src_norm], dim=3)
    sampled_depth_src = F.grid_sample(depth_src.unsqueeze(1), xy_src_norm, mode='nearest', padding_mode='zeros',
                                      align_corners=True).squeeze(1)

    # source 3D space
    xyz_src = torch.matmul(torch.inverse(intrinsics_src),
                           torch.cat((xy_src, torch.ones_like(x_ref.unsqueeze(1))), dim=1) *
                           sampled_depth_src.view(batch, 1, -1))

    # reference 3D space
    xyz_reprojected = torch.matmul(torch.matmul(extrinsics_ref, torch.inverse(extrinsics_src)),
                                   torch.cat((xyz_src, torch.ones_like(x_ref.unsqueeze(1))), dim=1))[:, :3]

    # source view x, y, depth
    depth_reprojected = xyz_reprojected[:, 2].view([batch, height, width])
    K_xyz_reprojected = torch.matmul(intrinsics_ref, xyz_reprojected)
    xy_reprojected = K_xyz_reprojected[:, :2] / K_xyz_reprojected[:, 2:3]
    x_reprojected = xy_reprojected[:, 0].view([batch, height, width])
    y_reprojected = xy_reprojected[:, 1].view([batch, height, width])

    return depth_reprojected, x_reprojected, y_reprojected


def check_geometric_consistency(depth_ref, intrinsics_ref, extrinsics_ref, depth_src, intrinsics_src,
                                extrinsics_src):
    batch, height, width = depth_src.shape
    y_ref, x_ref = torch.meshgrid([torch.arange(0, height).cuda(), torch.arange(0, width).cuda()])
    x_ref = x_ref.unsqueeze(0).repeat(batch, 1, 1)
    y_ref = y_ref.unsqueeze(0).repeat(batch, 1, 1)
    inputs = [depth_ref, intrinsics_ref, extrinsics_ref, depth_src, intrinsics_src, extrinsics_src]
    outputs = reproject_with_depth(*inputs)
    depth_reprojected, x2d_reprojected, y2d_reprojected = outputs

    # check |p_reproj-p_1| < 1
    dist = torch.sqrt((x2d_reprojected - x_ref) ** 2 + (y2d_reprojected - y_ref) ** 2)

    # check |d_reproj-d_1| / d_1 < 0.01
    depth_diff = torch.abs(depth_reprojected - depth_ref)
    relative_depth_diff = depth_diff / depth_ref

    masks = []
    for i in range(2, args.num_levels + 1):
        mask = torch.logical_and(dist < i * args.dist_base, relative_depth_diff < i * args.rel_diff_base)
        masks.append(mask)
    depth_reprojected[~mask] = 0

    return masks, mask, depth_reprojected


def dypcd_filter(scan_folder, out_folder, plyfilename, device):
    # the pair file
    pair_file = os.path.join(scan_folder, "pair.txt")
    # for the final point cloud
    vertexs = []
    vertex_colors = []

    pair_data = read_pair_file(pair_file)
    nviews = len(pair_data)

    ref_depth_ests, ref_intrinsics_all, ref_extrinsics_all = {}, {}, {}
    for ref_view, src_views in pair_data:
        ref_intrinsics, ref_extrinsics = read_camera_parameters(
            os.path.join(out_folder, 'cams/{:0>8}_cam.txt'.format(ref_view)))
        ref_depth_est = read_pfm(os.path.join(out_folder, 'depth_est/{:0>8}.pfm'.format(ref_view)))[0]
        ref_depth_ests[ref_view] = ref_depth_est
        ref_intrinsics_all[ref_view] = ref_intrinsics
        ref_extrinsics_all[ref_view] = ref_extrinsics

    for ref_view, src_views in pair_data:
        t0 = time.time()
        ref_img = read_img(os.path.join(out_folder, 'images/{:0>8}.jpg'.format(ref_view)))
        ref_depth_est = ref_depth_ests[ref_view]
        confidence = read_pfm(os.path.join(out_folder, 'confidence/{:0>8}.pfm'.format(ref_view)))[0]
        photo_mask = confidence > args.photo_threshold

        src_intrinsics = np.stack([ref_intrinsics_all[v] for v in src_views])
        src_extrinsics = np.stack([ref_extrinsics_all[v] for v in src_views])
        src_depth_est = np.stack([ref_depth_ests[v] for v in src_views])
        n_src = len(src_views)

        ref_depth_t = torch.from_numpy(ref_depth_est).unsqueeze(0).cuda()
        ref_K = torch.from_numpy(ref_intrinsics_all[ref_view]).unsqueeze(0).repeat(n_src, 1, 1).to(device)
        ref_E = torch.from_numpy(ref_extrinsics_all[ref_view]).unsqueeze(0).repeat(n_src, 1, 1).to(device)
        src_depth_t = torch.from_numpy(src_depth_est).to(device)
        src_K = torch.from_numpy(src_intrinsics).to(device)
        src_E = torch.from_numpy(src_extrinsics).to(device)
        if args.half:
            ref_depth_t, src_depth_t = ref_depth_t.half(), src_depth_t.half()

        masks, geo_mask, depth_reprojected = check_geometric_consistency(ref_depth_t, ref_K, ref_E,
                                                                         src_depth_t, src_K, src_E)

        geo_mask_sums = [m.sum(dim=0) for m in masks]
        geo_mask_sum = geo_mask.sum(dim=0)
        depth_est_averaged = (depth_reprojected.sum(dim=0) + ref_depth_t[0]) / (geo_mask_sum + 1)

        geo_mask = geo_mask_sum >= args.thres_view
        for i in range(2, args.num_levels + 1):
            geo_mask = torch.logical_or(geo_mask, geo_mask_sums[i - 2] >= i)

        photo_mask_t = torch.from_numpy(photo_mask).to(device)
        final_mask = torch.logical_and(photo_mask_t, geo_mask)

        geo_mask_np = geo_mask.cpu().numpy()
        final_mask_np = final_mask.cpu().numpy()
        depth_est_averaged = depth_est_averaged.float().cpu().numpy()

        if args.save_mask:
            os.makedirs(os.path.join(out_folder, "mask"), exist_ok=True)
            save_mask(os.path.join(out_folder, "mask/{:0>8}_photo.png".format(ref_view)), photo_mask)
            save_mask(os.path.join(out_folder, "mask/{:0>8}_geo.png".format(ref_view)), geo_mask_np)
            save_mask(os.path.join(out_folder, "mask/{:0>8}_final.png".format(ref_view)), final_mask_np)

        print("processing {}, ref-view{:0>2}, geo_mask:{:.3f} final_mask: {:.3f} ({:.2f}s)".format(
            scan_folder, ref_view, geo_mask_np.mean(), final_mask_np.mean(), time.time() - t0))

        height, width = depth_est_averaged.shape[:2]
        x, y = np.meshgrid(np.arange(0, width), np.arange(0, height))
        valid_points = final_mask_np
        x, y, depth = x[valid_points], y[valid_points], depth_est_averaged[valid_points]

        color = ref_img[valid_points]
        ref_intrinsics = ref_intrinsics_all[ref_view]
        ref_extrinsics = ref_extrinsics_all[ref_view]
        xyz_ref = np.matmul(np.linalg.inv(ref_intrinsics), np.vstack((x, y, np.ones_like(x))) * depth)
        xyz_world = np.matmul(np.linalg.inv(ref_extrinsics), np.vstack((xyz_ref, np.ones_like(x))))[:3]
        vertexs.append(xyz_world.transpose((1, 0)))
        vertex_colors.append((color * 255).astype(np.uint8))

        del ref_depth_t, src_depth_t, masks, depth_reprojected
        torch.cuda.empty_cache()

    vertexs = np.concatenate(vertexs, axis=0)
    vertex_colors = np.concatenate(vertex_colors, axis=0)
    vertexs = np.array([tuple(v) for v in vertexs], dtype=[('x', 'f4'), ('y', 'f4'), ('z', 'f4')])
    vertex_colors = np.array([tuple(v) for v in vertex_colors], dtype=[('red', 'u1'), ('green', 'u1'), ('blue', 'u1')])

    vertex_all = np.empty(len(vertexs), vertexs.dtype.descr + vertex_colors.dtype.descr)
    for prop in vertexs.dtype.names:
        vertex_all[prop] = vertexs[prop]
    for prop in vertex_colors.dtype.names:
        vertex_all[prop] = vertex_colors[prop]

    el = PlyElement.describe(vertex_all, 'vertex')
    PlyData([el]).write(plyfilename)
    print("saving the final model to", plyfilename)


if __name__ == '__main__':
    device = torch.device(args.device)
    if args.scans:
        scans = args.scans
    elif args.test_dataset == 'dtu':
        scans = sorted([s for s in os.listdir(args.outdir) if s.startswith('scan')])
    else:
        scans = sorted([s for s in os.listdir(args.outdir) if os.path.isdir(os.path.join(args.outdir, s))])

    print("fusing {} scans on {}".format(len(scans), torch.cuda.get_device_name(device)))
    for scan in scans:
        scan_folder = os.path.join(args.testpath, scan)
        out_folder = os.path.join(args.outdir, scan)
        if args.test_dataset == 'dtu':
            scan_id = int(scan[4:])
            ply_name = os.path.join(args.outdir, 'mvsnet{:0>3}_l3.ply'.format(scan_id))
        else:
            ply_name = os.path.join(args.outdir, '{}.ply'.format(scan))
        start = time.time()
        with torch.no_grad():
            dypcd_filter(scan_folder, out_folder, ply_name, device)
        print("{} done in {:.1f}s, peak GPU memory {:.2f} GB".format(scan, time.time() - start,
                                                                     torch.cuda.max_memory_allocated() / 1e9))
