# Enable import from parent package
import sys
import os
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from functools import partial
import torch
from torch.utils.data import DataLoader
import configargparse
import dataio
import utils
import training
import loss_functions
import modules
import summary_functions

p = configargparse.ArgumentParser()
p.add('-c', '--config', required=False, is_config_file=True, help='Path to config file.')

p.add_argument('--logging_root', type=str, default='../logs', help='root for logging')
p.add_argument('--experiment_name', type=str, required=True,
               help='Name of subdirectory in logging_root where summaries and checkpoints will be saved.')

# General training options
p.add_argument('--batch_size', type=int, default=1)
p.add_argument('--lr', type=float, default=1e-3, help='learning rate. default=1e-3')
p.add_argument('--num_epochs', type=int, default=5001,
               help='Number of epochs to train for.')
p.add_argument('--gpu', type=int, default=0,
               help='GPU ID to use')

# summary options
p.add_argument('--epochs_til_ckpt', type=int, default=1000,
               help='Time interval in seconds until checkpoint is saved.')
p.add_argument('--steps_til_summary', type=int, default=500,
               help='Time interval in seconds until tensorboard summary is saved.')

# dataset options
p.add_argument('--res', type=int, default=256,
               help='image resolution.')
p.add_argument('--dataset', type=str, default='camera', choices=['camera', 'pluto', 'sticks', 'famous'],
               help='which dataset to use')
p.add_argument('--grayscale', action='store_true', default=False,
               help='whether to use grayscale')

# model options
p.add_argument('--model', type=str, default='mfn', choices=['mfn', 'siren', 'pe', 'ff'],
               help='use MFN, SIREN, positional encoding or Fourier features')
p.add_argument('--multiscale', action='store_true', default=False,
               help='use multiscale')
p.add_argument('--hidden_features', type=int, default=128,
               help='hidden features in network')
p.add_argument('--hidden_layers', type=int, default=4,
               help='hidden layers in network')
p.add_argument('--ff_scale', type=float, default=10.,
               help='std of the Gaussian frequency matrix of the Fourier-feature baseline')

opt = p.parse_args()

if opt.experiment_name is None and opt.render_model is None:
    p.error('--experiment_name is required.')

for k, v in opt.__dict__.items():
    print(k, v)


def main():
    print('--------------------------------------------------------------------')
    print(f'Training on GPU {opt.gpu}')
    torch.cuda.set_device(opt.gpu)

    if opt.dataset == 'camera':
        img_dataset = dataio.Camera()
    elif opt.dataset == 'pluto':
        pluto_url = "https://upload.wikimedia.org/wikipedia/commons/e/ef/Pluto_in_True_Color_-_High-Res.jpg"
        img_dataset = dataio.ImageFile('../data/pluto.jpg', url=pluto_url, grayscale=opt.grayscale)
    elif opt.dataset == 'sticks':
        img_dataset = dataio.Sticks()
    elif opt.dataset == 'famous':
        img_dataset = dataio.Famous()
    else:
        raise NotImplementedError('Unknown dataset')

    coord_dataset = dataio.ImageWrapper(img_dataset, sidelength=opt.res, multiscale=opt.multiscale,
                                        compute_diff='all')
    image_resolution = (opt.res, opt.res)

    train_dataloader = DataLoader(coord_dataset, shuffle=False, batch_size=opt.batch_size, pin_memory=True,
                                  num_workers=0)

    out_features = 1 if opt.grayscale else 3

    if opt.model == 'mfn':
        if opt.multiscale:
            model = modules.MultiscaleBACON(2, opt.hidden_features, out_size=out_features,
                                            hidden_layers=opt.hidden_layers,
                                            bias=True,
                                            frequency=(opt.res, opt.res),
                                            quantization_interval=2*torch.pi,
                                            input_scales=[1/8, 1/8, 1/4, 1/4, 1/4],
                                            output_layers=[1, 2, 4],
                                            reuse_filters=False)
        else:
            model = modules.BACON(2, opt.hidden_features, out_size=out_features,
                                  hidden_layers=opt.hidden_layers,
                                  bias=True,
                                  frequency=(opt.res, opt.res),
                                  quantization_interval=2*torch.pi)
    elif opt.model == 'siren':
        model = modules.CoordinateNet(nl='sine', in_features=2, out_features=out_features,
                                      num_hidden_layers=opt.hidden_layers,
                                      hidden_features=opt.hidden_features,
                                      w0=30)
    elif opt.model == 'ff':
        model = modules.CoordinateNet(nl='relu', in_features=2, out_features=out_features,
                                      num_hidden_layers=opt.hidden_layers,
                                      hidden_features=opt.hidden_features,
                                      fourier_features=True, ff_scale=opt.ff_scale)
    elif opt.model == 'pe':
        model = modules.CoordinateNet(nl='relu', in_features=2, out_features=out_features,
                                      num_hidden_layers=opt.hidden_layers,
                                      hidden_features=opt.hidden_features,
                                      num_pe_fns=8)
    else:
        raise NotImplementedError

    model.cuda()

    root_path = os.path.join(opt.logging_root, opt.experiment_name)

    if opt.multiscale:
        loss_fn = partial(loss_functions.multiscale_image_mse, use_resized=True)
        summary_fn = partial(summary_functions.multiscale_image_summary, image_resolution, coord_dataset,
                             model_type=opt.model, skip=False)
    else:
        loss_fn = loss_functions.image_mse
        summary_fn = partial(summary_functions.image_summary, image_resolution, coord_dataset)

    training.train(model=model, train_dataloader=train_dataloader, epochs=opt.num_epochs, lr=opt.lr,
                   steps_til_summary=opt.steps_til_summary, epochs_til_checkpoint=opt.epochs_til_ckpt,
                   model_dir=root_path, loss_fn=loss_fn, summary_fn=summary_fn)


if __name__ == '__main__':
    main()
