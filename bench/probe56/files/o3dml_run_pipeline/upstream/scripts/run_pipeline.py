import logging
from os.path import join, exists, dirname, abspath
from os import makedirs
import argparse
import sys
import os
import yaml
import pprint

import torch
import torch.multiprocessing as mp
import torch.distributed as dist

import open3d.ml as _ml3d


def parse_device_ids(val):
    return [int(x) for x in str(val).split(',') if x != '']


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
    parser.add_argument('--cfg_tb',
                        help='Override tensorboard summary config in the pipeline config.')
    parser.add_argument('--dataset_path', help='path to the dataset')
    parser.add_argument('--ckpt_path', help='path to the checkpoint')
    parser.add_argument('--device',
                        help='device to run the pipeline',
                        default='cuda')
    parser.add_argument('--device_ids',
                        help='cuda device list, default 0',
                        type=parse_device_ids,
                        default=[0])
    parser.add_argument('--split', help='train/valid/test', default='train')
    parser.add_argument('--mode', help='additional mode', default=None)
    parser.add_argument('--max_epochs', help='number of epochs', default=None)
    parser.add_argument('--batch_size', help='batch size', default=None)
    parser.add_argument('--main_log_dir',
                        help='the dir to save logs and models')
    parser.add_argument('--output_path', help='the dir to save outputs')
    parser.add_argument('--nodes', help='number of nodes', default=1, type=int)
    parser.add_argument('--node_rank',
                        help='ID of the current node',
                        default=0,
                        type=int)
    parser.add_argument('--host',
                        help='Host for distributed training',
                        default='localhost')
    parser.add_argument('--port',
                        help='port for distributed training',
                        default='12355')
    parser.add_argument('--backend',
                        help='backend for distributed training. One of (nccl, gloo)}',
                        default='nccl')

    args, unknown = parser.parse_known_args()

    parser_extra = argparse.ArgumentParser(description='Extra arguments')
    for arg in unknown:
        if arg.startswith(("-", "--")):
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

    if args.cfg_file is not None:
        cfg = _ml3d.utils.Config.load_from_file(args.cfg_file)

        Pipeline = _ml3d.utils.get_module("pipeline", cfg.pipeline.name, "torch")
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

    cfg_dict_dataset['dataset_path'] = args.dataset_path if args.dataset_path is not None \
        else cfg_dict_dataset.get('dataset_path')
    cfg_dict_pipeline['main_log_dir'] = args.main_log_dir if args.main_log_dir is not None \
        else cfg_dict_pipeline.get('main_log_dir', './logs')

    if args.device.startswith('cuda') and len(args.device_ids) > 1:
        # one process per device on every node
        world_size = args.nodes * len(args.device_ids)
        mp.spawn(main_worker,
                 args=(Pipeline, Model, Dataset, cfg_dict_pipeline,
                       cfg_dict_model, cfg_dict_dataset, args, world_size),
                 nprocs=len(args.device_ids),
                 join=True)
        return

    dataset = Dataset(**cfg_dict_dataset)
    model = Model(**cfg_dict_model)
    pipeline = Pipeline(model, dataset, **cfg_dict_pipeline, device=args.device)

    with open(pipeline.cfg.log_dir + '/cfg.yaml', 'w') as f:
        f.write(cmd_line + '\n')
        f.write(pprint.pformat({'pipeline': cfg_dict_pipeline,
                                'model': cfg_dict_model,
                                'dataset': cfg_dict_dataset}))

    if args.split == 'test':
        pipeline.run_test()
    else:
        pipeline.run_train()


def setup(rank, world_size, args):
    os.environ['MASTER_ADDR'] = args.host
    os.environ['MASTER_PORT'] = args.port

    # initialize the process group
    dist.init_process_group(args.backend, rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


def main_worker(local_rank, Pipeline, Model, Dataset, cfg_dict_pipeline,
                cfg_dict_model, cfg_dict_dataset, args, world_size):
    rank = args.node_rank * len(args.device_ids) + local_rank
    device = f"cuda:{args.device_ids[local_rank]}"
    print(f"local_rank = {local_rank}, rank = {rank}, world_size = {world_size}, "
          f"device = {device}")
    torch.cuda.set_device(device)

    setup(rank, world_size, args)

    cfg_dict_dataset['rank'] = rank
    cfg_dict_model['rank'] = rank
    cfg_dict_pipeline['rank'] = rank

    dataset = Dataset(**cfg_dict_dataset)
    model = Model(**cfg_dict_model)
    pipeline = Pipeline(model,
                        dataset,
                        **cfg_dict_pipeline,
                        device=device,
                        distributed=True)

    if args.split == 'test':
        if rank == 0:
            pipeline.run_test()
    else:
        pipeline.run_train()

    cleanup()


if __name__ == '__main__':
    logging.basicConfig(
        level=logging.INFO,
        format='%(levelname)s - %(asctime)s - %(module)s - %(message)s',
    )

    sys.exit(main())
