# Author: Xinshuo Weng
# email: xinshuo.weng@gmail.com
#
# Data association for the batched tracker. Affinities are computed on
# whatever device the detections live on; only the final assignment runs on
# the host (scipy's Hungarian solver has no GPU equivalent worth the hassle).

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from shapely.geometry import Polygon

try:
    # rotated-box IoU kernel from mmcv-full (compiled with CUDA); ~50x faster
    # than the shapely fallback on nuScenes-sized frames
    from mmcv.ops import box_iou_rotated
    HAS_MMCV_OPS = True
except ImportError:
    HAS_MMCV_OPS = False


def boxes_to_corners_bev(boxes):
    """boxes: (N, 7) [x, y, z, theta, l, w, h] -> (N, 4, 2) BEV corners (x-z plane in KITTI camera coords)."""
    x, z, theta = boxes[:, 0], boxes[:, 2], boxes[:, 3]
    l, w = boxes[:, 4], boxes[:, 5]
    c, s = torch.cos(theta), torch.sin(theta)
    dx = torch.stack([l, -l, -l, l], dim=1) / 2
    dz = torch.stack([w, w, -w, -w], dim=1) / 2
    cx = x.unsqueeze(1) + dx * c.unsqueeze(1) + dz * s.unsqueeze(1)
    cz = z.unsqueeze(1) - dx * s.unsqueeze(1) + dz * c.unsqueeze(1)
    return torch.stack([cx, cz], dim=-1)


def _iou_bev_shapely(boxes_a, boxes_b):
    corners_a = boxes_to_corners_bev(boxes_a).cpu().numpy()
    corners_b = boxes_to_corners_bev(boxes_b).cpu().numpy()
    inter = np.zeros((len(corners_a), len(corners_b)), dtype=np.float32)
    polys_b = [Polygon(cb) for cb in corners_b]
    for i, ca in enumerate(corners_a):
        pa = Polygon(ca)
        for j, pb in enumerate(polys_b):
            inter[i, j] = pa.intersection(pb).area
    return torch.from_numpy(inter).to(boxes_a.device)


def inter_bev(boxes_a, boxes_b):
    """Pairwise BEV intersection area, (N, M)."""
    if HAS_MMCV_OPS and boxes_a.is_cuda:
        # mmcv expects (x_ctr, y_ctr, w, h, angle); our BEV plane is x-z
        ra = torch.stack([boxes_a[:, 0], boxes_a[:, 2], boxes_a[:, 4], boxes_a[:, 5], boxes_a[:, 3]], dim=1)
        rb = torch.stack([boxes_b[:, 0], boxes_b[:, 2], boxes_b[:, 4], boxes_b[:, 5], boxes_b[:, 3]], dim=1)
        iou = box_iou_rotated(ra, rb)
        area_a = (boxes_a[:, 4] * boxes_a[:, 5]).unsqueeze(1)
        area_b = (boxes_b[:, 4] * boxes_b[:, 5]).unsqueeze(0)
        return iou * (area_a + area_b) / (1 + iou)
    return _iou_bev_shapely(boxes_a, boxes_b)


def giou3d_matrix(dets, trks):
    """Generalised 3D IoU between every detection and every predicted track."""
    n, m = dets.shape[0], trks.shape[0]
    if n == 0 or m == 0:
        return dets.new_zeros((n, m))

    inter_area = inter_bev(dets, trks)

    # height overlap (y is the vertical axis in KITTI camera coordinates)
    ya_max = (dets[:, 1]).unsqueeze(1)
    ya_min = (dets[:, 1] - dets[:, 6]).unsqueeze(1)
    yb_max = (trks[:, 1]).unsqueeze(0)
    yb_min = (trks[:, 1] - trks[:, 6]).unsqueeze(0)
    overlap_h = (torch.min(ya_max, yb_max) - torch.max(ya_min, yb_min)).clamp(min=0)
    union_h = torch.max(ya_max, yb_max) - torch.min(ya_min, yb_min)

    inter_vol = inter_area * overlap_h
    vol_a = (dets[:, 4] * dets[:, 5] * dets[:, 6]).unsqueeze(1)
    vol_b = (trks[:, 4] * trks[:, 5] * trks[:, 6]).unsqueeze(0)
    union_vol = vol_a + vol_b - inter_vol

    # enclosing box approximated by the axis-aligned hull of both BEV footprints
    ca = boxes_to_corners_bev(dets)
    cb = boxes_to_corners_bev(trks)
    min_xy = torch.min(ca.min(dim=1)[0].unsqueeze(1), cb.min(dim=1)[0].unsqueeze(0))
    max_xy = torch.max(ca.max(dim=1)[0].unsqueeze(1), cb.max(dim=1)[0].unsqueeze(0))
    hull_area = (max_xy - min_xy).prod(dim=-1)
    hull_vol = hull_area * union_h

    iou = inter_vol / union_vol.clamp(min=1e-6)
    return iou - (hull_vol - union_vol) / hull_vol.clamp(min=1e-6)


def dist3d_matrix(dets, trks):
    return torch.cdist(dets[:, :3].contiguous(), trks[:, :3].contiguous())


def compute_affinity(dets, trks, metric, trk_inv_inn_matrices=None, kf=None):
    # compute affinity matrix, (N x M) on the tracking device
    if metric == 'giou_3d':
        aff = giou3d_matrix(dets, trks)
    elif metric == 'dist_3d':
        aff = -dist3d_matrix(dets, trks)
    elif metric == 'm_dis':
        assert kf is not None, 'Mahalanobis distance needs the filter covariances'
        aff = -kf.mahalanobis(dets, trks)
    else:
        assert False, 'error'
    return aff


def greedy_matching(cost_matrix):
    # association in the greedy manner
    # refer to https://github.com/eddyhkchiu/mahalanobis_3d_multi_object_tracking/blob/master/main.py

    num_dets, num_trks = cost_matrix.shape[0], cost_matrix.shape[1]

    # sort all costs and then convert to 2D
    distance_1d = cost_matrix.reshape(-1)
    index_1d = np.argsort(distance_1d)
    index_2d = np.stack([index_1d // num_trks, index_1d % num_trks], axis=1)

    # assign matches one by one given the sorting, but first come first serves
    det_matches_to_trk = [-1] * num_dets
    trk_matches_to_det = [-1] * num_trks
    matched_indices = []
    for sort_i in range(index_2d.shape[0]):
        det_id = int(index_2d[sort_i][0])
        trk_id = int(index_2d[sort_i][1])

        # if both id has not been matched yet
        if trk_matches_to_det[trk_id] == -1 and det_matches_to_trk[det_id] == -1:
            trk_matches_to_det[trk_id] = det_id
            det_matches_to_trk[det_id] = trk_id
            matched_indices.append([det_id, trk_id])

    return np.asarray(matched_indices)


def data_association(dets, trks, metric, threshold, algm='greedy', trk_innovation_matrix=None, hypothesis=1,
                     kf=None):
    """
    Assigns detections to tracked object

    dets:  a tensor of N x 7 (x, y, z, theta, l, w, h), on the tracking device
    trks:  a tensor of M x 7, on the same device
    affinity: N x M
    """

    # if there is no item in either row/col, skip the association and return all as unmatched
    aff = dets.new_zeros((dets.shape[0], trks.shape[0]))
    if dets.shape[0] == 0 or trks.shape[0] == 0:
        return np.empty((0, 2), dtype=int), np.arange(dets.shape[0]), [], 0, aff

    # prepare inverse innovation matrix for m_dis
    if metric == 'm_dis':
        assert trk_innovation_matrix is not None, 'error'

    # compute affinity matrix
    aff = compute_affinity(dets, trks, metric, trk_innovation_matrix, kf=kf)

    # the assignment itself runs on the host
    aff_np = aff.detach().cpu().numpy()

    # association based on the affinity matrix
    if hypothesis == 1:
        if algm == 'hungar':
            row_ind, col_ind = linear_sum_assignment(-aff_np)  # hougarian algorithm
            matched_indices = np.stack((row_ind, col_ind), axis=1)
        elif algm == 'greedy':
            matched_indices = greedy_matching(-aff_np)  # greedy matching
        else: assert False, 'error'
    else:
        raise NotImplementedError('multi-hypothesis association is not ported yet')

    # compute total cost
    cost = 0
    for row_index in range(matched_indices.shape[0]):
        cost -= aff_np[matched_indices[row_index, 0], matched_indices[row_index, 1]]

    # save for unmatched objects
    unmatched_dets = []
    for d in range(dets.shape[0]):
        if (d not in matched_indices[:, 0]): unmatched_dets.append(d)
    unmatched_trks = []
    for t in range(trks.shape[0]):
        if len(matched_indices) == 0 or (t not in matched_indices[:, 1]): unmatched_trks.append(t)

    # filter out matches with low affinity
    matches = []
    for m in matched_indices:
        if (aff_np[m[0], m[1]] < threshold):
            unmatched_dets.append(m[0])
            unmatched_trks.append(m[1])
        else: matches.append(m.reshape(1, 2))
    if len(matches) == 0:
        matches = np.empty((0, 2), dtype=int)
    else: matches = np.concatenate(matches, axis=0)

    return matches, np.array(unmatched_dets), np.array(unmatched_trks), cost, aff
