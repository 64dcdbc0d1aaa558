import sys
[sys.path.append(i) for i in ['.', '..', '../model', '../train']]
import os
import argparse
import yaml
from pprint import pprint
from easydict import EasyDict
import torch
from torch.utils.data import DataLoader

from utils.model_util import create_gaussian_diffusion
from utils import dist_util
from diffusion import logger
from training_loop import TrainLoop
from model.mdm import MDM
from data_loader.lmdb_data_loader import TrinityDataset


def create_model_and_diffusion(args):
    model = MDM(modeltype='', njoints=1141, nfeats=1, translation=True, pose_rep='rot6d', glob=True,
                glob_rot=True, cond_mode=args.cond_mode, clip_version='ViT-B/32', action_emb='tensor', audio_feat=args.audio_feat,
                arch='trans_enc', latent_dim=256, n_seed=8)        # trans_enc, trans_dec, gru, mytrans_enc
    diffusion = create_gaussian_diffusion()
    return model, diffusion


def main(args, device):
    # dataset
    train_dataset = TrinityDataset(args.train_data_path,
                                   n_poses=args.n_poses,
                                   subdivision_stride=args.subdivision_stride,
                                   pose_resampling_fps=args.motion_resampling_framerate, model='WavLM')
    train_loader = DataLoader(dataset=train_dataset, batch_size=args.batch_size,
                              shuffle=True, drop_last=True, num_workers=args.loader_workers, pin_memory=True)

    val_dataset = TrinityDataset(args.val_data_path,
                                 n_poses=args.n_poses,
                                 subdivision_stride=args.subdivision_stride,
                                 pose_resampling_fps=args.motion_resampling_framerate, model='WavLM')
    test_loader = DataLoader(dataset=val_dataset, batch_size=args.batch_size,
                             shuffle=False, drop_last=True, num_workers=args.loader_workers, pin_memory=False)

    logger.log("creating data loader...")
    print("Creating model and diffusion...")
    model, diffusion = create_model_and_diffusion(args)
    model.to(device)
    print('Total params: %.2fM' % (sum(p.numel() for p in model.parameters_wo_clip()) / 1000000.0))

    logger.log("Training...")
    TrainLoop(args, model, diffusion, device, data=train_loader).run_loop()


if __name__ == '__main__':
    '''
    cd mydiffusion_zeggs/
    python end2end.py --config=./configs/DiffuseStyleGesture.yml --no_cuda 0 --gpu 0
    '''

    parser = argparse.ArgumentParser(description='DiffuseStyleGesture')
    parser.add_argument('--config', default='./configs/DiffuseStyleGesture.yml')
    parser.add_argument('--gpu', type=str, default='0')
    parser.add_argument('--no_cuda', type=list, default=['0'])
    parser.add_argument('--n_seed', type=int, default=8)
    args = parser.parse_args()
    with open(args.config) as f:
        config = yaml.safe_load(f)

    for k, v in vars(args).items():
        config[k] = v
    pprint(config)

    config = EasyDict(config)
    logger.configure(config.save_dir)

    device = torch.device('cuda:' + config.gpu if torch.cuda.is_available() else 'cpu')
    dist_util.setup_dist(int(config.gpu))

    main(config, device)
