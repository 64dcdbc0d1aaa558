import argparse
import traceback
import time
import shutil
import logging
import yaml
import sys
import os
import torch
import numpy as np
import copy

from runners import *


def parse_args_and_config():
    parser = argparse.ArgumentParser(description=globals()['__doc__'])

    parser.add_argument('--config', type=str, required=True, help='Path to the config file')
    parser.add_argument('--seed', type=int, default=1234, help='Random seed')
    parser.add_argument('--exp', type=str, default='exp', help='Path for saving running related data.')
    parser.add_argument('--comment', type=str, default='', help='A string for experiment comment')
    parser.add_argument('--verbose', type=str, default='info', help='Verbose level: info | debug | warning | critical')
    parser.add_argument('--test', action='store_true', help='Whether to test the model')
    parser.add_argument('--sample', action='store_true', help='Whether to produce samples from the model')
    parser.add_argument('--video_gen', action='store_true', help='Whether to produce video samples from the model')
    parser.add_argument('--fast_fid', action='store_true', help='Whether to do fast fid test')
    parser.add_argument('--resume_training', action='store_true', help='Whether to resume training')
    parser.add_argument('-i', '--image_folder', type=str, default='images', help="The folder name of samples")
    parser.add_argument('--video_folder', type=str, default='videos', help="The folder name of video samples")
    parser.add_argument('--ni', action='store_true', help="No interaction. Suitable for Slurm Job launcher")
    parser.add_argument('--final_only', action='store_true', help="Only sample the final frame")
    parser.add_argument('--end_ckpt', type=int, default=None, help="Last checkpoint to test FVD on")
    parser.add_argument('--freq', type=int, default=None, help="Frequency of saving video samples")
    parser.add_argument('--no_ema', action='store_true', help="Do not use the EMA weights")
    parser.add_argument('--no_pin_memory', action='store_true', help="Disable DataLoader pin_memory")
    parser.add_argument('--config_mod', nargs='*', type=str, default=[], help='Overrides config options, e.g. model.ngf=64')

    args = parser.parse_args()
    args.command = 'python ' + ' '.join(sys.argv)
    args.log_path = os.path.join(args.exp, 'logs')

    # parse config file
    if not args.test and not args.sample and not args.fast_fid and not args.video_gen:
        if not args.resume_training:
            with open(args.config, 'r') as f:
                config = yaml.load(f, Loader=yaml.FullLoader)
            new_config = dict2namespace(config)
        else:
            with open(os.path.join(args.log_path, 'config.yml'), 'r') as f:
                config = yaml.load(f, Loader=yaml.FullLoader)
            new_config = config
        for mod in args.config_mod:
            key, value = mod.split('=', 1)
            apply_config_mod(new_config, key, yaml.safe_load(value))

        if os.path.exists(args.log_path) and not args.resume_training:
            overwrite = False
            if args.ni:
                overwrite = True
            else:
                response = input("Folder already exists. Overwrite? (Y/N)")
                if response.upper() == 'Y':
                    overwrite = True

            if overwrite:
                shutil.rmtree(args.log_path)
                os.makedirs(args.log_path)
            else:
                print("Folder exists. Program halted.")
                sys.exit(0)
        else:
            os.makedirs(args.log_path, exist_ok=True)

        with open(os.path.join(args.log_path, 'config.yml'), 'w') as f:
            yaml.dump(new_config, f, default_flow_style=False)

        with open(os.path.join(args.log_path, 'args.yml'), 'w') as f:
            yaml.dump(args, f, default_flow_style=False)

        # setup logger
        level = getattr(logging, args.verbose.upper(), None)
        if not isinstance(level, int):
            raise ValueError('level {} not supported'.format(args.verbose))

        handler1 = logging.StreamHandler()
        handler2 = logging.FileHandler(os.path.join(args.log_path, 'stdout.txt'))
        formatter = logging.Formatter('%(levelname)s - %(filename)s - %(asctime)s - %(message)s')
        handler1.setFormatter(formatter)
        handler2.setFormatter(formatter)
        logger = logging.getLogger()
        logger.addHandler(handler1)
        logger.addHandler(handler2)
        logger.setLevel(level)

    else:
        with open(os.path.join(args.log_path, 'config.yml'), 'r') as f:
            config = yaml.load(f, Loader=yaml.FullLoader)
        new_config = config

        level = getattr(logging, args.verbose.upper(), None)
        if not isinstance(level, int):
            raise ValueError('level {} not supported'.format(args.verbose))

        handler1 = logging.StreamHandler()
        formatter = logging.Formatter('%(levelname)s - %(filename)s - %(asctime)s - %(message)s')
        handler1.setFormatter(formatter)
        logger = logging.getLogger()
        logger.addHandler(handler1)
        logger.setLevel(level)

        if args.sample:
            os.makedirs(os.path.join(args.exp, 'image_samples'), exist_ok=True)
            args.image_folder = os.path.join(args.exp, 'image_samples', args.image_folder)
            if not os.path.exists(args.image_folder):
                os.makedirs(args.image_folder)
            else:
                overwrite = False
                if args.ni:
                    overwrite = True
                else:
                    response = input("Image folder already exists. \n "
                                     "Type Y to delete and start from an empty folder?\n"
                                     "Type N to overwrite existing folders (Y/N)")
                    if response.upper() == 'Y':
                        overwrite = True

                if overwrite:
                    shutil.rmtree(args.image_folder)
                    os.makedirs(args.image_folder)

        elif args.video_gen:
            os.makedirs(os.path.join(args.exp, 'video_samples'), exist_ok=True)
            args.video_folder = os.path.join(args.exp, 'video_samples', args.video_folder)
            os.makedirs(args.video_folder, exist_ok=True)

        elif args.fast_fid:
            os.makedirs(os.path.join(args.exp, 'fid_samples'), exist_ok=True)
            args.image_folder = os.path.join(args.exp, 'fid_samples', args.image_folder)
            os.makedirs(args.image_folder, exist_ok=True)

    # add device
    device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')
    logging.info("Using device: {}".format(device))
    new_config.device = device

    # set random seed
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(args.seed)

    torch.backends.cudnn.benchmark = True

    return args, new_config


def dict2namespace(config):
    namespace = argparse.Namespace()
    for key, value in config.items():
        if isinstance(value, dict):
            new_value = dict2namespace(value)
        else:
            new_value = value
        setattr(namespace, key, new_value)
    return namespace


def apply_config_mod(config, key, value):
    """Set a dotted key (e.g. 'training.batch_size') on a nested namespace."""
    parts = key.split('.')
    node = config
    for p in parts[:-1]:
        node = getattr(node, p)
    setattr(node, parts[-1], value)


def main():
    args, config = parse_args_and_config()
    logging.info("Writing log file to {}".format(args.log_path))
    logging.info("Exp instance id = {}".format(os.getpid()))
    logging.info("Exp comment = {}".format(args.comment))
    logging.info("Config =")
    print(">" * 80)
    config_dict = copy.copy(vars(config))
    print(yaml.dump(config_dict, default_flow_style=False))
    print("<" * 80)

    try:
        runner = NCSNRunner(args, config)
        if args.test:
            runner.test()
        elif args.sample:
            runner.sample()
        elif args.video_gen:
            runner.video_gen()
        elif args.fast_fid:
            runner.fast_fid()
        else:
            runner.train()
    except:
        logging.error(traceback.format_exc())

    return 0


if __name__ == '__main__':
    sys.exit(main())
