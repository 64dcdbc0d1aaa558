import os
import argparse

import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint
from pytorch_lightning.loggers import TensorBoardLogger
from pytorch_lightning.plugins import DDPPlugin

import train_val
import data
from utils import dotdict
import torch


def get_args():

    parent_parser = argparse.ArgumentParser(add_help=False)
    parent_parser.add_argument('--data_root', type=str, default='')
    parent_parser.add_argument('--train_data_path', type=str, default='faces_emore/imgs')
    parent_parser.add_argument('--val_data_path', type=str, default='faces_emore')
    parent_parser.add_argument('--train_data_subset', action='store_true')

    parent_parser.add_argument('--prefix', type=str, default='default')
    parent_parser.add_argument('--gpus', type=int, default=1, help='how many gpus, -1 for all visible gpus')
    parent_parser.add_argument('--distributed_backend', type=str, default='ddp', choices=('dp', 'ddp', 'ddp2'),
                               help='supports three options dp, ddp, ddp2')
    parent_parser.add_argument('--use_16bit', action='store_true', help='if true uses 16 bit precision')
    parent_parser.add_argument('--epochs', default=24, type=int, metavar='N', help='number of total epochs to run')
    parent_parser.add_argument('--seed', type=int, default=42, help='seed for initializing training.')
    parent_parser.add_argument('--batch_size', default=256, type=int,
                               help='mini-batch size (default: 256), this is the total '
                                    'batch size of all GPUs on the current node when '
                                    'using Data Parallel or Distributed Data Parallel')
    parent_parser.add_argument('--num_workers', default=16, type=int)
    parent_parser.add_argument('--fast_dev_run', dest='fast_dev_run', action='store_true')
    parent_parser.add_argument('--evaluate', action='store_true', help='use with start_from_model_statedict')
    parent_parser.add_argument('--resume_from_checkpoint', type=str, default='')
    parent_parser.add_argument('--start_from_model_statedict', type=str, default='')
    parent_parser.add_argument('--use_wandb', action='store_true')
    parent_parser.add_argument('--custom_num_class', type=int, default=-1)

    parser = add_task_arguments(parent_parser)
    args = parser.parse_args()

    args.lr_milestones = [int(x) for x in args.lr_milestones.split(',')]

    # set working dir
    current_time = time_str()
    project_root = os.path.dirname(os.path.abspath(__file__))
    args.output_dir = os.path.join(project_root, 'experiments', args.prefix + "_" + current_time)
    os.makedirs(args.output_dir, exist_ok=True)
    return args


def add_task_arguments(parser):
    parser.add_argument('--arch', default='ir_50')
    parser.add_argument('--lr', type=float, default=0.1, help='initial learning rate')
    parser.add_argument('--lr_milestones', default='8,12,14', type=str, help='epochs for reducing LR')
    parser.add_argument('--lr_gamma', default=0.1, type=float, help='multiply when reducing LR')
    parser.add_argument('--momentum', default=0.9, type=float, metavar='M', help='momentum')
    parser.add_argument('--weight_decay', default=1e-4, type=float)

    parser.add_argument('--head', default='adaface', type=str, choices=('adaface', 'arcface', 'cosface'))
    parser.add_argument('--m', default=0.4, type=float)
    parser.add_argument('--h', default=0.333, type=float)
    parser.add_argument('--s', type=float, default=64.0)
    parser.add_argument('--t_alpha', default=0.01, type=float)

    parser.add_argument('--low_res_augmentation_prob', default=0.0, type=float)
    parser.add_argument('--crop_augmentation_prob', default=0.0, type=float)
    parser.add_argument('--photometric_augmentation_prob', default=0.0, type=float)

    parser.add_argument('--accumulate_grad_batches', type=int, default=1)
    parser.add_argument('--test_run', action='store_true')
    parser.add_argument('--save_all_models', action='store_true')
    return parser


def time_str():
    import datetime
    return datetime.datetime.now().strftime('%m-%d_%H-%M-%S')


def main(args):

    hparams = dotdict(vars(args))
    data_module = data.DataModule(**hparams)
    hparams.num_classes = data_module.num_classes if args.custom_num_class == -1 else args.custom_num_class
    trainer_mod = train_val.Trainer(**hparams)

    if hparams.start_from_model_statedict:
        ckpt = torch.load(hparams.start_from_model_statedict, map_location='cpu')
        trainer_mod.model.load_state_dict({key.replace('model.', ''):val
                                           for key,val in ckpt['state_dict'].items() if 'model.' in key})

    checkpoint_callback = ModelCheckpoint(dirpath=hparams.output_dir, save_last=True,
                                          save_top_k=-1 if hparams.save_all_models else 1,
                                          mode='max', monitor='val_acc')
    my_logger = TensorBoardLogger(save_dir=hparams.output_dir)
    if hparams.use_wandb:
        from pytorch_lightning.loggers import WandbLogger
        my_logger = [my_logger, WandbLogger(project='adaface_face_recognition', save_dir=hparams.output_dir,
                                            name=os.path.basename(hparams.output_dir))]

    trainer = pl.Trainer(resume_from_checkpoint=hparams.resume_from_checkpoint or None,
                         default_root_dir=hparams.output_dir,
                         logger=my_logger,
                         gpus=hparams.gpus,
                         max_epochs=hparams.epochs,
                         accelerator=hparams.distributed_backend,
                         precision=16 if hparams.use_16bit else 32,
                         fast_dev_run=hparams.fast_dev_run,
                         callbacks=[checkpoint_callback],
                         num_sanity_val_steps=16 if hparams.batch_size < 128 else 0,
                         val_check_interval=1.0 if hparams.epochs < 10 else 0.1,
                         accumulate_grad_batches=hparams.accumulate_grad_batches,
                         limit_train_batches=50 if hparams.test_run else 1.0,
                         plugins=DDPPlugin(find_unused_parameters=False),
                         )

    if not hparams.evaluate:
        # train / val
        print('start training')
        trainer.fit(trainer_mod, data_module)
        print('start evaluating')
        print('evaluating from ', checkpoint_callback.best_model_path)
        trainer.test(ckpt_path='best', datamodule=data_module)
    else:
        # eval only
        print('start evaluating')
        trainer.test(trainer_mod, datamodule=data_module)


if __name__ == '__main__':

    args = get_args()
    pl.seed_everything(args.seed)

    if args.gpus == -1:
        args.gpus = torch.cuda.device_count()

    if args.distributed_backend == 'ddp' and args.gpus > 0:
        # When using a single GPU per process and per
        # DistributedDataParallel, we need to divide the batch size
        # ourselves based on the total number of GPUs we have
        torch.set_num_threads(1)
        args.total_batch_size = args.batch_size
        args.batch_size = int(args.batch_size / max(1, args.gpus))
        args.num_workers = min(args.num_workers, 16)

    if args.resume_from_checkpoint:
        assert args.resume_from_checkpoint.endswith('.ckpt')
        args.output_dir = os.path.dirname(args.resume_from_checkpoint)
        print('resume from {}'.format(args.output_dir))

    main(args)
