import argparse
import sys
from pathlib import Path

import torch
import yaml

from learning import initialize, train, infer, preprocess
from utils.config import get_dataset


def parse_cli_overides():
    """Parse the command-line arguments.

    Parse the command-line arguments and the yaml config file. Command-line arguments
    override the values in the config file.

    Returns:
        tuple: (args, cfg)
    """
    parser = argparse.ArgumentParser(description='Event-Independent Network for DCASE2020 SELD.')
    parser.add_argument('-c', '--config_file', default='./configs/ein_seld/seld.yaml', help='Specify config file', metavar='FILE')
    subparsers = parser.add_subparsers(dest='mode')
    parser_preproc = subparsers.add_parser('preprocess')
    parser_preproc.add_argument('--preproc_mode', choices=['extract_data', 'extract_scalar', 'extract_meta'], required=True,
                                help='select preprocessing mode')
    parser_preproc.add_argument('--dataset_type', default='dev', choices=['dev', 'eval'],
                                help='select dataset to preprocess')
    parser_preproc.add_argument('--num_workers', type=int, default=8, metavar='N')
    parser_preproc.add_argument('--no_cuda', action='store_true', help='Do not use cuda.')
    parser_train = subparsers.add_parser('train')
    parser_train.add_argument('--seed', type=int, default=2020, metavar='N')
    parser_train.add_argument('--num_workers', type=int, default=8, metavar='N')
    parser_train.add_argument('--no_cuda', action='store_true', help='Do not use cuda.')
    parser_train.add_argument('--port', type=int, default=12359, metavar='N')
    parser_infer = subparsers.add_parser('infer')
    parser_infer.add_argument('--num_workers', type=int, default=8, metavar='N')
    parser_infer.add_argument('--no_cuda', action='store_true', help='Do not use cuda.')
    parser_evaluate = subparsers.add_parser('evaluate')
    args = parser.parse_args()

    # Get config
    with open(args.config_file, 'r') as f:
        cfg = yaml.safe_load(f)

    # Display config
    print('Train ID is {}\n'.format(cfg['training']['train_id']))
    print('Config:\n{}\n'.format(yaml.dump(cfg, default_flow_style=False)))
    return args, cfg


def main(args, cfg):
    """Execute a task based on the given command-line arguments.

    This function is the main entry point for this code. The task to
    execute is determined by args.mode ('preprocess', 'train' or 'infer').

    Args:
        args: command-line arguments.
        cfg: configurations read from the yaml file.
    """

    # Create workspace
    Path(cfg['workspace_dir']).mkdir(parents=True, exist_ok=True)

    # Dataset initialization
    dataset = get_dataset(dataset_name=cfg['dataset'], root_dir=cfg['dataset_dir'])

    # Preprocess
    if args.mode == 'preprocess':
        preprocessor = preprocess.Preprocessor(args, cfg, dataset)

        if args.preproc_mode == 'extract_data':
            preprocessor.extract_data()
        elif args.preproc_mode == 'extract_scalar':
            preprocessor.extract_scalar()
        elif args.preproc_mode == 'extract_meta':
            preprocessor.extract_meta()

    # Train
    if args.mode == 'train':
        train_initializer = initialize.init_train(args, cfg, dataset)
        train.train(cfg, **train_initializer)

    # Inference
    elif args.mode == 'infer':
        infer_initializer = initialize.init_infer(args, cfg, dataset)
        infer.infer(cfg, dataset, **infer_initializer)

    # Evaluate
    elif args.mode == 'evaluate':
        from learning import evaluate
        evaluate.evaluate(cfg, dataset)


if __name__ == '__main__':
    args, cfg = parse_cli_overides()
    # The feature extractor runs inside the DataParallel'd model, so keep
    # tensors on the GPU from the very first batch.
    torch.multiprocessing.set_sharing_strategy('file_system')
    sys.exit(main(args, cfg))
