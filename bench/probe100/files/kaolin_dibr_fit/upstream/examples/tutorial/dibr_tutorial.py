# Copyright (c) 2021, NVIDIA CORPORATION & AFFILIATES.  All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Optimize a textured sphere into a target shape using the DIB-R differentiable rasterizer.

Converted from the Jupyter tutorial. Renders of the target object (RGB, alpha
and camera metadata) are produced beforehand with the Omniverse Kaolin app and
read with ``kaolin.io.render.import_synthetic_view``.
"""

import argparse
import glob
import json
import math
import os

import numpy as np
import torch
from matplotlib import pyplot as plt
from PIL import Image

import kaolin as kal

# path to the rendered image (using the data synthesizer)
rendered_path = "../samples/rendered_clock/"
# path to the output logs (readable with the training visualizer in the omniverse app)
logs_path = './logs/'

# We initialize the timelapse that will store USD for the visualization apps
timelapse = kal.visualize.Timelapse(logs_path)

# Hyperparameters
num_epoch = 40
batch_size = 2
laplacian_weight = 0.1
flat_weight = 0.001
image_weight = 0.1
mask_weight = 1.
lr = 5e-2
scheduler_step_size = 15
scheduler_gamma = 0.5

texture_res = 400

# select camera angle for best visualization
test_batch_ids = [2, 5, 10]
test_batch_size = len(test_batch_ids)


def parse_args():
    parser = argparse.ArgumentParser(description="DIB-R mesh + texture fitting")
    parser.add_argument("--rendered-path", default=rendered_path)
    parser.add_argument("--logs-path", default=logs_path)
    parser.add_argument("--num-epoch", type=int, default=num_epoch)
    parser.add_argument("--gpu", type=int, default=0, help="index of the CUDA device to use")
    parser.add_argument("--sigmainv", type=float, default=7000, help="DIB-R soft-mask sharpness")
    return parser.parse_args()


class SyntheticViewDataset(torch.utils.data.Dataset):
    def __init__(self, root, num_views=100):
        self.root = root
        self.num_views = num_views

    def __len__(self):
        return self.num_views

    def __getitem__(self, idx):
        data = kal.io.render.import_synthetic_view(
            self.root, idx, rgb=True, semantic=True)
        return {
            'rgb': data['rgb'],
            'semantic': data['semantic'],
            'metadata': data['metadata'],
        }


def build_template(device):
    """Sphere template with UVs; every parameter lives on the training device."""
    mesh = kal.io.obj.import_mesh('../samples/sphere.obj', with_materials=True)
    # the sphere is usually too small (this is fine-tuned for the clock)
    vertices = mesh.vertices.to(device).unsqueeze(0) * 75
    vertices.requires_grad = True
    faces = mesh.faces.to(device)
    uvs = mesh.uvs.to(device).unsqueeze(0)
    face_uvs_idx = mesh.face_uvs_idx.to(device)

    face_uvs = kal.ops.mesh.index_vertices_by_faces(uvs, face_uvs_idx).detach()
    face_uvs.requires_grad = False

    texture_map = torch.ones((1, 3, texture_res, texture_res), dtype=torch.float, device=device,
                             requires_grad=True)

    # The topology of the mesh and the uvs are constant
    # so we can initialize them on the first iteration only
    return vertices, faces, face_uvs, texture_map


def main():
    args = parse_args()
    device = torch.device("cuda", args.gpu)
    torch.cuda.set_device(device)

    train_data = SyntheticViewDataset(args.rendered_path)
    dataloader = torch.utils.data.DataLoader(train_data, batch_size=batch_size,
                                             shuffle=True, pin_memory=True)

    vertices, faces, face_uvs, texture_map = build_template(device)
    nb_faces = faces.shape[0]
    nb_vertices = vertices.shape[1]

    vertices_init = vertices.detach()
    vertices_init.requires_grad = False

    # Separate vertices center as a learnable parameter
    vertices_translation = torch.zeros((1, 1, 3), dtype=torch.float, device=device, requires_grad=True)

    # This is the center of the optimized mesh, separating it as a learnable parameter helps the optimization.
    vertice_shift = torch.zeros((3,), dtype=torch.float, device='cuda',
                                requires_grad=True)

    ## Separate translation and shift for better optimization
    adj_sparse = kal.ops.mesh.adjacency_matrix(nb_vertices, faces).to(device)
    vertices_laplacian_matrix = adj_sparse.to_dense().float()
    vertices_laplacian_matrix = torch.diag(
        vertices_laplacian_matrix.sum(dim=1)) - vertices_laplacian_matrix

    optim = torch.optim.Adam(params=[vertices, texture_map, vertice_shift],
                             lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optim, step_size=scheduler_step_size,
                                                gamma=scheduler_gamma)

    for epoch in range(args.num_epoch):
        for idx, data in enumerate(dataloader):
            optim.zero_grad()
            gt_image = data['rgb'].cuda()
            gt_mask = data['semantic'].cuda()
            cam_transform = data['metadata']['cam_transform'].cuda()
            cam_proj = data['metadata']['cam_proj'].cuda()

            ### Prepare mesh data with projection regarding to camera ###
            vertices_batch = (vertices - vertices_init.mean(dim=1, keepdim=True)) + vertice_shift + vertices_init.mean(dim=1, keepdim=True)

            face_vertices_camera, face_vertices_image, face_normals = \
                kal.render.mesh.prepare_vertices(
                    vertices_batch.repeat(batch_size, 1, 1),
                    faces, cam_proj, camera_transform=cam_transform
                )

            ### Perform Rasterization ###
            # Construct attributes that DIB-R rasterizer will interpolate.
            # the first is the UVS associated to each face
            # the second will make a hard segmentation mask
            face_attributes = [
                face_uvs.repeat(batch_size, 1, 1, 1),
                torch.ones((batch_size, nb_faces, 3, 1), device='cuda')
            ]

            # If you have nvdiffrast installed you can change rast_backend to
            # nvdiffrast or nvdiffrast_fwd
            image_features, soft_mask, face_idx = kal.render.mesh.dibr_rasterization(
                gt_image.shape[1], gt_image.shape[2], face_vertices_camera[:, :, :, -1],
                face_vertices_image, face_attributes, face_normals[:, :, -1],
                rast_backend='cuda', sigmainv=args.sigmainv)

            # image_features is a tuple in composed of the interpolated attributes of face_attributes
            texture_coords, mask = image_features
            image = kal.render.mesh.texture_mapping(texture_coords,
                                                    texture_map.repeat(batch_size, 1, 1, 1),
                                                    mode='bilinear')
            image = torch.clamp(image * mask, 0., 1.)

            ### Compute Losses ###
            image_loss = torch.mean(torch.abs(image - gt_image))
            mask_loss = kal.metrics.render.mask_iou(soft_mask,
                                                    gt_mask.squeeze(-1))
            # laplacian loss
            vertices_mov = vertices - vertices_init
            vertices_mov_laplacian = torch.matmul(vertices_laplacian_matrix, vertices_mov)
            laplacian_loss = torch.mean(vertices_mov_laplacian ** 2) * nb_vertices * 3

            loss = (
                image_loss * image_weight +
                mask_loss * mask_weight +
                laplacian_loss * laplacian_weight
            )
            ### Update the mesh ###
            loss.backward()
            optim.step()

        scheduler.step()
        print(f"Epoch {epoch} - loss: {float(loss)}")

        ### Write 3D Checkpoints ###
        pbr_material = [
            {'rgb': kal.io.materials.PBRMaterial(diffuse_texture=torch.clamp(texture_map[0], 0., 1.))}
        ]

        vertices_batch = (vertices - vertices_init.mean(dim=1, keepdim=True)) + vertice_shift + vertices_init.mean(dim=1, keepdim=True)

        timelapse.add_mesh_batch(
            category='optimized_mesh',
            iteration=epoch + 1,
            faces_list=[faces.cpu()],
            vertices_list=[vertices_batch[0].cpu()],
            materials_list=pbr_material
        )

    torch.cuda.synchronize()
    visualize(args, vertices, faces, face_uvs, texture_map, vertice_shift, vertices_init, train_data)


def visualize(args, vertices, faces, face_uvs, texture_map, vertice_shift, vertices_init, train_data):
    with torch.no_grad():
        # This is similar to a training iteration (without the loss part)
        data_batch = [train_data[idx] for idx in test_batch_ids]
        cam_transform = torch.stack([data['metadata']['cam_transform'] for data in data_batch], dim=0).cuda()
        cam_proj = torch.stack([data['metadata']['cam_proj'] for data in data_batch], dim=0).cuda()
        nb_faces = faces.shape[0]

        vertices_batch = (vertices - vertices_init.mean(dim=1, keepdim=True)) + vertice_shift + vertices_init.mean(dim=1, keepdim=True)

        face_vertices_camera, face_vertices_image, face_normals = \
            kal.render.mesh.prepare_vertices(
                vertices_batch.repeat(test_batch_size, 1, 1),
                faces, cam_proj, camera_transform=cam_transform
            )

        face_attributes = [
            face_uvs.repeat(test_batch_size, 1, 1, 1),
            torch.ones((test_batch_size, nb_faces, 3, 1), device=vertices.device)
        ]

        image_features, soft_mask, face_idx = kal.render.mesh.dibr_rasterization(256, 256,
            face_vertices_camera[:, :, :, -1],
            face_vertices_image, face_attributes, face_normals[:, :, -1],
            sigmainv=args.sigmainv)

        texture_coords, mask = image_features
        image = kal.render.mesh.texture_mapping(texture_coords,
                                                texture_map.repeat(test_batch_size, 1, 1, 1),
                                                mode='bilinear')
        image = torch.clamp(image * mask, 0., 1.)

        ## Display the rendered images
        f, axarr = plt.subplots(1, test_batch_size, figsize=(7, 22))
        f.subplots_adjust(top=0.99, bottom=0.79, left=0., right=1.4)
        f.suptitle('DIB-R rendering', fontsize=30)
        for i in range(test_batch_size):
            axarr[i].imshow(image[i].cpu().detach())

    ## Display the texture
    plt.figure(figsize=(10, 10))
    plt.title('2D Texture Map', fontsize=30)
    plt.imshow(torch.clamp(texture_map[0], 0., 1.).cpu().detach().permute(1, 2, 0))
    plt.savefig(os.path.join(args.logs_path, "dibr_result.png"))


if __name__ == '__main__':
    main()
