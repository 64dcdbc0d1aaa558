"""Fit a template sphere to multi-view silhouettes and colours with Kaolin's DIB-R
rasterizer. Loosely follows the Kaolin "DIB-R tutorial" notebook, turned into a script.

    python dibr_fit_mesh.py --rendered-path data/renders --iters 400
"""
import argparse
import glob
import json
import os

import numpy as np
import torch
import kaolin as kal
from PIL import Image

parser = argparse.ArgumentParser(description="DIB-R mesh fitting (needs a GPU for fast rasterization)")
parser.add_argument("--rendered-path", type=str, default="data/renders")
parser.add_argument("--template", type=str, default="data/sphere.obj")
parser.add_argument("--iters", type=int, default=400)
parser.add_argument("--batch-size", type=int, default=2)
parser.add_argument("--lr", type=float, default=5e-2)
parser.add_argument("--laplacian-weight", type=float, default=0.1)
parser.add_argument("--flat-weight", type=float, default=1e-3)
parser.add_argument("--image-weight", type=float, default=0.1)
parser.add_argument("--mask-weight", type=float, default=1.0)
parser.add_argument("--out", type=str, default="logs/dibr")
args = parser.parse_args()

device = "cuda"

# ----------------------------------------------------------------------------
# Dataset: images + camera poses rendered with Kaolin's Omniverse app
# ----------------------------------------------------------------------------

class RenderedViews(torch.utils.data.Dataset):
    def __init__(self, root):
        self.files = sorted(glob.glob(os.path.join(root, "*_rgb.png")))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        rgb_path = self.files[idx]
        meta_path = rgb_path.replace("_rgb.png", "_metadata.json")
        rgba = np.asarray(Image.open(rgb_path)).astype(np.float32) / 255.0
        with open(meta_path) as f:
            meta = json.load(f)
        return {
            "rgb": torch.from_numpy(rgba[..., :3]),
            "mask": torch.from_numpy(rgba[..., 3:]),
            "cam_transform": torch.tensor(meta["cam_transform"], dtype=torch.float32),
            "cam_proj": torch.tensor(meta["cam_proj"], dtype=torch.float32),
        }


dataset = RenderedViews(args.rendered_path)
loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                                     pin_memory=True, num_workers=4)

# ----------------------------------------------------------------------------
# Template mesh
# ----------------------------------------------------------------------------

mesh = kal.io.obj.import_mesh(args.template, with_materials=True)
vertices = mesh.vertices.cuda().unsqueeze(0)
faces = mesh.faces.cuda()
uvs = mesh.uvs.cuda().unsqueeze(0)
face_uvs_idx = mesh.face_uvs_idx.cuda()
face_uvs = kal.ops.mesh.index_vertices_by_faces(uvs, face_uvs_idx).detach()
face_uvs.requires_grad = False

texture_map = torch.ones((1, 3, 256, 256), dtype=torch.float, device=device, requires_grad=True)
vertices_init = vertices.clone()
vertices.requires_grad = True

nb_faces = faces.shape[0]
vertices_laplacian_matrix = kal.ops.mesh.uniform_laplacian(vertices.shape[1], faces)

optim = torch.optim.Adam(params=[vertices, texture_map], lr=args.lr)
scheduler = torch.optim.lr_scheduler.StepLR(optim, step_size=200, gamma=0.5)


def render(vertices, cam_transform, cam_proj):
    face_vertices_camera, face_vertices_image, face_normals = kal.render.mesh.prepare_vertices(
        vertices.repeat(cam_transform.shape[0], 1, 1), faces,
        cam_proj, camera_transform=cam_transform,
    )
    face_attributes = [
        face_uvs.repeat(cam_transform.shape[0], 1, 1, 1),
        torch.ones((cam_transform.shape[0], nb_faces, 3, 1), device=device),
    ]
    image_features, soft_mask, face_idx = kal.render.mesh.dibr_rasterization(
        256, 256, face_vertices_camera[:, :, :, -1], face_vertices_image,
        face_attributes, face_normals[:, :, -1],
        rast_backend="cuda",
    )
    texture_coords, mask = image_features
    image = kal.render.mesh.texture_mapping(texture_coords, texture_map.repeat(cam_transform.shape[0], 1, 1, 1),
                                            mode="bilinear")
    image = torch.clamp(image * mask, 0.0, 1.0)
    return image, soft_mask


def laplacian_loss(vertices):
    delta = vertices - vertices_init
    lap = torch.matmul(vertices_laplacian_matrix, delta.squeeze(0))
    return torch.mean(lap ** 2) * nb_faces * 3


os.makedirs(args.out, exist_ok=True)
for epoch in range(args.iters):
    for data in loader:
        optim.zero_grad()
        gt_image = data["rgb"].cuda()
        gt_mask = data["mask"].cuda()
        cam_transform = data["cam_transform"].cuda()
        cam_proj = data["cam_proj"].cuda()

        image, soft_mask = render(vertices, cam_transform, cam_proj)
        image_loss = torch.mean(torch.abs(image - gt_image))
        mask_loss = kal.metrics.render.mask_iou(soft_mask, gt_mask.squeeze(-1))
        lap = laplacian_loss(vertices)
        loss = (image_loss * args.image_weight + mask_loss * args.mask_weight
                + lap * args.laplacian_weight)
        loss.backward()
        optim.step()
    scheduler.step()

    if epoch % 20 == 0:
        with torch.no_grad():
            pts = kal.ops.mesh.sample_points(vertices, faces, 5000)[0]
            ref = kal.ops.mesh.sample_points(vertices_init, faces, 5000)[0]
            cd = kal.metrics.pointcloud.chamfer_distance(pts, ref).mean()
        print(f"epoch {epoch:04d}  loss {loss.item():.4f}  chamfer-to-init {cd.item():.5f} "
              f"mem {torch.cuda.max_memory_allocated() / 2**20:.0f}MB")

np.save(os.path.join(args.out, "vertices.npy"), vertices.detach().cpu().numpy())
np.save(os.path.join(args.out, "texture.npy"), texture_map.detach().cpu().numpy())
