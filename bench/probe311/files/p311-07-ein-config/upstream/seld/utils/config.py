import logging
from pathlib import Path

import methods.feature as feature
import torch
import torch.nn as nn
import torch.optim as optim
import yaml
from datasets.dataset import dcase2019task3, dcase2020task3
from methods import ein_seld
from torch.utils.data import ConcatDataset

from utils.datasets import UserBatchSampler, PinMemCustomBatch, collate_fn

dataset_dict = {
    'dcase2019task3': dcase2019task3,
    'dcase2020task3': dcase2020task3,
}

method_dict = {
    'ein_seld': ein_seld,
}


def store_config(output_path, config):
    """ Write the given configuration to a YAML file.

    Args:
        output_path (str): Output file path.
        config: Configuration dictionary.
    """
    with open(output_path, 'w') as f:
        yaml.dump(config, f, default_flow_style=None)


def get_dataset(dataset_name, root_dir):
    """ Get a dataset class.

    Args:
        dataset_name (str): name of the dataset ('dcase2019task3' / 'dcase2020task3')
        root_dir (str): root directory of the dataset
    """
    dataset = dataset_dict[dataset_name](root_dir)
    print('\nDataset {} is being developed......\n'.format(dataset_name))
    return dataset


def get_generator(args, cfg, dataset, generator_type):
    """ Get generator.

    Args:
        args: input args
        cfg: configuration
        dataset: dataset used
        generator_type: 'train' | 'valid' | 'test'
            'train' for training,
            'valid' for validation of valid set,
            'test' for infering.
    Output:
        subset: train_set, valid_set, or test_set
        data_generator: 'train_generator', 'valid_generator', or 'test_generator'
    """
    assert generator_type in ['train', 'valid', 'test'], \
        "Data generator type '{}' is not 'train', 'valid' or 'test'".format(generator_type)

    batch_sampler = None
    if generator_type == 'train':
        subset = method_dict[cfg['method']].data.UserDataset(
            args, cfg, dataset, dataset_type='train', overlap=cfg['training']['overlap'])
        batch_sampler = UserBatchSampler(
            clip_num=len(subset),
            batch_size=cfg['training']['batch_size'],
            seed=args.seed
        )
        data_generator = torch.utils.data.DataLoader(
            dataset=subset,
            batch_sampler=batch_sampler,
            num_workers=args.num_workers,
            collate_fn=collate_fn,
            pin_memory=True
        )
    elif generator_type == 'valid':
        subset = method_dict[cfg['method']].data.UserDataset(
            args, cfg, dataset, dataset_type='valid')
        data_generator = torch.utils.data.DataLoader(
            dataset=subset,
            batch_size=cfg['training']['batch_size'],
            shuffle=False,
            num_workers=cfg['training']['num_workers'],
            collate_fn=collate_fn,
            pin_memory=True,  # faster host->GPU copies
        )
    elif generator_type == 'test':
        dataset_type = 'dev_test' if cfg['inference']['testset_type'] == 'dev' else 'eval_test'
        subset = method_dict[cfg['method']].data.UserDataset(
            args, cfg, dataset, dataset_type=dataset_type)
        data_generator = torch.utils.data.DataLoader(
            dataset=subset,
            batch_size=cfg['inference']['batch_size'],
            shuffle=False,
            num_workers=args.num_workers,
            collate_fn=collate_fn,
            pin_memory=torch.cuda.is_available()
        )

    return subset, data_generator, batch_sampler


def get_losses(cfg):
    """ Get losses

    """
    losses = method_dict[cfg['method']].losses.Losses(cfg)
    for idx, loss_name in enumerate(losses.names):
        logging.info('{} is used as the {} loss.'.format(loss_name, idx))
    return losses


def get_afextractor(cfg, cuda):
    """ Get audio feature extractor

    The extractor runs on the GPU as part of the forward pass, so it is wrapped
    exactly like the model.
    """
    if cfg['data']['audio_feature'] == 'logmel&intensity':
        afextractor = feature.LogmelIntensity_Extractor(cfg)
    elif cfg['data']['audio_feature'] == 'logmel&gcc':
        afextractor = feature.LogmelGcc_Extractor(cfg)
    else:
        raise NotImplementedError('audio feature {} is not implemented'.format(cfg['data']['audio_feature']))
    if cuda:
        afextractor = nn.DataParallel(afextractor)
        afextractor = afextractor.cuda()
    return afextractor


def get_models(cfg, dataset, cuda, model_name=None):
    """ Get models

    """
    logging.info('=====>> Building a model\n')
    if not model_name:
        model = vars(method_dict[cfg['method']].models)[cfg['training']['model']](cfg, dataset)
    else:
        model = vars(method_dict[cfg['method']].models)[model_name](cfg, dataset)
    if cuda:
        model = nn.DataParallel(model)
        model.cuda()
    logging.info('Model architectures:\n{}\n'.format(model))
    count_parameters(model)
    return model


def get_optimizer(cfg, af_extractor, model):
    """ Get optimizer

    """
    opt_method = cfg['training']['optimizer']
    lr = cfg['training']['lr']
    params = list(af_extractor.parameters()) + list(model.parameters())
    if opt_method == 'adam':
        optimizer = optim.Adam(params, lr=lr, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, amsgrad=True)
    elif opt_method == 'sgd':
        optimizer = optim.SGD(params, lr=lr, momentum=0, weight_decay=0)
    elif opt_method == 'adamw':
        optimizer = optim.AdamW(params, lr=lr, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, amsgrad=True)
    else:
        raise NotImplementedError('Optimizer {} is not implemented'.format(opt_method))
    return optimizer


def get_metrics(cfg, dataset):
    """ Get metrics

    """
    metrics = method_dict[cfg['method']].metrics.Metrics(dataset)
    return metrics


def get_trainer(args, cfg, dataset, valid_set, af_extractor, model, optimizer, losses, metrics):
    """ Get trainer

    """
    trainer = method_dict[cfg['method']].training.Trainer(
        args=args, cfg=cfg, dataset=dataset, valid_set=valid_set, af_extractor=af_extractor,
        model=model, optimizer=optimizer, losses=losses, metrics=metrics
    )
    return trainer


def count_parameters(model):
    """ Count the number of trainable parameters

    """
    params_num = sum(p.numel() for p in model.parameters() if p.requires_grad)
    logging.info('Total number of parameters: {}\n'.format(params_num))
