import torch
import math
import numpy as np


def gen_gaussian_hmap_op(coords, raw_size=(260, 210), map_size=None, sigma=1, confidence=False, threshold=0, **kwargs):
    # openpose generate gaussian heatmap on the GPU, no loop over frames
    # coords T, C, 3(x,y,c) or T, C, 2(x,y)
    T, hmap_num = coords.shape[:2]
    raw_h, raw_w = raw_size  # 260,210
    if map_size == None:
        map_h, map_w = raw_h, raw_w
        factor_h, factor_w = 1, 1
    else:
        map_h, map_w = map_size
        factor_h, factor_w = map_h / raw_h, map_w / raw_w
    # generate 2d coords
    # NOTE: openpose generate opencv-style coordinates!
    coords_y = coords[..., 1] * factor_h
    coords_x = coords[..., 0] * factor_w
    if coords.shape[-1] == 3:
        confs = coords[..., 2]  # T, C
    else:
        confs = torch.ones_like(coords_x)

    y, x = torch.meshgrid(torch.arange(map_h), torch.arange(map_w))
    coords = torch.stack([coords_y, coords_x], dim=0)
    grid = torch.stack([y, x], dim=0).to(coords.device)  # [2,H,W]
    grid = grid.unsqueeze(0).unsqueeze(0).expand(hmap_num, T, -1, -1, -1)  # [C,T,2,H,W]
    coords = coords.unsqueeze(0).unsqueeze(0).expand(map_h, map_w, -1, -1, -1).permute(4, 3, 2, 0, 1)  # [C,T,2,H,W]
    hmap = torch.exp(-((grid - coords) ** 2).sum(dim=2) / (2 * sigma ** 2))  # [C,T,H,W]
    hmap = hmap.permute(1, 0, 2, 3)  # [T,C,H,W]
    if confidence:
        confs = confs.unsqueeze(-1).unsqueeze(-1)  # T,C,1,1
        confs = torch.where(confs > threshold, confs, torch.zeros_like(confs))
        hmap = hmap * confs

    return hmap


def gen_gaussian_hmap_batch(keypoints, heatmap_cfg):
    """keypoints: B,T,K,3 -> heatmaps B,T,K,H,W (computed on keypoints.device)."""
    B = keypoints.shape[0]
    hmaps = []
    for b in range(B):
        hmaps.append(gen_gaussian_hmap_op(coords=keypoints[b], **heatmap_cfg))
    return torch.stack(hmaps, dim=0)


def gaussian_kernel_1d(sigma, truncate=4.0, device=None):
    radius = int(truncate * sigma + 0.5)
    x = torch.arange(-radius, radius + 1, dtype=torch.float32, device=device)
    k = torch.exp(-0.5 * (x / sigma) ** 2)
    return k / k.sum()


def smooth_keypoints(keypoints, sigma=1.0):
    """Temporal Gaussian smoothing of keypoint trajectories (T,K,C)."""
    if sigma <= 0:
        return keypoints
    kernel = gaussian_kernel_1d(sigma, device=keypoints.device)
    pad = kernel.numel() // 2
    T, K, C = keypoints.shape
    x = keypoints.permute(1, 2, 0).reshape(K * C, 1, T)
    x = torch.nn.functional.pad(x, (pad, pad), mode='replicate')
    x = torch.nn.functional.conv1d(x, kernel.view(1, 1, -1))
    return x.reshape(K, C, T).permute(2, 0, 1)


def to_numpy_heatmap(hmap):
    return hmap.detach().cpu().numpy().astype(np.float32)


if __name__ == '__main__':
    # quick visual sanity check on random points
    kps = torch.rand(16, 79, 3) * torch.tensor([210., 260., 1.])
    h = gen_gaussian_hmap_op(kps, map_size=(112, 112), sigma=4, confidence=True, threshold=0.5)
    print(h.shape, float(h.max()), math.isfinite(float(h.sum())))
