#!/usr/bin/env python

'''
Patch-NetVLAD two-stage retrieval (MIT license, see LICENSE).

Stage 1 ranks the database by NetVLAD global descriptors (faiss, exact L2); stage 2 re-ranks the top
candidates of every query by mutual-nearest-neighbour matching of the patch descriptors, with an
optional RANSAC spatial check.

Run feature_extract.py first, once for the database images and once for the queries. Image lists for
Nordland, Pittsburgh 30k and Tokyo 24/7 are in dataset_imagenames/ (regenerate them with
tools/genImageListFile.py if your data lives elsewhere).

The patch comparison is the expensive part and runs on the GPU when one is available.
'''


import argparse
import configparser
import os

import numpy as np
import torch
from tqdm.auto import tqdm
import faiss

from patchnetvlad.tools.datasets import PlaceDataset
from patchnetvlad.models.local_matcher import calc_keypoint_centers_from_patches, normalise_func
from patchnetvlad.tools.patch_matcher import PatchMatcher
from patchnetvlad.tools import PATCHNETVLAD_ROOT_DIR


def compute_recall(gt, predictions, numQ, n_values, recall_str=''):
    correct_at_n = np.zeros(len(n_values))
    for qIx, pred in enumerate(predictions):
        for i, n in enumerate(n_values):
            # if in top N then also in top NN, where NN > N
            if np.any(np.in1d(pred[:n], gt[qIx])):
                correct_at_n[i:] += 1
                break
    recall_at_n = correct_at_n / numQ
    all_recalls = {}  # make dict for output
    for i, n in enumerate(n_values):
        all_recalls[n] = recall_at_n[i]
        tqdm.write("====> Recall {}@{}: {:.4f}".format(recall_str, n, recall_at_n[i]))
    return all_recalls


def write_kapture_output(opt, eval_set, predictions, outfile_name):
    if not os.path.isdir(opt.result_save_folder):
        os.mkdir(opt.result_save_folder)
    outfile = os.path.join(opt.result_save_folder, outfile_name)
    print('Writing results to', outfile)
    with open(outfile, 'w') as kap_out:
        kap_out.write('# kapture format: 1.0\n')
        kap_out.write('# query_image, map_image\n')
        image_list_array = np.array(eval_set.images)
        for q_idx in range(len(predictions)):
            full_paths = image_list_array[predictions[q_idx]]
            query_full_path = image_list_array[eval_set.numDb + q_idx]
            for ref_image_name in full_paths:
                kap_out.write(query_full_path + ', ' + ref_image_name + '\n')


def write_recalls_output(opt, recalls_netvlad, recalls_patchnetvlad, n_values):
    if not os.path.isdir(opt.result_save_folder):
        os.mkdir(opt.result_save_folder)
    outfile = os.path.join(opt.result_save_folder, 'recalls.txt')
    print('Writing recalls to', outfile)
    with open(outfile, 'w') as rec_out:
        for n in n_values:
            rec_out.write("Recall {}@{}: {:.4f}\n".format('NetVLAD', n, recalls_netvlad[n]))
        for n in n_values:
            rec_out.write("Recall {}@{}: {:.4f}\n".format('PatchNetVLAD', n, recalls_patchnetvlad[n]))


def local_matcher(predictions, eval_set, input_query_local_features_prefix,
                  input_index_local_features_prefix, config, device):

    patch_sizes = [int(s) for s in config['global_params']['patch_sizes'].split(",")]
    strides = [int(s) for s in config['global_params']['strides'].split(",")]
    patch_weights = np.array(config['feature_match']['patchWeights2Use'].split(",")).astype(float)

    all_keypoints = []
    all_indices = []

    tqdm.write('====> Matching Local Features')
    for patch_size, stride in zip(patch_sizes, strides):
        # square patches only
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
            # stored transposed so the matcher can matmul directly
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


def feature_match(eval_set, device, opt, config):
    input_query_local_features_prefix = os.path.join(opt.query_input_features_dir, 'patchfeats')
    input_query_global_features_prefix = os.path.join(opt.query_input_features_dir, 'globalfeats.npy')
    input_index_local_features_prefix = os.path.join(opt.index_input_features_dir, 'patchfeats')
    input_index_global_features_prefix = os.path.join(opt.index_input_features_dir, 'globalfeats.npy')

    qFeat = np.load(input_query_global_features_prefix)
    pool_size = qFeat.shape[1]
    dbFeat = np.load(input_index_global_features_prefix)

    if dbFeat.dtype != np.float32:
        qFeat = qFeat.astype('float32')
        dbFeat = dbFeat.astype('float32')

    tqdm.write('====> Building faiss index')
    faiss_index = faiss.IndexFlatL2(pool_size)
    # noinspection PyArgumentList
    faiss_index.add(dbFeat)

    n_values = []
    for n_value in config['feature_match']['n_values_all'].split(","):
        n_values.append(int(n_value))

    if config['feature_match']['pred_input_path'] != 'None':
        predictions = np.load(config['feature_match']['pred_input_path'])  # precomputed stage-1 ranking
    else:
        if opt.ground_truth_path and 'tokyo247' in opt.ground_truth_path:
            print('Tokyo24/7: Selecting only one of the 12 cutouts per panorama')
            # database panoramas are stored as 12 perspective cutouts: keep the best cutout per panorama
            # noinspection PyArgumentList
            _, predictions = faiss_index.search(qFeat, max(n_values) * 12)  # 12 cutouts per panorama
            predictions_new = []
            for qIx, pred in enumerate(predictions):
                _, idx = np.unique(np.floor(pred / 12).astype(np.int), return_index=True)
                pred = pred[np.sort(idx)]
                pred = pred[:max(n_values)]
                predictions_new.append(pred)
            predictions = np.array(predictions_new)
        else:
            # noinspection PyArgumentList
            _, predictions = faiss_index.search(qFeat, min(len(dbFeat), max(n_values)))

    reranked_predictions = local_matcher(predictions, eval_set, input_query_local_features_prefix,
                                         input_index_local_features_prefix, config, device)

    # kapture-style pair lists for both stages
    write_kapture_output(opt, eval_set, predictions, 'NetVLAD_predictions.txt')
    write_kapture_output(opt, eval_set, reranked_predictions, 'PatchNetVLAD_predictions.txt')

    print('Finished matching features.')

    if opt.ground_truth_path is not None:
        print('Calculating recalls using ground truth.')
        gt = eval_set.get_positives()

        global_recalls = compute_recall(gt, predictions, eval_set.numQ, n_values, 'NetVLAD')
        local_recalls = compute_recall(gt, reranked_predictions, eval_set.numQ, n_values, 'PatchNetVLAD')

        write_recalls_output(opt, global_recalls, local_recalls, n_values)
    else:
        print('No ground truth was provided; not calculating recalls.')


def main():
    parser = argparse.ArgumentParser(description='Patch-NetVLAD-Feature-Match')
    parser.add_argument('--config_path', type=str, default=os.path.join(PATCHNETVLAD_ROOT_DIR, 'configs/performance.ini'),
                        help='File name (with extension) to an ini file that stores most of the configuration data for patch-netvlad')
    parser.add_argument('--dataset_root_dir', type=str, default='',
                        help='If the files in query_file_path and index_file_path are relative, use dataset_root_dir as prefix.')
    parser.add_argument('--query_file_path', type=str, required=True,
                        help='Path (with extension) to a text file that stores the save location and name of all query images in the dataset')
    parser.add_argument('--index_file_path', type=str, required=True,
                        help='Path (with extension) to a text file that stores the save location and name of all database images in the dataset')
    parser.add_argument('--query_input_features_dir', type=str, required=True,
                        help='Path to load all query patch-netvlad features')
    parser.add_argument('--index_input_features_dir', type=str, required=True,
                        help='Path to load all database patch-netvlad features')
    parser.add_argument('--ground_truth_path', type=str, default=None,
                        help='Path (with extension) to a file that stores the ground-truth data')
    parser.add_argument('--result_save_folder', type=str, default='results')
    parser.add_argument('--posDistThr', type=int, default=None, help='Manually set ground truth threshold')
    parser.add_argument('--nocuda', action='store_true', help='If true, use CPU only. Else use GPU.')

    opt = parser.parse_args()
    print(opt)

    configfile = opt.config_path
    assert os.path.isfile(configfile)
    config = configparser.ConfigParser()
    config.read(configfile)

    cuda = not opt.nocuda
    if cuda and not torch.cuda.is_available():
        raise Exception("No GPU found, please run with --nocuda")

    device = torch.device("cuda" if cuda else "cpu")

    if not os.path.isfile(opt.query_file_path):
        opt.query_file_path = os.path.join(PATCHNETVLAD_ROOT_DIR, 'dataset_imagenames', opt.query_file_path)
    if not os.path.isfile(opt.index_file_path):
        opt.index_file_path = os.path.join(PATCHNETVLAD_ROOT_DIR, 'dataset_imagenames', opt.index_file_path)

    dataset = PlaceDataset(opt.query_file_path, opt.index_file_path, opt.dataset_root_dir, opt.ground_truth_path,
                           config['feature_extract'], posDistThr=opt.posDistThr)

    feature_match(dataset, device, opt, config)

    torch.cuda.empty_cache()  # release cached GPU memory before the next run in the same process


if __name__ == "__main__":
    main()
