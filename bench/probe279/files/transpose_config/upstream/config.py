r"""
    Config for paths, joint set, and normalizing scales.
"""

import os
import torch


# datasets (directory names) in AMASS
# e.g., for ACCAD, the path should be `paths.raw_amass_dir/ACCAD/ACCAD/s001/*.npz`
amass_data = ['HumanEva', 'MPI_HDM05', 'SFU', 'MPI_mosh', 'Transitions_mocap', 'SSM_synced', 'CMU',
              'TotalCapture', 'Eyes_Japan_Dataset', 'KIT', 'BMLmovi', 'EKUT', 'TCD_handMocap', 'ACCAD',
              'BioMotionLab_NTroje', 'BMLhandball', 'MPI_Limits', 'DFaust_67']


class paths:
    raw_amass_dir = 'data/dataset_raw/AMASS'      # e.g., ACCAD/ACCAD/s001/*.npz
    amass_dir = 'data/dataset_work/AMASS'         # output path for the synthetic AMASS dataset

    raw_dipimu_dir = 'data/dataset_raw/DIP_IMU'   # e.g., s_01/*.pkl
    dipimu_dir = 'data/dataset_work/DIP_IMU'      # output path for the preprocessed DIP-IMU dataset

    # DIP recalculates the SMPL shape parameters for TotalCapture, please download them from the DIP website
    raw_totalcapture_dip_dir = 'data/dataset_raw/TotalCapture/DIP_recalculate'  # e.g., s1_acting1.pkl
    raw_totalcapture_official_dir = 'data/dataset_raw/TotalCapture/official'    # e.g., S1/acting1_Xsens_AuxFields.sensors
    totalcapture_dir = 'data/dataset_work/TotalCapture'          # output path for the preprocessed TotalCapture dataset

    example_dir = 'data/example'                    # example IMU measurements
    smpl_file = 'models/SMPL_male.pkl'              # official SMPL model path
    weights_file = 'data/weights.pt'                # network weight file
    physics_model_file = 'models/physics.urdf'      # physics body model path
    plane_file = 'models/plane.urdf'                # (for debug) path to plane.urdf    Please put plane.obj next to it.

    log_dir = 'log'                                 # tensorboard / checkpoint directory


class joint_set:
    leaf = [7, 8, 12, 20, 21]
    full = list(range(1, 24))
    reduced = [1, 2, 3, 4, 5, 6, 9, 12, 13, 14, 15, 16, 17, 18, 19]
    ignored = [0, 7, 8, 10, 11, 20, 21, 22, 23]

    lower_body = [0, 1, 2, 4, 5, 7, 8, 10, 11]
    lower_body_parent = [None, 0, 0, 1, 2, 3, 4, 5, 6]

    n_leaf = len(leaf)
    n_full = len(full)
    n_reduced = len(reduced)
    n_ignored = len(ignored)


class sensor_set:
    # vertex ids of the 6 Xsens sensors on the SMPL mesh: left wrist, right wrist, left knee, right knee, head, pelvis
    vi_mask = torch.tensor([1961, 5424, 1176, 4662, 411, 3021])
    ji_mask = torch.tensor([18, 19, 4, 5, 15, 0])
    # Xsens sensor order in the live stream
    live_order = [0, 1, 2, 3, 4, 5]


acc_scale = 30
vel_scale = 3

# training settings (used by train.py, not in the original release)
batch_size = 256
num_epoch = 200
learning_rate = 1e-3
seq_len = 300
num_workers = 8

# All networks and the SMPL model are kept on the first GPU. Set use_gpu = False to debug on CPU.
use_gpu = True
device = torch.device('cuda:0') if use_gpu else torch.device('cpu')

# the physics optimizer always runs on CPU (pybullet)
physics_device = torch.device('cpu')

# unity / live demo server
unity_ip = '127.0.0.1'
unity_port = 8888
noitom_port = 7004


def make_dirs():
    for d in [paths.amass_dir, paths.dipimu_dir, paths.totalcapture_dir, paths.log_dir]:
        os.makedirs(d, exist_ok=True)
