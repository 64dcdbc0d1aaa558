import time
from collections import defaultdict

import numpy as np
import torch
import torch.nn.functional as F
from scipy.optimize import linear_sum_assignment

import qd3dt.models.detectrackers.tracker.tracker_utils as tu
from qd3dt.models.detectrackers.tracker.motion_lstm import VeloLSTM, load_lstm_checkpoint


class LSTM3DTracker(object):
    """One tracklet whose 3D location is predicted / refined by the shared VeloLSTM."""

    def __init__(self, device, lstm, bbox3D, info, track_id, num_frames=5, loc_dim=7):
        self.device = device
        self.lstm = lstm
        self.loc_dim = loc_dim
        self.num_frames = num_frames
        self.id = track_id
        self.time_since_update = 0
        self.hits = 1
        self.hit_streak = 0
        self.age = 0
        self.info = info

        # hidden states of the predict / refine LSTMs for this tracklet
        self.h_pd, self.c_pd = self.lstm.init_hidden(self.device)
        self.h_ref, self.c_ref = self.lstm.init_hidden(self.device)

        self.obj_state = np.hstack([bbox3D.reshape((loc_dim, )), np.zeros((3, ))])
        self.history = np.tile(np.zeros_like(bbox3D[:loc_dim]), (self.num_frames, 1))
        self.ref_history = np.vstack([self.history, self.obj_state[:loc_dim].copy()])
        self.prev_ref = bbox3D[:loc_dim].copy()

    @staticmethod
    def fix_alpha(angle: float) -> float:
        return (angle + np.pi) % (2 * np.pi) - np.pi

    def _update_history(self, bbox3D):
        self.ref_history = tu.update_array(self.ref_history, bbox3D)
        self.history = tu.update_array(self.history, self.ref_history[-1] - self.ref_history[-2])
        # align orientations
        self.history[-1, 3] = self.fix_alpha(self.history[-1, 3])

    def update(self, bbox3D, info):
        self.time_since_update = 0
        self.hits += 1
        self.hit_streak += 1

        # correct orientation flips before feeding the refine LSTM
        if np.pi / 2.0 < abs(bbox3D[3] - self.obj_state[3]) < np.pi * 3 / 2.0:
            bbox3D[3] += np.pi
            if bbox3D[3] > np.pi * 2:
                bbox3D[3] -= np.pi * 2

        with torch.no_grad():
            refined_loc, (self.h_ref, self.c_ref) = self.lstm.refine(
                torch.from_numpy(self.obj_state[:self.loc_dim]).view(1, self.loc_dim).float().to(self.device),
                torch.from_numpy(bbox3D[:self.loc_dim]).view(1, self.loc_dim).float().to(self.device),
                torch.from_numpy(self.prev_ref[:self.loc_dim]).view(1, self.loc_dim).float().to(self.device),
                torch.from_numpy(info).view(1, 1).float().to(self.device),
                (self.h_ref, self.c_ref))

        refined_obj = refined_loc.cpu().numpy().flatten()
        refined_obj[3] = self.fix_alpha(refined_obj[3])
        self.obj_state[:self.loc_dim] = refined_obj
        self.prev_ref = refined_obj
        self.info = info
        self._update_history(refined_obj)

    def predict(self, update_state: bool = True):
        with torch.no_grad():
            pred_loc, hc_0 = self.lstm.predict(
                torch.from_numpy(self.history[..., :self.loc_dim]).view(self.num_frames, -1, self.loc_dim).float().to(
                    self.device),
                torch.from_numpy(self.obj_state[:self.loc_dim]).view(-1, self.loc_dim).float().to(self.device),
                (self.h_pd, self.c_pd))

        pred_state = self.obj_state.copy()
        pred_state[:self.loc_dim] = pred_loc.cpu().numpy().flatten()
        pred_state[7:] = pred_state[:3] - self.prev_ref[:3]
        pred_state[3] = self.fix_alpha(pred_state[3])

        if update_state:
            self.h_pd, self.c_pd = hc_0
            self.obj_state = pred_state

        self.age += 1
        if self.time_since_update > 0:
            self.hit_streak = 0
        self.time_since_update += 1
        return pred_state

    def get_state(self):
        return self.obj_state


class Tracker3D(object):
    """Quasi-dense appearance similarity + 3D motion (LSTM) association."""

    def __init__(self,
                 lstm_ckpt_name=None,
                 loc_dim=7,
                 max_age=10,
                 min_hits=3,
                 match_thres=0.5,
                 w_appearance=0.5,
                 w_motion=0.5,
                 verbose=False):
        self.loc_dim = loc_dim
        self.max_age = max_age
        self.min_hits = min_hits
        self.match_thres = match_thres
        self.w_appearance = w_appearance
        self.w_motion = w_motion
        self.verbose = verbose

        self.tracklets = []
        self.next_id = 0
        self.frame_count = 0
        self.timing = defaultdict(float)

        # The motion model always runs on the first GPU; the detector
        # itself may sit on another one under MMDataParallel.
        self.device = torch.device("cuda")
        self.lstm = VeloLSTM(1, 64, 128, 2, loc_dim).to(self.device)
        if lstm_ckpt_name is not None:
            self.lstm, _ = load_lstm_checkpoint(self.lstm, lstm_ckpt_name, verbose=verbose)
        self.lstm.eval()

    def reset(self):
        self.tracklets = []
        self.next_id = 0
        self.frame_count = 0

    @staticmethod
    def appearance_similarity(det_embeds, trk_embeds):
        """Bi-directional softmax similarity as in QDTrack."""
        if det_embeds.numel() == 0 or trk_embeds.numel() == 0:
            return det_embeds.new_zeros((det_embeds.shape[0], trk_embeds.shape[0]))
        feats = torch.mm(det_embeds, trk_embeds.t())
        d2t = feats.softmax(dim=1)
        t2d = feats.softmax(dim=0)
        return (d2t + t2d) / 2

    @staticmethod
    def motion_similarity(det_boxes, trk_boxes):
        """Centre-distance based similarity in [0, 1]."""
        if len(det_boxes) == 0 or len(trk_boxes) == 0:
            return np.zeros((len(det_boxes), len(trk_boxes)), dtype=np.float32)
        dist = np.linalg.norm(det_boxes[:, None, :3] - trk_boxes[None, :, :3], axis=-1)
        return np.exp(-dist / 5.0)

    def track(self, det_boxes3d, det_embeds, det_scores, det_infos):
        """
        det_boxes3d: (N, 7) numpy, [x, y, z, ry, l, w, h] in world coordinates
        det_embeds: (N, C) torch tensor from the quasi-dense embedding head (on GPU)
        """
        self.frame_count += 1
        torch.cuda.synchronize()
        t0 = time.time()

        # predict all tracklets forward
        trk_boxes = np.array([t.predict() [:self.loc_dim] for t in self.tracklets]).reshape(-1, self.loc_dim)
        if len(self.tracklets) > 0:
            trk_embeds = torch.stack([t.embed for t in self.tracklets]).to(det_embeds.device)
        else:
            trk_embeds = det_embeds.new_zeros((0, det_embeds.shape[1]))
        t1 = time.time()

        det_embeds = F.normalize(det_embeds, dim=1)
        app_sim = self.appearance_similarity(det_embeds, trk_embeds).cpu().numpy()
        mot_sim = self.motion_similarity(det_boxes3d, trk_boxes)
        sim = self.w_appearance * app_sim + self.w_motion * mot_sim

        matched, unmatched_dets = [], list(range(len(det_boxes3d)))
        if sim.size > 0:
            row, col = linear_sum_assignment(-sim)
            for r, c in zip(row, col):
                if sim[r, c] >= self.match_thres:
                    matched.append((r, c))
                    unmatched_dets.remove(r)

        for d, t in matched:
            self.tracklets[t].update(det_boxes3d[d], det_infos[d])
            self.tracklets[t].embed = 0.8 * self.tracklets[t].embed + 0.2 * det_embeds[d]
        for d in unmatched_dets:
            trk = LSTM3DTracker(self.device, self.lstm, det_boxes3d[d], det_infos[d], self.next_id,
                                loc_dim=self.loc_dim)
            trk.embed = det_embeds[d]
            self.tracklets.append(trk)
            self.next_id += 1

        outputs = []
        alive = []
        for trk in self.tracklets:
            if trk.time_since_update < 1 and (trk.hit_streak >= self.min_hits or self.frame_count <= self.min_hits):
                outputs.append(np.concatenate([trk.get_state()[:self.loc_dim], [trk.id]]))
            if trk.time_since_update <= self.max_age:
                alive.append(trk)
        self.tracklets = alive

        self.timing['predict'] += t1 - t0
        self.timing['associate'] += time.time() - t1
        if self.verbose and self.frame_count % 100 == 0:
            print('[Tracker3D] frame {}: {} tracklets, predict {:.1f} ms/f, associate {:.1f} ms/f'.format(
                self.frame_count, len(self.tracklets),
                1000 * self.timing['predict'] / self.frame_count,
                1000 * self.timing['associate'] / self.frame_count))
        return np.array(outputs).reshape(-1, self.loc_dim + 1)
