import argparse
import os
import random
import numpy as np
import torch
from loguru import logger

from solver import Solver
from loader import create_loaders


def get_args():
    parser = argparse.ArgumentParser(description='Hide and Speak: speech steganography with deep nets')
    # data
    parser.add_argument('--dataset', type=str, default='timit', choices=['timit', 'yoho'])
    parser.add_argument('--data', type=str, default='data/timit', help='root of the dataset')
    parser.add_argument('--n_messages', type=int, default=1, help='how many messages to hide in one carrier')
    parser.add_argument('--num_workers', type=int, default=8)
    parser.add_argument('--trim_start', type=int, default=int(0.6 * 16000))
    parser.add_argument('--num_samples', type=int, default=int(1.2 * 16000))
    # model
    parser.add_argument('--enc_n_layers', type=int, default=3)
    parser.add_argument('--dec_c_n_layers', type=int, default=4)
    parser.add_argument('--dec_m_n_layers', type=int, default=4)
    parser.add_argument('--block_type', type=str, default='normal', choices=['normal', 'skip', 'bn', 'in', 'relu'])
    parser.add_argument('--lambda_carrier_loss', type=float, default=3.0)
    parser.add_argument('--lambda_msg_loss', type=float, default=1.0)
    # optimisation
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--num_iters', type=int, default=100)
    parser.add_argument('--epochs', type=int, default=50)
    parser.add_argument('--adv', action='store_true', help='add a steganalysis discriminator')
    parser.add_argument('--noise', type=float, default=0.0, help='std of gaussian noise between enc and dec')
    # run
    parser.add_argument('--run_dir', type=str, default='runs')
    parser.add_argument('--experiment', type=str, default='default')
    parser.add_argument('--load_ckpt', type=str, default=None)
    parser.add_argument('--mode', type=str, default='train', choices=['train', 'test', 'sample'])
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--no-cuda', action='store_true', default=False, help='disables CUDA training')
    parser.add_argument('--gpus', type=str, default='0', help='comma separated list of GPU ids')
    parser.add_argument('--save_model_every', type=int, default=5)
    parser.add_argument('--print_every', type=int, default=50)
    args = parser.parse_args()

    args.cuda = not args.no_cuda and torch.cuda.is_available()
    args.run_dir = os.path.join(args.run_dir, args.experiment)
    return args


def set_seed(args):
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.cuda:
        torch.cuda.manual_seed(args.seed)


def main():
    args = get_args()
    os.makedirs(args.run_dir, exist_ok=True)
    logger.add(os.path.join(args.run_dir, 'log.txt'))
    logger.info(args)
    set_seed(args)

    if args.cuda:
        gpu_ids = [int(g) for g in args.gpus.split(',')]
        torch.cuda.set_device(gpu_ids[0])
        logger.info(f'using GPUs {gpu_ids}: {torch.cuda.get_device_name(gpu_ids[0])}')
        torch.backends.cudnn.benchmark = True
    else:
        gpu_ids = []
        logger.warning('running on CPU, this will be slow')
    args.gpu_ids = gpu_ids

    train_loader, val_loader, test_loader = create_loaders(args)
    solver = Solver(train_loader, val_loader, test_loader, args)

    if args.load_ckpt is not None:
        solver.load_models(args.load_ckpt)

    if args.mode == 'train':
        solver.train()
    elif args.mode == 'test':
        solver.test()
    else:
        solver.sample_examples(n=10, subdir='samples')


if __name__ == '__main__':
    main()
