"""Contact-GraspNet network (PyTorch port of the TF1 original).

PointNet++ backbone from `pointnet2_ops` (Erik Wijmans' CUDA implementation),
per-point heads for grasp success, approach/baseline directions and width.
"""
import os
import sys
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

BASE_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT_DIR = os.path.dirname(BASE_DIR)
sys.path.append(os.path.join(BASE_DIR))

from pointnet2_ops.pointnet2_modules import PointnetSAModuleMSG, PointnetSAModule, PointnetFPModule
from pointnet2_ops import pointnet2_utils

from contact_graspnet_pytorch import mesh_utils


class ContactGraspnet(nn.Module):
    def __init__(self, global_config, device):
        super(ContactGraspnet, self).__init__()

        self.device = device

        # -- Extract config -- #
        self.global_config = global_config
        self.model_config = global_config['MODEL']
        self.data_config = global_config['DATA']

        radius_list_0 = self.model_config['pointnet_sa_modules_msg'][0]['radius_list']
        radius_list_1 = self.model_config['pointnet_sa_modules_msg'][1]['radius_list']
        radius_list_2 = self.model_config['pointnet_sa_modules_msg'][2]['radius_list']

        nsample_list_0 = self.model_config['pointnet_sa_modules_msg'][0]['nsample_list']
        nsample_list_1 = self.model_config['pointnet_sa_modules_msg'][1]['nsample_list']
        nsample_list_2 = self.model_config['pointnet_sa_modules_msg'][2]['nsample_list']

        mlp_list_0 = self.model_config['pointnet_sa_modules_msg'][0]['mlp_list']
        mlp_list_1 = self.model_config['pointnet_sa_modules_msg'][1]['mlp_list']
        mlp_list_2 = self.model_config['pointnet_sa_modules_msg'][2]['mlp_list']

        npoint_0 = self.model_config['pointnet_sa_modules_msg'][0]['npoint']
        npoint_1 = self.model_config['pointnet_sa_modules_msg'][1]['npoint']
        npoint_2 = self.model_config['pointnet_sa_modules_msg'][2]['npoint']

        fp_mlp_0 = self.model_config['pointnet_fp_modules'][0]['mlp']
        fp_mlp_1 = self.model_config['pointnet_fp_modules'][1]['mlp']
        fp_mlp_2 = self.model_config['pointnet_fp_modules'][2]['mlp']

        sa_mlp = self.model_config['pointnet_sa_module']['mlp']
        sa_group_all = self.model_config['pointnet_sa_module']['group_all']

        self.input_normals = self.data_config['input_normals']
        self.offset_bins = self.data_config['labels']['offset_bins']
        self.joint_heads = self.model_config['joint_heads']

        # For adding additional features
        additional_channel = 3 if self.input_normals else 0

        if 'asymmetric_model' in self.model_config and self.model_config['asymmetric_model']:
            # It looks like there are xyz_points and "points".  The xyz points are just xyz coords.  The
            # points are the xyz coords plus any additional features (normals, etc.)
            self.l1_sa = PointnetSAModuleMSG(npoint=npoint_0, radii=radius_list_0, nsamples=nsample_list_0,
                                             mlps=[[additional_channel] + m for m in mlp_list_0], use_xyz=True)
            l1_out = sum([m[-1] for m in mlp_list_0])
            self.l2_sa = PointnetSAModuleMSG(npoint=npoint_1, radii=radius_list_1, nsamples=nsample_list_1,
                                             mlps=[[l1_out] + m for m in mlp_list_1], use_xyz=True)
            l2_out = sum([m[-1] for m in mlp_list_1])
            self.l3_sa = PointnetSAModuleMSG(npoint=npoint_2, radii=radius_list_2, nsamples=nsample_list_2,
                                             mlps=[[l2_out] + m for m in mlp_list_2], use_xyz=True)
            l3_out = sum([m[-1] for m in mlp_list_2])
            self.l4_sa = PointnetSAModule(mlp=[l3_out] + sa_mlp, use_xyz=True)

            # Feature propagation
            self.fp3 = PointnetFPModule(mlp=[l3_out + sa_mlp[-1]] + fp_mlp_0)
            self.fp2 = PointnetFPModule(mlp=[l2_out + fp_mlp_0[-1]] + fp_mlp_1)
            self.fp1 = PointnetFPModule(mlp=[l1_out + fp_mlp_1[-1]] + fp_mlp_2)
        else:
            raise NotImplementedError

        if self.joint_heads:
            raise NotImplementedError
        else:
            # Head for grasp direction
            self.grasp_dir_head = nn.Sequential(
                nn.Conv1d(fp_mlp_2[-1], 128, 1, padding=0),
                nn.BatchNorm1d(128),
                nn.ReLU(),
                nn.Dropout(0.3),  # p = 1 - keep_prob  (tf is inverse of torch)
                nn.Conv1d(128, 3, 1, padding=0)
            )

            # Remember to normalize the output of this head

            # Head for grasp approach
            self.grasp_approach_head = nn.Sequential(
                nn.Conv1d(fp_mlp_2[-1], 128, 1, padding=0),
                nn.BatchNorm1d(128),
                nn.ReLU(),
                nn.Dropout(0.3),
                nn.Conv1d(128, 3, 1, padding=0)
            )

            # Head for grasp width
            if self.model_config['dir_vec_length_offset']:
                raise NotImplementedError
            elif self.model_config['bin_offsets']:
                self.grasp_offset_head = nn.Sequential(
                    nn.Conv1d(fp_mlp_2[-1], 128, 1, padding=0),
                    nn.BatchNorm1d(128),
                    nn.ReLU(),
                    nn.Conv1d(128, len(self.offset_bins) - 1, 1, padding=0)
                )
            else:
                raise NotImplementedError

            # Head for contact points
            self.binary_seg_head = nn.Sequential(
                nn.Conv1d(fp_mlp_2[-1], 128, 1, padding=0),
                nn.BatchNorm1d(128),
                nn.ReLU(),
                nn.Dropout(0.5),  # 0.5 in original code
                nn.Conv1d(128, 1, 1, padding=0)
            )

        # -- Gripper geometry used to build 6-DoF grasps from the head outputs -- #
        gripper = mesh_utils.create_gripper('panda')
        gripper_control_points = gripper.get_control_point_tensor(1, use_tf=False)
        self.register_buffer('gripper_control_points', torch.from_numpy(gripper_control_points).float())

    def forward(self, point_cloud):
        # expensive, rather use random only
        if 'raw_num_points' in self.data_config and self.data_config['raw_num_points'] != self.data_config['ndataset_points']:
            fps_idx = pointnet2_utils.furthest_point_sample(point_cloud.contiguous(), self.data_config['ndataset_points'])
            point_cloud = pointnet2_utils.gather_operation(point_cloud.transpose(1, 2).contiguous(), fps_idx).transpose(1, 2).contiguous()

        input_normals = self.data_config['input_normals']

        # -- Backbone -- #
        if input_normals:
            l0_xyz = point_cloud[:, :, :3].contiguous()
            l0_points = point_cloud[:, :, 3:6].transpose(1, 2).contiguous()
        else:
            l0_xyz = point_cloud.contiguous()
            l0_points = None

        l1_xyz, l1_points = self.l1_sa(l0_xyz, l0_points)
        l2_xyz, l2_points = self.l2_sa(l1_xyz, l1_points)
        l3_xyz, l3_points = self.l3_sa(l2_xyz, l2_points)
        l4_xyz, l4_points = self.l4_sa(l3_xyz, l3_points)

        l3_points = self.fp3(l3_xyz, l4_xyz, l3_points, l4_points)
        l2_points = self.fp2(l2_xyz, l3_xyz, l2_points, l3_points)
        l1_points = self.fp1(l1_xyz, l2_xyz, l1_points, l2_points)

        l0_points = l1_points
        pred_points = l1_xyz

        # -- Heads -- #
        # Grasp direction
        grasp_dir_head = self.grasp_dir_head(l0_points)
        grasp_dir_head_normed = F.normalize(grasp_dir_head, p=2, dim=1)  # normalize along channels

        # Grasp approach
        approach_dir_head = self.grasp_approach_head(l0_points)

        # Gram-Schmidt: make the approach orthogonal to the baseline direction
        dot_product = torch.sum(grasp_dir_head_normed * approach_dir_head, dim=1, keepdim=True)
        projection = dot_product * grasp_dir_head_normed
        approach_dir_head_orthog = F.normalize(approach_dir_head - projection, p=2, dim=1)

        # Grasp width
        grasp_offset_head = self.grasp_offset_head(l0_points)

        # Contact points
        binary_seg_head = self.binary_seg_head(l0_points)

        # -- Create end_points -- #
        end_points = {}
        end_points['grasp_dir_head'] = grasp_dir_head
        end_points['binary_seg_head'] = binary_seg_head
        end_points['binary_seg_pred'] = torch.sigmoid(binary_seg_head)
        end_points['grasp_offset_head'] = grasp_offset_head
        if self.model_config['bin_offsets']:
            end_points['grasp_offset_pred'] = torch.sigmoid(grasp_offset_head)
        else:
            end_points['grasp_offset_pred'] = grasp_offset_head
        end_points['approach_dir_head'] = approach_dir_head_orthog
        end_points['pred_points'] = pred_points

        # Get back to the grasp in camera frame
        if self.model_config['bin_offsets']:
            offset_bin_pred_vals = self.get_bin_vals()
            offset_pred = offset_bin_pred_vals[torch.argmax(end_points['grasp_offset_pred'], dim=1)]
        else:
            offset_pred = end_points['grasp_offset_pred'][:, 0, :]

        pred_grasps_cam = self.build_6d_grasp(approach_dir_head_orthog.permute(0, 2, 1),
                                              grasp_dir_head_normed.permute(0, 2, 1),
                                              pred_points,
                                              offset_pred,
                                              use_torch=True)

        pred_scores = torch.sigmoid(binary_seg_head).permute(0, 2, 1)

        return {'pred_grasps_cam': pred_grasps_cam,
                'pred_scores': pred_scores,
                'pred_points': pred_points,
                'offset_pred': offset_pred,
                'grasp_offset_head': grasp_offset_head,
                'end_points': end_points}

    def get_bin_vals(self):
        """
        Creates bin values for grasping widths according to bounds defined in config

        Returns:
            torch.tensor -- bin value tensor
        """
        bins_bounds = np.array(self.data_config['labels']['offset_bins'])
        if self.global_config['TEST']['bin_vals'] == 'max':
            bin_vals = (bins_bounds[1:] + bins_bounds[:-1]) / 2
            bin_vals[-1] = bins_bounds[-1]
        elif self.global_config['TEST']['bin_vals'] == 'mean':
            bin_vals = bins_bounds[1:]
        else:
            raise NotImplementedError

        if not self.global_config['TEST']['allow_zero_margin']:
            bin_vals = np.minimum(bin_vals, self.global_config['DATA']['gripper_width'] - self.global_config['TEST']['extra_opening'])

        bin_vals = torch.tensor(bin_vals, dtype=torch.float32, device=self.gripper_control_points.device)
        return bin_vals

    def build_6d_grasp(self, approach_dirs, base_dirs, contact_pts, thickness, use_torch=False, gripper_depth=0.1034):
        """
        Build 6-DoF grasps + width from point-wise network predictions

        Arguments:
            approach_dirs {np.ndarray/torch.tensor} -- Nx3 approach direction vectors
            base_dirs {np.ndarray/torch.tensor} -- Nx3 base direction vectors
            contact_pts {np.ndarray/torch.tensor} -- Nx3 contact points
            thickness {np.ndarray/torch.tensor} -- Nx1 grasp width

        Keyword Arguments:
            use_tf {bool} -- whether inputs and outputs are tf tensors (default: {False})
            gripper_depth {float} -- distance from gripper coordinate frame to gripper baseline in m (default: {0.1034})

        Returns:
            np.ndarray -- Nx4x4 grasp poses in camera coordinates
        """
        if use_torch:
            grasp_R = torch.stack([base_dirs, torch.cross(approach_dirs, base_dirs, dim=-1), approach_dirs], dim=3)
            grasp_t = contact_pts + (thickness / 2).unsqueeze(2) * base_dirs - gripper_depth * approach_dirs
            grasp_t = grasp_t.unsqueeze(3)
            ones = torch.ones((contact_pts.shape[0], contact_pts.shape[1], 1, 1), dtype=torch.float32, device=contact_pts.device)
            zeros = torch.zeros((contact_pts.shape[0], contact_pts.shape[1], 1, 3), dtype=torch.float32, device=contact_pts.device)
            homog_vec = torch.cat([zeros, ones], dim=3)
            grasps = torch.cat([torch.cat([grasp_R, grasp_t], dim=3), homog_vec], dim=2)
        else:
            grasps = []
            for i in range(len(contact_pts)):
                grasp = np.eye(4)

                grasp[:3, 0] = base_dirs[i] / np.linalg.norm(base_dirs[i])
                grasp[:3, 2] = approach_dirs[i] / np.linalg.norm(approach_dirs[i])
                grasp_y = np.cross(grasp[:3, 2], grasp[:3, 0])
                grasp[:3, 1] = grasp_y / np.linalg.norm(grasp_y)
                # base_gripper xyz = contact + thickness / 2 * baseline_dir - gripper_d * approach_dir
                grasp[:3, 3] = contact_pts[i] + thickness[i] / 2 * grasp[:3, 0] - gripper_depth * grasp[:3, 2]
                # grasp[0:3, 3] = contact_pts[i] + thickness[i] / 2 * grasp[0:3, 0] - gripper_depth * grasp[0:3, 2]
                grasps.append(grasp)
            grasps = np.array(grasps)

        return grasps
