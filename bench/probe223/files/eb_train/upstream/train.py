import argparse
import concurrent.futures
import copy
import os
import re

from datasets.samplers import HardSampler
from commons.utils import seed_all, get_random_indices, log

import yaml

from datasets.custom_collate import *  # do not remove
from models import *  # do not remove
from torch.nn import *  # do not remove
from torch.optim import *  # do not remove
from commons.losses import *  # do not remove
from torch.optim.lr_scheduler import *  # do not remove
from datasets.pdbbind import PDBBind

from torch.utils.data import DataLoader, Subset

from trainer.metrics import Rsquared, MeanPredictorLoss, MAE, PearsonR, RMSD, RMSDfraction, CentroidDist, \
    CentroidDistFraction, RMSDmedian, CentroidDistMedian, KabschRMSD
from trainer.trainer import Trainer

# turn on for debugging C code like Segmentation Faults
import faulthandler

faulthandler.enable()


def parse_arguments(arglist=None):
    p = argparse.ArgumentParser()
    p.add_argument('--config', type=argparse.FileType(mode='r'), default='configs_clean/RDKitCoords_flexible_self_docking.yml')
    p.add_argument('--experiment_name', type=str, help='name that will be added to the runs folder output')
    p.add_argument('--logdir', type=str, default='runs', help='tensorboard logdirectory')
    p.add_argument('--num_epochs', type=int, default=2500, help='number of times to iterate through all samples')
    p.add_argument('--batch_size', type=int, default=1024, help='samples that will be processed in parallel')
    p.add_argument('--patience', type=int, default=20, help='stop training after no improvement in this many epochs')
    p.add_argument('--minimum_epochs', type=int, default=0, help='minimum numer of epochs to run')
    p.add_argument('--dataset_params', type=dict, default={},
                   help='parameters with keywords of the dataset')
    p.add_argument('--num_train', type=int, default=-1, help='n samples of the model samples to use for train')
    p.add_argument('--seed', type=int, default=123, help='seed for reproducibility')
    p.add_argument('--num_val', type=int, default=None, help='n samples of the model samples to use for validation')
    p.add_argument('--multithreaded_seeds', type=list, default=[],
                   help='if this is non empty, multiple threads will be started, training the same model but with the different seeds')
    p.add_argument('--seed_data', type=int, default=123, help='if you want to use a different seed for the datasplit')
    p.add_argument('--loss_func', type=str, default='MSELoss', help='Class name of torch.nn like [MSELoss, L1Loss]')
    p.add_argument('--loss_params', type=dict, default={}, help='parameters with keywords of the chosen loss function')
    p.add_argument('--optimizer', type=str, default='Adam', help='Class name of torch.optim like [Adam, SGD, AdamW]')
    p.add_argument('--optimizer_params', type=dict, help='parameters with keywords of the chosen optimizer like lr')
    p.add_argument('--clip_grad', type=float, default=None, help='clip gradients if magnitude is greater')
    p.add_argument('--lr_scheduler', type=str,
                   help='Class name of torch.optim.lr_scheduler like [CosineAnnealingLR, ExponentialLR, LambdaLR]')
    p.add_argument('--lr_scheduler_params', type=dict, help='parameters with keywords of the chosen lr_scheduler')
    p.add_argument('--scheduler_step_per_batch', default=True, type=bool,
                   help='step every batch if true step every epoch otherwise')
    p.add_argument('--log_iterations', type=int, default=-1,
                   help='log every log_iterations iterations (-1 for only logging after each epoch)')
    p.add_argument('--expensive_log_iterations', type=int, default=100,
                   help='frequency with which to do expensive logging operations')
    p.add_argument('--eval_per_epochs', type=int, default=0,
                   help='frequency with which to do run the function run_eval_per_epoch that can do some expensive calculations on the val set or sth like that. If this is zero, then the function will never be called')
    p.add_argument('--metrics', default=[], help='tensorboard metrics [mae, mae_density, qm9_properties ...]')
    p.add_argument('--main_metric', default='loss', help='for early stopping etc.')
    p.add_argument('--main_metric_goal', type=str, default='min', help='controls early stopping. [max, min]')
    p.add_argument('--val_per_batch', type=bool, default=True,
                   help='run evaluation every batch and then average over the eval results. When running the molhiv benchmark for example, this needs to be Fale because we need to evaluate on all val data at once since the metric is rocauc')
    p.add_argument('--tensorboard_functions', default=[], help='choices of the TENSORBOARD_FUNCTIONS in utils')
    p.add_argument('--checkpoint', type=str, help='path to directory that contains a checkpoint to continue training')
    p.add_argument('--pretrain_checkpoint', type=str, help='Specify path to finetune from a pretrained checkpoint')
    p.add_argument('--transfer_layers', default=[],
                   help='strings contained in the keys of the weights that are transferred')
    p.add_argument('--exclude_from_transfer', default=[],
                   help='parameters that usually should not be transferred like batchnorm params')
    p.add_argument('--num_epochs_local_only', type=int, default=1,
                   help='when training with OptimalTransportTrainer, this specifies for how many epochs only the local predictions will get a loss')

    p.add_argument('--collate_function', default='graph_collate', help='the collate function to use for DataLoader')
    p.add_argument('--collate_params', type=dict, default={},
                   help='parameters with keywords of the chosen collate function')
    p.add_argument('--device', type=str, default='cuda', help='What device to train on: cuda or cpu')

    p.add_argument('--models_to_save', type=list, default=[],
                   help='specify after which epochs to remember the best model')

    p.add_argument('--model_type', type=str, default='MPNN', help='Classname of one of the models in the models dir')
    p.add_argument('--model_parameters', type=dict, help='dictionary of model parameters')

    p.add_argument('--trainer', type=str, default='binding', help='')
    p.add_argument('--train_sampler', type=str, default=None, help='any of pytorchs samplers or a custom sampler')

    p.add_argument('--eval_on_test', type=bool, default=True, help='runs evaluation on test set if true')
    p.add_argument('--check_se3_invariance', type=bool, default=False, help='check it instead of generating files')
    p.add_argument('--num_confs', type=int, default=1, help='num_confs if using rdkit conformers')
    p.add_argument('--use_rdkit_coords', type=bool, default=None,
                   help='override the rkdit usage behavior of the used model')
    p.add_argument('--sampler_parameters', type=dict, help='dictionary of sampler parameters')

    return p.parse_args(arglist)


def get_trainer(args, model, data, device, metrics, run_dir, sampler=None):
    if args.trainer == None:
        trainer = Trainer
    elif args.trainer == 'binding':
        trainer = BindingTrainer
    return trainer(model=model, args=args, metrics=metrics, main_metric=args.main_metric,
                   main_metric_goal=args.main_metric_goal, optim=globals()[args.optimizer],
                   loss_func=globals()[args.loss_func](**args.loss_params), device=device, scheduler_step_per_batch=args.scheduler_step_per_batch,
                   run_dir=run_dir, sampler=sampler)


def load_model(args, data_sample, device, **kwargs):
    model = globals()[args.model_type](device=device,
                                       lig_input_edge_feats_dim=data_sample[0].edata['feat'].shape[1],
                                       rec_input_edge_feats_dim=data_sample[1].edata['feat'].shape[1],
                                       **args.model_parameters, **kwargs)
    return model


def train_wrapper(args):
    mp = args.model_parameters
    lig_graph_radius = mp['lig_graph_radius'] if 'lig_graph_radius' in mp.keys() else mp['graph_radius']
    rec_graph_radius = mp['rec_graph_radius'] if 'rec_graph_radius' in mp.keys() else mp['graph_radius']
    common_args = {'chain_radius': mp['chain_radius'], 'rec_graph_radius': rec_graph_radius,
                   'surface_max_neighbors': mp['surface_max_neighbors'],
                   'lig_max_neighbors': mp['lig_max_neighbors'], 'lig_graph_radius': lig_graph_radius,
                   'rec_max_neighbors': mp['rec_max_neighbors'], 'use_rec_atoms': mp['use_rec_atoms'],
                   'use_rdkit_coords': args.use_rdkit_coords, 'remove_h': mp['remove_h']}
    if args.checkpoint:
        run_dir = os.path.dirname(args.checkpoint)
    else:
        if args.trainer == 'torsion':
            run_dir = os.path.join(args.logdir, args.experiment_name + '_torsion')
        else:
            run_dir = os.path.join(args.logdir, args.experiment_name)

    return train(args, run_dir)


def train(args, run_dir):
    seed_all(args.seed)
    device = torch.device("cuda:0" if torch.cuda.is_available() and args.device == 'cuda' else "cpu")
    metrics_dict = {'rsquared': Rsquared(),
                    'mean_rmsd': RMSD(),
                    'median_rmsd': RMSDmedian(),
                    'kabsch_rmsd': KabschRMSD(),
                    'rmsd_less_than_2': RMSDfraction(2),
                    'rmsd_less_than_5': RMSDfraction(5),
                    'centroid_mean': CentroidDist(),
                    'centroid_median': CentroidDistMedian(),
                    'centroid_less_than_2': CentroidDistFraction(2),
                    'centroid_less_than_5': CentroidDistFraction(5),
                    'mae': MAE(),
                    'pearsonr': PearsonR(),
                    'mean_predictor_loss': MeanPredictorLoss(globals()[args.loss_func](**args.loss_params)),
                    }

    train_data = PDBBind(device=device, complex_names_path=args.train_names, lig_predictions_name=args.train_predictions_name, is_train_data=True, **args.dataset_params)
    val_data = PDBBind(device=device, complex_names_path=args.val_names, lig_predictions_name=args.val_predictions_name, **args.dataset_params)

    if args.num_val != None:
        val_data = Subset(val_data, get_random_indices(len(val_data))[:args.num_val])
    if args.num_train != None and args.num_train > 0:
        train_data = Subset(train_data, get_random_indices(len(train_data))[:args.num_train])

    log('train size: ', len(train_data))
    log('val size: ', len(val_data))

    model = load_model(args, data_sample=train_data[0], device=device)
    log('trainable params in model: ', sum(p.numel() for p in model.parameters() if p.requires_grad))
    collate_function = globals()[args.collate_function] if args.collate_params == {} else globals()[
        args.collate_function](**args.collate_params)
    if args.train_sampler != None:
        sampler = globals()[args.train_sampler](data_source=train_data, batch_size=args.batch_size)
        train_loader = DataLoader(train_data, batch_sampler=sampler, collate_fn=collate_function,
                                  pin_memory=torch.cuda.is_available())
    else:
        sampler = None
        train_loader = DataLoader(train_data, batch_size=args.batch_size, shuffle=True, collate_fn=collate_function,
                                  pin_memory=torch.cuda.is_available(), num_workers=0)
    val_loader = DataLoader(val_data, batch_size=args.batch_size, collate_fn=collate_function)

    metrics = {metric: metrics_dict[metric] for metric in args.metrics if metric != 'qm9_properties'}

    trainer = get_trainer(args=args, model=model, data=train_data, device=device, metrics=metrics, run_dir=run_dir,
                          sampler=sampler)
    val_metrics, _, _ = trainer.train(train_loader, val_loader)
    return val_metrics


def get_arguments():
    args = parse_arguments()
    if args.config:
        config_dict = yaml.load(args.config, Loader=yaml.FullLoader)
        arg_dict = args.__dict__
        for key, value in config_dict.items():
            if isinstance(value, list) and key != 'pretrain_checkpoint':
                for v in value:
                    arg_dict[key].append(v)
            else:
                arg_dict[key] = value
        args.config = args.config.name
    else:
        config_dict = {}

    if args.checkpoint:  # overwrite args with args from checkpoint except for the args that were contained in the config file
        arg_dict = args.__dict__
        with open(os.path.join(os.path.dirname(args.checkpoint), 'train_arguments.yaml'), 'r') as arg_file:
            checkpoint_dict = yaml.load(arg_file, Loader=yaml.FullLoader)
        for key, value in checkpoint_dict.items():
            if key not in config_dict.keys():
                if isinstance(value, list):
                    for v in value:
                        arg_dict[key].append(v)
                else:
                    arg_dict[key] = value
    return args


def main_cli():
    args = get_arguments()

    if args.multithreaded_seeds != []:
        with concurrent.futures.ThreadPoolExecutor() as executor:
            futures = []
            for seed in args.multithreaded_seeds:
                args_copy = get_arguments()
                args_copy.seed = seed
                futures.append(executor.submit(train_wrapper, args_copy))
            results = [f.result() for f in
                       futures]  # Block until all futures are done: list of (val_metrics, test_metrics)
    else:
        train_wrapper(args)


if __name__ == '__main__':
    main_cli()
