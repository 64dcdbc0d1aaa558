# Enable import from parent package
import sys
import os
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
import configargparse
from functools import partial
import dataio
import utils
import training
import loss_functions
import modules
import summary_functions

p = configargparse.ArgumentParser()
p.add('-c', '--config', required=False, is_config_file=True, help='Path to config file.')

# Experiment & I/O general properties
p.add_argument('--dataset_path', type=str, default='../data/nerf_synthetic/lego/',
               help='path to directory where dataset is stored')
p.add_argument('--logging_root', type=str, default='../logs',
               help='root for logging')
p.add_argument('--experiment_name', type=str, required=True,
               help='path to directory where checkpoints & tensorboard events will be saved.')
p.add_argument('--resume', nargs=2, type=str, default=None,
               help='resume training, specify path to directory where model is stored.')

# GPU & other computing properties
p.add_argument('--gpus', type=int, default=1,
               help='number of GPUs to use (spawns one process per GPU)')
p.add_argument('--num_workers', type=int, default=0,
               help='number of dataloader workers.')
p.add_argument('--chunk_size_train', type=int, default=1024,
               help='max chunk size to process data during training')
p.add_argument('--chunk_size_eval', type=int, default=512,
               help='max chunk size to process data during eval')

# Learning properties
p.add_argument('--lr', type=float, default=1e-3)
p.add_argument('--num_epochs', type=int, default=1000,
               help='number of epochs to train for.')
p.add_argument('--max_steps', type=int, default=None,
               help='number of steps to train for (overrides num_epochs).')
p.add_argument('--batch_size', type=int, default=1)
p.add_argument('--num_views', type=int, default=1,
               help='number of views to sample per step')

p.add_argument('--epochs_til_ckpt', type=int, default=100,
               help='epochs until checkpoint is saved.')
p.add_argument('--steps_til_summary', type=int, default=1000,
               help='number of iterations until tensorboard summary is saved.')

# Dataset options
p.add_argument('--img_size', type=int, default=64,
               help='image resolution to train on (assumed symmetric)')
p.add_argument('--samples_per_ray', type=int, default=128,
               help='samples to evaluate along each ray')
p.add_argument('--samples_per_view', type=int, default=1024,
               help='samples to evaluate along each view')

# Model options
p.add_argument('--hidden_features', type=int, default=128)
p.add_argument('--hidden_layers', type=int, default=4)
p.add_argument('--multiscale', action='store_true', default=False)
p.add_argument('--use_resized', action='store_true', default=False)

opt = p.parse_args()

if opt.experiment_name is None and opt.render_model is None:
    p.error('--experiment_name is required.')


def sync_model(model):
    for param in model.parameters():
        dist.broadcast(param.data, 0)


def init_dataloader(opt, rank=0, world_size=1):
    ''' load sphere tracing dataset '''

    train_dataset = dataio.NerfBlenderDataset(opt.dataset_path,
                                              splits=['train'],
                                              mode='train',
                                              resize_to=2*(opt.img_size,),
                                              multiscale=opt.multiscale)

    coords_dataset = dataio.Implicit6DMultiviewDataWrapper(train_dataset,
                                                           train_dataset.get_img_shape(),
                                                           train_dataset.get_camera_params(),
                                                           samples_per_ray=opt.samples_per_ray,
                                                           samples_per_view=opt.samples_per_view,
                                                           num_workers=opt.num_workers,
                                                           multiscale=opt.multiscale)

    coords_dataset.toggle_logging_sampling()

    if world_size > 1:
        sampler = DistributedSampler(coords_dataset, num_replicas=world_size, rank=rank, shuffle=True)
    else:
        sampler = None

    train_dataloader = DataLoader(coords_dataset,
                                  shuffle=(sampler is None),
                                  batch_size=opt.batch_size,
                                  pin_memory=True,
                                  num_workers=opt.num_workers,
                                  sampler=sampler)

    return train_dataloader, coords_dataset


def init_model(opt):
    if opt.multiscale:
        model = modules.MultiscaleCoordinateNet(out_features=4,
                                                hidden_features=opt.hidden_features,
                                                num_hidden_layers=opt.hidden_layers,
                                                in_features=6,
                                                frequency=(opt.img_size, opt.img_size, opt.img_size, 4, 4, 4),
                                                output_layers=(1, 2, 4))
    else:
        model = modules.CoordinateNet(out_features=4,
                                      in_features=6,
                                      nl='relu',
                                      num_hidden_layers=opt.hidden_layers,
                                      hidden_features=opt.hidden_features,
                                      num_pe_fns=10)
    return model


def main(gpu, world_size=1):

    if world_size > 1:
        dist.init_process_group(backend='nccl', init_method='tcp://localhost:1492',
                                world_size=world_size, rank=gpu)
        torch.cuda.set_device(gpu)

    train_dataloader, coords_dataset = init_dataloader(opt, rank=gpu, world_size=world_size)

    model = init_model(opt)
    model.cuda()

    if world_size > 1:
        sync_model(model)

    resume_checkpoint = {}
    if opt.resume is not None:
        resume_dir, resume_iter = opt.resume
        ckpt_path = os.path.join(resume_dir, 'checkpoints', f'model_{resume_iter}.pth')
        print(f'Resuming from {ckpt_path}')
        resume_checkpoint = torch.load(ckpt_path, map_location=f'cuda:{gpu}')
        model.load_state_dict(resume_checkpoint['model_state_dict'])

    # Define the loss
    if opt.multiscale:
        loss_fn = partial(loss_functions.multiscale_radiance_loss, use_resized=opt.use_resized)
        summary_fn = partial(summary_functions.write_multiscale_radiance_summary,
                             chunk_size_eval=opt.chunk_size_eval,
                             num_views_to_disp_at_training=1,
                             hierarchical_sampling=False)
    else:
        loss_fn = loss_functions.radiance_sigma_rgb_loss
        summary_fn = partial(summary_functions.write_radiance_summary,
                             chunk_size_eval=opt.chunk_size_eval,
                             num_views_to_disp_at_training=1)

    root_path = os.path.join(opt.logging_root, opt.experiment_name)

    # Save command-line parameters log directory.
    if gpu == 0:
        utils.cond_mkdir(root_path)
        p.write_config_file(opt, [os.path.join(root_path, 'config.ini')])

        with open(os.path.join(root_path, "params.txt"), "w") as out_file:
            out_file.write('\n'.join(["%s: %s" % (key, value) for key, value in vars(opt).items()]))

    training.train(model=model, train_dataloader=train_dataloader, epochs=opt.num_epochs, lr=opt.lr,
                   steps_til_summary=opt.steps_til_summary, epochs_til_checkpoint=opt.epochs_til_ckpt,
                   model_dir=root_path, loss_fn=loss_fn, summary_fn=summary_fn, resume_checkpoint=resume_checkpoint,
                   objs_to_save={'opt': vars(opt)}, rank=gpu, world_size=world_size, gpu=gpu,
                   max_steps=opt.max_steps)

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == '__main__':
    opt = p.parse_args()

    if opt.gpus > 1:
        mp.spawn(main, nprocs=opt.gpus, args=(opt.gpus,), join=True)
    else:
        main(0)
