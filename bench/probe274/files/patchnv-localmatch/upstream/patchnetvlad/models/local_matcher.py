'''
MIT License

Copyright (c) 2021 Stephen Hausler, Sourav Garg, Ming Xu, Michael Milford and Tobias Fischer

Performs local feature matching (re-ranking) of the NetVLAD top-k candidates using
Patch-NetVLAD patch descriptors. Works on whatever device the caller passes in;
the heavy mutual-nearest-neighbour search is done with torch so that it runs on the GPU
when one is available.
'''

import os
import numpy as np
import torch
from tqdm.auto import tqdm
import cv2

from patchnetvlad.tools.patch_matcher import PatchMatcher


def calc_keypoint_centers_from_patches(config, patch_size_h, patch_size_w, stride_h, stride_w):
    '''
    Calculate patch positions in image space, given patch size and stride.
    '''
    H = int(int(config['imageresizeH']) / 16)  # 16 is the vgg scaling from image space to feature space (conv5)
    W = int(int(config['imageresizeW']) / 16)
    padding_size = [0, 0]
    patch_size = (int(patch_size_h), int(patch_size_w))
    stride = (int(stride_h), int(stride_w))

    Hout = int((H + (2 * padding_size[0]) - patch_size[0]) / stride[0] + 1)
    Wout = int((W + (2 * padding_size[1]) - patch_size[1]) / stride[1] + 1)

    boundary_bot = int((2 * padding_size[0] + H - patch_size[0]) / stride[0] + 1)
    boundary_right = int((2 * padding_size[1] + W - patch_size[1]) / stride[1] + 1)

    keypoints = np.zeros((2, Hout * Wout), dtype=int)
    k = 0

    for i in range(0, boundary_bot, stride[0]):
        for j in range(0, boundary_right, stride[1]):
            keypoints[0, k] = ((j * 16) + (patch_size[1] * 16) / 2)
            keypoints[1, k] = ((i * 16) + (patch_size[0] * 16) / 2)
            k += 1

    return keypoints, [Hout, Wout]


def torch_nn(x, y):
    '''
    Mutual nearest neighbour between two sets of L2-normalised descriptors.
    x: (D, N) y: (D, M)
    '''
    mul = torch.matmul(x, y)

    dist = 2 - 2 * mul + 1e-9
    dist = torch.sqrt(dist)

    _, fw_inds = torch.min(dist, 0)
    bw_inds = torch.argmin(dist, 1)

    return fw_inds, bw_inds


def normalise_func(input_diff, num_patches, patch_weights):
    normed_diff = 0
    if len(patch_weights) != num_patches:
        raise ValueError('The number of patch weights must equal the number of patches used')
    for i in range(num_patches):
        normed_diff = normed_diff + (patch_weights[i] * input_diff[i])
    return normed_diff


def local_matcher(predictions, eval_set, input_query_local_features_prefix,
                  input_index_local_features_prefix, config, device):
    patch_sizes = [int(s) for s in config['global_params']['patch_sizes'].split(",")]
    strides = [int(s) for s in config['global_params']['strides'].split(",")]
    patch_weights = np.array(config['feature_match']['patchWeights2Use'].split(",")).astype(float)

    all_keypoints = []
    all_indices = []

    tqdm.write('====> Matching Local Features')
    for patch_size, stride in zip(patch_sizes, strides):
        # we currently only provide support for square patches, but this can be easily modified for future works
        keypoints, indices = calc_keypoint_centers_from_patches(config['feature_match'], patch_size, patch_size,
                                                                stride, stride)
        all_keypoints.append(keypoints)
        all_indices.append(indices)

    matcher = PatchMatcher(config['feature_match']['matcher'], patch_sizes, strides, all_keypoints,
                           all_indices)

    reordered_preds = []

    for q_idx, pred in enumerate(tqdm(predictions, leave=False, desc='Patch compare pred')):
        diffs = np.zeros((predictions.shape[1], len(patch_sizes)))
        image_name_query = os.path.splitext(os.path.basename(eval_set.images[eval_set.numDb + q_idx]))[0]
        qfeat = []
        for patch_size in patch_sizes:
            qfilename = input_query_local_features_prefix + '_' + 'psize{}_'.format(patch_size) + image_name_query + '.npy'
            qfeat.append(torch.transpose(torch.tensor(np.load(qfilename), device=device), 0, 1))
            # we pre-transpose here to save compute speed
        for k, candidate in enumerate(pred):
            image_name_index = os.path.splitext(os.path.basename(eval_set.images[candidate]))[0]
            dbfeat = []
            for patch_size in patch_sizes:
                dbfilename = input_index_local_features_prefix + '_' + 'psize{}_'.format(patch_size) + image_name_index + '.npy'
                dbfeat.append(torch.tensor(np.load(dbfilename), device=device))

            diffs[k, :], _, _ = matcher.match(qfeat, dbfeat)

        diffs = normalise_func(diffs, len(patch_sizes), patch_weights)
        cand_sorted = np.argsort(diffs)
        reordered_preds.append(pred[cand_sorted])

    return reordered_preds


def ransac_inliers(keypoints_q, keypoints_db, matches_q, matches_db, patch_size):
    '''
    RANSAC on matched patch centres; returns the number of inliers (negated, lower is better).
    Runs on the CPU via OpenCV -- the descriptors have already been matched on the device.
    '''
    src = np.transpose(keypoints_q[:, matches_q.cpu().numpy()]).astype(np.float32)
    dst = np.transpose(keypoints_db[:, matches_db.cpu().numpy()]).astype(np.float32)
    if src.shape[0] < 4:
        return 0
    err_thres = 2 * 16 * patch_size / 5  # upper bound on the patch misalignment in pixels
    _, mask = cv2.findHomography(src, dst, cv2.FM_RANSAC, ransacReprojThreshold=err_thres)
    if mask is None:
        return 0
    return -1.0 * float(np.sum(mask))


def rank_queries_on_gpu_if_possible(qfeats, dbfeats):
    '''
    Legacy helper kept for the spatial-approximator branch; the name is historical,
    it simply runs on whatever device the tensors are on.
    '''
    scores = []
    for q, db in zip(qfeats, dbfeats):
        fw_inds, bw_inds = torch_nn(q, db)
        ind = torch.arange(fw_inds.shape[0], device=fw_inds.device)
        mutuals = ind[bw_inds[fw_inds] == ind]
        scores.append(-float(mutuals.shape[0]))
    return scores
