"""
Camera position optimisation with a differentiable silhouette renderer.

A reference silhouette is rendered from a known camera; we then start the
camera at a perturbed position and recover the original pose by gradient
descent on the silhouette MSE.  Written against pytorch3d 0.7.x.
"""
import argparse
import dataclasses
import json
import math
import os
from typing import Optional

import imageio
import numpy as np
import torch
import torch.nn as nn
from skimage import img_as_ubyte
from tqdm import tqdm

from pytorch3d.io import load_objs_as_meshes
from pytorch3d.renderer import (
    BlendParams,
    FoVPerspectiveCameras,
    HardPhongShader,
    MeshRasterizer,
    MeshRenderer,
    PointLights,
    RasterizationSettings,
    SoftSilhouetteShader,
    TexturesVertex,
    look_at_rotation,
    look_at_view_transform,
)
from pytorch3d.transforms import so3_relative_angle


@dataclasses.dataclass
class FitConfig:
    obj_path: str = "data/teapot.obj"
    out_dir: str = "output/camera_fit"
    image_size: int = 256
    faces_per_pixel: int = 100
    blur_sigma: float = 1e-4
    lr: float = 0.05
    iters: int = 200
    init_position: tuple = (3.0, 6.9, 2.5)
    ref_dist: float = 3.0
    ref_elev: float = 50.0
    ref_azim: float = 0.0
    device: str = "cuda"
    save_gif: bool = True
    seed: Optional[int] = 1

    @classmethod
    def from_args(cls):
        p = argparse.ArgumentParser()
        for f in dataclasses.fields(cls):
            if f.type is bool:
                p.add_argument("--" + f.name.replace("_", "-"), action="store_true", default=f.default)
            elif f.name == "init_position":
                p.add_argument("--init-position", type=float, nargs=3, default=list(f.default))
            elif f.name == "seed":
                p.add_argument("--seed", type=int, default=f.default)
            else:
                p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
        ns = p.parse_args()
        return cls(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(cls)})


def build_renderers(cfg, cameras, device):
    blend_params = BlendParams(sigma=cfg.blur_sigma, gamma=1e-4)
    raster_settings = RasterizationSettings(
        image_size=cfg.image_size,
        blur_radius=np.log(1.0 / 1e-4 - 1.0) * blend_params.sigma,
        faces_per_pixel=cfg.faces_per_pixel,
        # coarse-to-fine rasterisation needs bin_size > 0 on GPU; 0 = naive
        bin_size=None,
        max_faces_per_bin=None,
    )
    silhouette_renderer = MeshRenderer(
        rasterizer=MeshRasterizer(cameras=cameras, raster_settings=raster_settings),
        shader=SoftSilhouetteShader(blend_params=blend_params),
    )

    phong_settings = RasterizationSettings(image_size=cfg.image_size, blur_radius=0.0, faces_per_pixel=1)
    lights = PointLights(device=device, location=((2.0, 2.0, -2.0),))
    phong_renderer = MeshRenderer(
        rasterizer=MeshRasterizer(cameras=cameras, raster_settings=phong_settings),
        shader=HardPhongShader(device=device, cameras=cameras, lights=lights),
    )
    return silhouette_renderer, phong_renderer


class CameraModel(nn.Module):
    """Holds the camera position as a learnable parameter."""

    def __init__(self, meshes, renderer, image_ref, init_position):
        super().__init__()
        self.meshes = meshes
        self.device = meshes.device
        self.renderer = renderer

        image_ref = torch.from_numpy((image_ref[..., :3].max(-1) != 1).astype(np.float32))
        self.register_buffer("image_ref", image_ref)

        self.camera_position = nn.Parameter(
            torch.from_numpy(np.array(init_position, dtype=np.float32)).to(meshes.device)
        )

    def current_rt(self):
        R = look_at_rotation(self.camera_position[None, :], device=self.device)
        T = -torch.bmm(R.transpose(1, 2), self.camera_position[None, :, None])[:, :, 0]
        return R, T

    def forward(self):
        R, T = self.current_rt()
        image = self.renderer(meshes_world=self.meshes.clone(), R=R, T=T)
        loss = torch.sum((image[..., 3] - self.image_ref) ** 2)
        return loss, image


def load_mesh(cfg, device):
    mesh = load_objs_as_meshes([cfg.obj_path], device=device, load_textures=False)
    verts = mesh.verts_padded()
    # white vertex colours so the phong render is readable
    verts_rgb = torch.ones_like(verts)
    mesh.textures = TexturesVertex(verts_features=verts_rgb)
    return mesh


def main():
    cfg = FitConfig.from_args()
    os.makedirs(cfg.out_dir, exist_ok=True)
    if cfg.seed is not None:
        torch.manual_seed(cfg.seed)
        torch.cuda.manual_seed_all(cfg.seed)

    device = torch.device(cfg.device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        print("Using", torch.cuda.get_device_name(device))

    teapot = load_mesh(cfg, device)
    cameras = FoVPerspectiveCameras(device=device)
    silhouette_renderer, phong_renderer = build_renderers(cfg, cameras, device)

    R, T = look_at_view_transform(cfg.ref_dist, cfg.ref_elev, cfg.ref_azim, device=device)
    silhouette = silhouette_renderer(meshes_world=teapot, R=R, T=T)
    image_ref = phong_renderer(meshes_world=teapot, R=R, T=T)
    silhouette = silhouette.cpu().numpy()
    image_ref = image_ref.cpu().numpy()
    imageio.imwrite(os.path.join(cfg.out_dir, "reference.png"), img_as_ubyte(image_ref.squeeze()[..., :3]))

    model = CameraModel(teapot, silhouette_renderer, image_ref, cfg.init_position).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)

    writer = imageio.get_writer(os.path.join(cfg.out_dir, "optimization.gif"), mode="I", duration=0.3) \
        if cfg.save_gif else None

    log = []
    loop = tqdm(range(cfg.iters))
    for i in loop:
        optimizer.zero_grad()
        loss, _ = model()
        loss.backward()
        optimizer.step()
        loop.set_description("Optimizing (loss %.4f)" % loss.data)
        log.append(float(loss.item()))

        if loss.item() < 200:
            break

        if writer is not None and i % 10 == 0:
            R_i, T_i = model.current_rt()
            image = phong_renderer(meshes_world=model.meshes.clone(), R=R_i, T=T_i)
            image = image[0, ..., :3].detach().squeeze().cpu().numpy()
            writer.append_data(img_as_ubyte(image))

    if writer is not None:
        writer.close()

    R_fit, _ = model.current_rt()
    angle = so3_relative_angle(R_fit, R).item()
    with open(os.path.join(cfg.out_dir, "result.json"), "w") as f:
        json.dump({
            "final_loss": log[-1] if log else None,
            "iters": len(log),
            "rotation_error_deg": math.degrees(angle),
            "camera_position": model.camera_position.detach().cpu().tolist(),
        }, f, indent=2)
    print("rotation error: %.2f deg" % math.degrees(angle))


if __name__ == "__main__":
    main()
