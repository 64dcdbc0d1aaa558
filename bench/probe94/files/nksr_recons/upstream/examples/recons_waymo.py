# Copyright (c) 2023, NVIDIA CORPORATION & AFFILIATES.  All rights reserved.
#
# NVIDIA CORPORATION & AFFILIATES and its licensors retain all intellectual property
# and proprietary rights in and to this software, related documentation
# and any modifications thereto.

"""
Reconstruct a Waymo Open Dataset driving sequence (accumulated LiDAR sweeps)
with the pretrained kitchen-sink NKSR model. Requires ~20 GB of GPU memory at
the default chunk size; reduce --chunk_size on smaller cards.

    python examples/recons_waymo.py --chunk_size 51.2 --save mesh.ply
"""

import os
import argparse

import numpy as np
import torch

import nksr
from pycg import vis, exp

from common import load_waymo_example


os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def warning_on_low_memory(threshold_mb: float):
    gpu_status = torch.cuda.mem_get_info()
    gpu_free_mb = gpu_status[0] / 1024 / 1024
    if gpu_free_mb < threshold_mb:
        exp.logger.warning(f"Available GPU memory is {gpu_free_mb:.2f} MB, "
                           f"we recommend you to have more than {threshold_mb:.2f} MB available.")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunk_size", type=float, default=51.2, help="spatial chunk (m); <=0 disables chunking")
    parser.add_argument("--detail_level", type=float, default=None)
    parser.add_argument("--mise_iter", type=int, default=1)
    parser.add_argument("--save", type=str, default=None, help="write the mesh to this .ply instead of showing it")
    parser.add_argument("--no_texture", action="store_true")
    return parser.parse_args()


def main():
    args = parse_args()
    warning_on_low_memory(20000.0)
    xyz_np, sensor_np = load_waymo_example()

    device = torch.device("cuda:0")
    reconstructor = nksr.Reconstructor(device)
    # Chunks that are not being processed are parked on the host.
    reconstructor.chunk_tmp_device = torch.device("cpu")

    input_xyz = torch.from_numpy(xyz_np).float().to(device)
    input_sensor = torch.from_numpy(sensor_np).float().to(device)

    with torch.no_grad():
        field = reconstructor.reconstruct(
            input_xyz, sensor=input_sensor, detail_level=args.detail_level,
            # Minor configs for better efficiency (not necessary)
            approx_kernel_grad=True, solver_tol=1e-4, fused_mode=True,
            # Chunked reconstruction (if OOM)
            chunk_size=args.chunk_size if args.chunk_size > 0 else -1,
            preprocess_fn=nksr.get_estimate_normal_preprocess_fn(64, 85.0)
        )

        if not args.no_texture:
            input_color = torch.ones_like(input_xyz) * 0.7
            field.set_texture_field(nksr.fields.PCNNField(input_xyz, input_color))

        mesh = field.extract_dual_mesh(mise_iter=args.mise_iter)

    exp.logger.info(f"Peak GPU memory: {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB")

    mesh = vis.mesh(mesh.v, mesh.f, color=mesh.c)
    if args.save is not None:
        vis.to_file(mesh, args.save)
    else:
        vis.show_3d([mesh], [vis.pointcloud(xyz_np)])


if __name__ == '__main__':
    main()
