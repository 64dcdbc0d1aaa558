import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
import pytorch3d.ops
from pytorch3d.ops import knn_points
from utils.deform_utils import cal_connectivity_from_points, cal_arap_error, arap_deformation_loss
from utils.other_utils import farthest_point_sample, matrix_to_quaternion, quaternion_multiply
from utils.time_utils_base import DeformNetwork, get_embedder


class ControlNodeWarp(nn.Module):
    """Sparse control points carry a 6-DoF motion per timestamp; Gaussians follow by LBS over their K nearest nodes."""

    def __init__(self, is_blender, init_pcl=None, node_num=512, K=3, use_hash=False, hash_time=False,
                 enable_densify_prune=False, pred_opacity=False, pred_color=False, with_arap_loss=False,
                 with_node_weight=True, local_frame=False, d_rot_as_res=True, skinning=False, hyper_dim=2,
                 progressive_brand_time=False, max_d_scale=-1, is_scene_static=False, **kwargs):
        super().__init__()
        self.K = K
        self.use_hash = use_hash
        self.hash_time = hash_time
        self.enable_densify_prune = enable_densify_prune
        self.pred_opacity = pred_opacity
        self.pred_color = pred_color
        self.with_arap_loss = with_arap_loss
        self.with_node_weight = with_node_weight
        self.local_frame = local_frame
        self.d_rot_as_res = d_rot_as_res
        self.skinning = skinning
        self.hyper_dim = hyper_dim
        self.is_blender = is_blender
        self.progressive_brand_time = progressive_brand_time
        self.max_d_scale = max_d_scale
        self.is_scene_static = is_scene_static

        # Initialize Network
        self.node_num = node_num
        self.nodes = nn.Parameter(torch.randn(node_num, 3 + hyper_dim))
        self._node_radius = nn.Parameter(torch.zeros(node_num))
        self._node_weight = nn.Parameter(torch.zeros_like(self.nodes[:, :1]), requires_grad=with_node_weight)
        self.network = DeformNetwork(is_blender=is_blender, d_rot_as_res=d_rot_as_res, local_frame=local_frame,
                                     pred_opacity=pred_opacity, pred_color=pred_color, max_d_scale=max_d_scale,
                                     hyper_dim=hyper_dim)
        self.register_buffer('inited', torch.tensor(False))
        self.register_buffer('bbox', torch.zeros(2, 3))
        self.reset_radius_until = -1
        self.nn_weight, self.nn_dist, self.nn_idxs = None, None, None
        self.cached_nn_weight = False

    @property
    def node_radius(self):
        return torch.exp(self._node_radius)

    @property
    def node_weight(self):
        return torch.sigmoid(self._node_weight)

    @property
    def param_names(self):
        return ['nodes', '_node_radius', '_node_weight']

    def update_nodes_from_gaussians(self, init_pcl):
        """Farthest-point sample the canonical Gaussians to place the control nodes."""
        if init_pcl.shape[0] > self.node_num:
            init_nodes_idx = farthest_point_sample(init_pcl.detach()[None].cuda(), self.node_num)[0]
            self.nodes.data = init_pcl[init_nodes_idx].detach()
        else:
            self.nodes.data = init_pcl.detach()

    def init(self, opt, init_pcl, hyper_pcl=None, keep_all=False, force_init=False, reset_bbox=True, **kwargs):
        if self.inited and not force_init:
            return
        if reset_bbox:
            self.bbox.data = torch.stack([init_pcl.min(dim=0)[0], init_pcl.max(dim=0)[0]])
        if keep_all:
            self.node_num = init_pcl.shape[0]
        self.update_nodes_from_gaussians(init_pcl)
        if hyper_pcl is not None:
            self.nodes.data = torch.cat([self.nodes.data, hyper_pcl[:self.nodes.shape[0]]], dim=-1)
        else:
            hyper = torch.zeros([self.nodes.shape[0], self.hyper_dim], device=self.nodes.device)
            self.nodes.data = torch.cat([self.nodes.data[:, :3], hyper], dim=-1)
        scene_range = init_pcl.max() - init_pcl.min()
        self._node_radius.data = torch.log(.1 * scene_range + 1e-7) * torch.ones_like(self._node_radius)
        self._node_weight.data = torch.ones_like(self._node_weight)
        self.inited.data = torch.tensor(True)

    def cal_nn_weight(self, x: torch.Tensor, K=None, nodes=None, gs_kernel=True, temperature=1.):
        if self.cached_nn_weight and self.nn_weight is not None and x.shape[0] == self.nn_weight.shape[0]:
            return self.nn_weight, self.nn_dist, self.nn_idxs
        K = self.K if K is None else K
        # Weights of control nodes
        nodes = self.nodes[..., :3].detach() if nodes is None else nodes[..., :3]
        nn_dist, nn_idxs, _ = pytorch3d.ops.knn_points(x[None], nodes[None], None, None, K=K)  # N, K
        nn_dist, nn_idxs = nn_dist[0], nn_idxs[0]  # N, K
        if gs_kernel:
            nn_radius = self.node_radius[nn_idxs]  # N, K
            nn_weight = torch.exp(- nn_dist / (2 * nn_radius ** 2))  # N, K
            if self.with_node_weight:
                nn_node_weight = self.node_weight[nn_idxs]
                nn_weight = nn_weight * nn_node_weight[..., 0]
            nn_weight = nn_weight + 1e-7
            nn_weight = nn_weight / nn_weight.sum(dim=-1, keepdim=True)  # N, K
            if self.cached_nn_weight:
                self.nn_weight, self.nn_dist, self.nn_idxs = nn_weight, nn_dist, nn_idxs
            return nn_weight, nn_dist, nn_idxs
        else:
            nn_weight = torch.softmax(- nn_dist / temperature, dim=-1)
            return nn_weight, nn_dist, nn_idxs

    def node_deform(self, t, detach_node=True):
        tshape = t.shape
        if t.dim() == 3:
            assert t.shape[0] == self.nodes.shape[0], f"Shape of t {t.shape} does not match the number of nodes {self.nodes.shape[0]}"
            nodes = self.nodes[:, None, ..., :3].expand(*t.shape[:-1], 3).reshape(-1, 3)
            t = t.reshape(-1, t.shape[-1])
        else:
            nodes = self.nodes[..., :3]
        if detach_node:
            nodes = nodes.detach()
        values = self.network(x=nodes, t=t)
        values = {key: values[key].view(*tshape[:-1], values[key].shape[-1]) if type(values[key]) is torch.Tensor else values[key] for key in values}
        return values

    def forward(self, x, t, iteration=0, motion_mask=None, feature=None, detach_node=True):
        if t.dim() == 0:
            t = x.new_tensor(t)
        if t.shape[0] != self.nodes.shape[0]:
            t = t[:1].expand(self.nodes.shape[0], t.shape[-1])
        node_attrs = self.node_deform(t=t, detach_node=detach_node)
        node_trans, node_rot, node_scale = node_attrs['d_xyz'], node_attrs['d_rotation'], node_attrs['d_scaling']
        nn_weight, _, nn_idxs = self.cal_nn_weight(x=x[..., :3])
        # Linear blend skinning of the translations / rotations of the K nearest nodes
        translate = (node_trans[nn_idxs] * nn_weight[..., None]).sum(dim=1)
        rotation = (node_rot[nn_idxs] * nn_weight[..., None]).sum(dim=1)
        scale = (node_scale[nn_idxs] * nn_weight[..., None]).sum(dim=1) if node_scale is not None else 0.
        return {'d_xyz': translate, 'd_rotation': rotation, 'd_scaling': scale}

    def arap_loss(self, t=None, delta_t=0.05, t_samp_num=2):
        t = torch.rand([]).cuda() if t is None else t.squeeze() + delta_t * (torch.rand([]).cuda() - .5)
        t_samp = torch.rand(t_samp_num).cuda() * delta_t + t - .5 * delta_t
        t_samp = t_samp[None, :, None].expand(self.node_num, t_samp_num, 1)  # M, T, 1
        x = self.nodes[..., :3].detach()
        node_trans = self.node_deform(t=t_samp)['d_xyz']
        nodes_t = x[:, None] + node_trans  # M, T, 3
        hyper_nodes = nodes_t[:, 0]  # M, 3
        ii, jj, nn, weight = cal_connectivity_from_points(hyper_nodes, K=10)  # connectivity of control nodes
        error = cal_arap_error(nodes_t.permute(1, 0, 2), ii, jj, nn)
        return error

    def elastic_loss(self, t, delta_t=0.005, K=2, t_samp_num=8):
        # Calculate nodes translate
        t = t.squeeze() if t is not None else torch.rand([]).cuda()
        t_samp = torch.rand(t_samp_num).cuda() * delta_t + t - delta_t / 2
        t_samp = t_samp[None, :, None].expand(self.node_num, t_samp_num, 1)
        node_trans = self.node_deform(t=t_samp)['d_xyz']
        nodes_t = self.nodes[:, None, :3].detach() + node_trans  # M, T, 3
        # Calculate weights of nodes NN
        nn_weight, _, nn_idx = self.cal_nn_weight(x=nodes_t[:, 0], K=K + 1, gs_kernel=False)
        nn_weight, nn_idx = nn_weight[..., 1:], nn_idx[..., 1:]
        # Calculate the elastic energy over neighbouring nodes
        elastic = ((nodes_t[nn_idx] - nodes_t[:, None]).norm(dim=-1) * nn_weight[..., None]).var(dim=-1)
        return elastic.mean()
