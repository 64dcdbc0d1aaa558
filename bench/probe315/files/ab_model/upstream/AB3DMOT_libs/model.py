# Author: Xinshuo Weng
# email: xinshuo.weng@gmail.com
#
# Batched PyTorch version of the AB3DMOT tracker. All live tracklets are kept
# in one state tensor of shape (T, 10) so that prediction / update run as a
# handful of batched matmuls on the GPU instead of a python loop over
# filterpy objects.

import numpy as np, os, copy, math
import torch
from AB3DMOT_libs.box import Box3D
from AB3DMOT_libs.matching import data_association
from AB3DMOT_libs.kalman_filter import BatchedKalmanBox
from AB3DMOT_libs.vis import vis_obj
from xinshuo_miscellaneous import print_log
from xinshuo_io import mkdir_if_missing

np.set_printoptions(suppress=True, precision=3)


class AB3DMOT(object):
    def __init__(self, cfg, cat, calib=None, oxts=None, img_dir=None, vis_dir=None, hw=None, log=None, ID_init=0,
                 device='cuda'):

        # vis and log purposes
        self.img_dir = img_dir
        self.vis_dir = vis_dir
        self.vis = cfg.vis
        self.hw = hw
        self.log = log

        # counter
        self.ID_count = [ID_init]
        self.frame_count = 0

        # config
        self.cat = cat
        self.ego_com = cfg.ego_com  # ego motion compensation
        self.calib = calib
        self.oxts = oxts
        self.affi_process = cfg.affi_pro  # post-processing affinity
        self.get_param(cfg, cat)
        self.print_param()

        self.device = torch.device(device)
        self.kf = BatchedKalmanBox(dim_x=10, dim_z=7, device=self.device)

        # per-track bookkeeping that stays on the host
        self.ids = []
        self.hits = []
        self.time_since_update = []
        self.infos = []

        # debug
        # self.debug_id = 2
        self.debug_id = None

    def get_param(self, cfg, cat):
        # get parameters for each dataset

        if cfg.dataset == 'KITTI':
            if cfg.det_name == 'pvrcnn':  # tuned for PV-RCNN detections
                if cat == 'Car': algm, metric, thres, min_hits, max_age = 'hungar', 'giou_3d', -0.2, 3, 2
                elif cat == 'Pedestrian': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.4, 1, 4
                elif cat == 'Cyclist': algm, metric, thres, min_hits, max_age = 'hungar', 'dist_3d', 2, 3, 4
                else: assert False, 'error'
            elif cfg.det_name == 'pointrcnn':  # tuned for PointRCNN detections
                if cat == 'Car': algm, metric, thres, min_hits, max_age = 'hungar', 'giou_3d', -0.2, 3, 2
                elif cat == 'Pedestrian': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.4, 1, 4
                elif cat == 'Cyclist': algm, metric, thres, min_hits, max_age = 'hungar', 'dist_3d', 2, 3, 4
                else: assert False, 'error'
            else: assert False, 'error'
        elif cfg.dataset == 'nuScenes':
            if cfg.det_name == 'centerpoint':  # tuned for CenterPoint detections
                if cat == 'Car': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.4, 1, 2
                elif cat == 'Pedestrian': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.5, 1, 2
                elif cat == 'Truck': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.4, 1, 2
                elif cat == 'Trailer': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.3, 3, 2
                elif cat == 'Bus': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.4, 1, 2
                elif cat == 'Motorcycle': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.7, 3, 2
                elif cat == 'Bicycle': algm, metric, thres, min_hits, max_age = 'greedy', 'dist_3d', 6, 3, 2
                else: assert False, 'error'
            elif cfg.det_name == 'megvii':  # tuned for Megvii detections
                if cat == 'Car': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.5, 1, 2
                elif cat == 'Pedestrian': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.5, 1, 2
                elif cat == 'Truck': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.2, 1, 2
                elif cat == 'Trailer': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.2, 3, 2
                elif cat == 'Bus': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.2, 1, 2
                elif cat == 'Motorcycle': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.8, 3, 2
                elif cat == 'Bicycle': algm, metric, thres, min_hits, max_age = 'greedy', 'giou_3d', -0.6, 3, 2
                else: assert False, 'error'
            else: assert False, 'error'
        else: assert False, 'no such dataset'

        # add negative due to it is the cost
        if metric in ['dist_3d', 'dist_2d', 'm_dis']: thres *= -1
        self.algm, self.metric, self.thres, self.max_age, self.min_hits = \
            algm, metric, thres, max_age, min_hits

        # define max/min values for the output affinity matrix
        if self.metric in ['dist_3d', 'dist_2d', 'm_dis']: self.max_sim, self.min_sim = 0.0, -100.
        elif self.metric in ['iou_2d', 'iou_3d']: self.max_sim, self.min_sim = 1.0, 0.0
        elif self.metric in ['giou_2d', 'giou_3d']: self.max_sim, self.min_sim = 1.0, -1.0

    def print_param(self):
        print_log('\n\n***************** Parameters for %s *********************' % self.cat, log=self.log, display=False)
        print_log('matching algorithm is %s' % self.algm, log=self.log, display=False)
        print_log('distance metric is %s' % self.metric, log=self.log, display=False)
        print_log('distance threshold is %f' % self.thres, log=self.log, display=False)
        print_log('min hits is %f' % self.min_hits, log=self.log, display=False)
        print_log('max age is %f' % self.max_age, log=self.log, display=False)
        print_log('ego motion compensation is %d' % self.ego_com, log=self.log, display=False)

    def process_dets(self, dets):
        # convert each detection into the class Box3D
        # inputs:
        #   dets - a tensor of detections in the format [[h,w,l,x,y,z,theta],...]
        # reorder to [x, y, z, theta, l, w, h] which is what the KF state uses
        if dets.shape[0] == 0:
            return dets.new_zeros((0, 7))
        return dets[:, [3, 4, 5, 6, 2, 1, 0]]

    @staticmethod
    def within_range(theta):
        # make sure the orientation is within a proper range
        theta = torch.where(theta >= math.pi, theta - math.pi * 2, theta)  # make the theta still in the range
        theta = torch.where(theta < -math.pi, theta + math.pi * 2, theta)
        return theta

    def orientation_correction(self, theta_pre, theta_obs):
        # update orientation in propagated tracks and detected boxes so that they are within 90 degree
        # make the theta still in the range
        theta_pre = self.within_range(theta_pre)
        theta_obs = self.within_range(theta_obs)

        # if the angle of two theta is not acute angle, then make it acute
        diff = torch.abs(theta_obs - theta_pre)
        flip = (diff > math.pi / 2.0) & (diff < math.pi * 3 / 2.0)
        theta_pre = torch.where(flip, theta_pre + math.pi, theta_pre)
        theta_pre = self.within_range(theta_pre)

        # now the angle is acute: < 90 or > 270, convert the case of > 270 to < 90
        diff = theta_obs - theta_pre
        theta_pre = torch.where(diff >= math.pi * 3 / 2.0, theta_pre + math.pi * 2, theta_pre)
        theta_pre = torch.where(diff <= -math.pi * 3 / 2.0, theta_pre - math.pi * 2, theta_pre)

        return theta_pre, theta_obs

    def ego_motion_compensation(self, frame, trks):
        # inverse ego motion compensation, move trks from the last frame of coordinate to the current frame
        # for matching

        from AB3DMOT_libs.kitti_oxts import get_ego_traj, egomotion_compensation_ID
        assert len(self.trackers) == len(trks), 'error'
        ego_xyz_imu, ego_rot_imu, left, right = get_ego_traj(self.oxts, frame, 1, 1, only_fut=True, inverse=True)
        R = torch.from_numpy(ego_rot_imu[0]).float().cuda()
        t = torch.from_numpy(ego_xyz_imu[0]).float().to(trks.device)
        xyz = trks[:, :3]
        xyz = (R @ xyz.T).T + t
        trks = trks.clone()
        trks[:, :3] = xyz
        return trks

    def prediction(self):
        # get predicted locations from existing tracks

        if self.kf.num_tracks == 0:
            return torch.zeros((0, 7), device='cuda')

        self.kf.predict()
        self.kf.x[:, 3] = self.within_range(self.kf.x[:, 3])

        # update statistics
        self.time_since_update = [t + 1 for t in self.time_since_update]
        return self.kf.x[:, :7].clone()

    def update(self, matched, unmatched_trks, dets, info):
        # update matched trackers with assigned detections

        if len(matched) == 0:
            return

        trk_idx = torch.as_tensor(matched[:, 1], device=self.device, dtype=torch.long)
        det_idx = torch.as_tensor(matched[:, 0], device=self.device, dtype=torch.long)
        z = dets[det_idx]

        # update orientation in propagated tracks and detected boxes so that they are within 90 degree
        theta_pre, theta_obs = self.orientation_correction(self.kf.x[trk_idx, 3], z[:, 3])
        self.kf.x[trk_idx, 3] = theta_pre
        z = z.clone()
        z[:, 3] = theta_obs

        # kalman filter update with observation
        self.kf.update(z, trk_idx)
        self.kf.x[trk_idx, 3] = self.within_range(self.kf.x[trk_idx, 3])

        for t in matched[:, 1].tolist():
            self.time_since_update[t] = 0
            self.hits[t] += 1
        for d, t in matched.tolist():
            self.infos[t] = info[d]

    def birth(self, dets, info, unmatched_dets):
        # create and initialise new trackers for unmatched detections

        if len(unmatched_dets) == 0:
            return
        idx = torch.as_tensor(unmatched_dets, device=self.device, dtype=torch.long)
        self.kf.add(dets[idx])
        for d in unmatched_dets:
            self.ids.append(self.ID_count[0])
            self.hits.append(1)
            self.time_since_update.append(0)
            self.infos.append(info[d])
            self.ID_count[0] += 1

    def output(self):
        # output exiting tracks that have been stably associated, i.e., >= min_hits
        # and also delete tracks that have appeared for a long time, i.e., >= max_age

        results = []
        keep = []
        states = self.kf.x[:, :7].detach().cpu().numpy()
        for t in range(len(self.ids)):
            d = states[t]
            d = Box3D.array2bbox(d[[0, 1, 2, 3, 4, 5, 6]])  # x, y, z, theta, l, w, h
            d = Box3D.bbox2array_raw(d)

            if ((self.time_since_update[t] < self.max_age) and (self.hits[t] >= self.min_hits or self.frame_count <= self.min_hits)):
                results.append(np.concatenate((d, [self.ids[t]], self.infos[t].cpu().numpy())).reshape(1, -1))
            keep.append(self.time_since_update[t] < self.max_age)

        # death, remove dead tracklet
        keep_idx = [i for i, k in enumerate(keep) if k]
        self.kf.select(torch.as_tensor(keep_idx, device=self.device, dtype=torch.long))
        self.ids = [self.ids[i] for i in keep_idx]
        self.hits = [self.hits[i] for i in keep_idx]
        self.time_since_update = [self.time_since_update[i] for i in keep_idx]
        self.infos = [self.infos[i] for i in keep_idx]

        return results

    def process_affi(self, affi, matched, unmatched_dets, new_id_list):

        # post-processing affinity matrix, convert from affinity between raw detection and past total tracklets
        # to affinity between past "active" tracklets and current active output tracklets, so that we can know
        # how certain the results of matching is. The approach is to find the correspondes of ID for each row and
        # each column, map to the actual ID in the output trks, then purmute/expand the original affinity matrix

        if affi.shape[0] == 0 or affi.shape[1] == 0:
            return affi
        affi = affi.T  # past tracklets x current detections
        return affi.clamp(min=self.min_sim, max=self.max_sim)

    def reset(self):
        self.kf.reset()
        self.ids, self.hits, self.time_since_update, self.infos = [], [], [], []
        self.frame_count = 0
        # release the cached blocks of the previous sequence
        torch.cuda.empty_cache()

    def track(self, dets_all, frame, seq_name):
        """
        Params:
            dets_all: dict
                dets - a tensor of detections in the format [[h,w,l,x,y,z,theta],...]
                info: a tensor of other info for each det
            frame:    str, frame number, used to query ego pose
        Requires: this method must be called once for each frame even with empty detections.
        Returns the a similar array, where the last column is the object ID.

        NOTE: The number of objects returned may differ from the number of detections provided.
        """
        dets, info = dets_all['dets'], dets_all['info']  # dets: N x 7, float tensor
        if self.debug_id: print('\nframe is %s' % frame)

        # logging
        print_str = '\n\n*****************************************\n\nprocessing seq_name/frame %s/%d' % (seq_name, frame)
        print_log(print_str, log=self.log, display=False)
        self.frame_count += 1

        # recall the last frames of outputs for computing ID correspondences during affinity processing
        self.id_past_output = copy.copy(self.id_now_output) if hasattr(self, 'id_now_output') else []
        self.id_past = list(self.ids)

        # process detection format
        dets = self.process_dets(dets)

        # tracks propagation based on velocity
        trks = self.prediction()

        # ego motion compensation, adapt to the current frame of camera coordinate
        if (frame > 0) and (self.ego_com) and (self.oxts is not None):
            trks = self.ego_motion_compensation(frame, trks)

        # matching
        trk_innovation_matrix = None
        if self.metric == 'm_dis':
            trk_innovation_matrix = self.kf.innovation_covariance()
        matched, unmatched_dets, unmatched_trks, cost, affi = \
            data_association(dets, trks, self.metric, self.thres, self.algm, trk_innovation_matrix)

        # update trks with matched detection measurement
        self.update(matched, unmatched_trks, dets, info)

        # create and initialise new trackers for unmatched detections
        self.birth(dets, info, unmatched_dets)

        # output existing valid tracks
        results = self.output()
        if len(results) > 0: results = [np.concatenate(results)]  # h,w,l,x,y,z,theta, ID, other info, confidence
        else: results = [np.empty((0, 15))]
        self.id_now_output = results[0][:, 7].tolist()  # only the active tracks that are outputed

        # post-processing affinity to convert to the affinity between resulting tracklets
        if self.affi_process:
            affi = self.process_affi(affi, matched, unmatched_dets, self.id_now_output)

        return results, affi
