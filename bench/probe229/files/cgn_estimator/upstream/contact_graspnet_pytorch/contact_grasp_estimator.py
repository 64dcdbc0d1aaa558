import importlib
import numpy as np
import sys
import os
import time
import torch

from contact_graspnet_pytorch import config_utils
from contact_graspnet_pytorch.data import farthest_points, distance_by_translation_point, preprocess_pc_for_inference, regularize_pc_point_count, depth2pc, reject_median_outliers
from contact_graspnet_pytorch.contact_graspnet import ContactGraspnet


class GraspEstimator:
    """
    Class for building and inference with the Contact-GraspNet model

    :param cfg: config dict
    """
    def __init__(self, cfg):
        self._contact_grasp_cfg = cfg
        self._model_func = ContactGraspnet
        self._num_input_points = cfg['DATA']['raw_num_points'] if 'raw_num_points' in cfg['DATA'] else cfg['DATA']['num_point']
        self._num_input_channels = 3

        self.device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
        self.model = self._model_func(cfg, self.device).to(self.device)
        self.model.eval()

    def filter_segment(self, contact_pts, segment_pc, thres=0.00001):
        """
        Filter grasps to obtain contacts on specified point cloud segment

        :param contact_pts: Nx3 contact points of all grasps in the scene
        :param segment_pc: Mx3 segmented point cloud of the object of interest
        :param thres: maximum distance in m of filtered contact points from segmented point cloud
        :returns: Contact/Grasp indices that lie in the point cloud segment
        """
        filtered_grasp_idcs = np.array([], dtype=np.int32)

        if contact_pts.shape[0] > 0 and segment_pc.shape[0] > 0:
            try:
                dists = contact_pts[:, :3].reshape(-1, 1, 3) - segment_pc.reshape(1, -1, 3)
                min_dists = np.min(np.linalg.norm(dists, axis=2), axis=1)
                filtered_grasp_idcs = np.where(min_dists < thres)
            except:
                pass

        return filtered_grasp_idcs

    def extract_3d_cam_boxes(self, full_pc, pc_segments, min_size=0.3, max_size=0.6):
        """
        Extract 3D bounding boxes around the pc_segments for inference to create
        dense and zoomed-in predictions but still take context into account.

        :param full_pc: Nx3 scene point cloud
        :param pc_segments: Mx3 segmented point cloud of the object of interest
        :param min_size: minimum side length of the 3D bounding box
        :param max_size: maximum side length of the 3D bounding box
        :returns: (pc_regions, obj_centers) Point cloud box regions and their centers
        """
        pc_regions = {}
        obj_centers = {}

        for i in pc_segments:
            pc_segments[i] = reject_median_outliers(pc_segments[i], m=0.4, z_only=False)

            if np.any(pc_segments[i]):
                max_bounds = np.max(pc_segments[i][:, :3], axis=0)
                min_bounds = np.min(pc_segments[i][:, :3], axis=0)

                obj_extent = max_bounds - min_bounds
                obj_center = min_bounds + obj_extent / 2

                # cube size is between 0.3 and 0.6 depending on object extents
                size = np.minimum(np.maximum(np.max(obj_extent) * 2, min_size), max_size)
                print('Extracted Region Cube Size: ', size)
                partial_pc = full_pc[np.all(full_pc > (obj_center - size / 2), axis=1) & np.all(full_pc < (obj_center + size / 2), axis=1)]
                if np.any(partial_pc):
                    partial_pc = regularize_pc_point_count(partial_pc, self._contact_grasp_cfg['DATA']['raw_num_points'],
                                                           use_farthest_point=self._contact_grasp_cfg['DATA']['use_farthest_point'])
                    pc_regions[i] = partial_pc
                    obj_centers[i] = obj_center

        return pc_regions, obj_centers

    def predict_grasps(self, pc, constant_offset=False, convert_cam_coords=True, forward_passes=1):
        """
        Predict raw grasps on point cloud

        :param pc: Nx3 point cloud in camera coordinates
        :param convert_cam_coords: Convert from OpenCV to internal training camera coordinates (x left, y up, z front) and converts grasps back to openCV coordinates
        :param constant_offset: do not predict offset and place gripper at constant `extra_opening` distance from contact point
        :param forward_passes: Number of forward passes to run on each point cloud. default: 1
        :returns: (pred_grasps_cam, pred_scores, pred_points, gripper_openings) Predicted grasps/scores/contact-points/gripper-openings
        """
        # Convert point cloud coordinates from OpenCV to internal coordinates (x left, y up, z front)
        pc, pc_mean = preprocess_pc_for_inference(pc.squeeze(), self._num_input_points, return_mean=True,
                                                  convert_to_internal_coords=convert_cam_coords)

        if len(pc.shape) == 2:
            pc_batch = pc[np.newaxis, :, :]

        if forward_passes > 1:
            pc_batch = np.tile(pc_batch, (forward_passes, 1, 1))

        pc_batch = torch.from_numpy(pc_batch).type(torch.float32).to(self.device)

        # Run model inference
        with torch.no_grad():
            pred = self.model(pc_batch)

        pred_grasps_cam = pred['pred_grasps_cam']
        pred_scores = pred['pred_scores']
        pred_points = pred['pred_points']
        offset_pred = pred['offset_pred']

        pred_grasps_cam = pred_grasps_cam.detach().cpu().numpy()
        pred_scores = pred_scores.detach().cpu().numpy()
        pred_points = pred_points.detach().cpu().numpy()
        offset_pred = offset_pred.detach().cpu().numpy()

        pred_grasps_cam = pred_grasps_cam.reshape(-1, *pred_grasps_cam.shape[-2:])
        pred_points = pred_points.reshape(-1, pred_points.shape[-1])
        pred_scores = pred_scores.reshape(-1)
        offset_pred = offset_pred.reshape(-1)

        # uncenter grasps
        pred_grasps_cam[:, :3, 3] += pc_mean.reshape(-1, 3)
        pred_points[:, :3] += pc_mean.reshape(-1, 3)

        if constant_offset:
            offset_pred = np.array([self._contact_grasp_cfg['DATA']['gripper_width'] - self._contact_grasp_cfg['TEST']['extra_opening']] * self._contact_grasp_cfg['DATA']['num_point'])

        gripper_openings = np.minimum(offset_pred + self._contact_grasp_cfg['TEST']['extra_opening'], self._contact_grasp_cfg['DATA']['gripper_width'])

        with_replacement = self._contact_grasp_cfg['TEST']['with_replacement'] if 'with_replacement' in self._contact_grasp_cfg['TEST'] else False

        selection_idcs = self.select_grasps(pred_points[:, :3], pred_scores,
                                            self._contact_grasp_cfg['TEST']['max_farthest_points'],
                                            self._contact_grasp_cfg['TEST']['num_samples'],
                                            self._contact_grasp_cfg['TEST']['first_thres'],
                                            self._contact_grasp_cfg['TEST']['second_thres'] if 'second_thres' in self._contact_grasp_cfg['TEST'] else self._contact_grasp_cfg['TEST']['first_thres'],
                                            with_replacement=self._contact_grasp_cfg['TEST']['with_replacement'])

        if not np.any(selection_idcs):
            selection_idcs = np.array([], dtype=np.int32)

        if 'center_to_tip' in self._contact_grasp_cfg['TEST'] and self._contact_grasp_cfg['TEST']['center_to_tip']:
            pred_grasps_cam[:, :3, 3] -= pred_grasps_cam[:, :3, 2] * (self._contact_grasp_cfg['TEST']['center_to_tip'] / 2)

        # convert back to opencv coordinates
        if convert_cam_coords:
            pred_grasps_cam[:, :2, :] *= -1
            pred_points[:, :2] *= -1

        return pred_grasps_cam[selection_idcs], pred_scores[selection_idcs], pred_points[selection_idcs].squeeze(), gripper_openings[selection_idcs].squeeze()

    def predict_scene_grasps(self, pc_full, pc_segments={}, local_regions=False, filter_grasps=False, forward_passes=1):
        """
        Predict num_point grasps on a full point cloud or in local box regions around point cloud segments.

        :param pc_full: Nx3 full scene point cloud
        :param pc_segments: Dict[int, Mx3] segmented point clouds of objects of interest
        :param local_regions: crop 3D local regions around object segments for prediction
        :param filter_grasps: filter grasp contacts such that they only lie within object segments
        :param forward_passes: Number of forward passes to run on each point cloud
        :returns: (pred_grasps_cam, scores, contact_pts, gripper_openings) Predicted grasps/scores/contact-points/gripper-openings
        """
        pred_grasps_cam, scores, contact_pts, gripper_openings = {}, {}, {}, {}

        # Predict grasps in local regions or full pc
        if local_regions:
            pc_regions, _ = self.extract_3d_cam_boxes(pc_full, pc_segments)
            for k, pc_region in pc_regions.items():
                pred_grasps_cam[k], scores[k], contact_pts[k], gripper_openings[k] = self.predict_grasps(pc_region, convert_cam_coords=True, forward_passes=forward_passes)
        else:
            pc_full = regularize_pc_point_count(pc_full, self._contact_grasp_cfg['DATA']['raw_num_points'])
            pred_grasps_cam[-1], scores[-1], contact_pts[-1], gripper_openings[-1] = self.predict_grasps(pc_full, convert_cam_coords=True, forward_passes=forward_passes)
            print('Generated {} grasps'.format(len(pred_grasps_cam[-1])))

        # Filter grasp contacts to lie within object segment
        if filter_grasps:
            segment_keys = contact_pts.keys() if local_regions else pc_segments.keys()
            for k in segment_keys:
                j = k if local_regions else -1
                if np.any(pc_segments[k]) and np.any(contact_pts[j]):
                    segment_idcs = self.filter_segment(contact_pts[j], pc_segments[k], thres=self._contact_grasp_cfg['TEST']['filter_thres'])

                    pred_grasps_cam[k] = pred_grasps_cam[j][segment_idcs]
                    scores[k] = scores[j][segment_idcs]
                    contact_pts[k] = contact_pts[j][segment_idcs]
                    try:
                        gripper_openings[k] = gripper_openings[j][segment_idcs]
                    except:
                        print('skipped gripper openings {}'.format(gripper_openings[j]))

                    if local_regions and np.any(pred_grasps_cam[k]):
                        print('Generated {} grasps for object {}'.format(len(pred_grasps_cam[k]), k))
                else:
                    print('skipping obj {} since  np.any(pc_segments[k]) {} and np.any(contact_pts[j]) is {}'.format(k, np.any(pc_segments[k]), np.any(contact_pts[j])))

            if not local_regions:
                del pred_grasps_cam[-1], scores[-1], contact_pts[-1], gripper_openings[-1]

        return pred_grasps_cam, scores, contact_pts, gripper_openings

    def select_grasps(self, contact_pts, contact_conf, max_farthest_points=150, num_grasps=200, first_thres=0.25, second_thres=0.2, with_replacement=False):
        """
        Select subset of num_grasps by contact confidence thresholds and farthest contact point sampling.

        1.) Samples max_farthest_points among grasp contacts with conf > first_thres
        2.) Fills up remaining grasp contacts to a maximum of num_grasps with highest confidence contacts with conf > second_thres

        :param contact_pts: num_pointx3 contact points
        :param contact_conf: num_point contact confidence
        :returns: Selected contact indices
        """
        grasp_conf = contact_conf.squeeze()
        contact_pts = contact_pts.squeeze()

        conf_idcs_greater_than = np.nonzero(grasp_conf > first_thres)[0]
        _, center_indexes = farthest_points(contact_pts[conf_idcs_greater_than, :3], np.minimum(max_farthest_points, len(conf_idcs_greater_than)), distance_by_translation_point, return_center_indexes=True)

        remaining_confidences = np.setdiff1d(np.arange(len(grasp_conf)), conf_idcs_greater_than[center_indexes])
        sorted_confidences = np.argsort(grasp_conf)[::-1]
        mask = np.in1d(sorted_confidences, remaining_confidences)
        sorted_remaining_confidence_idcs = sorted_confidences[mask]

        if with_replacement:
            selection_idcs = list(conf_idcs_greater_than[center_indexes])
            j = len(selection_idcs)
            while j < num_grasps and sorted_remaining_confidence_idcs.shape[0] > 0:
                selection_idcs.append(sorted_remaining_confidence_idcs[j % len(sorted_remaining_confidence_idcs)])
                j += 1
            selection_idcs = np.array(selection_idcs)

        else:
            remaining_idcs = sorted_remaining_confidence_idcs[:num_grasps - len(conf_idcs_greater_than[center_indexes])]
            remaining_conf_idcs_greater_than = np.nonzero(grasp_conf[remaining_idcs] > second_thres)[0]
            selection_idcs = np.union1d(conf_idcs_greater_than[center_indexes], remaining_idcs[remaining_conf_idcs_greater_than])
        return selection_idcs

    def extract_point_clouds(self, depth, K, segmap=None, rgb=None, z_range=[0.2, 1.8], segmap_id=0, skip_border_objects=False, margin_px=5):
        """
        Converts depth map + intrinsics to point cloud.
        If segmap is given, also returns segmented point clouds. If rgb is given, also returns pc_colors.

        :param depth: HxW depth map in m
        :param K: 3x3 Camera Matrix with intrinsics
        :returns: (pc_full, pc_segments, pc_colors)
        """
        if K is None:
            raise ValueError('K is required either as argument --K or from the input numpy file')

        # Convert to pc
        pc_full, pc_colors = depth2pc(depth, K, rgb)

        # Threshold distance
        if pc_colors is not None:
            pc_colors = pc_colors[(pc_full[:, 2] < z_range[1]) & (pc_full[:, 2] > z_range[0])]
        pc_full = pc_full[(pc_full[:, 2] < z_range[1]) & (pc_full[:, 2] > z_range[0])]

        # Extract instance point clouds from segmap and depth map
        pc_segments = {}
        if segmap is not None:
            pc_segments = {}
            obj_instances = [segmap_id] if segmap_id else np.unique(segmap[segmap > 0])
            for i in obj_instances:
                if skip_border_objects and not i == segmap_id:
                    obj_i_y, obj_i_x = np.where(segmap == i)
                    if np.any(obj_i_x < margin_px) or np.any(obj_i_x > segmap.shape[1] - margin_px) or np.any(obj_i_y < margin_px) or np.any(obj_i_y > segmap.shape[0] - margin_px):
                        print('object {} not entirely in image bounds, skipping'.format(i))
                        continue
                inst_mask = segmap == i
                pc_segment, _ = depth2pc(depth * inst_mask, K)
                pc_segments[i] = pc_segment[(pc_segment[:, 2] < z_range[1]) & (pc_segment[:, 2] > z_range[0])]  # regularize_pc_point_count(pc_segment, grasp_estimator._contact_grasp_cfg['DATA']['num_point'])

        return pc_full, pc_segments, pc_colors
