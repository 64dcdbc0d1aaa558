# ==============================================================================================================
# The following snippet demonstrates how to build a Structured Point Cloud (SPC) from a mesh point sample
# and ray-trace it to produce a depth / normal / color image.
# SPC ray tracing, morton encoding and octree construction run as CUDA kernels inside kaolin._C.
# ==============================================================================================================

import argparse
import logging
import math
import time

import numpy as np
import torch
import kaolin
from kaolin.ops.spc import (
    quantize_points,
    points_to_morton,
    morton_to_points,
    unbatched_points_to_octree,
    scan_octrees,
    generate_points,
)
from kaolin.render.spc import unbatched_raytrace, mark_pack_boundaries

logger = logging.getLogger("spc_render")


def make_rays(width, height, fov, cam_pos, look_at, device):
    """Generate pinhole camera rays (origins, unit directions) in world space."""
    forward = torch.nn.functional.normalize(look_at - cam_pos, dim=0)
    up = torch.tensor([0.0, 1.0, 0.0], device=device)
    right = torch.nn.functional.normalize(torch.cross(forward, up, dim=0), dim=0)
    up = torch.cross(right, forward, dim=0)

    aspect = width / height
    scale = math.tan(math.radians(fov) * 0.5)
    ys, xs = torch.meshgrid(
        torch.linspace(1.0, -1.0, height, device=device),
        torch.linspace(-1.0, 1.0, width, device=device),
        indexing="ij",
    )
    dirs = (xs[..., None] * aspect * scale) * right + (ys[..., None] * scale) * up + forward
    dirs = torch.nn.functional.normalize(dirs, dim=-1).reshape(-1, 3)
    origins = cam_pos.expand_as(dirs).contiguous()
    return origins, dirs


def build_spc(points, colors, level):
    """Quantize points to a level-`level` grid and build the octree + per-voxel colors."""
    qpts = quantize_points(points.contiguous(), level)
    morton = points_to_morton(qpts)
    morton, keep = torch.unique(morton, return_inverse=True)
    qpts = morton_to_points(morton)
    # average colors per voxel
    feats = torch.zeros((morton.shape[0], 3), device=points.device, dtype=torch.float)
    feats.index_add_(0, keep, colors)
    counts = torch.bincount(keep, minlength=morton.shape[0]).clamp_min(1).unsqueeze(-1)
    feats = feats / counts

    octree = unbatched_points_to_octree(qpts, level, sorted=True)
    lengths = torch.tensor([len(octree)], dtype=torch.int32)
    max_level, pyramids, exsum = scan_octrees(octree, lengths)
    point_hierarchy = generate_points(octree, pyramids, exsum)
    return octree, point_hierarchy, pyramids[0], exsum, feats


def render(octree, point_hierarchy, pyramid, exsum, feats, origins, dirs, level, bg=1.0):
    t0 = time.time()
    ridx, pidx, depth = unbatched_raytrace(
        octree, point_hierarchy, pyramid, exsum, origins, dirs, level, return_depth=True, with_exit=False
    )
    torch.cuda.synchronize()
    logger.info("raytrace: %d hits in %.2f ms", ridx.shape[0], (time.time() - t0) * 1e3)

    first_hits = mark_pack_boundaries(ridx)
    ridx_hit = ridx[first_hits].long()
    pidx_hit = pidx[first_hits].long() - pyramid[1, level]
    depth_hit = depth[first_hits, 0]

    n = origins.shape[0]
    color = torch.full((n, 3), bg, device=origins.device)
    dimg = torch.zeros(n, device=origins.device)
    color[ridx_hit] = feats[pidx_hit]
    dimg[ridx_hit] = depth_hit
    return color, dimg


def load_point_sample(path, num_points, device):
    if path.endswith(".obj"):
        mesh = kaolin.io.obj.import_mesh(path)
        vertices = mesh.vertices.to(device).unsqueeze(0)
        faces = mesh.faces.to(device)
        # normalise to [-1, 1]
        vmin, vmax = vertices.min(dim=1, keepdim=True)[0], vertices.max(dim=1, keepdim=True)[0]
        vertices = (vertices - (vmin + vmax) / 2) / ((vmax - vmin).max() / 2) * 0.95
        pts, face_idx = kaolin.ops.mesh.sample_points(vertices, faces, num_points)
        colors = (pts[0] + 1.0) / 2.0
        return pts[0], colors
    data = np.load(path)
    pts = torch.from_numpy(data["points"]).float().cuda()
    colors = torch.from_numpy(data["colors"]).float().cuda()
    return pts, colors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", required=True, help="mesh (.obj) or .npz point sample")
    parser.add_argument("--level", type=int, default=8)
    parser.add_argument("--num-points", type=int, default=1_000_000)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--height", type=int, default=1024)
    parser.add_argument("--fov", type=float, default=30.0)
    parser.add_argument("--out", default="spc_render.png")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    if not torch.cuda.is_available():
        raise RuntimeError("SPC ray tracing requires a CUDA device")
    device = "cuda"

    pts, colors = load_point_sample(args.input, args.num_points, device)
    octree, ph, pyramid, exsum, feats = build_spc(pts, colors, args.level)
    logger.info("octree: %d nodes, %d voxels at level %d", octree.shape[0], feats.shape[0], args.level)

    cam_pos = torch.tensor([2.5, 1.5, 2.5], device=device)
    look_at = torch.zeros(3, device=device)
    origins, dirs = make_rays(args.width, args.height, args.fov, cam_pos, look_at, device)

    with torch.no_grad():
        color, depth = render(octree, ph, pyramid, exsum, feats, origins, dirs, args.level)

    img = (color.reshape(args.height, args.width, 3).clamp(0, 1) * 255).byte().cpu().numpy()
    try:
        from PIL import Image
        Image.fromarray(img).save(args.out)
    except ImportError:
        np.save(args.out.replace(".png", ".npy"), img)
    logger.info("peak GPU memory: %.1f MB", torch.cuda.max_memory_allocated() / 2 ** 20)


if __name__ == "__main__":
    main()
