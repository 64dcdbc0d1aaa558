"""Shape-aware identity extractor (SAIE) for HifiFace.

The identity vector is the concatenation of the ArcFace embedding of the source face and a
3DMM coefficient vector that mixes the *identity* coefficients of the source with the
expression / pose / lighting coefficients of the target. The 3DMM regressor is the ResNet-50
of Deep3DFaceRecon; the differentiable renderer (nvdiffrast) is only needed for the shape loss
visualisation and for the landmark-projection sanity check in `render_mesh`.
"""
from typing import List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy.io import loadmat

try:
    import nvdiffrast.torch as dr
except ImportError:  # renderer is optional for pure inference
    dr = None

from .arcface import iresnet100
from .recon_net import ReconNetWrapper


def ndc_projection(x=0.1, n=1.0, f=50.0):
    return np.array([[n / x, 0, 0, 0],
                     [0, n / -x, 0, 0],
                     [0, 0, -(f + n) / (f - n), -(2 * f * n) / (f - n)],
                     [0, 0, -1, 0]]).astype(np.float32)


class ParametricFaceModel(nn.Module):
    """Basel Face Model 2009 with the expression basis from FaceWarehouse (as in Deep3DFaceRecon)."""

    def __init__(self, bfm_folder='./BFM', recenter=True, camera_distance=10.,
                 focal=1015., center=112., default_name='BFM_model_front.mat'):
        super().__init__()
        model = loadmat(f'{bfm_folder}/{default_name}')
        mean_shape = model['meanshape'].astype(np.float32)
        if recenter:
            mean_shape = mean_shape.reshape([-1, 3])
            mean_shape = mean_shape - np.mean(mean_shape, axis=0, keepdims=True)
            mean_shape = mean_shape.reshape([-1, 1])
        self.register_buffer('mean_shape', torch.from_numpy(mean_shape))
        self.register_buffer('id_base', torch.from_numpy(model['idBase'].astype(np.float32)))
        self.register_buffer('exp_base', torch.from_numpy(model['exBase'].astype(np.float32)))
        self.register_buffer('mean_tex', torch.from_numpy(model['meantex'].astype(np.float32)))
        self.register_buffer('tex_base', torch.from_numpy(model['texBase'].astype(np.float32)))
        self.register_buffer('keypoints', torch.from_numpy(np.squeeze(model['keypoints']).astype(np.int64) - 1))
        self.register_buffer('face_buf', torch.from_numpy(model['tri'].astype(np.int64) - 1))
        self.camera_distance = camera_distance
        self.focal = focal
        self.center = center
        persc_proj = np.array([[focal, 0, center], [0, focal, center], [0, 0, 1]], dtype=np.float32).T
        self.register_buffer('persc_proj', torch.from_numpy(persc_proj))

    @staticmethod
    def split_coeff(coeffs):
        id_coeffs = coeffs[:, :80]
        exp_coeffs = coeffs[:, 80: 144]
        tex_coeffs = coeffs[:, 144: 224]
        angles = coeffs[:, 224: 227]
        gammas = coeffs[:, 227: 254]
        translations = coeffs[:, 254:]
        return {'id': id_coeffs, 'exp': exp_coeffs, 'tex': tex_coeffs,
                'angle': angles, 'gamma': gammas, 'trans': translations}

    def compute_shape(self, id_coeff, exp_coeff):
        batch_size = id_coeff.shape[0]
        id_part = torch.einsum('ij,aj->ai', self.id_base, id_coeff)
        exp_part = torch.einsum('ij,aj->ai', self.exp_base, exp_coeff)
        face_shape = id_part + exp_part + self.mean_shape.reshape([1, -1])
        return face_shape.reshape([batch_size, -1, 3])

    @staticmethod
    def compute_rotation(angles):
        batch_size = angles.shape[0]
        ones = torch.ones([batch_size, 1], device=angles.device)
        zeros = torch.zeros([batch_size, 1], device=angles.device)
        x, y, z = angles[:, :1], angles[:, 1:2], angles[:, 2:],

        rot_x = torch.cat([ones, zeros, zeros,
                           zeros, torch.cos(x), -torch.sin(x),
                           zeros, torch.sin(x), torch.cos(x)], dim=1).reshape([batch_size, 3, 3])
        rot_y = torch.cat([torch.cos(y), zeros, torch.sin(y),
                           zeros, ones, zeros,
                           -torch.sin(y), zeros, torch.cos(y)], dim=1).reshape([batch_size, 3, 3])
        rot_z = torch.cat([torch.cos(z), -torch.sin(z), zeros,
                           torch.sin(z), torch.cos(z), zeros,
                           zeros, zeros, ones], dim=1).reshape([batch_size, 3, 3])
        rot = rot_z @ rot_y @ rot_x
        return rot.permute(0, 2, 1)

    def to_camera(self, face_shape):
        face_shape[..., -1] = self.camera_distance - face_shape[..., -1]
        return face_shape

    def to_image(self, face_shape):
        face_proj = face_shape @ self.persc_proj
        face_proj = face_proj[..., :2] / face_proj[..., 2:]
        return face_proj

    def compute_landmarks(self, coeffs):
        c = self.split_coeff(coeffs)
        shape = self.compute_shape(c['id'], c['exp'])
        rotation = self.compute_rotation(c['angle'])
        shape = shape @ rotation + c['trans'].unsqueeze(1)
        shape = self.to_camera(shape)
        proj = self.to_image(shape)
        return proj[:, self.keypoints], shape


class MeshRenderer(nn.Module):
    def __init__(self, rasterize_fov, znear=0.1, zfar=10, rasterize_size=224, use_opengl=False):
        super(MeshRenderer, self).__init__()

        x = np.tan(np.deg2rad(rasterize_fov * 0.5)) * znear
        self.ndc_proj = torch.tensor(ndc_projection(x=x, n=znear, f=zfar)).matmul(
            torch.diag(torch.tensor([1., -1, -1, 1])))
        self.rasterize_size = rasterize_size
        self.use_opengl = use_opengl
        self.ctx = None

    def forward(self, vertex, tri, feat=None):
        """
        Return:
            mask               -- torch.tensor, size (B, 1, H, W)
            depth              -- torch.tensor, size (B, 1, H, W)
            features(optional) -- torch.tensor, size (B, C, H, W) if feat is not None

        Parameters:
            vertex          -- torch.tensor, size (B, N, 3)
            tri             -- torch.tensor, size (B, M, 3) or (M, 3), triangles
            feat(optional)  -- torch.tensor, size (B, C), features
        """
        device = vertex.device
        rsize = int(self.rasterize_size)
        ndc_proj = self.ndc_proj.to(device)
        # trans to homogeneous coordinates of 3d vertices, the direction of y is the same as v
        if vertex.shape[-1] == 3:
            vertex = torch.cat([vertex, torch.ones([*vertex.shape[:2], 1]).to(device)], dim=-1)
            vertex[..., 1] = -vertex[..., 1]

        vertex_ndc = vertex @ ndc_proj.t()
        if self.ctx is None:
            if self.use_opengl:
                self.ctx = dr.RasterizeGLContext(device=device)
                ctx_str = "opengl"
            else:
                self.ctx = dr.RasterizeCudaContext(device=device)
                ctx_str = "cuda"
            print("create %s ctx on device cuda:%d" % (ctx_str, device.index))

        ranges = None
        if isinstance(tri, List) or len(tri.shape) == 3:
            vum = vertex_ndc.shape[1]
            fnum = torch.tensor([f.shape[0] for f in tri]).unsqueeze(1).to(device)
            fstartidx = torch.cumsum(fnum, dim=0) - fnum
            ranges = torch.cat([fstartidx, fnum], axis=1).type(torch.int32).cpu()
            for i in range(tri.shape[0]):
                tri[i] = tri[i] + i * vum
            vertex_ndc = torch.cat(vertex_ndc, dim=0)
            tri = torch.cat(tri, dim=0)

        # for range_mode vetex: [B*N, 4], tri: [B*M, 3], for instance_mode vetex: [B, N, 4], tri: [M, 3]
        tri = tri.type(torch.int32).contiguous()
        rast_out, _ = dr.rasterize(self.ctx, vertex_ndc.contiguous(), tri, resolution=[rsize, rsize], ranges=ranges)

        depth, _ = dr.interpolate(vertex.reshape([-1, 4])[..., 2].unsqueeze(1).contiguous(), rast_out, tri)
        depth = depth.permute(0, 3, 1, 2)
        mask = (rast_out[..., 3] > 0).float().unsqueeze(1)
        depth = mask * depth

        image = None
        if feat is not None:
            image, _ = dr.interpolate(feat, rast_out, tri)
            image = image.permute(0, 3, 1, 2)
            image = mask * image

        return mask, depth, image


class ShapeAwareIdentityExtractor(nn.Module):
    def __init__(self, arcface_ckpt, recon_ckpt, bfm_folder='./BFM', with_renderer=False):
        super().__init__()
        self.arcface = iresnet100(fp16=False)
        self.arcface.load_state_dict(torch.load(arcface_ckpt, map_location='cpu'))
        self.arcface.eval()

        self.recon = ReconNetWrapper(net_recon='resnet50', use_last_fc=False)
        state = torch.load(recon_ckpt, map_location='cpu')
        self.recon.load_state_dict(state['net_recon'])
        self.recon.eval()

        self.face_model = ParametricFaceModel(bfm_folder=bfm_folder)
        self.renderer = MeshRenderer(rasterize_fov=2 * np.arctan(112. / 1015.) * 180 / np.pi,
                                     znear=5., zfar=15., rasterize_size=224) if with_renderer else None

    @torch.no_grad()
    def arcface_embed(self, img):
        """img in [-1, 1], 256x256 aligned (FFHQ style) -> 512-d normalised embedding."""
        img = F.interpolate(img[:, :, 16:240, 16:240], size=(112, 112), mode='bilinear', align_corners=False)
        return F.normalize(self.arcface(img), dim=-1, p=2)

    @torch.no_grad()
    def get_coeff3d(self, img):
        """Deep3DFaceRecon expects RGB in [0, 1] at 224x224."""
        img = (img + 1.0) / 2.0
        img = F.interpolate(img, size=(224, 224), mode='bilinear', align_corners=False)
        return self.recon(img)

    def forward(self, source, target):
        c_s = self.get_coeff3d(source)
        c_t = self.get_coeff3d(target)
        # identity from source, everything else from target
        c_fuse = torch.cat([c_s[:, :80], c_t[:, 80:]], dim=1)
        v_id = self.arcface_embed(source)
        id_feat = torch.cat([v_id, c_fuse], dim=1)
        return id_feat, {'c_s': c_s, 'c_t': c_t, 'c_fuse': c_fuse}

    def landmarks(self, coeffs):
        lm, _ = self.face_model.compute_landmarks(coeffs)
        return lm

    @torch.no_grad()
    def render_mesh(self, coeffs):
        """Grey-shaded depth render of the 3DMM mesh; used only for tensorboard visualisation."""
        if self.renderer is None:
            raise RuntimeError('ShapeAwareIdentityExtractor was built without a renderer')
        _, shape = self.face_model.compute_landmarks(coeffs)
        mask, depth, _ = self.renderer(shape, self.face_model.face_buf)
        depth = (depth - depth.amin(dim=(2, 3), keepdim=True)) * mask
        return depth / depth.amax(dim=(2, 3), keepdim=True).clamp(min=1e-6)
