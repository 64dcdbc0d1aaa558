import logging
import os
import random
import shutil
import socket
from datetime import datetime
from pathlib import Path

import numpy as np
import torch
import torch.optim as optim
from torch.backends import cudnn
from torch.utils.tensorboard import SummaryWriter

from learning.checkpoint import CheckpointIO
from utils.common import create_logging
from utils.config import (get_afextractor, get_generator, get_losses,
                          get_metrics, get_models, get_optimizer, get_trainer,
                          store_config)


def init_train(args, cfg, dataset):
    """ Training initialization.

    Including Data generator, model, optimizer initialization.
    """

    '''Cuda'''
    os.environ['CUDA_VISIBLE_DEVICES'] = str(cfg['training']['cuda_visible_devices'])
    args.cuda = not args.no_cuda and torch.cuda.is_available()

    ''' Reproducible seed set'''
    torch.manual_seed(args.seed)
    if args.cuda:
        torch.cuda.manual_seed(args.seed)
    np.random.seed(args.seed)
    random.seed(args.seed)
    cudnn.deterministic = True
    cudnn.benchmark = True

    '''Sharing directories'''
    out_train_dir = Path(cfg['workspace_dir']).joinpath('out_train') \
        .joinpath(cfg['method']).joinpath(cfg['training']['train_id'])
    if out_train_dir.is_dir():
        flag = input("Train ID folder {} is existed, delete it? (y/n)". \
            format(str(out_train_dir))).lower()
        print('')
        if flag == 'y':
            shutil.rmtree(str(out_train_dir))
        elif flag == 'n':
            print("User select not to remove the training ID folder {}.\n". \
                format(str(out_train_dir)))
    out_train_dir.mkdir(parents=True, exist_ok=True)

    current_time = datetime.now().strftime('%b%d_%H-%M-%S')
    tb_dir = out_train_dir.joinpath('tb').joinpath(current_time + '_' + socket.gethostname())
    tb_dir.mkdir(parents=True, exist_ok=True)
    logs_dir = out_train_dir.joinpath('logs')
    ckpts_dir = out_train_dir.joinpath('checkpoints')
    statistics_dir = out_train_dir.joinpath('statistics')
    submissions_dir = out_train_dir.joinpath('submissions')
    predictions_dir = out_train_dir.joinpath('predictions')
    for d in [logs_dir, ckpts_dir, statistics_dir, submissions_dir, predictions_dir]:
        d.mkdir(parents=True, exist_ok=True)

    train_submissions_dir = submissions_dir.joinpath('train')
    valid_submissions_dir = submissions_dir.joinpath('valid')
    train_submissions_dir.mkdir(parents=True, exist_ok=True)
    valid_submissions_dir.mkdir(parents=True, exist_ok=True)
    train_predictions_dir = predictions_dir.joinpath('train')
    valid_predictions_dir = predictions_dir.joinpath('valid')
    train_predictions_dir.mkdir(parents=True, exist_ok=True)
    valid_predictions_dir.mkdir(parents=True, exist_ok=True)

    '''tensorboard and logging'''
    writer = SummaryWriter(log_dir=str(tb_dir))
    create_logging(logs_dir, filemode='w')
    param_file = out_train_dir.joinpath('config.yaml')
    if param_file.is_file():
        param_file.unlink()
    store_config(param_file, cfg)
    if args.cuda:
        logging.info('Using {} GPU(s): {}'.format(torch.cuda.device_count(),
                     [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]))
    else:
        logging.info('Using CPU.')

    '''Data generator'''
    train_set, train_generator, batch_sampler = get_generator(args, cfg, dataset, generator_type='train')
    valid_set, valid_generator, _ = get_generator(args, cfg, dataset, generator_type='valid')

    '''Loss'''
    losses = get_losses(cfg)

    '''Metrics'''
    metrics = get_metrics(cfg, dataset)

    '''Audio feature extractor'''
    af_extractor = get_afextractor(cfg, args.cuda)

    '''Model'''
    model = get_models(cfg, dataset, args.cuda)

    '''Optimizer'''
    optimizer = get_optimizer(cfg, af_extractor, model)
    lr_scheduler = optim.lr_scheduler.StepLR(optimizer=optimizer, step_size=cfg['training']['lr_step_size'],
                                             gamma=cfg['training']['lr_gamma'])

    '''Trainer'''
    trainer = get_trainer(args=args, cfg=cfg, dataset=dataset, valid_set=valid_set,
                          af_extractor=af_extractor, model=model, optimizer=optimizer, losses=losses, metrics=metrics)

    '''CheckpointIO'''
    if not cfg['training']['valid_fold']:
        metrics_names = losses.names
    else:
        metrics_names = metrics.names
    ckptIO = CheckpointIO(
        checkpoints_dir=ckpts_dir,
        model=model,
        optimizer=optimizer,
        batch_sampler=batch_sampler,
        metrics_names=metrics_names,
        num_checkpoints=1,
        remark=cfg['training']['remark']
    )

    if cfg['training']['weight_dir']:
        ckptIO.load(cfg['training']['weight_dir'], load_opt=False)

    '''logging and return'''
    logging.info('Train folds are: {}\n'.format(cfg['training']['train_fold']))
    logging.info('Valid folds are: {}\n'.format(cfg['training']['valid_fold']))
    logging.info('Training clip number is: {}\n'.format(len(train_set)))
    logging.info('Number of batches per epoch is: {}\n'.format(len(batch_sampler)))
    logging.info('Validation clip number is: {}\n'.format(len(valid_set)))
    logging.info('Training loss type is: {}\n'.format(cfg['training']['loss_type']))
    if cfg['training']['loss_type'] == 'doa':
        logging.info('DOA loss type is: {}\n'.format(cfg['training']['doa_loss_type']))
    logging.info('Data augmentation methods used are: {}\n'.format(cfg['data_augmentation']['type']))

    train_initializer = {
        'writer': writer,
        'train_generator': train_generator,
        'valid_generator': valid_generator,
        'lr_scheduler': lr_scheduler,
        'trainer': trainer,
        'ckptIO': ckptIO,
        'train_submissions_dir': train_submissions_dir,
        'valid_submissions_dir': valid_submissions_dir,
        'train_predictions_dir': train_predictions_dir,
        'valid_predictions_dir': valid_predictions_dir
    }

    return train_initializer


def init_infer(args, cfg, dataset):
    """ Inference initialization.

    Including Data generator, model, optimizer initialization.
    """

    '''Cuda'''
    args.cuda = (not args.no_cuda) and torch.cuda.is_available()

    '''Directories'''
    print('Inference ID is {}\n'.format(cfg['inference']['infer_id']))
    out_infer_dir = Path(cfg['workspace_dir']).joinpath('out_infer').joinpath(cfg['method']) \
        .joinpath(cfg['inference']['infer_id'])
    if out_infer_dir.is_dir():
        shutil.rmtree(str(out_infer_dir))
    submissions_dir = out_infer_dir.joinpath('submissions')
    predictions_dir = out_infer_dir.joinpath('predictions')
    submissions_dir.mkdir(parents=True, exist_ok=True)
    predictions_dir.mkdir(parents=True, exist_ok=True)

    train_ids = [train_id.strip() for train_id in str(cfg['inference']['train_ids']).split(',')]
    models = [model.strip() for model in str(cfg['inference']['models']).split(',')]
    ckpts_paths_list = []
    ckpts_models_list = []
    for train_id, model_name in zip(train_ids, models):
        ckpts_dir = Path(cfg['workspace_dir']).joinpath('out_train').joinpath(cfg['method']) \
            .joinpath(train_id).joinpath('checkpoints')
        ckpt_path = [path for path in sorted(ckpts_dir.iterdir()) if path.stem.split('_')[-1].isnumeric()]
        for path in ckpt_path:
            ckpts_paths_list.append(path)
            ckpts_models_list.append(model_name)

    '''Parameters'''
    param_file = Path(cfg['workspace_dir']).joinpath('out_train').joinpath(cfg['method']) \
        .joinpath(train_ids[0]).joinpath('config.yaml')
    with open(param_file, 'r') as f:
        import yaml
        cfg_train = yaml.safe_load(f)
    cfg_train['training']['batch_size'] = cfg['inference']['batch_size']

    '''Data generator'''
    test_set, test_generator, _ = get_generator(args, cfg, dataset, generator_type='test')

    '''Audio feature extractor'''
    af_extractor = get_afextractor(cfg_train, args.cuda)

    '''Model'''
    model = get_models(cfg_train, dataset, args.cuda)

    '''logging and return'''
    print('Test clip number is: {}\n'.format(len(test_set)))

    infer_initializer = {
        'submissions_dir': submissions_dir,
        'predictions_dir': predictions_dir,
        'ckpts_paths_list': ckpts_paths_list,
        'ckpts_models_list': ckpts_models_list,
        'test_generator': test_generator,
        'cuda': args.cuda,
        'af_extractor': af_extractor,
        'model': model,
        'cfg': cfg_train
    }

    return infer_initializer
