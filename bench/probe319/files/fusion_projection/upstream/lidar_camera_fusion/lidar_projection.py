"""
On-line LiDAR -> camera projection for depth-completion training.

Instead of reading the pre-rendered `velodyne_raw` PNGs of the KITTI depth
completion benchmark, raw Velodyne sweeps are projected into the image on the
GPU every iteration. This allows random point dropping / line sub-sampling
(simulating 16/32/64-beam sensors) as data augmentation.

Usage (inside the training loop):

    projector = OnlineProjector(img_h=352, img_w=1216)
    sparse = projector(points_list, calib_list)      # B x 1 x H x W

Everything except the calibration parsing runs on the GPU.
"""

import os
from contextlib import contextmanager

import numpy as np
import torch
import torch.nn as nn

_NVTX = os.environ.get('DC_NVTX', '0') == '1'


@contextmanager
def nvtx_range(msg):
    """NVTX range for nsys profiling (enable with DC_NVTX=1)."""
    if _NVTX:
        torch.cuda.nvtx.range_push(msg)
    try:
        yield
    finally:
        if _NVTX:
            torch.cuda.nvtx.range_pop()


def read_calib_file(filepath):
    """Read in a KITTI calibration file and parse into a dictionary."""
    data = {}
    with open(filepath, 'r') as f:
        for line in f.readlines():
            line = line.rstrip()
            if len(line) == 0 or ':' not in line:
                continue
            key, value = line.split(':', 1)
            try:
                data[key] = np.array([float(x) for x in value.split()])
            except ValueError:
                pass
    return data


def load_velo_to_cam(calib_dir):
    """4x4 LiDAR -> rectified camera 02 transform and the 3x4 projection."""
    cam2cam = read_calib_file(os.path.join(calib_dir, 'calib_cam_to_cam.txt'))
    velo2cam = read_calib_file(os.path.join(calib_dir, 'calib_velo_to_cam.txt'))

    T = np.eye(4, dtype=np.float32)
    T[:3, :3] = velo2cam['R'].reshape(3, 3)
    T[:3, 3] = velo2cam['T']

    R_rect = np.eye(4, dtype=np.float32)
    R_rect[:3, :3] = cam2cam['R_rect_00'].reshape(3, 3)
    P_rect = cam2cam['P_rect_02'].reshape(3, 4).astype(np.float32)
    return R_rect @ T, P_rect


def load_velodyne_points(filename):
    points = np.fromfile(filename, dtype=np.float32).reshape(-1, 4)
    points[:, 3] = 1.0  # homogeneous
    return points


def beam_subsample(points, num_beams=64, keep_beams=16):
    """Keep every (num_beams // keep_beams)-th laser ring based on elevation."""
    if keep_beams >= num_beams:
        return points
    elev = np.arctan2(points[:, 2], np.linalg.norm(points[:, :2], axis=1))
    bins = np.linspace(elev.min(), elev.max() + 1e-6, num_beams + 1)
    ring = np.digitize(elev, bins) - 1
    step = num_beams // keep_beams
    return points[ring % step == 0]


def project_to_depth(points_cam, P, img_h, img_w, crop_top=0, crop_left=0):
    """Rasterise camera-frame points into a sparse depth map keeping the
    closest return per pixel.

    points_cam: N x 4 (homogeneous, rectified camera frame), on the GPU
    P:          3 x 4 projection matrix (same device)
    """
    z = points_cam[:, 2]
    in_front = z > 0.1
    points_cam = points_cam[in_front]
    z = z[in_front]

    uvw = points_cam @ P.t()
    u = torch.round(uvw[:, 0] / uvw[:, 2]).long() - crop_left
    v = torch.round(uvw[:, 1] / uvw[:, 2]).long() - crop_top
    valid = (u >= 0) & (u < img_w) & (v >= 0) & (v < img_h)
    u, v, z = u[valid], v[valid], z[valid]

    flat_idx = v * img_w + u
    depth = torch.full((img_h * img_w,), float('inf'), device=z.device, dtype=z.dtype)
    # several LiDAR returns can fall into the same pixel: keep the nearest
    depth.scatter_reduce_(0, flat_idx, z, reduce='amin', include_self=True)
    depth[torch.isinf(depth)] = 0.0
    return depth.view(1, img_h, img_w)


def project_lidar_batch(points_list, calibs, img_h, img_w, crop=(0, 0), device='cuda'):
    """points_list: list of N_i x 4 numpy arrays (LiDAR frame)
    calibs: list of (velo_to_cam 4x4, P 3x4) numpy tuples"""
    out = []
    for pts, (velo2cam, P) in zip(points_list, calibs):
        pts_t = torch.from_numpy(pts).to(device, non_blocking=True)
        T = torch.from_numpy(velo2cam).to(pts_t)
        P_t = torch.from_numpy(P).to(pts_t)
        pts_cam = pts_t @ T.t()
        out.append(project_to_depth(pts_cam, P_t, img_h, img_w, crop[0], crop[1]))
    return torch.stack(out, 0)


class OnlineProjector(nn.Module):
    """Projects raw sweeps to sparse depth maps with optional augmentation.

    Host->device copies are issued on a side CUDA stream so they overlap with
    the previous iteration's backward pass.
    """

    def __init__(self, img_h=352, img_w=1216, crop=(0, 0), drop_prob=0.0, keep_beams=64):
        super().__init__()
        self.img_h = img_h
        self.img_w = img_w
        self.crop = crop
        self.drop_prob = drop_prob
        self.keep_beams = keep_beams
        self.stream = torch.cuda.Stream()
        self._next = None

    def preload(self, points_list, calibs):
        """Start the asynchronous upload of the next batch."""
        if self.keep_beams < 64:
            points_list = [beam_subsample(p, 64, self.keep_beams) for p in points_list]
        with torch.cuda.stream(self.stream):
            uploaded = []
            for pts, (velo2cam, P) in zip(points_list, calibs):
                pts_t = torch.from_numpy(pts).pin_memory().cuda(non_blocking=True)
                T = torch.from_numpy(velo2cam).cuda(non_blocking=True)
                P_t = torch.from_numpy(P).cuda(non_blocking=True)
                uploaded.append((pts_t, T, P_t))
        self._next = uploaded

    def _random_drop(self, pts):
        if not self.training or self.drop_prob <= 0:
            return pts
        keep = torch.rand(pts.shape[0], device=pts.device) >= self.drop_prob
        return pts[keep]

    def forward(self, points_list=None, calibs=None):
        if points_list is not None:
            self.preload(points_list, calibs)
        torch.cuda.current_stream().wait_stream(self.stream)
        batch = self._next
        self._next = None
        assert batch is not None, 'call preload() or pass points_list'

        out = []
        with nvtx_range('lidar_projection'):
            for pts_t, T, P_t in batch:
                pts_t.record_stream(torch.cuda.current_stream())
                pts_t = self._random_drop(pts_t)
                pts_cam = pts_t @ T.t()
                out.append(project_to_depth(pts_cam, P_t, self.img_h, self.img_w,
                                            self.crop[0], self.crop[1]))
        return torch.stack(out, 0)


if __name__ == '__main__':
    import argparse
    import time

    parser = argparse.ArgumentParser()
    parser.add_argument('--velo', required=True, help='velodyne .bin file')
    parser.add_argument('--calib_dir', required=True)
    parser.add_argument('--beams', type=int, default=64)
    args = parser.parse_args()

    velo2cam, P = load_velo_to_cam(args.calib_dir)
    pts = load_velodyne_points(args.velo)
    proj = OnlineProjector(375, 1242, keep_beams=args.beams).eval()

    t0 = time.time()
    depth = proj([pts], [(velo2cam, P)])
    torch.cuda.synchronize()
    print('projected {} points -> {} valid pixels in {:.2f} ms'.format(
        pts.shape[0], int((depth > 0).sum()), (time.time() - t0) * 1000))
