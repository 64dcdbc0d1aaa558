"""Multi-view SMPL-X fitting with differentiable silhouette / normal rendering.

Fits SMPL-X pose, shape, expression and global translation to calibrated
multi-view masks and 2D keypoints (OpenPose BODY_25 + hands + face). The
rasterisation is done with nvdiffrast, which is a lot faster than the
pytorch3d soft rasterizer for >1k resolution masks.

    python fitting/fit_smplx_nvdiffrast.py --data_dir data/seq01 --out_dir out/seq01 --gpu 0
"""
import argparse
import glob
import json
import os
import os.path as osp
import time

import cv2
import numpy as np
import smplx
import torch
import torch.nn.functional as F
import trimesh
from tqdm import tqdm

import nvdiffrast.torch as dr

from fitting.priors import MaxMixturePrior, L2Prior
from fitting.utils import load_cameras, load_openpose, rot6d_to_matrix, matrix_to_axis_angle


def get_args():
    parser = argparse.ArgumentParser(description='SMPL-X multi-view fitting (nvdiffrast)')
    parser.add_argument('--data_dir', type=str, required=True)
    parser.add_argument('--out_dir', type=str, required=True)
    parser.add_argument('--model_dir', type=str, default='data/body_models')
    parser.add_argument('--gender', type=str, default='neutral')
    parser.add_argument('--gpu', type=int, default=0, help='which GPU to run on')
    parser.add_argument('--res', type=int, default=1024, help='rendering resolution (long side)')
    parser.add_argument('--iters', type=int, nargs=3, default=[200, 300, 300],
                        help='iterations for (global, body, full) stages')
    parser.add_argument('--lr', type=float, default=1e-2)
    parser.add_argument('--w_mask', type=float, default=1.0)
    parser.add_argument('--w_kp2d', type=float, default=1e-3)
    parser.add_argument('--w_pose_prior', type=float, default=1e-3)
    parser.add_argument('--w_shape_prior', type=float, default=1e-2)
    parser.add_argument('--amp', action='store_true', help='fp16 autocast for the keypoint / prior losses')
    parser.add_argument('--opengl', action='store_true',
                        help='use the OpenGL rasterizer context instead of the CUDA one (needs an X/EGL display)')
    parser.add_argument('--save_every', type=int, default=100)
    return parser.parse_args()


def perspective(K, w, h, near=0.01, far=100.0, device='cuda'):
    """OpenCV intrinsics -> OpenGL clip-space projection matrix."""
    fx, fy, cx, cy = K[0, 0], K[1, 1], K[0, 2], K[1, 2]
    P = torch.zeros(4, 4, device=device)
    P[0, 0] = 2 * fx / w
    P[1, 1] = -2 * fy / h
    P[0, 2] = 1 - 2 * cx / w
    P[1, 2] = 2 * cy / h - 1
    P[2, 2] = -(far + near) / (far - near)
    P[2, 3] = -2 * far * near / (far - near)
    P[3, 2] = -1.0
    return P


class NvdiffrastRenderer:
    def __init__(self, faces, cameras, res, device, use_opengl=False):
        self.device = device
        self.faces = torch.as_tensor(faces.astype(np.int32), device=device)
        if use_opengl:
            self.glctx = dr.RasterizeGLContext(device=device)
        else:
            self.glctx = dr.RasterizeCudaContext(device=device)
        self.mvps = []
        self.sizes = []
        for cam in cameras:
            h, w = cam['height'], cam['width']
            scale = res / max(h, w)
            rh, rw = int(round(h * scale)) // 8 * 8, int(round(w * scale)) // 8 * 8
            K = torch.as_tensor(cam['K'], dtype=torch.float32, device=device).clone()
            K[:2] *= scale
            Rt = torch.eye(4, device=device)
            Rt[:3, :3] = torch.as_tensor(cam['R'], dtype=torch.float32, device=device)
            Rt[:3, 3] = torch.as_tensor(cam['t'], dtype=torch.float32, device=device).view(-1)
            # OpenCV -> OpenGL camera axes
            flip = torch.diag(torch.tensor([1.0, -1.0, -1.0, 1.0], device=device))
            self.mvps.append(perspective(K, rw, rh, device=device) @ flip @ Rt)
            self.sizes.append((rh, rw))

    def to_clip(self, verts, view):
        verts_h = F.pad(verts, (0, 1), value=1.0)
        return torch.matmul(verts_h, self.mvps[view].t())[None]

    def render_mask(self, verts, view):
        pos_clip = self.to_clip(verts, view)
        rast, _ = dr.rasterize(self.glctx, pos_clip, self.faces, resolution=list(self.sizes[view]))
        mask = (rast[..., 3:] > 0).float()
        mask = dr.antialias(mask, rast, pos_clip, self.faces)
        return mask[0, ..., 0]

    def render_normal(self, verts, vert_normals, view):
        pos_clip = self.to_clip(verts, view)
        h, w = self.sizes[view]
        rast, _ = dr.rasterize(self.glctx, pos_clip, self.faces, resolution=[h, w])
        nrm, _ = dr.interpolate(vert_normals[None].contiguous(), rast, self.faces)
        nrm = F.normalize(nrm, dim=-1)
        nrm = dr.antialias(nrm, rast, pos_clip, self.faces)
        return nrm[0]


def compute_vertex_normals(verts, faces):
    v0, v1, v2 = verts[faces[:, 0]], verts[faces[:, 1]], verts[faces[:, 2]]
    fn = torch.cross(v1 - v0, v2 - v0, dim=-1)
    vn = torch.zeros_like(verts)
    vn.index_add_(0, faces[:, 0], fn)
    vn.index_add_(0, faces[:, 1], fn)
    vn.index_add_(0, faces[:, 2], fn)
    return F.normalize(vn, dim=-1)


def project_points(joints, cam, device):
    R = torch.as_tensor(cam['R'], dtype=torch.float32, device=device)
    t = torch.as_tensor(cam['t'], dtype=torch.float32, device=device).view(1, 3)
    K = torch.as_tensor(cam['K'], dtype=torch.float32, device=device)
    pc = joints @ R.t() + t
    uv = pc @ K.t()
    return uv[:, :2] / uv[:, 2:3].clamp(min=1e-6)


def main():
    args = get_args()
    os.makedirs(args.out_dir, exist_ok=True)

    assert torch.cuda.is_available(), 'nvdiffrast fitting needs a CUDA device'
    torch.cuda.set_device(args.gpu)
    device = torch.device('cuda', args.gpu)
    torch.backends.cuda.matmul.allow_tf32 = False  # keep the fitting in full fp32

    cameras = load_cameras(osp.join(args.data_dir, 'cameras.json'))
    masks = []
    for cam in cameras:
        m = cv2.imread(osp.join(args.data_dir, 'masks', cam['name'] + '.png'), cv2.IMREAD_GRAYSCALE)
        masks.append(m)
    keypoints = load_openpose(osp.join(args.data_dir, 'keypoints'), [c['name'] for c in cameras])

    body_model = smplx.create(args.model_dir, model_type='smplx', gender=args.gender,
                              use_pca=False, use_face_contour=True, num_betas=10,
                              num_expression_coeffs=10, batch_size=1).to(device)
    faces = body_model.faces

    renderer = NvdiffrastRenderer(faces, cameras, args.res, device, use_opengl=args.opengl)

    gt_masks = []
    for view, m in enumerate(masks):
        rh, rw = renderer.sizes[view]
        m = cv2.resize(m, (rw, rh), interpolation=cv2.INTER_NEAREST)
        gt_masks.append(torch.from_numpy(m > 127).float().pin_memory().to(device, non_blocking=True))

    kp2d = [torch.as_tensor(k, dtype=torch.float32).cuda() for k in keypoints]

    pose_prior = MaxMixturePrior(prior_folder='data/priors', num_gaussians=8).to(device)
    shape_prior = L2Prior()

    params = {
        'global_orient': torch.zeros(1, 3, device=device, requires_grad=True),
        'transl': torch.zeros(1, 3, device=device, requires_grad=True),
        'body_pose': torch.zeros(1, 63, device=device, requires_grad=True),
        'betas': torch.zeros(1, 10, device=device, requires_grad=True),
        'left_hand_pose': torch.zeros(1, 45, device=device, requires_grad=True),
        'right_hand_pose': torch.zeros(1, 45, device=device, requires_grad=True),
        'expression': torch.zeros(1, 10, device=device, requires_grad=True),
        'jaw_pose': torch.zeros(1, 3, device=device, requires_grad=True),
    }
    stages = [
        ('global', ['global_orient', 'transl'], args.iters[0]),
        ('body', ['global_orient', 'transl', 'body_pose', 'betas'], args.iters[1]),
        ('full', list(params.keys()), args.iters[2]),
    ]

    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    t_start = time.time()
    for stage_name, keys, n_iter in stages:
        optimizer = torch.optim.Adam([params[k] for k in keys], lr=args.lr, fused=True)
        pbar = tqdm(range(n_iter), desc=stage_name)
        for it in pbar:
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.amp):
                out = body_model(**params, return_verts=True)
                verts = out.vertices[0]
                joints = out.joints[0]

                loss_kp = 0.0
                for view, cam in enumerate(cameras):
                    uv = project_points(joints[:kp2d[view].shape[0]], cam, device)
                    conf = kp2d[view][:, 2:3]
                    loss_kp = loss_kp + (conf * (uv - kp2d[view][:, :2]) ** 2).sum()
                loss_pose = pose_prior(params['body_pose'], params['betas']).mean()
                loss_shape = shape_prior(params['betas']).mean()

            # silhouettes are rendered in fp32: nvdiffrast does not take half inputs
            loss_mask = 0.0
            if stage_name != 'global':
                for view in range(len(cameras)):
                    pred = renderer.render_mask(verts.float(), view)
                    loss_mask = loss_mask + F.mse_loss(pred, gt_masks[view])

            loss = args.w_kp2d * loss_kp + args.w_mask * loss_mask + \
                args.w_pose_prior * loss_pose + args.w_shape_prior * loss_shape
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            pbar.set_postfix(loss=f'{loss.item():.4f}', kp=f'{float(loss_kp):.2f}', mask=f'{float(loss_mask):.4f}')

            if (it + 1) % args.save_every == 0:
                with torch.no_grad():
                    vn = compute_vertex_normals(verts.float(), renderer.faces.long())
                    nrm = renderer.render_normal(verts.float(), vn, 0)
                    img = ((nrm * 0.5 + 0.5).clamp(0, 1) * 255).byte().cpu().numpy()
                    cv2.imwrite(osp.join(args.out_dir, f'{stage_name}_{it + 1:04d}_normal.png'), img[..., ::-1])

    torch.cuda.synchronize()
    print(f'fitting took {time.time() - t_start:.1f}s, peak mem {torch.cuda.max_memory_allocated() / 2 ** 20:.0f} MB')

    with torch.no_grad():
        out = body_model(**params, return_verts=True)
    mesh = trimesh.Trimesh(out.vertices[0].cpu().numpy(), faces, process=False)
    mesh.export(osp.join(args.out_dir, 'smplx_fit.obj'))
    np.savez(osp.join(args.out_dir, 'smplx_params.npz'), **{k: v.detach().cpu().numpy() for k, v in params.items()})


if __name__ == '__main__':
    main()
