import os
import argparse
import warnings

import torch

from trainers.freeseed_trainer import FreeSeedTrainer, DuDoFreeSeedTrainer

warnings.filterwarnings('ignore')


def get_parser():
    parser = argparse.ArgumentParser(description='FreeSeed: frequency-band-aware and self-guided network for sparse-view CT')
    # logging / io
    parser.add_argument('--trainer_mode', default='train', type=str, choices=['train', 'test'])
    parser.add_argument('--network', default='freeseed', type=str, choices=['freeseed', 'dudofreeseed'])
    parser.add_argument('--dataset_path', default='/data/aapm_ldct/processed', type=str)
    parser.add_argument('--dataset_name', default='aapm', type=str)
    parser.add_argument('--checkpoint_root', default='./checkpoints', type=str)
    parser.add_argument('--checkpoint_path', default='', type=str, help='resume / test from this file')
    parser.add_argument('--wandb_project', default='freeseed', type=str)
    parser.add_argument('--use_wandb', action='store_true')
    parser.add_argument('--log_interval', default=100, type=int)
    parser.add_argument('--save_epochs', default=5, type=int)

    # distributed (filled in by torch.distributed.launch)
    parser.add_argument('--local_rank', default=-1, type=int)
    parser.add_argument('--dist', action='store_true', help='use DistributedDataParallel')
    parser.add_argument('--seed', default=3407, type=int)

    # optimisation
    parser.add_argument('--epochs', default=30, type=int)
    parser.add_argument('--batch_size', default=2, type=int, help='per-GPU batch size')
    parser.add_argument('--num_workers', default=4, type=int)
    parser.add_argument('--lr', default=1e-4, type=float)
    parser.add_argument('--weight_decay', default=1e-4, type=float)
    parser.add_argument('--scheduler', default='step', type=str, choices=['step', 'cosine'])
    parser.add_argument('--step_size', default=10, type=int)
    parser.add_argument('--step_gamma', default=0.5, type=float)
    parser.add_argument('--amp', action='store_true', help='mixed precision (torch.cuda.amp)')
    parser.add_argument('--grad_clip', default=0.0, type=float)

    # CT geometry (fan beam, AAPM-Mayo 256x256)
    parser.add_argument('--num_views', default=18, type=int, help='sparse views')
    parser.add_argument('--num_full_views', default=720, type=int)
    parser.add_argument('--img_size', default=256, type=int)
    parser.add_argument('--det_count', default=-1, type=int, help='-1: ceil(sqrt(2) * img_size)')
    parser.add_argument('--source_distance', default=1075, type=float)
    parser.add_argument('--det_distance', default=None, type=float)
    parser.add_argument('--min_hu', default=-1024, type=float)
    parser.add_argument('--max_hu', default=3072, type=float)
    parser.add_argument('--mu_water', default=0.192, type=float)

    # FreeNet
    parser.add_argument('--net_dims', default=64, type=int)
    parser.add_argument('--ratio_ginout', default=0.5, type=float, help='global branch ratio in FFC')
    parser.add_argument('--mask_type', default='bp-gaussian-mc', type=str)
    parser.add_argument('--mask_init_band', default=0.3, type=float)
    parser.add_argument('--use_sgm', action='store_true', help='self-guided artifact refinement')
    parser.add_argument('--sgm_weight', default=0.5, type=float)
    parser.add_argument('--freq_loss_weight', default=0.1, type=float)
    return parser


def print_options(opt):
    if int(os.environ.get('RANK', 0)) != 0:
        return
    message = ['----------------- Options ---------------']
    for k, v in sorted(vars(opt).items()):
        message.append('{:>25}: {:<30}'.format(str(k), str(v)))
    message.append('----------------- End -------------------')
    print('\n'.join(message))


def main():
    opt = get_parser().parse_args()
    print_options(opt)
    if opt.det_count < 0:
        opt.det_count = int((opt.img_size * 2 ** 0.5 + 0.5))
    if opt.det_distance is None:
        opt.det_distance = opt.source_distance
    if opt.network == 'freeseed':
        trainer = FreeSeedTrainer(opt)
    elif opt.network == 'dudofreeseed':
        trainer = DuDoFreeSeedTrainer(opt)
    else:
        raise NotImplementedError(opt.network)

    if opt.trainer_mode == 'train':
        trainer.fit()
    else:
        trainer.test()


if __name__ == '__main__':
    main()
