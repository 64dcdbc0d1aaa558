# Copyright (c) Facebook, Inc. and its affiliates. All Rights Reserved


import os
import click
import re
import json
import tempfile
import torch
import dnnlib
import hydra
from omegaconf import DictConfig, OmegaConf

from training import training_loop
from metrics import metric_main
from torch_utils import training_stats
from torch_utils import custom_ops
from torch_utils.distributed_utils import gather_list_and_concat

#----------------------------------------------------------------------------

class UserError(Exception):
    pass

#----------------------------------------------------------------------------

def setup_training_loop_kwargs(cfg):
    args = OmegaConf.create({})

    # ------------------------------------------
    # General options: gpus, snap, metrics, seed
    # ------------------------------------------
    args.rank = 0
    args.gpu = 0
    args.num_gpus = torch.cuda.device_count() if cfg.gpus is None else cfg.gpus
    args.nodes = cfg.nodes if cfg.nodes is not None else 1
    args.world_size = 1

    args.dist_url = 'env://'
    args.launcher = cfg.launcher
    args.partition = cfg.partition
    args.comment = cfg.comment
    args.timeout = 4320 if cfg.timeout is None else cfg.timeout
    args.job_dir = ''

    if cfg.snap is None:
        cfg.snap = 50
    assert isinstance(cfg.snap, int)
    if cfg.snap < 1:
        raise UserError('snap must be at least 1')
    args.image_snapshot_ticks = cfg.imgsnap
    args.network_snapshot_ticks = cfg.snap
    if hasattr(cfg, 'ucp'):
        args.update_cam_prior_ticks = cfg.ucp

    if cfg.metrics is None:
        cfg.metrics = ['fid50k_full']
    cfg.metrics = list(cfg.metrics)
    if not all(metric_main.is_valid_metric(metric) for metric in cfg.metrics):
        raise UserError('\n'.join(['metrics can only contain the following values:'] + metric_main.list_valid_metrics()))
    args.metrics = cfg.metrics

    if cfg.seed is None:
        cfg.seed = 0
    assert isinstance(cfg.seed, int)
    args.random_seed = cfg.seed

    # -----------------------------------
    # Dataset: data, cond, subset, mirror
    # -----------------------------------

    assert cfg.data is not None
    assert isinstance(cfg.data, str)
    args.update(dnnlib.EasyDict(class_name='training.dataset.ImageFolderDataset', path=cfg.data, resolution=cfg.resolution, use_labels=True, max_size=None, xflip=False))
    args.training_set_kwargs = dnnlib.EasyDict(class_name='training.dataset.ImageFolderDataset', path=cfg.data, resolution=cfg.resolution, use_labels=True, max_size=None, xflip=False)
    args.data_loader_kwargs = dnnlib.EasyDict(pin_memory=True, num_workers=3, prefetch_factor=2)
    args.generation_with_image = getattr(cfg, 'generate_with_image', False)
    try:
        training_set = dnnlib.util.construct_class_by_name(**args.training_set_kwargs) # subclass of training.dataset.Dataset
        args.training_set_kwargs.resolution = training_set.resolution # be explicit about resolution
        args.training_set_kwargs.use_labels = training_set.has_labels # be explicit about labels
        args.training_set_kwargs.max_size = len(training_set) # be explicit about dataset size
        desc = training_set.name
        del training_set # conserve memory
    except IOError as err:
        raise UserError(f'data: {err}')

    if cfg.cond is None:
        cfg.cond = False
    assert isinstance(cfg.cond, bool)
    if cfg.cond:
        if not args.training_set_kwargs.use_labels:
            raise UserError('cond=True requires labels specified in dataset.json')
        desc += '-cond'
    else:
        args.training_set_kwargs.use_labels = False

    if cfg.mirror is None:
        cfg.mirror = False
    assert isinstance(cfg.mirror, bool)
    if cfg.mirror:
        desc += '-mirror'
        args.training_set_kwargs.xflip = True

    # ------------------------------------
    # Base config: cfg, model, gamma, kimg, batch
    # ------------------------------------
    if cfg.auto:
        cfg.spec.name = 'auto'
    desc += f'-{cfg.spec.name}'
    desc += f'-{cfg.model.name}'
    if cfg.spec.name == 'auto':
        res = args.training_set_kwargs.resolution
        cfg.spec.fmaps = 1 if res >= 512 else 0.5
        cfg.spec.lrate = 0.002 if res >= 1024 else 0.0025
        cfg.spec.gamma = 0.0002 * (res ** 2) / cfg.spec.mb # heuristic formula
        cfg.spec.ema = cfg.spec.mb * 10 / 32

    if getattr(cfg.spec, 'lrate_disc', None) is None:
        cfg.spec.lrate_disc = cfg.spec.lrate   # use the same learning rate for discriminator

    # model (generator, discriminator)
    args.G_kwargs = eval(cfg.model.G_kwargs)
    args.D_kwargs = eval(cfg.model.D_kwargs)
    args.G_opt_kwargs = dnnlib.EasyDict(class_name='torch.optim.Adam', lr=cfg.spec.lrate, betas=[0,0.99], eps=1e-8)
    args.D_opt_kwargs = dnnlib.EasyDict(class_name='torch.optim.Adam', lr=cfg.spec.lrate_disc, betas=[0,0.99], eps=1e-8)
    args.loss_kwargs = dnnlib.EasyDict(class_name='training.loss.StyleGAN2Loss', r1_gamma=cfg.spec.gamma)

    args.total_kimg = cfg.spec.kimg
    args.batch_size = cfg.spec.mb
    args.batch_gpu = cfg.spec.mbstd
    args.ema_kimg = cfg.spec.ema
    args.ema_rampup = cfg.spec.ramp

    # ---------------------------------------------------
    # Performance options: fp32, nhwc, nobench, workers
    # ---------------------------------------------------
    if cfg.fp32:
        args.G_kwargs.synthesis_kwargs.num_fp16_res = args.D_kwargs.num_fp16_res = 0
        args.G_kwargs.synthesis_kwargs.conv_clamp = args.D_kwargs.conv_clamp = None

    if cfg.nhwc:
        args.G_kwargs.synthesis_kwargs.fp16_channels_last = args.D_kwargs.block_kwargs.fp16_channels_last = True

    if cfg.nobench:
        args.cudnn_benchmark = False

    if cfg.allow_tf32:
        args.allow_tf32 = True

    if cfg.workers is not None:
        assert isinstance(cfg.workers, int)
        if not cfg.workers >= 1:
            raise UserError('workers must be at least 1')
        args.data_loader_kwargs.num_workers = cfg.workers

    args.debug = cfg.debug
    if getattr(cfg, "prefix", None) is not None:
        desc = cfg.prefix + '-' + desc
    return desc, args

#----------------------------------------------------------------------------

def subprocess_fn(rank, args):
    if not args.debug:
        dnnlib.util.Logger(file_name=os.path.join(args.run_dir, 'log.txt'), file_mode='a', should_flush=True)

    # Init torch.distributed.
    if args.num_gpus > 1:
        assert args.world_size == args.num_gpus * args.nodes
        args.rank = args.node_rank * args.num_gpus + rank
        args.gpu = rank
        torch.cuda.set_device(args.gpu)
        torch.distributed.init_process_group(backend="nccl", init_method=args.dist_url,
                                             world_size=args.world_size, rank=args.rank)
        print(f'| distributed init (rank {args.rank}): {args.dist_url}', flush=True)

    # Init torch_utils.
    sync_device = torch.device('cuda', rank) if args.num_gpus > 1 else None
    training_stats.init_multiprocessing(rank=args.rank, sync_device=sync_device)
    if args.rank != 0 and not args.debug:
        custom_ops.verbosity = 'none'

    # Execute training loop.
    training_loop.training_loop(**args)

#----------------------------------------------------------------------------

class CommaSeparatedList(click.ParamType):
    name = 'list'

    def convert(self, value, param, ctx):
        _ = param, ctx
        if value is None or value.lower() == 'none' or value == '':
            return []
        return value.split(',')

#----------------------------------------------------------------------------

def launch_training(args, desc, outdir, dry_run):
    dnnlib.util.Logger(should_flush=True)

    # Pick output directory.
    prev_run_dirs = []
    if os.path.isdir(outdir):
        prev_run_dirs = [x for x in os.listdir(outdir) if os.path.isdir(os.path.join(outdir, x))]
    prev_run_ids = [re.match(r'^\d+', x) for x in prev_run_dirs]
    prev_run_ids = [int(x.group()) for x in prev_run_ids if x is not None]
    cur_run_id = max(prev_run_ids, default=-1) + 1
    args.run_dir = os.path.join(outdir, f'{cur_run_id:05d}-{desc}')
    assert not os.path.exists(args.run_dir)

    # Print options.
    print()
    print('Training options:')
    print(json.dumps(OmegaConf.to_container(args), indent=2))
    print()
    print(f'Output directory:   {args.run_dir}')
    print(f'Training data:      {args.training_set_kwargs.path}')
    print(f'Training duration:  {args.total_kimg} kimg')
    print(f'Number of GPUs:     {args.num_gpus}')
    print(f'Number of nodes:    {args.nodes}')
    print(f'Number of images:   {args.training_set_kwargs.max_size}')
    print(f'Image resolution:   {args.training_set_kwargs.resolution}')
    print(f'Conditional model:  {args.training_set_kwargs.use_labels}')
    print(f'Dataset x-flips:    {args.training_set_kwargs.xflip}')
    print()

    # Dry run?
    if dry_run:
        print('Dry run; exiting.')
        return

    # Create output directory.
    print('Creating output directory...')
    os.makedirs(args.run_dir, exist_ok=True)
    with open(os.path.join(args.run_dir, 'training_options.yaml'), 'wt') as fp:
        OmegaConf.save(config=args, f=fp.name)

    # Launch processes.
    print('Launching processes...')
    if (args.launcher == 'spawn') and (args.num_gpus > 1):
        args.dist_url = 'tcp://localhost:{}'.format(args.port)
        args.world_size = args.num_gpus * args.nodes
        args.node_rank = 0
        torch.multiprocessing.spawn(fn=subprocess_fn, args=(args,), nprocs=args.num_gpus)
    else:
        subprocess_fn(rank=0, args=args)

#----------------------------------------------------------------------------

@hydra.main(config_path="conf", config_name="config")
def main(cfg: DictConfig):

    outdir = cfg.outdir

    # Setup training options
    run_desc, args = setup_training_loop_kwargs(cfg)
    args.port = int(cfg.port) if cfg.port is not None else 23456

    # Resume from the previous snapshot
    if cfg.resume_run is not None:
        args.resume_pkl = cfg.resume_run
        args.resume_start = cfg.resume_start if cfg.resume_start is not None else 0

    if cfg.launcher != "slurm":
        launch_training(args=args, desc=run_desc, outdir=outdir, dry_run=cfg.dry_run)
    else:
        # Slurm: one task per GPU, srun sets the rank.
        args.node_rank = int(os.environ['SLURM_NODEID'])
        args.world_size = args.num_gpus * args.nodes
        args.dist_url = 'tcp://{}:{}'.format(os.environ['MASTER_ADDR'], args.port)
        args.run_dir = os.path.join(outdir, run_desc)
        os.makedirs(args.run_dir, exist_ok=True)
        subprocess_fn(rank=int(os.environ['SLURM_LOCALID']), args=args)

#----------------------------------------------------------------------------

if __name__ == "__main__":
    if os.getenv('SLURM_ARGS') is not None:
        # deal with hydra argument
        slurm_arg = eval(os.getenv('SLURM_ARGS'))
        hydra_arg = [f"{k}={slurm_arg[k]}" for k in slurm_arg]
        os.environ.pop('SLURM_ARGS')
        print(hydra_arg)
    main() # pylint: disable=no-value-for-parameter

#----------------------------------------------------------------------------
