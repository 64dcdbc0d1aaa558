# Copyright (c) Chris Choy (chrischoy@ai.stanford.edu) and Wei Dong (weidong@andrew.cmu.edu)
#
# Please cite the following papers if you use any part of the code.
# - Christopher Choy, Wei Dong, Vladlen Koltun, Deep Global Registration, CVPR 2020
# - Christopher Choy, Jaesik Park, Vladlen Koltun, Fully Convolutional Geometric Features, ICCV 2019
import torch
import numpy as np
from scipy.spatial import cKDTree

from core.metrics import pdist


def find_knn_cpu(feat0, feat1, knn=1, return_distance=False):
  feat1tree = cKDTree(feat1)
  dists, nn_inds = feat1tree.query(feat0, k=knn, n_jobs=-1)
  if return_distance:
    return nn_inds, dists
  else:
    return nn_inds


def find_knn_gpu(F0, F1, nn_max_n=-1, knn=1, return_distance=False):

  def knn_dist(f0, f1, knn=1, dist_type='L2'):
    knn_dists, knn_inds = [], []
    with torch.no_grad():
      dist = pdist(f0, f1, dist_type=dist_type)
      min_dist, ind = dist.min(dim=1, keepdim=True)

      knn_dists.append(min_dist)
      knn_inds.append(ind)

      if knn > 1:
        for k in range(knn - 1):
          NR, NC = dist.shape
          flat_ind = (torch.arange(NR) * NC).type_as(ind) + ind.squeeze()
          dist.view(-1)[flat_ind] = np.inf
          min_dist, ind = dist.min(dim=1, keepdim=True)

          knn_dists.append(min_dist)
          knn_inds.append(ind)

    min_dist = torch.cat(knn_dists, 1)
    ind = torch.cat(knn_inds, 1)

    return min_dist, ind

  # Too much memory if F0 or F1 large. Divide the F0
  if nn_max_n > 1:
    N = len(F0)
    C = int(np.ceil(N / nn_max_n))
    stride = nn_max_n
    dists, inds = [], []

    for i in range(C):
      with torch.no_grad():
        dist, ind = knn_dist(F0[i * stride:(i + 1) * stride], F1, knn=knn, dist_type='L2')
      dists.append(dist)
      inds.append(ind)
      # the (stride x N1) distance block can be huge, give it back before the next chunk
      torch.cuda.empty_cache()

    dists = torch.cat(dists)
    inds = torch.cat(inds)
    assert len(inds) == N

  else:
    dist = pdist(F0, F1, dist_type='SquareL2')
    min_dist, inds = dist.min(dim=1)
    dists = min_dist.detach().unsqueeze(1)  # .cpu()
    inds = inds.unsqueeze(1)

  if return_distance:
    return inds, dists
  else:
    return inds


def find_knn_batch(F0,
                   F1,
                   len_batch,
                   nn_max_n=-1,
                   knn=1,
                   return_distance=False,
                   dist_type='L2'):
  dists, nns = [], []
  start0, start1 = 0, 0
  for N0, N1 in len_batch:
    nn = find_knn_gpu(F0[start0:start0 + N0],
                      F1[start1:start1 + N1],
                      nn_max_n=nn_max_n,
                      knn=knn,
                      return_distance=return_distance)
    if return_distance:
      nn, dist = nn
      dists.append(dist)
    if isinstance(nn, list):
      nn = torch.tensor(nn)
    nns.append(nn)
    start0 += N0
    start1 += N1

  if return_distance:
    return nns, dists
  else:
    return nns


def find_knn_auto(F0, F1, knn=1, return_distance=False, use_gpu=True):
  """Dispatch to the dense (accelerator) kNN or to the KD-tree on the host."""
  if use_gpu and F0.is_cuda:
    return find_knn_gpu(F0, F1, nn_max_n=1000, knn=knn, return_distance=return_distance)
  F0_np = F0.detach().cpu().numpy() if isinstance(F0, torch.Tensor) else F0
  F1_np = F1.detach().cpu().numpy() if isinstance(F1, torch.Tensor) else F1
  return find_knn_cpu(F0_np, F1_np, knn=knn, return_distance=return_distance)
