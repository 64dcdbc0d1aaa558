import logging
import argparse
import yaml
import pprint
import os
import sys
from os.path import abspath, dirname, join, exists

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import open3d.ml as _ml3d
from ml3d.torch.pipelines.base_pipeline import convert_device_name


def parse_args():
    parser = argparse.ArgumentParser(description='Train a network')
    parser.add_argument('-c', '--cfg_file', help='path to the config file')
    parser.add_argument('-m', '--model', help='network model')
    parser.add_argument('-p',
                        '--pipeline',
                        help='pipeline',
                        default='SemanticSegmentation')
    parser.add_argument('-d', '--dataset', help='dataset')
    parser.add_argument('--cfg_model', help='path to the model\'s config file')
    parser.add_argument('--cfg_pipeline',
                        help='path to the pipeline\'s config file')
    parser.add_argument('--cfg_dataset',
                        help='path to the dataset\'s config file')
    parser.add_argument('--dataset_path', help='path to the dataset')
    parser.add_argument('--ckpt_path', help='path to the checkpoint')
    parser.add_argument('--device',
                        help='device to run the pipeline',
                        default='cuda')
    parser.add_argument('--device_ids',
                        help='cuda device list',
                        default=['0'],
                        nargs='+')
    parser.add_argument('--split', help='train/valid/test', default='train')
    parser.add_argument('--mode', help='additional mode', default=None)
    parser.add_argument('--max_epochs', help='number of epochs', default=None)
    parser.add_argument('--batch_size', help='batch size', default=None)
    parser.add_argument('--main_log_dir',
                        help='the dir to save logs and models')
    parser.add_argument('--seed', help='random seed', default=0)
    parser.add_argument('--nodes', help='number of nodes', default=1, type=int)
    parser.add_argument('--node_rank',
                        help='ranking within the nodes',
                        default=0,
                        type=int)
    parser.add_argument('--host',
                        help='Host for distributed training',
                        default='localhost')
    parser.add_argument('--port',
                        help='port for distributed training',
                        default='12355')
    parser.add_argument('--backend',
                        help='backend for distributed training.',
                        default='nccl')
    parser.add_argument(
        '--wait',
        help='wait for debugger to attach before starting (multi-gpu only)',
        default=False,
        action='store_true')

    args, unknown = parser.parse_known_args()

    parser_extra = argparse.ArgumentParser(description='Extra arguments')
    for arg in unknown:
        if arg.startswith(('-', '--')):
            parser_extra.add_argument(arg)
    args_extra = parser_extra.parse_args(unknown)

    print("regular arguments")
    print(yaml.dump(vars(args)))

    print("extra arguments")
    print(yaml.dump(vars(args_extra)))

    return args, vars(args_extra)


def main():
    cmd_line = ' '.join(sys.argv[:])
    args, extra_dict = parse_args()

    import open3d.ml.torch as ml3d

    args.device, args.device_ids = convert_device_name(args.device,
                                                       args.device_ids)

    if args.cfg_file is not None:
        cfg = _ml3d.utils.Config.load_from_file(args.cfg_file)

        Pipeline = _ml3d.utils.get_module("pipeline", cfg.pipeline.name,
                                          "torch")
        Model = _ml3d.utils.get_module("model", cfg.model.name, "torch")
        Dataset = _ml3d.utils.get_module("dataset", cfg.dataset.name)

        cfg_dict_dataset, cfg_dict_pipeline, cfg_dict_model = \
                        _ml3d.utils.Config.merge_cfg_file(cfg, args, extra_dict)

    else:
        if (args.pipeline and args.model and args.dataset) is None:
            raise ValueError("Please specify pipeline, model, and dataset " +
                             "if no cfg_file given")

        Pipeline = _ml3d.utils.get_module("pipeline", args.pipeline, "torch")
        Model = _ml3d.utils.get_module("model", args.model, "torch")
        Dataset = _ml3d.utils.get_module("dataset", args.dataset)

        cfg_dict_dataset, cfg_dict_pipeline, cfg_dict_model = \
                        _ml3d.utils.Config.merge_module_cfg_file(args, extra_dict)

    if args.device == 'cuda' and len(args.device_ids) > 1:  # multi-gpu
        cfg_dict_pipeline["distributed"] = True
        world_size = args.nodes * len(args.device_ids)
        mp.spawn(main_worker,
                 args=(cfg_dict_dataset, cfg_dict_pipeline, cfg_dict_model,
                       args, Pipeline, Model, Dataset, cmd_line),
                 nprocs=len(args.device_ids),
                 join=True)
    else:
        cfg_dict_pipeline["device"] = args.device
        cfg_dict_pipeline["distributed"] = False
        main_worker(0, cfg_dict_dataset, cfg_dict_pipeline, cfg_dict_model,
                    args, Pipeline, Model, Dataset, cmd_line)


def setup(rank, world_size, args):
    os.environ['MASTER_ADDR'] = args.host
    os.environ['MASTER_PORT'] = args.port

    # initialize the process group
    dist.init_process_group(args.backend, rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


def main_worker(local_rank, cfg_dict_dataset, cfg_dict_pipeline, cfg_dict_model,
                args, Pipeline, Model, Dataset, cmd_line):
    rank = args.node_rank * len(args.device_ids) + local_rank
    world_size = args.nodes * len(args.device_ids)

    if cfg_dict_pipeline["distributed"]:
        device = f"cuda:{args.device_ids[local_rank]}"
        setup(rank, world_size, args)
        cfg_dict_pipeline["device"] = device
        if args.wait and rank == 0:
            import debugpy
            debugpy.listen(5678)
            print("Waiting for the debugger on port 5678")
            debugpy.wait_for_client()
        if world_size > 1:
            dist.barrier()

    dataset = Dataset(**cfg_dict_dataset)
    model = Model(**cfg_dict_model, mode=args.mode)
    pipeline = Pipeline(model, dataset, **cfg_dict_pipeline)

    pipeline.cfg_tb = {
        'readme': 'readme',
        'cmd_line': cmd_line,
        'dataset': pprint.pformat(cfg_dict_dataset, indent=2),
        'model': pprint.pformat(cfg_dict_model, indent=2),
        'pipeline': pprint.pformat(cfg_dict_pipeline, indent=2)
    }

    if args.split == 'test':
        if rank == 0:
            pipeline.run_test()
    else:
        pipeline.run_train()

    if cfg_dict_pipeline["distributed"]:
        cleanup()


if __name__ == '__main__':
    logging.basicConfig(
        level=logging.INFO,
        format='%(levelname)s - %(asctime)s - %(module)s - %(message)s',
    )

    sys.exit(main())
