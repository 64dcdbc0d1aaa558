# Copyright (c) 2022, the authors. All rights reserved.
#
# Differentiable mesh renderer built on nvdiffrast. Rasterizes a triangle mesh,
# interpolates vertex attributes, samples textures and applies antialiasing.
# Used by the mesh-extraction stage of the reconstruction pipeline.

import math

import numpy as np
import torch
import torch.nn.functional as F
import nvdiffrast.torch as dr

from . import light
from . import util

# ----------------------------------------------------------------------------
# Context handling
# ----------------------------------------------------------------------------

_GLCTX = None


def get_context(use_opengl=False):
    """Return a cached rasterizer context. OpenGL is only used for debugging
    on machines where the CUDA rasterizer is not available."""
    global _GLCTX
    if _GLCTX is None:
        if use_opengl:
            _GLCTX = dr.RasterizeGLContext()
        else:
            _GLCTX = dr.RasterizeCudaContext(device="cuda:0")
    return _GLCTX


# ----------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------

def xfm_points(points, matrix):
    """Transform points with a batch of 4x4 matrices (device-agnostic)."""
    out = torch.matmul(
        F.pad(points, pad=(0, 1), mode="constant", value=1.0),
        torch.transpose(matrix, 1, 2),
    )
    if torch.is_anomaly_enabled():
        assert torch.all(torch.isfinite(out)), "Output of xfm_points contains inf or NaN"
    return out


def interpolate(attr, rast, attr_idx, rast_db=None):
    return dr.interpolate(
        attr.contiguous(), rast, attr_idx, rast_db=rast_db,
        diff_attrs=None if rast_db is None else "all",
    )


def shade(gb_pos, gb_normal, kd, ks, view_pos, lgt):
    """Very small Blinn-Phong style shader, runs on whatever device the inputs live on."""
    wo = util.safe_normalize(view_pos - gb_pos)
    diffuse = kd * torch.clamp(util.dot(gb_normal, lgt.direction), min=0.0)
    h = util.safe_normalize(wo + lgt.direction)
    spec = ks[..., 1:2] * torch.clamp(util.dot(gb_normal, h), min=0.0) ** 32.0
    return diffuse + spec


# ----------------------------------------------------------------------------
# Main render entry
# ----------------------------------------------------------------------------

def render_mesh(ctx, mesh, mtx_in, view_pos, lgt, resolution, spp=1, msaa=False, background=None):
    """Render a mesh into a [B, H, W, 4] image.

    mtx_in    : [B, 4, 4] model-view-projection matrices
    view_pos  : [B, 3] camera positions
    resolution: (H, W)
    """
    full_res = [resolution[0] * spp, resolution[1] * spp]

    v_pos_clip = xfm_points(mesh.v_pos[None, ...], mtx_in)

    rast, rast_db = dr.rasterize(ctx, v_pos_clip, mesh.t_pos_idx.int(), full_res)

    gb_pos, _ = interpolate(mesh.v_pos[None, ...], rast, mesh.t_pos_idx.int())
    gb_normal, _ = interpolate(mesh.v_nrm[None, ...], rast, mesh.t_nrm_idx.int())
    gb_normal = util.safe_normalize(gb_normal)

    gb_texc, gb_texc_deriv = interpolate(mesh.v_tex[None, ...], rast, mesh.t_tex_idx.int(), rast_db=rast_db)
    kd = dr.texture(mesh.material["kd"].data, gb_texc, uv_da=gb_texc_deriv,
                    filter_mode="linear-mipmap-linear", max_mip_level=9)
    ks = dr.texture(mesh.material["ks"].data, gb_texc, uv_da=gb_texc_deriv,
                    filter_mode="linear-mipmap-linear", max_mip_level=9)

    color = shade(gb_pos, gb_normal, kd[..., :3], ks, view_pos[:, None, None, :], lgt)
    alpha = (rast[..., -1:] > 0).float()
    out = torch.cat((color, alpha), dim=-1)

    if background is not None:
        out = torch.lerp(background, out, alpha)

    out = dr.antialias(out.contiguous(), rast, v_pos_clip, mesh.t_pos_idx.int())

    if spp > 1:
        out = util.avg_pool_nhwc(out, spp)
    return out


# ----------------------------------------------------------------------------
# UV-space rendering (used to bake textures)
# ----------------------------------------------------------------------------

def render_uv(ctx, mesh, resolution, mlp_texture):
    uv_clip = mesh.v_tex[None, ...] * 2.0 - 1.0
    uv_clip4 = torch.cat(
        (uv_clip, torch.zeros_like(uv_clip[..., 0:1]), torch.ones_like(uv_clip[..., 0:1])), dim=-1
    )
    rast, _ = dr.rasterize(ctx, uv_clip4, mesh.t_tex_idx.int(), resolution)
    gb_pos, _ = interpolate(mesh.v_pos, rast, mesh.t_pos_idx.int())
    all_tex = mlp_texture.sample(gb_pos)
    return (rast[..., -1:] > 0).float(), all_tex[..., :3], all_tex[..., 3:6]


# ----------------------------------------------------------------------------
# Stand-alone preview
# ----------------------------------------------------------------------------

def perspective(fovy=0.7854, aspect=1.0, n=0.1, f=1000.0, device=None):
    y = np.tan(fovy / 2)
    return torch.tensor([[1 / (y * aspect), 0, 0, 0],
                         [0, 1 / -y, 0, 0],
                         [0, 0, -(f + n) / (f - n), -(2 * f * n) / (f - n)],
                         [0, 0, -1, 0]], dtype=torch.float32, device=device)


def preview(mesh, out_path, res=512, n_views=8):
    ctx = get_context()
    proj = perspective(device="cuda")
    lgt = light.DirectionalLight(direction=torch.tensor([0.0, 0.0, 1.0]).cuda())
    frames = []
    for i in range(n_views):
        angle = 2.0 * math.pi * i / n_views
        mv = util.translate(0, 0, -2.5) @ util.rotate_y(angle)
        mvp = (proj @ mv.cuda())[None, ...]
        campos = torch.linalg.inv(mv)[None, :3, 3].cuda()
        with torch.no_grad():
            img = render_mesh(ctx, mesh, mvp, campos, lgt, [res, res])
        frames.append(img[0].detach().cpu().numpy())
    torch.cuda.synchronize()
    util.save_image_grid(out_path, frames)
    return frames
