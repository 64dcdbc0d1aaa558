"""Differentiable mesh renderer built on nvdiffrast.

Used by the multi-view texture / shape optimisation in `fit_mesh.py`.  All
inputs are expected on the same CUDA device as the rasterizer context.
"""
import logging
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import nvdiffrast.torch as dr

log = logging.getLogger(__name__)


@dataclass
class RenderOutput:
    rgb: torch.Tensor        # [B, H, W, 3]
    alpha: torch.Tensor      # [B, H, W, 1]
    depth: torch.Tensor      # [B, H, W, 1]
    normal: torch.Tensor     # [B, H, W, 3]
    rast: torch.Tensor       # raw rasterizer output [B, H, W, 4]


def perspective(fovy=0.7854, aspect=1.0, n=0.1, f=1000.0, device=None):
    y = np.tan(fovy / 2)
    return torch.tensor([[1 / (y * aspect), 0, 0, 0],
                         [0, 1 / -y, 0, 0],
                         [0, 0, -(f + n) / (f - n), -(2 * f * n) / (f - n)],
                         [0, 0, -1, 0]], dtype=torch.float32, device=device)


def look_at(eye, at, up):
    z = F.normalize(eye - at, dim=-1)
    x = F.normalize(torch.cross(up, z, dim=-1), dim=-1)
    y = torch.cross(z, x, dim=-1)
    m = torch.eye(4, device=eye.device).repeat(eye.shape[0], 1, 1)
    m[:, 0, :3], m[:, 1, :3], m[:, 2, :3] = x, y, z
    m[:, :3, 3] = -torch.einsum("bij,bj->bi", m[:, :3, :3], eye)
    return m


def transform_pos(mtx, pos):
    """Object-space positions -> clip space, [B, V, 4]."""
    posw = torch.cat([pos, torch.ones_like(pos[:, 0:1])], dim=1)
    return torch.matmul(posw, mtx.transpose(1, 2))


def vertex_normals(v, f):
    i0, i1, i2 = f[:, 0].long(), f[:, 1].long(), f[:, 2].long()
    v0, v1, v2 = v[i0], v[i1], v[i2]
    fn = torch.cross(v1 - v0, v2 - v0, dim=-1)
    vn = torch.zeros_like(v)
    vn.scatter_add_(0, i0[:, None].repeat(1, 3), fn)
    vn.scatter_add_(0, i1[:, None].repeat(1, 3), fn)
    vn.scatter_add_(0, i2[:, None].repeat(1, 3), fn)
    vn = torch.where(vn.norm(dim=-1, keepdim=True) > 1e-20, vn,
                     torch.tensor([0.0, 0.0, 1.0], dtype=vn.dtype, device=vn.device))
    return F.normalize(vn, dim=-1)


class NvdrRenderer(nn.Module):
    """Rasterize + interpolate + texture + antialias.

    Args:
        resolution: (H, W) of the output images
        device: torch device; the rasterizer context is bound to it
        use_opengl: use the OpenGL rasterizer instead of the CUDA one
            (needs an EGL-capable driver; handy on machines where the CUDA
            rasterizer runs out of shared memory at high resolution)
        max_mip_level: mip levels for the texture lookup
    """

    def __init__(self, resolution=(512, 512), device="cuda", use_opengl=False, max_mip_level=4):
        super().__init__()
        self.resolution = tuple(resolution)
        self.device = torch.device(device)
        self.max_mip_level = max_mip_level
        if use_opengl:
            self.glctx = dr.RasterizeGLContext(device=self.device)
        else:
            self.glctx = dr.RasterizeCudaContext(device=self.device)
        log.info("nvdiffrast context: %s on %s", type(self.glctx).__name__, self.device)

    def forward(self, verts, faces, uvs, uv_idx, tex, mvp, bg=None):
        """
        verts: [V, 3] float32, faces: [F, 3] int32, uvs: [T, 2], uv_idx: [F, 3] int32,
        tex: [1, Ht, Wt, 3] float32 texture, mvp: [B, 4, 4]
        """
        faces = faces.int().contiguous()
        uv_idx = uv_idx.int().contiguous()
        pos_clip = transform_pos(mvp, verts)

        rast, rast_db = dr.rasterize(self.glctx, pos_clip, faces, resolution=self.resolution)

        texc, texd = dr.interpolate(uvs[None, ...], rast, uv_idx, rast_db=rast_db, diff_attrs="all")
        color = dr.texture(tex, texc, texd, filter_mode="linear-mipmap-linear", max_mip_level=self.max_mip_level)

        alpha = (rast[..., 3:] > 0).float()
        if bg is None:
            bg = torch.ones_like(color)
        color = color * alpha + bg * (1 - alpha)
        color = dr.antialias(color.contiguous(), rast, pos_clip, faces)

        # depth / normals for regularisers and visualisation
        z = pos_clip[..., 2:3] / pos_clip[..., 3:4]
        depth, _ = dr.interpolate(z.contiguous(), rast, faces)
        vn = vertex_normals(verts, faces)
        normal, _ = dr.interpolate(vn[None].contiguous(), rast, faces)
        normal = F.normalize(normal, dim=-1) * alpha

        return RenderOutput(rgb=color, alpha=alpha, depth=depth, normal=normal, rast=rast)


def make_orbit_mvps(n_views, radius=2.5, elev_deg=20.0, fovy=0.6, device="cuda"):
    """Evenly spaced cameras on a circle around the origin."""
    az = torch.linspace(0, 2 * np.pi, n_views + 1, device=device)[:-1]
    el = torch.full_like(az, np.deg2rad(elev_deg))
    eye = torch.stack([radius * torch.cos(el) * torch.sin(az),
                       radius * torch.sin(el),
                       radius * torch.cos(el) * torch.cos(az)], dim=-1)
    up = torch.tensor([0.0, 1.0, 0.0], device=device).expand_as(eye)
    view = look_at(eye, torch.zeros_like(eye), up)
    proj = perspective(fovy, device=device)
    return proj[None] @ view


if __name__ == "__main__":
    # smoke test: render a textured quad from 4 views
    dev = torch.device("cuda:0")
    v = torch.tensor([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], dtype=torch.float32, device=dev)
    f = torch.tensor([[0, 1, 2], [0, 2, 3]], dtype=torch.int32, device=dev)
    uv = torch.tensor([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=torch.float32, device=dev)
    tex = torch.rand(1, 256, 256, 3, device=dev)
    r = NvdrRenderer((256, 256), device=dev)
    out = r(v, f, uv, f, tex, make_orbit_mvps(4, device=dev))
    torch.cuda.synchronize()
    print(out.rgb.shape, out.alpha.mean().item())
