import time
import warnings

import faiss
import faiss.contrib.torch_utils
import numpy as np
import torch

from src.common import get_rays_from_uv, sample_pdf

warnings.filterwarnings("ignore", category=UserWarning)


class NeuralPointCloud(object):
    def __init__(self, cfg):
        self.cfg = cfg
        self.c_dim = cfg['model']['c_dim']
        self.device = cfg['mapping']['device']
        self.cuda_id = 0
        self.use_dynamic_radius = cfg['use_dynamic_radius']
        self.nn_num = cfg['pointcloud']['nn_num']

        self.nlist = cfg['pointcloud']['nlist']
        self.radius_add = cfg['pointcloud']['radius_add']
        self.radius_min = cfg['pointcloud']['radius_min']
        self.radius_query = cfg['pointcloud']['radius_query']
        self.fix_interval_when_add_along_ray = cfg['pointcloud']['fix_interval_when_add_along_ray']

        self.N_surface = cfg['rendering']['N_surface']
        self.N_add = cfg['pointcloud']['N_add']
        self.near_end_surface = cfg['pointcloud']['near_end_surface']
        self.far_end_surface = cfg['pointcloud']['far_end_surface']

        self._cloud_pos = []     # (input_pos) * N_add
        self._input_pos = []     # to save locations of the depth input
        self._input_rgb = []     # to save locations of the rgb input at the depth input
        self._pts_num = 0        # number of points in neural point cloud
        self.geo_feats = None
        self.col_feats = None
        self.keyframe_dict = []

        self.resource = faiss.StandardGpuResources()
        self.index = faiss.index_cpu_to_gpu(self.resource,
                                            self.cuda_id,
                                            faiss.IndexIVFFlat(faiss.IndexFlatL2(3), 3, self.nlist, faiss.METRIC_L2))
        self.index.nprobe = cfg['pointcloud']['nprobe']
        from src.common import setup_seed
        setup_seed(cfg["setup_seed"])

    def cloud_pos(self, index=None):
        if index is None:
            return self._cloud_pos
        return self._cloud_pos[index]

    def input_pos(self):
        return self._input_pos

    def input_rgb(self):
        return self._input_rgb

    def pts_num(self):
        return self._pts_num

    def set_nprobe(self, nprobe):
        self.index.nprobe = nprobe

    def get_device(self):
        return self.device

    def get_c_dim(self):
        return self.c_dim

    def get_radius_query(self):
        return self.radius_query

    def get_index(self):
        return self.index

    def index_train(self, xb):
        assert torch.is_tensor(xb), 'use tensor to train FAISS index'
        self.index.train(xb)
        return self.index.is_trained

    def index_ntotal(self):
        return self.index.ntotal

    def index_set_nprobe(self, value):
        self.index.nprobe = value

    def index_get_nprobe(self):
        return self.index.nprobe

    def add_neural_points(self, batch_rays_o, batch_rays_d, batch_gt_depth, batch_gt_color,
                          train=False, is_pts_grad=False, dynamic_radius=None):
        """
        Add multiple neural points, will use depth filter when getting these samples.

        Args:
            batch_rays_o (tensor): ray origins (N,3)
            batch_rays_d (tensor): ray directions (N,3)
            batch_gt_depth (tensor): sensor depth (N,)
            batch_gt_color (tensor): sensor color (N,3)
            train (bool): whether to update the FAISS index
            is_pts_grad (bool): the points are chosen based on color gradient
            dynamic_radius (tensor): choose every radius differently based on its color gradient

        """

        if batch_rays_o.shape[0]:
            mask = batch_gt_depth > 0
            batch_gt_color = batch_gt_color*255
            batch_rays_o, batch_rays_d, batch_gt_depth, batch_gt_color = \
                batch_rays_o[mask], batch_rays_d[mask], batch_gt_depth[mask], batch_gt_color[mask]

            pts_gt = batch_rays_o[..., None, :] + batch_rays_d[...,
                                                              None, :] * batch_gt_depth[..., None, None]
            mask = torch.ones(pts_gt.shape[0], device=self.device).bool()
            pts_gt = pts_gt.reshape(-1, 3)
            if self.index.is_trained:
                _, _, neighbor_num_gt = self.find_neighbors_faiss(
                    pts_gt, step='add', is_pts_grad=is_pts_grad, dynamic_radius=dynamic_radius)
                mask = (neighbor_num_gt == 0)

            self._input_pos.extend(pts_gt[mask].tolist())
            self._input_rgb.extend(batch_gt_color[mask].tolist())

            gt_depth_surface = batch_gt_depth.unsqueeze(
                -1).repeat(1, self.N_add)
            t_vals_surface = torch.linspace(
                0.0, 1.0, steps=self.N_add, device=self.device)

            if self.fix_interval_when_add_along_ray:
                # add along ray, interval unrelated to depth
                intervals = torch.linspace(-0.04, 0.04, steps=self.N_add,
                                           device=self.device).unsqueeze(0)
                z_vals = gt_depth_surface + intervals
            else:  # add along ray, interval related to depth
                z_vals_surface = self.near_end_surface*gt_depth_surface * (1.-t_vals_surface) + \
                    self.far_end_surface * \
                    gt_depth_surface * (t_vals_surface)
                z_vals = z_vals_surface

            pts = batch_rays_o[..., None, :] + \
                batch_rays_d[..., None, :] * z_vals[..., :, None]
            pts = pts[mask]  # use mask from pts_gt for auxiliary points
            pts = pts.reshape(-1, 3)

            self._cloud_pos += pts.tolist()
            self._pts_num += pts.shape[0]

            if self.geo_feats is None:
                self.geo_feats = torch.zeros(
                    [self._pts_num, self.c_dim], device=self.device).normal_(mean=0, std=0.1)
                self.col_feats = torch.zeros(
                    [self._pts_num, self.c_dim], device=self.device).normal_(mean=0, std=0.1)
            else:
                self.geo_feats = torch.cat([self.geo_feats,
                                            torch.zeros([pts.shape[0], self.c_dim],
                                                        device=self.device).normal_(mean=0, std=0.1)], 0)
                self.col_feats = torch.cat([self.col_feats,
                                            torch.zeros([pts.shape[0], self.c_dim],
                                                        device=self.device).normal_(mean=0, std=0.1)], 0)

            if train or not self.index.is_trained:
                self.index.train(pts)
            self.index.add(pts)
            return torch.sum(mask)
        else:
            return 0

    def update_points(self, idxs, geo_feats, col_feats, detach=True):
        """
        Update point features by new tensors.

        Args:
            idxs (list): the index of points to be updated.
            geo_feats (tensor): new geometric features.
            col_feats (tensor): new color features.
            detach (bool): whether to detach from the optimization graph.
        """
        assert torch.is_tensor(geo_feats)
        if detach:
            geo_feats = geo_feats.clone().detach()
            col_feats = col_feats.clone().detach()
        self.geo_feats[idxs] = geo_feats
        self.col_feats[idxs] = col_feats

    def find_neighbors_faiss(self, pos, step='add', retain_grad=False, is_pts_grad=False, dynamic_radius=None):
        """
        Query neighbors using faiss.

        Args:
            pos (tensor): points to find neighbors
            step (str): 'add'|'query'
            retain_grad (bool, optional): if to retain gradient for the distance output
            is_pts_grad (bool, optional): if the points are chosen based on grad
            dynamic_radius (tensor, optional): choose every radius differently based on its color gradient

        Returns:
            D: distances to neighbors for the positions in pos
            I: indices of neighbors for the positions in pos
            neighbor_num: number of neighbors for the positions in pos
        """
        if (not self.index.is_trained) or self.index.ntotal == 0:
            return None, None, torch.zeros(pos.shape[0], device=self.device)

        assert step in ['add', 'query', 'mesh']
        split_pos = torch.split(pos, 65000, dim=0)
        D_list = []
        I_list = []
        for split_p in split_pos:
            D, I = self.index.search(split_p.float(), self.nn_num)
            D_list.append(D)
            I_list.append(I)
        D = torch.cat(D_list, dim=0)
        I = torch.cat(I_list, dim=0)

        if step == 'query':
            radius = self.radius_query
        elif step == 'add':
            if not is_pts_grad:
                radius = self.radius_add
            else:
                radius = self.radius_min
        else:
            radius = self.radius_query[1] if isinstance(self.radius_query, list) else self.radius_query

        if retain_grad:
            D = torch.sum(
                torch.square(pos[:, None, :]-torch.tensor(self._cloud_pos, device=self.device)[I]), dim=-1)

        if is_pts_grad and dynamic_radius is not None:
            radius = dynamic_radius.reshape(-1, 1)
            D[D > radius**2] = 1e4
            I[D > radius**2] = -1
        else:
            D[D > radius**2] = 1e4
            I[D > radius**2] = -1

        neighbor_num = (I > -1).sum(axis=-1)

        return D, I, neighbor_num

    def sample_near_pcl(self, rays_o, rays_d, near, far, num):
        """
        For pixels with 0 depth readings, preferably sample near point cloud.

        Args:
            rays_o (tensor): rays origin
            rays_d (tensor): rays direction
            near : near end for sampling along this ray
            far: far end
            num (int): stratified sampling num between near and far
        """
        rays_o, rays_d = rays_o.reshape(-1, 3), rays_d.reshape(-1, 3)
        n_rays = rays_o.shape[0]
        t_vals = torch.linspace(0., 1., steps=num, device=self.device)
        z_vals = near * (1.-t_vals) + far * (t_vals)

        pts = rays_o[..., None, :] + rays_d[..., None, :] * \
            z_vals[..., :, None]  # (N, num, 3)
        pts = pts.reshape(-1, 3)

        D, I = self.index.search(pts.float(), 1)

        D, I = D.reshape(n_rays, num), I.reshape(n_rays, num)
        mask_near = D < self.radius_query**2
        z_vals_near = torch.where(mask_near, z_vals.expand(n_rays, -1),
                                  torch.zeros_like(z_vals).expand(n_rays, -1))
        has_near = mask_near.any(dim=1)
        z_near = torch.where(has_near, z_vals_near.max(dim=1)[0], far.reshape(-1))
        return z_near.reshape(-1, 1), has_near
