import logging
import os
import sys
import numpy
import random

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.nn.parallel import DistributedDataParallel

from src.models import PELICANClassifier
from src.models import tests
from src.trainer import Trainer
from src.trainer import init_argparse, init_file_paths, init_logger, init_optimizer, init_scheduler
from src.trainer.utils import init_argparse_fix, init_cuda, set_seed, logging_printout, set_deterministic
from src.dataloaders import initialize_datasets, collate_fn

# This makes printing tensors more readable.
torch.set_printoptions(linewidth=1000, threshold=100000, sci_mode=False)

logger = logging.getLogger('')


def setup_distributed(args):
    """
    torchrun sets RANK / LOCAL_RANK / WORLD_SIZE. One process per GPU.
    """
    world_size = int(os.environ.get('WORLD_SIZE', 1))
    distributed = world_size > 1
    if distributed:
        device_id = int(os.environ['LOCAL_RANK'])
        torch.cuda.set_device(device_id)
        dist.init_process_group(backend='nccl', init_method='env://')
        logger.info(f'Distributed: rank {dist.get_rank()} / world size {world_size}, local GPU {device_id}')
    else:
        device_id = -1
    return distributed, device_id, world_size


def main():

    # Initialize arguments -- Just
    args = init_argparse()

    # Initialize file paths
    args = init_file_paths(args)

    # Fix possible inconsistencies in arguments
    args = init_argparse_fix(args)

    distributed, device_id, world_size = setup_distributed(args)
    is_primary = (not distributed) or dist.get_rank() == 0

    # Initialize logger
    init_logger(args, device_id)

    # Write input paramaters and paths to log
    if is_primary:
        logging_printout(args)

    # Initialize device and data type
    device, dtype = init_cuda(args, device_id)

    # Set a manual random seed for torch, cuda, numpy, and random
    set_seed(args.seed, device_id)
    if args.deterministic:
        set_deterministic(True)

    # Initialize dataloder
    if args.fix_data:
        torch.manual_seed(165937750084982)
    args, datasets = initialize_datasets(args, args.datadir, num_pts=None, testfile=args.testfile,
                                         balance=(not args.no_balance), RAMdataset=args.RAMdataset)

    # Construct PyTorch dataloaders from datasets
    collate = lambda data: collate_fn(data, scale=args.scale, nobj=args.nobj, add_beams=args.add_beams,
                                      beam_mass=args.beam_mass, read_pid=args.read_pid)

    if distributed:
        samplers = {split: DistributedSampler(dataset, shuffle=args.shuffle if (split == 'train') else False)
                    for split, dataset in datasets.items()}
    else:
        samplers = {split: None for split in datasets.keys()}

    dataloaders = {split: DataLoader(dataset,
                                     batch_size=args.batch_size,
                                     shuffle=args.shuffle if (split == 'train' and not distributed) else False,
                                     num_workers=args.num_workers,
                                     pin_memory=True,
                                     worker_init_fn=seed_worker,
                                     collate_fn=collate,
                                     sampler=samplers[split])
                   for split, dataset in datasets.items()}

    # Initialize model
    model = PELICANClassifier(args.num_channels_scalar, args.num_channels_m, args.num_channels_2to2, args.num_channels_out,
                              args.num_channels_m_out, num_classes=args.num_classes,
                              activate_agg=args.activate_agg, activate_lin=args.activate_lin,
                              activation=args.activation, add_beams=args.add_beams, read_pid=args.read_pid,
                              config=args.config, config_out=args.config_out, average_nobj=args.nobj_avg,
                              factorize=args.factorize, masked=args.masked,
                              activate_agg_out=args.activate_agg_out, activate_lin_out=args.activate_lin_out,
                              mlp_out=args.mlp_out, scale=args.scale, irc_safe=args.irc_safe,
                              dropout=args.dropout, drop_rate=args.drop_rate, drop_rate_out=args.drop_rate_out,
                              batchnorm=args.batchnorm, device=device, dtype=dtype)

    model.to(device)

    if distributed:
        model = DistributedDataParallel(model, device_ids=[device_id])
    elif torch.cuda.device_count() > 1 and args.parallel:
        logger.info('Using {} GPUs with DataParallel'.format(torch.cuda.device_count()))
        model = torch.nn.DataParallel(model)

    # Initialize the scheduler and optimizer
    if args.task.startswith('eval'):
        optimizer = scheduler = None
        restart_epochs = []
        summarize = False
    else:
        optimizer = init_optimizer(args, model, len(dataloaders['train']))
        scheduler, restart_epochs, summarize = init_scheduler(args, optimizer)

    # Define a loss function. This is the loss function whose gradients are actually computed.
    loss_fn = torch.nn.functional.cross_entropy

    # Apply the covariance and permutation invariance tests.
    if args.test and is_primary:
        with torch.autograd.set_detect_anomaly(True):
            tests(model, dataloaders['train'], args, tests=['gpu', 'irc', 'permutation'])

    # Instantiate the training class
    trainer = Trainer(args, dataloaders, model, loss_fn, metrics, minibatch_metrics, minibatch_metrics_string,
                      optimizer, scheduler, restart_epochs, args.summarize_csv, args.summarize, summarize,
                      device_id, device, dtype)

    if not args.task.startswith('eval'):
        # Load from checkpoint file. If no checkpoint file exists, automatically does nothing.
        trainer.load_checkpoint()

        # Train model.
        trainer.train()

    # Test predictions on best model and also last checkpointed model.
    trainer.evaluate(splits=['test'], distributed=distributed)

    if distributed:
        dist.destroy_process_group()


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    numpy.random.seed(worker_seed)
    random.seed(worker_seed)


def metrics(predict, targets, loss_fn, prefix, logger=None):
    """
    This generates metrics reported at the end of each epoch and during validation/testing, as well as the logstring printed to the logger.
    """
    if len(targets.shape) == 2:
        targets = targets.argmax(dim=1)
    loss = loss_fn(predict, targets.long()).item()
    accuracy = (predict.argmax(dim=1) == targets).float().mean().item()
    from sklearn.metrics import roc_auc_score, roc_curve
    auc = roc_auc_score(targets.cpu(), predict[:, 1].cpu())
    fpr, tpr, _ = roc_curve(targets.cpu(), predict[:, 1].cpu())
    idx = numpy.argmin(numpy.abs(tpr - 0.3))
    one_over_eB = 1. / fpr[idx] if fpr[idx] > 0 else numpy.inf

    metrics = {'loss': loss, 'accuracy': accuracy, 'AUC': auc, '1/eB at eS=0.3': one_over_eB}
    string = ' L: {:10.4f}, ACC: {:10.4f}, AUC: {:10.4f},    1/eB: {:10.4f}'.format(loss, accuracy, auc, one_over_eB)
    return metrics, string


def minibatch_metrics(predict, targets, loss):
    if len(targets.shape) == 2:
        targets = targets.argmax(dim=1)
    accuracy = (predict.argmax(dim=1) == targets).float().mean()
    return [loss, accuracy]


def minibatch_metrics_string(metrics):
    string = ', L:{:> 9.4f}, ACC:{:> 9.4f}'.format(*metrics)
    return string


if __name__ == '__main__':
    main()
