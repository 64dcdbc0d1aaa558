import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class EquirecTransformer(object):
    """Coordinate conversions between equirectangular pixels, lon/lat and unit rays.

    Works on numpy arrays or torch tensors depending on `mode`.
    """
    def __init__(self, mode, clip=False):
        assert mode in ['numpy', 'torch']
        self.mode = mode
        self.clip = clip

    def XY2lonlat(self, xy, shape=(512, 1024)):
        h, w = shape
        if self.mode == 'numpy':
            lon = ((xy[..., 0:1] + 0.5) / w - 0.5) * 2 * np.pi
            lat = ((xy[..., 1:2] + 0.5) / h - 0.5) * np.pi
            return np.concatenate([lon, lat], axis=-1)
        lon = ((xy[..., 0:1] + 0.5) / w - 0.5) * 2 * np.pi
        lat = ((xy[..., 1:2] + 0.5) / h - 0.5) * np.pi
        return torch.cat([lon, lat], dim=-1)

    def lonlat2XY(self, lonlat, shape=(512, 1024)):
        h, w = shape
        x = (lonlat[..., 0:1] / (2 * np.pi) + 0.5) * w - 0.5
        y = (lonlat[..., 1:2] / np.pi + 0.5) * h - 0.5
        if self.mode == 'numpy':
            return np.concatenate([x, y], axis=-1)
        return torch.cat([x, y], dim=-1)

    def lonlat2xyz(self, lonlat, RADIUS=1.0):
        lon = lonlat[..., 0:1]
        lat = lonlat[..., 1:2]
        if self.mode == 'numpy':
            cos, sin, cat = np.cos, np.sin, lambda t: np.concatenate(t, axis=-1)
        else:
            cos, sin, cat = torch.cos, torch.sin, lambda t: torch.cat(t, dim=-1)
        x = RADIUS * cos(lat) * sin(lon)
        y = RADIUS * sin(lat)
        z = RADIUS * cos(lat) * cos(lon)
        return cat([x, y, z])

    def xyz2lonlat(self, xyz):
        if self.mode == 'numpy':
            norm = np.linalg.norm(xyz, axis=-1, keepdims=True)
            xyz_norm = xyz / norm
            lon = np.arctan2(xyz_norm[..., 0:1], xyz_norm[..., 2:3])
            lat = np.arcsin(np.clip(xyz_norm[..., 1:2], -1, 1) if self.clip else xyz_norm[..., 1:2])
            return np.concatenate([lon, lat], axis=-1)
        norm = torch.norm(xyz, dim=-1, keepdim=True)
        xyz_norm = xyz / norm
        lon = torch.atan2(xyz_norm[..., 0:1], xyz_norm[..., 2:3])
        y = xyz_norm[..., 1:2]
        lat = torch.asin(torch.clamp(y, -1, 1) if self.clip else y)
        return torch.cat([lon, lat], dim=-1)


class EquirecGrid(object):
    """Caches pixel grids per resolution and lifts boundaries / depth maps to 3D."""
    def __init__(self):
        super().__init__()
        self.bag = {}
        self.ET = EquirecTransformer('torch')

    def _createGrid(self, key, h, w):
        X = torch.arange(w)[None, :, None].repeat(h, 1, 1)
        Y = torch.arange(h)[:, None, None].repeat(1, w, 1)
        XY = torch.cat([X, Y], dim=-1).unsqueeze(0).float()
        self.bag[key] = XY

    def _checkBag(self, h, w):
        key = '(%d,%d)' % (h, w)
        if key not in self.bag:
            self._createGrid(key, h, w)
        return self.bag[key]

    def to_xyz(self, depth):
        assert len(depth.shape) == 4 and depth.shape[1] == 1
        h, w = depth.shape[2:]
        grid = self._checkBag(h, w).to(depth.device)
        lonlat = self.ET.XY2lonlat(grid, shape=(h, w))
        xyz = self.ET.lonlat2xyz(lonlat).permute(0, 3, 1, 2)
        return xyz * depth

    def lonlat_to_depth(self, lat, camera_height):
        """Horizontal distance of the wall at every longitude given the boundary latitude.

        lat: [b, 1, w] latitude of the boundary, camera_height: [b] or float
        """
        if torch.is_tensor(camera_height):
            camera_height = camera_height.view(-1, 1, 1)
        return camera_height / torch.tan(lat.abs().clamp(min=1e-3))

    def depth_to_xyz(self, lat, camera_height):
        b, _, w = lat.shape
        lon = ((torch.arange(w, device=lat.device).float() + 0.5) / w - 0.5) * 2 * np.pi
        lon = lon.view(1, 1, w).expand(b, 1, w)
        d = self.lonlat_to_depth(lat, camera_height)
        x = d * torch.sin(lon)
        z = d * torch.cos(lon)
        y = torch.ones_like(x) * (camera_height.view(-1, 1, 1) if torch.is_tensor(camera_height) else camera_height)
        return torch.cat([x, y, z], dim=1)


class EquirecRotate(nn.Module):
    """Rotate an equirectangular image with a 3x3 rotation by resampling with grid_sample."""
    def __init__(self, equ_h):
        super().__init__()
        self.equ_h = equ_h
        self.equ_w = equ_h * 2
        ET = EquirecTransformer('torch')
        X = torch.arange(self.equ_w)[None, :, None].repeat(self.equ_h, 1, 1)
        Y = torch.arange(self.equ_h)[:, None, None].repeat(1, self.equ_w, 1)
        XY = torch.cat([X, Y], dim=-1).float()
        lonlat = ET.XY2lonlat(XY, shape=(self.equ_h, self.equ_w))
        self.register_buffer('xyz', ET.lonlat2xyz(lonlat)[None])
        self.ET = ET

    def forward(self, equi, axis_angle, mode='bilinear'):
        R = axis_angle_to_matrix(axis_angle)  # [b, 3, 3]
        b = equi.shape[0]
        xyz = self.xyz.expand(b, -1, -1, -1).reshape(b, -1, 3)
        xyz = torch.bmm(xyz, R.transpose(1, 2)).reshape(b, self.equ_h, self.equ_w, 3)
        lonlat = self.ET.xyz2lonlat(xyz)
        grid = torch.cat([lonlat[..., 0:1] / np.pi, lonlat[..., 1:2] / (0.5 * np.pi)], dim=-1)
        return F.grid_sample(equi, grid, mode=mode, padding_mode='border', align_corners=False)


def axis_angle_to_matrix(axis_angle):
    angle = torch.norm(axis_angle, dim=-1, keepdim=True).clamp(min=1e-8)
    axis = axis_angle / angle
    x, y, z = axis[:, 0], axis[:, 1], axis[:, 2]
    c = torch.cos(angle[:, 0])
    s = torch.sin(angle[:, 0])
    C = 1 - c
    R = torch.stack([
        torch.stack([c + x * x * C, x * y * C - z * s, x * z * C + y * s], dim=-1),
        torch.stack([y * x * C + z * s, c + y * y * C, y * z * C - x * s], dim=-1),
        torch.stack([z * x * C - y * s, z * y * C + x * s, c + z * z * C], dim=-1),
    ], dim=1)
    return R
