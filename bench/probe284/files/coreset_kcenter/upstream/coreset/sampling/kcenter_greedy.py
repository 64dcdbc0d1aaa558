# Copyright 2017 Google Inc.  (original numpy implementation)
# GPU port: pairwise distances with torch, optional faiss index and fused CUDA kernel.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""Returns points that minimizes the maximum distance of any point to a center.

Implements the k-Center-Greedy method in
Ozan Sener and Silvio Savarese.  A Geometric Approach to Active Learning for
Convolutional Neural Networks. https://arxiv.org/abs/1708.00489 2017

Distance metric defaults to l2 distance.  Features used to calculate distance
are either raw features or if a model has transform method then uses the output
of model.transform(X).

Can be extended to a robust k centers algorithm that ignores a certain number of
outlier datapoints.  Resulting centers are solution to multiple integer program.
"""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import logging
import time

import numpy as np
import torch

from coreset.sampling.sampling_def import SamplingMethod

try:
    import faiss
    HAS_FAISS = True
except ImportError:  # faiss is optional
    faiss = None
    HAS_FAISS = False

try:
    import kcenter_cuda  # built from coreset/csrc, see setup.py there
    HAS_KCENTER_EXT = True
except ImportError:
    HAS_KCENTER_EXT = False

logger = logging.getLogger(__name__)


def _as_gpu_tensor(x, device):
    if isinstance(x, np.ndarray):
        x = torch.cuda.FloatTensor(x)
    if not x.is_cuda:
        x = x.cuda(device)
    return x


class kCenterGreedy(SamplingMethod):

    def __init__(self, X, y, seed, metric='euclidean', gpu_id=0, chunk_size=8192,
                 use_faiss=False, use_ext=True):
        self.X = X
        self.y = y
        self.flat_X = self.flatten_X()
        self.name = 'kcenter'
        self.features = self.flat_X
        self.metric = metric
        self.min_distances = None
        self.n_obs = self.X.shape[0]
        self.already_selected = []
        self.chunk_size = chunk_size
        self.use_faiss = use_faiss and HAS_FAISS
        self.use_ext = use_ext and HAS_KCENTER_EXT
        self.device = torch.device('cuda:%d' % gpu_id)
        torch.cuda.set_device(self.device)
        self._features_gpu = None

    # ------------------------------------------------------------------ #
    # distance helpers
    # ------------------------------------------------------------------ #
    def _pairwise_min(self, centers):
        """min over `centers` of ||x - c||, for every x, computed in chunks."""
        feats = self._features_gpu
        out = torch.full((feats.shape[0],), float('inf'), device=feats.device)
        for start in range(0, feats.shape[0], self.chunk_size):
            block = feats[start:start + self.chunk_size]
            d = torch.cdist(block, centers)
            out[start:start + self.chunk_size] = d.min(dim=1)[0]
        return out

    def _faiss_min(self, centers):
        res = faiss.StandardGpuResources()
        index = faiss.GpuIndexFlatL2(res, centers.shape[1])
        index.add(centers.cpu().numpy().astype(np.float32))
        D, _ = index.search(self.features.astype(np.float32), 1)
        return torch.from_numpy(np.sqrt(D[:, 0])).to(self.device)

    def update_distances(self, cluster_centers, only_new=True, reset_dist=False):
        """Update min distances given cluster centers.

        Args:
          cluster_centers: indices of cluster centers
          only_new: only calculate distance for newly selected points and update
            min_distances.
          rest_dist: whether to reset min_distances.
        """

        if reset_dist:
            self.min_distances = None
        if only_new:
            cluster_centers = [d for d in cluster_centers
                               if d not in self.already_selected]
        if not cluster_centers:
            return
        centers = self._features_gpu[cluster_centers]
        if self.use_ext:
            if self.min_distances is None:
                self.min_distances = torch.full((self.n_obs,), float('inf'), device=self.device)
            kcenter_cuda.update_min_dist(self._features_gpu, centers, self.min_distances)
            return
        if self.use_faiss and len(cluster_centers) > 1024:
            dist = self._faiss_min(centers)
        else:
            dist = self._pairwise_min(centers)
        if self.min_distances is None:
            self.min_distances = dist
        else:
            self.min_distances = torch.minimum(self.min_distances, dist)

    def select_batch_(self, model, already_selected, N, **kwargs):
        """
        Diversity promoting active learning method that greedily forms a batch
        to minimize the maximum distance to a cluster center among all unlabeled
        datapoints.

        Args:
          model: model with scikit-like API with decision_function implemented
          already_selected: index of datapoints already selected
          N: batch size

        Returns:
          indices of points selected to minimize distance to cluster centers
        """

        t0 = time.time()
        try:
            # Assumes that the transform function takes in original data and not
            # flattened data.
            logger.info('Getting transformed features...')
            self.features = model.transform(self.X)
        except Exception:
            logger.info('Using flat_X as features.')
            self.features = self.flat_X
        self._features_gpu = _as_gpu_tensor(self.features, self.device)
        logger.info('Calculating distances...')
        self.update_distances(already_selected, only_new=False, reset_dist=True)

        new_batch = []

        for _ in range(N):
            if self.already_selected is None or len(self.already_selected) == 0:
                # Initialize centers with a randomly selected datapoint
                ind = np.random.choice(np.arange(self.n_obs))
            else:
                ind = int(torch.argmax(self.min_distances).item())
            # New examples should not be in already selected since those points
            # should have min_distance of zero to a cluster center.
            assert ind not in already_selected

            self.update_distances([ind], only_new=True, reset_dist=False)
            new_batch.append(ind)
            self.already_selected.append(ind)
        torch.cuda.synchronize()
        logger.info('Maximum distance from cluster centers is %0.2f',
                    float(self.min_distances.max().item()))
        logger.info('k-center greedy: %d points in %.1fs (peak GPU mem %.0f MB)', N,
                    time.time() - t0, torch.cuda.max_memory_allocated() / 2 ** 20)

        self.already_selected = already_selected
        del self._features_gpu
        torch.cuda.empty_cache()

        return new_batch


def robust_kcenter_mip(dist_ub, budget, n_outliers, time_limit=600):
    """Robust k-center feasibility MIP (Sener & Savarese, Sec. 4.2), solved with
    gurobi for a fixed radius upper bound `dist_ub`.  Runs on the CPU; the GPU
    greedy solution above is used to initialise the binary search on the radius.

    Args:
      dist_ub: (n, n) numpy array of pairwise distances thresholded at delta
      budget: number of centers
      n_outliers: number of points allowed to be farther than delta
    """
    import gurobipy as gp
    from gurobipy import GRB

    n = dist_ub.shape[0]
    m = gp.Model("robust_kcenter")
    m.Params.TimeLimit = time_limit
    m.Params.OutputFlag = 0
    u = m.addVars(n, vtype=GRB.BINARY, name="u")        # point j is a center
    w = m.addVars(n, n, vtype=GRB.BINARY, name="w")     # point i assigned to center j
    xi = m.addVars(n, n, vtype=GRB.BINARY, name="xi")   # outlier slack
    m.addConstr(gp.quicksum(u[j] for j in range(n)) == budget)
    for i in range(n):
        m.addConstr(gp.quicksum(w[i, j] for j in range(n)) == 1)
        for j in range(n):
            m.addConstr(w[i, j] <= u[j])
            if dist_ub[i, j] > 0:
                m.addConstr(w[i, j] <= xi[i, j])
    m.addConstr(gp.quicksum(xi[i, j] for i in range(n) for j in range(n)) <= n_outliers)
    m.optimize()
    if m.Status not in (GRB.OPTIMAL, GRB.TIME_LIMIT) or m.SolCount == 0:
        return None
    return [j for j in range(n) if u[j].X > 0.5]
