"""Generate ground-truth density maps (.h5) for ShanghaiTech / UCF_CC_50.

Geometry-adaptive Gaussian kernels as in MCNN / CSRNet:
    sigma_i = beta * mean distance to the 3 nearest neighbours (beta = 0.3 here, 0.1 * sum)

The k-NN search is the slow part for dense scenes (part A has images with >3000 heads), so
`--use_gpu` computes the pairwise distances with torch.cdist on the GPU. The Gaussian
rendering itself stays on the CPU with scipy.
"""
import argparse
import glob
import json
import os

import h5py
import numpy as np
import PIL.Image as Image
import scipy
import scipy.io as io
import scipy.spatial
from scipy.ndimage import gaussian_filter
import torch

from matplotlib import cm as CM
from matplotlib import pyplot as plt


def knn_distances(pts, k=4, use_gpu=False):
    """Distances from every point to its k nearest points (itself included, column 0)."""
    if use_gpu and torch.cuda.is_available():
        p = torch.from_numpy(pts.astype(np.float32)).cuda()
        d = torch.cdist(p, p)
        dist, idx = d.topk(min(k, p.shape[0]), dim=1, largest=False)
        return dist.cpu().numpy(), idx.cpu().numpy()
    leafsize = 2048
    # build kdtree
    tree = scipy.spatial.KDTree(pts.copy(), leafsize=leafsize)
    # query kdtree
    distances, locations = tree.query(pts, k=k)
    return distances, locations


def gaussian_filter_density(gt, use_gpu=False, fixed_sigma=None):
    print(gt.shape)
    density = np.zeros(gt.shape, dtype=np.float32)
    gt_count = np.count_nonzero(gt)
    if gt_count == 0:
        return density

    pts = np.array(list(zip(np.nonzero(gt)[1], np.nonzero(gt)[0])))
    if fixed_sigma is None:
        distances, _ = knn_distances(pts, k=4, use_gpu=use_gpu)

    print('generate density...')
    for i, pt in enumerate(pts):
        pt2d = np.zeros(gt.shape, dtype=np.float32)
        pt2d[pt[1], pt[0]] = 1.
        if fixed_sigma is not None:
            sigma = fixed_sigma
        elif gt_count > 1:
            sigma = (distances[i][1] + distances[i][2] + distances[i][3]) * 0.1
        else:
            sigma = np.average(np.array(gt.shape)) / 2. / 2.  # case: 1 point
        density += gaussian_filter(pt2d, sigma, mode='constant')
    print('done.')
    return density


def points_from_mat(mat_path):
    mat = io.loadmat(mat_path)
    if 'image_info' in mat:
        return mat["image_info"][0, 0][0, 0][0]
    # UCF_CC_50 style annotation
    return mat['annPoints']


def process(img_paths, use_gpu=False, fixed_sigma=None, overwrite=False):
    for img_path in img_paths:
        out_path = img_path.replace('.jpg', '.h5').replace('images', 'ground_truth')
        if os.path.exists(out_path) and not overwrite:
            continue
        print(img_path)
        mat_path = img_path.replace('.jpg', '.mat').replace('images', 'ground_truth').replace('IMG_', 'GT_IMG_')
        gt = points_from_mat(mat_path)
        img = plt.imread(img_path)
        k = np.zeros((img.shape[0], img.shape[1]))
        for i in range(0, len(gt)):
            if int(gt[i][1]) < img.shape[0] and int(gt[i][0]) < img.shape[1]:
                k[int(gt[i][1]), int(gt[i][0])] = 1
        k = gaussian_filter_density(k, use_gpu=use_gpu, fixed_sigma=fixed_sigma)
        with h5py.File(out_path, 'w') as hf:
            hf['density'] = k


def make_json_lists(root, out_dir):
    for part in ['A', 'B']:
        for split in ['train', 'test']:
            d = os.path.join(root, 'part_%s_final' % part, '%s_data' % split, 'images')
            paths = sorted(glob.glob(os.path.join(d, '*.jpg')))
            with open(os.path.join(out_dir, 'part_%s_%s.json' % (part, split)), 'w') as f:
                json.dump(paths, f)


def show_sample(img_path):
    gt_file = h5py.File(img_path.replace('.jpg', '.h5').replace('images', 'ground_truth'), 'r')
    groundtruth = np.asarray(gt_file['density'])
    plt.imshow(Image.open(img_path))
    plt.figure()
    plt.imshow(groundtruth, cmap=CM.jet)
    print('count:', np.sum(groundtruth))
    plt.show()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--root', default='../ShanghaiTech/')
    parser.add_argument('--use_gpu', action='store_true', help='k-NN on the GPU (needs CUDA)')
    parser.add_argument('--fixed_sigma', type=float, default=None,
                        help='use a fixed Gaussian (part B uses 15 in some papers)')
    parser.add_argument('--json_dir', default='./')
    parser.add_argument('--overwrite', action='store_true')
    args = parser.parse_args()

    part_A_train = os.path.join(args.root, 'part_A_final/train_data', 'images')
    part_A_test = os.path.join(args.root, 'part_A_final/test_data', 'images')
    part_B_train = os.path.join(args.root, 'part_B_final/train_data', 'images')
    part_B_test = os.path.join(args.root, 'part_B_final/test_data', 'images')

    # now generate the ShanghaiA's ground truth
    path_sets = [part_A_train, part_A_test]
    img_paths = []
    for path in path_sets:
        for img_path in glob.glob(os.path.join(path, '*.jpg')):
            img_paths.append(img_path)
    process(img_paths, use_gpu=args.use_gpu, overwrite=args.overwrite)

    # now generate the ShanghaiB's ground truth
    path_sets = [part_B_train, part_B_test]
    img_paths = []
    for path in path_sets:
        for img_path in glob.glob(os.path.join(path, '*.jpg')):
            img_paths.append(img_path)
    process(img_paths, use_gpu=args.use_gpu, fixed_sigma=args.fixed_sigma, overwrite=args.overwrite)

    make_json_lists(args.root, args.json_dir)
