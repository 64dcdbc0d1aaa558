"""
E-RAFT evaluation on DSEC-Flow / MVSEC.

    python main.py --path ./datasets/dsec --type standard      # writes the DSEC benchmark submission
    python main.py --path ./datasets/mvsec --dataset mvsec --frequency 20 --visualize
"""
import argparse
import json
import os
import time

import numpy as np
import torch
from torch.utils.data.dataloader import DataLoader

from loader.loader_dsec import DatasetProvider
from loader.loader_mvsec_flow import MvsecFlow
from model.eraft import ERAFT
from test import TestRaftEvents, TestRaftEventsWarm
from utils.dsec_utils import RepresentationType
from utils.logger import Logger
from utils.visualization import DsecVisualizer, MvsecVisualizer


def initialize_tester(config):
    # Warm Start
    if config['subtype'].lower() == 'warm_start':
        return TestRaftEventsWarm
    # Classic
    else:
        return TestRaftEvents


def get_visualization(args, config):
    if args.visualize:
        return [DsecVisualizer] if config['data_loader']['dataset'] == 'dsec' else [MvsecVisualizer]
    return []


def move_dict_to_cuda(dictionary_of_tensors, gpu):
    if isinstance(dictionary_of_tensors, dict):
        return {
            key: move_dict_to_cuda(value, gpu)
            for key, value in dictionary_of_tensors.items()
        }
    return dictionary_of_tensors.to(gpu, dtype=torch.float)


def move_list_to_cuda(list_of_dicts, gpu):
    for i in range(len(list_of_dicts)):
        list_of_dicts[i] = move_dict_to_cuda(list_of_dicts[i], gpu)
    return list_of_dicts


def get_save_path(path, name):
    save_path = os.path.join(path, name)
    os.makedirs(save_path, exist_ok=True)
    return save_path


def test(args):
    # Choose correct config file
    if args.dataset.lower() == 'dsec':
        if args.type.lower() == 'warm_start':
            config_path = 'config/dsec_warm_start.json'
        elif args.type.lower() == 'standard':
            config_path = 'config/dsec_standard.json'
        else:
            raise Exception('Please provide a valid argument for --type. [warm_start/standard]')
    elif args.dataset.lower() == 'mvsec':
        if args.frequency == 20:
            config_path = 'config/mvsec_20.json'
        elif args.frequency == 45:
            config_path = 'config/mvsec_45.json'
        else:
            raise Exception('Please provide a valid argument for --frequency. [20/45]')
        if args.type == 'standard':
            raise NotImplementedError('Sorry, this is not implemented yet, please choose --type warm_start')
    else:
        raise Exception('Please provide a valid argument for --dataset. [dsec/mvsec]')

    # Load config file
    config = json.load(open(config_path))
    # Create Save Folder
    save_path = get_save_path(args.path, config['name'])
    # Copy config file to save dir
    json.dump(config, open(os.path.join(save_path, 'config.json'), 'w'),
              indent=4, sort_keys=False)
    # Get Test Parameters
    additional_loader_returns = None

    # Instantiate Dataset
    # Case: DSEC Dataset
    if args.dataset.lower() == 'dsec':
        # Dataloading
        provider = DatasetProvider(args.path, mode="test", event_representation=RepresentationType.VOXEL,
                                   num_bins=config["data_loader"]["test"]["args"]["num_voxel_bins"])
        test_set = provider.get_test_dataset()
        additional_loader_returns = {'name_mapping_test': provider.get_name_mapping_test()}
    # Case: MVSEC Dataset
    else:
        test_set = MvsecFlow(args=config["data_loader"]["test"]["args"], type='test', path=args.path)

    test_set_loader = DataLoader(test_set,
                                 batch_size=args.batch_size,
                                 shuffle=False,
                                 num_workers=args.num_workers,
                                 drop_last=True)

    # Load Model
    model = ERAFT(config=config, n_first_channels=config['data_loader']['test']['args']['num_voxel_bins'])
    # Load Checkpoint
    checkpoint = torch.load(config['test']['checkpoint'])
    model.load_state_dict(checkpoint['model'])

    # Get Tester
    tester_class = initialize_tester(config)

    gpu = torch.device('cuda:' + str(config['cuda']))
    model = model.to(gpu)

    tester = tester_class(
        model=model,
        config=config,
        data_loader=test_set_loader,
        test_logger=Logger(save_path),
        save_path=save_path,
        visualizer=get_visualization(args, config),
        additional_args=additional_loader_returns
    )

    start = time.time()
    tester.summary()
    tester._test()
    print(f'finished in {time.time() - start:.1f}s')


def profile_forward(args, n_iters=50):
    """Measures the latency of one E-RAFT forward pass (12 refinement iterations) on random voxel grids."""
    config = json.load(open('config/dsec_standard.json'))
    model = ERAFT(config=config, n_first_channels=15).eval()
    device = torch.device('cuda', config['cuda'])
    model = model.to(device)
    x1 = torch.randn(1, 15, 480, 640, device=device)
    x2 = torch.randn(1, 15, 480, 640, device=device)
    times = []
    with torch.no_grad():
        for i in range(n_iters):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            model(x1, x2, iters=12)
            end.record()
            torch.cuda.synchronize()
            if i >= 10:
                times.append(start.elapsed_time(end))
    print(f'forward: {np.mean(times):.1f} ms +- {np.std(times):.1f}')


if __name__ == '__main__':
    # Argument Parser
    parser = argparse.ArgumentParser()
    parser.add_argument('-p', '--path', type=str, help="Dataset path", required=True)
    parser.add_argument('-d', '--dataset', default="dsec", type=str, help="Which dataset to use: ([dsec]/mvsec)")
    parser.add_argument('-f', '--frequency', default=20, type=int, help="Evaluation frequency of MVSEC dataset ([20]/45) Hz")
    parser.add_argument('-t', '--type', default='warm_start', type=str, help="Evaluation type ([warm_start]/standard)")
    parser.add_argument('-v', '--visualize', action='store_true', help='Provide this argument s.t. DSEC results are visualized. MVSEC experiments are always visualized.')
    parser.add_argument('-n', '--num_workers', default=0, type=int, help='How many sub-processes to use for data loading')
    parser.add_argument('-b', '--batch_size', default=1, type=int, help='Batch size for the test loader')
    parser.add_argument('--profile', action='store_true', help='only time the forward pass')
    args = parser.parse_args()

    # Run Test Script
    if args.profile:
        profile_forward(args)
    else:
        test(args)
