"""Extract SMPL-H joint positions from AMASS / HumanAct12 for HumanML3D.

Exported from raw_pose_processing.ipynb. Runs the SMPL-H body model over every AMASS sequence
(downsampled to 20 fps) and writes one (T, 52, 3) .npy of joint positions per sequence into
./pose_data. Expect ~2 hours on a single GPU; the CPU path works but is very slow.
"""
import os
import sys
import codecs as cs
from os.path import join as pjoin

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from human_body_prior.tools.omni_tools import copy2cpu as c2c
from human_body_prior.body_model.body_model import BodyModel

os.environ['PYOPENGL_PLATFORM'] = 'egl'

# Choose the device to run the body model on
comp_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

male_bm_path = './body_models/smplh/male/model.npz'
male_dmpl_path = './body_models/dmpls/male/model.npz'

female_bm_path = './body_models/smplh/female/model.npz'
female_dmpl_path = './body_models/dmpls/female/model.npz'

num_betas = 10  # number of body parameters
num_dmpls = 8  # number of DMPL parameters

male_bm = BodyModel(bm_fname=male_bm_path, num_betas=num_betas, num_dmpls=num_dmpls, dmpl_fname=male_dmpl_path).to(comp_device)
faces = c2c(male_bm.f)

female_bm = BodyModel(bm_fname=female_bm_path, num_betas=num_betas, num_dmpls=num_dmpls, dmpl_fname=female_dmpl_path).to(comp_device)

paths = []
folders = []
dataset_names = []
for root, dirs, files in os.walk('./amass_data'):
    folders.append(root)
    for name in files:
        dataset_name = root.split('/')[2]
        if dataset_name not in dataset_names:
            dataset_names.append(dataset_name)
        paths.append(os.path.join(root, name))

save_root = './pose_data'
save_folders = [folder.replace('./amass_data', './pose_data') for folder in folders]
for folder in save_folders:
    os.makedirs(folder, exist_ok=True)
group_path = [[path for path in paths if name in path] for name in dataset_names]

trans_matrix = np.array([[1.0, 0.0, 0.0],
                         [0.0, 0.0, 1.0],
                         [0.0, 1.0, 0.0]])
ex_fps = 20


def amass_to_pose(src_path, save_path):
    bdata = np.load(src_path, allow_pickle=True)
    fps = 0
    try:
        fps = bdata['mocap_framerate']
        frame_number = bdata['trans'].shape[0]
    except:
        # print(list(bdata.keys()))
        return fps

    fId = 0  # frame id of the mocap sequence
    pose_seq = []
    if bdata['gender'] == 'male':
        bm = male_bm
    else:
        bm = female_bm
    down_sample = int(fps / ex_fps)
    # print(frame_number)
    # print(fps)

    bdata_poses = bdata['poses'][::down_sample, ...]
    bdata_trans = bdata['trans'][::down_sample, ...]
    body_parms = {
        'root_orient': torch.Tensor(bdata_poses[:, :3]).to(comp_device),
        'pose_body': torch.Tensor(bdata_poses[:, 3:66]).to(comp_device),
        'pose_hand': torch.Tensor(bdata_poses[:, 66:]).to(comp_device),
        'trans': torch.Tensor(bdata_trans).to(comp_device),
        'betas': torch.Tensor(np.repeat(bdata['betas'][:num_betas][np.newaxis], repeats=len(bdata_trans), axis=0)).to(comp_device),
    }

    with torch.no_grad():
        body = bm(**body_parms)
    pose_seq_np = body.Jtr.detach().cpu().numpy()
    pose_seq_np_n = np.dot(pose_seq_np, trans_matrix)

    np.save(save_path, pose_seq_np_n)
    return fps


def main():
    group_path_total = sum(len(g) for g in group_path)
    print(f'Processing {group_path_total} sequences from {len(dataset_names)} sub-datasets on {comp_device}')
    all_count = sum([len(paths) for paths in group_path])
    cur_count = 0

    for paths in group_path:
        dataset_name = paths[0].split('/')[2]
        pbar = tqdm(paths)
        pbar.set_description('Processing: %s' % dataset_name)
        fps = 0
        for path in pbar:
            save_path = path.replace('./amass_data', './pose_data')
            save_path = save_path[:-3] + 'npy'
            fps = amass_to_pose(path, save_path)

        cur_count += len(paths)
        print('Processed / All (fps %d): %d/%d' % (fps, cur_count, all_count))

    # HumanAct12 poses are already joint positions; just copy them over
    humanact_src = './humanact12'
    humanact_dst = './pose_data/humanact12'
    if os.path.isdir(humanact_src):
        os.makedirs(humanact_dst, exist_ok=True)
        for f in sorted(os.listdir(humanact_src)):
            if f.endswith('.npy'):
                data = np.load(pjoin(humanact_src, f))
                np.save(pjoin(humanact_dst, f), data)

    index_path = './index.csv'
    if os.path.exists(index_path):
        index_file = pd.read_csv(index_path)
        print(f'index.csv lists {index_file.shape[0]} clips')


if __name__ == '__main__':
    main()
