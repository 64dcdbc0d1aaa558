import argparse


def get_public_config():
    parser = argparse.ArgumentParser()
    parser.add_argument('--device', type=str, default='cuda:0')
    parser.add_argument('--dataset', type=str, default='CA')
    # if need to use the data from multiple years, please use underline to separate them, e.g., 2018_2019
    parser.add_argument('--years', type=str, default='2019')
    parser.add_argument('--model_name', type=str, default='')
    parser.add_argument('--seed', type=int, default=2018)

    parser.add_argument('--bs', type=int, default=64)
    # seq_len denotes input history length, horizon denotes output future length
    parser.add_argument('--seq_len', type=int, default=12)
    parser.add_argument('--horizon', type=int, default=12)
    parser.add_argument('--input_dim', type=int, default=3)
    parser.add_argument('--output_dim', type=int, default=1)

    parser.add_argument('--mode', type=str, default='train')
    parser.add_argument('--max_epochs', type=int, default=200)
    parser.add_argument('--patience', type=int, default=30)
    # number of dataloader workers; pinned host memory speeds up H2D copies on the GPU
    parser.add_argument('--num_workers', type=int, default=4)
    parser.add_argument('--pin_memory', action='store_true')
    # pick the least-loaded GPU via NVML instead of --device (handy on shared servers)
    parser.add_argument('--auto_gpu', action='store_true')
    return parser


def check_device(args):
    """Fail early with a readable message instead of a CUDA error deep inside the engine."""
    if args.device.startswith('cuda'):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError('--device {} requested but CUDA is not available'.format(args.device))
        idx = int(args.device.split(':')[1]) if ':' in args.device else 0
        if idx >= torch.cuda.device_count():
            raise RuntimeError('--device {} but only {} GPU(s) found'.format(args.device, torch.cuda.device_count()))
    return args
