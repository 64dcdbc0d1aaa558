""" Main script to run CaloFlow.
    code based on https://github.com/bayesiains/nflows and https://arxiv.org/pdf/1906.04032.pdf

    This is the version of Krause & Shih, arXiv:2106.05285 (flow I + flow II, teacher) trained on the
    CaloGAN dataset (eplus, gamma, piplus).
"""

######################################   Imports   ################################################
import argparse
import os
import time

import torch
import numpy as np
import h5py

from nflows import transforms, distributions, flows
from nflows.utils import torchutils

import plot_calo
from data import get_dataloader
from data import save_samples_to_file

torch.set_default_dtype(torch.float32)

#####################################   Parser setup   #############################################
parser = argparse.ArgumentParser()

# usage modes
parser.add_argument('--train', action='store_true', help='train a flow')
parser.add_argument('--generate', action='store_true',
                    help='generate from a trained flow and plot')
parser.add_argument('--evaluate', action='store_true', help='evaluate LL of a trained flow')
parser.add_argument('--generate_to_file', action='store_true',
                    help='generate from a trained flow and save to file')
parser.add_argument('--save_only_weights', action='store_true',
                    help='Loads full model file (incl. optimizer) and saves only weights')
parser.add_argument('--student_mode', action='store_true',
                    help='Work with IAF-student instead of MAF-teacher')
parser.add_argument('--no_cuda', action='store_true', help='Do not use cuda.')
parser.add_argument('--which_cuda', default=0, type=int,
                    help='Which cuda device to use')
parser.add_argument('--nvtx', action='store_true', help='emit NVTX ranges for Nsight Systems')

parser.add_argument('--output_dir', default='./results', help='Where to store the output')
parser.add_argument('--results_file', default='results.txt',
                    help='Filename where to store settings and test results.')
parser.add_argument('--restore_file', type=str, default=None, help='Model file to restore.')
parser.add_argument('--data_dir', default='/home/claudius/ML_source/CaloGAN/classifier/data',
                    help='Where to find the training dataset')

# CALO specific
parser.add_argument('--with_noise', action='store_true',
                    help='Add 1e-8 noise (w.r.t. 100 GeV) to dataset to avoid voxel with 0 energy')
parser.add_argument('--particle_type', '-p',
                    help='Which particle to shower, "gamma", "eplus", or "piplus"')
parser.add_argument('--energy_encoding', default='logdirect',
                    help='How the energy conditional is given to the NN: "direct", "logdirect", "one_hot", or "one_blob"')
parser.add_argument('--energy_encoding_bins', type=int, default=100,
                    help='Number of bins in one_hot or one_blob energy encoding')

# MAF parameters
parser.add_argument('--n_blocks', type=str, default='8',
                    help='Total number of blocks to stack in a model (MADE in MAF; RealNVP layer in RealNVP).')
parser.add_argument('--hidden_size', type=str, default='378',
                    help='Hidden layer size for each MADE block in an MAF.')
parser.add_argument('--n_hidden', type=int, default=1,
                    help='Number of hidden layers in each MADE.')
parser.add_argument('--activation_fn', type=str, default='relu',
                    help='What activation function of torch.nn.functional to use in the MADEs.')
parser.add_argument('--n_bins', type=int, default=8,
                    help='Number of bins if piecewise transforms are used')
parser.add_argument('--dropout_probability', '-d', type=float, default=0.05,
                    help='dropout probability')
parser.add_argument('--tail_bound', type=float, default=14., help='Domain of the RQS')
parser.add_argument('--cond_base', action='store_true', default=False,
                    help='Gaussian base distribution can be conditioned on energies')

# training params
parser.add_argument('--batch_size', type=int, default=200)
parser.add_argument('--n_epochs', type=int, default=100)
parser.add_argument('--lr', type=float, default=1e-4, help='Learning rate.')
parser.add_argument('--log_interval', type=int, default=175,
                    help='How often to show loss statistics and save samples.')
parser.add_argument('--bf16', action='store_true', help='bf16 autocast for the MADE blocks (Ampere+ only)')

#######################################   helper functions   #######################################

ALPHA = 1e-6


def logit(x):
    """ returns logit of input """
    return torch.log(x / (1.0 - x))


def logit_trafo(x):
    """ implements logit trafo of MAF paper https://arxiv.org/pdf/1705.07057.pdf """
    local_x = ALPHA + (1. - 2.*ALPHA) * x
    return logit(local_x)


def inverse_logit(x, clamp_low=0., clamp_high=1.):
    """ inverts logit_trafo(), clips result if needed """
    return ((torch.sigmoid(x) - ALPHA) / (1. - 2.*ALPHA)).clamp_(clamp_low, clamp_high)


def one_hot(values, num_bins):
    """ one-hot encoding of values into num_bins """
    # values are energies in [0, 1], need to be converted to integers in [0, num_bins-1]
    values *= num_bins
    values = values.type(torch.long)
    ret = torch.nn.functional.one_hot(values, num_bins)
    return ret.squeeze().double()


def remove_nans(tensor):
    """removes elements in the given batch that contain nans
       returns the new tensor and the number of removed elements"""
    tensor_flat = tensor.flatten(start_dim=1)
    good_entries = torch.all(tensor_flat == tensor_flat, axis=1)
    res_flat = tensor_flat[good_entries]
    tensor_shape = list(tensor.size())
    tensor_shape[0] = -1
    res = res_flat.reshape(tensor_shape)
    return res, len(tensor) - len(res)


@torch.no_grad()
def generate_single_with_rejection(model, num_pts, energies, args):
    """ Generate samples, reject the ones that are nan or too energetic """
    model.eval()
    nvtx_push(args, 'generate')
    samples = model.sample(num_pts, energies).to(args.device)
    samples, num_rejected = remove_nans(samples)
    while num_rejected > 0:
        new_samples = model.sample(1, energies[:num_rejected]).to(args.device)
        new_samples, num_rejected = remove_nans(new_samples)
        samples = torch.cat((samples, new_samples.reshape(-1, samples.shape[-1])), 0)
    nvtx_pop(args)
    return samples


def nvtx_push(args, name):
    if args.nvtx:
        torch.cuda.nvtx.range_push(name)


def nvtx_pop(args):
    if args.nvtx:
        torch.cuda.nvtx.range_pop()


def train_and_evaluate(model, train_loader, test_loader, optimizer, args, lr_schedule):
    """ As the name says, train the flow and evaluate along the way """
    best_eval_logprob = float('-inf')
    milestones = [15, 40, 60]
    lr_schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=milestones, gamma=0.5, verbose=True)
    for i in range(args.n_epochs):
        train(model, train_loader, optimizer, i, args)
        with torch.no_grad():
            eval_logprob, _ = evaluate(model, test_loader, i, args)
            args.test_loss.append(-eval_logprob.to('cpu').numpy())
        if eval_logprob > best_eval_logprob:
            best_eval_logprob = eval_logprob
            save_flow(model, optimizer, args)
        lr_schedule.step()
        with open(os.path.join(args.output_dir, 'train_loss.npy'), 'wb') as f:
            np.save(f, np.array(args.train_loss))
        with open(os.path.join(args.output_dir, 'test_loss.npy'), 'wb') as f:
            np.save(f, np.array(args.test_loss))


def train(model, dataloader, optimizer, epoch, args):
    """ train the flow one epoch """
    model.train()
    for i, data in enumerate(dataloader):
        x0 = data['layer_0']
        x1 = data['layer_1']
        x2 = data['layer_2']
        E = data['energy']
        x0 = x0.view(x0.shape[0], -1).to(args.device)
        x1 = x1.view(x1.shape[0], -1).to(args.device)
        x2 = x2.view(x2.shape[0], -1).to(args.device)
        E = E.to(args.device)
        y = torch.log10(E * 10.) + 1.
        x = torch.cat((x0, x1, x2), 1)
        x = logit_trafo(x)

        with torch.autocast(device_type=args.device.type, dtype=torch.bfloat16, enabled=args.bf16):
            loss = - model.log_prob(x, y).mean(0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        args.train_loss.append(loss.tolist())

        if i % args.log_interval == 0:
            print('epoch {:3d} / {}, step {:4d} / {}; loss {:.4f}'.format(
                epoch + 1, args.n_epochs, i, len(dataloader), loss.item()))
            print('epoch {:3d} / {}, step {:4d} / {}; loss {:.4f}'.format(
                epoch + 1, args.n_epochs, i, len(dataloader), loss.item()),
                  file=open(args.results_file, 'a'))


@torch.no_grad()
def evaluate(model, dataloader, epoch, args):
    """Evaluate the model, i.e find the mean log_prob of the test set
       Energy is taken to be the energy of the image, so no
       marginalization is performed.
    """
    model.eval()
    loglike = []
    for data in dataloader:
        x0 = data['layer_0']
        x1 = data['layer_1']
        x2 = data['layer_2']
        E = data['energy']
        x0 = x0.view(x0.shape[0], -1).to(args.device)
        x1 = x1.view(x1.shape[0], -1).to(args.device)
        x2 = x2.view(x2.shape[0], -1).to(args.device)
        E = E.to(args.device)
        y = torch.log10(E * 10.) + 1.
        x = torch.cat((x0, x1, x2), 1)
        x = logit_trafo(x)
        loglike.append(model.log_prob(x, y))

    logprobs = torch.cat(loglike, dim=0)

    logprob_mean = logprobs.mean(0)
    logprob_std = logprobs.var(0).sqrt() / np.sqrt(len(dataloader.dataset))

    output = 'Evaluate ' + (epoch is not None) * '(epoch {}) -- '.format(epoch + 1) + \
        'logp(x, at E(x)) = {:.3f} +/- {:.3f}'

    print(output.format(logprob_mean, logprob_std))
    print(output.format(logprob_mean, logprob_std), file=open(args.results_file, 'a'))
    return logprob_mean, logprob_std


def save_flow(model, optimizer, args):
    """ saves model and optimizer to file """
    torch.save({'model_state_dict': model.state_dict(),
                'optimizer_state_dict': optimizer.state_dict()},
               os.path.join(args.output_dir, args.particle_type + '.pt'))


def load_flow(model, optimizer, args):
    """ loads model and optimizer from file """
    checkpoint = torch.load(os.path.join(args.output_dir, args.particle_type + '.pt'),
                            map_location=args.device)
    model.load_state_dict(checkpoint['model_state_dict'])
    optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
    model.to(args.device)
    model.eval()
    return model, optimizer


def generate_to_file(model, args, num_events=100000, energies=None):
    """ generates samples from the trained model and saves them to file """
    if energies is None:
        energies = (torch.rand(size=(num_events, 1)) * 99.) + 1.
    energies = energies.to(args.device)
    y = torch.log10(energies * 10.) + 1.
    samples = []
    start = time.time()
    for i in range(0, num_events, 10000):
        samples.append(generate_single_with_rejection(model, 1, y[i:i + 10000], args))
    torch.cuda.synchronize()
    print("generating {} events took {:.1f}s".format(num_events, time.time() - start))
    samples = inverse_logit(torch.cat(samples, 0).squeeze())
    save_samples_to_file(samples.to('cpu'), energies.to('cpu'), args.output_dir + '/' + args.particle_type + '.hdf5', 0.)


def build_flow(args, flow_params_RQS, num_dim, cond_label_size):
    flow_blocks = []
    for i in range(int(args.n_blocks)):
        flow_blocks.append(
            transforms.MaskedPiecewiseRationalQuadraticAutoregressiveTransform(
                **flow_params_RQS,
                features=num_dim,
                context_features=cond_label_size,
                hidden_features=int(args.hidden_size)))
        if i % 2 == 0:
            flow_blocks.append(transforms.ReversePermutation(num_dim))
        else:
            flow_blocks.append(transforms.RandomPermutation(num_dim))
    del flow_blocks[-1]
    flow_transform = transforms.CompositeTransform(flow_blocks)
    if args.cond_base:
        flow_base_distribution = distributions.ConditionalDiagonalNormal(
            shape=[num_dim], context_encoder=ContextEmbedder(cond_label_size, 2 * num_dim))
    else:
        flow_base_distribution = distributions.StandardNormal(shape=[num_dim])
    return flows.Flow(transform=flow_transform, distribution=flow_base_distribution)


class ContextEmbedder(torch.nn.Module):
    """ Small NN to be used for the embedding of the conditionals """
    def __init__(self, input_size, output_size):
        super().__init__()
        self.layer1 = torch.nn.Linear(input_size, 16)
        self.layer2 = torch.nn.Linear(16, 16)
        self.output = torch.nn.Linear(16, output_size)

    def forward(self, x):
        x = torch.nn.functional.relu(self.layer1(x))
        x = torch.nn.functional.relu(self.layer2(x))
        return self.output(x)


####################################################################################################
#######################################   running the code   #######################################
####################################################################################################

if __name__ == '__main__':
    args = parser.parse_args()

    # check if parsed arguments are valid
    assert (args.train or args.generate or args.evaluate or args.generate_to_file or args.save_only_weights), \
        ("Please specify at least one of --train, --generate, --evaluate, --generate_to_file")

    if not os.path.isdir(args.output_dir):
        os.makedirs(args.output_dir)

    # setup device
    args.device = torch.device('cuda:' + str(args.which_cuda)
                               if torch.cuda.is_available() and not args.no_cuda else 'cpu')
    print("Using {}".format(args.device))

    if args.bf16 and args.device.type == 'cuda':
        major, _ = torch.cuda.get_device_capability(args.device)
        if major < 8:
            print("bf16 needs compute capability >= 8.0, falling back to fp32")
            args.bf16 = False

    # get dataloaders
    train_dataloader, test_dataloader = get_dataloader(args.particle_type,
                                                       args.data_dir,
                                                       full=False,
                                                       apply_logit=False,
                                                       device=args.device,
                                                       batch_size=args.batch_size,
                                                       with_noise=args.with_noise,
                                                       normed=False,
                                                       normed_layer=False)

    args.input_size = {'0': 288, '1': 144, '2': 72}
    args.input_dims = {'0': (3, 96), '1': (12, 12), '2': (12, 6)}

    args.train_loss = []
    args.test_loss = []

    flow_params_RQS = {'num_blocks': args.n_hidden,  # num of hidden layers per block
                       'use_residual_blocks': False,
                       'use_batch_norm': False,
                       'dropout_probability': args.dropout_probability,
                       'activation': getattr(torch.nn.functional, args.activation_fn),
                       'random_mask': False,
                       'num_bins': args.n_bins,
                       'tails': 'linear',
                       'tail_bound': args.tail_bound,
                       'min_bin_width': 1e-6,
                       'min_bin_height': 1e-6,
                       'min_derivative': 1e-6}
    num_dim = 504
    model = build_flow(args, flow_params_RQS, num_dim, cond_label_size=1)
    model = model.to(args.device)
    print(model)
    total_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print("Model has {} parameters".format(total_parameters))
    print("Model has {} parameters".format(total_parameters), file=open(args.results_file, 'a'))

    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    if args.train:
        train_and_evaluate(model, train_dataloader, test_dataloader, optimizer, args, None)

    if args.evaluate:
        model, optimizer = load_flow(model, optimizer, args)
        evaluate(model, test_dataloader, None, args)

    if args.generate_to_file:
        model, optimizer = load_flow(model, optimizer, args)
        generate_to_file(model, args)

    if args.save_only_weights:
        model, optimizer = load_flow(model, optimizer, args)
        torch.save({'model_state_dict': model.state_dict()},
                   os.path.join(args.output_dir, 'weights_' + args.particle_type + '.pt'))
