"""ESRGAN training entry point (MMSR-style): options, distributed init, RRDB model and the main loop."""
import argparse
import functools
import logging
import math
import os
import random
from collections import OrderedDict

import numpy as np
import yaml
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DataParallel, DistributedDataParallel

from data import create_dataloader, create_dataset
from data.data_sampler import DistIterSampler
from models.archs.discriminator_vgg_arch import Discriminator_VGG_128, VGGFeatureExtractor
import utils.util as util


# ----------------------------------------------------------------------------- options/options.py
def parse_options(opt_path, is_train=True):
    with open(opt_path, mode='r') as f:
        opt = yaml.load(f, Loader=yaml.SafeLoader)
    # export CUDA_VISIBLE_DEVICES
    gpu_list = ','.join(str(x) for x in opt['gpu_ids'])
    os.environ['CUDA_VISIBLE_DEVICES'] = gpu_list
    print('export CUDA_VISIBLE_DEVICES=' + gpu_list)

    opt['is_train'] = is_train
    scale = opt.get('scale', 1)
    for phase, dataset in opt['datasets'].items():
        phase = phase.split('_')[0]
        dataset['phase'] = phase
        dataset['scale'] = scale
        for key in ('dataroot_GT', 'dataroot_LQ'):
            if dataset.get(key) is not None:
                dataset[key] = os.path.expanduser(dataset[key])
    return opt


# ----------------------------------------------------------------------------- distributed
def init_dist(backend='nccl', **kwargs):
    """initialization for distributed training"""
    if mp.get_start_method(allow_none=True) != 'spawn':
        mp.set_start_method('spawn')
    rank = int(os.environ['RANK'])
    num_gpus = torch.cuda.device_count()
    torch.cuda.set_device(rank % num_gpus)
    dist.init_process_group(backend=backend, **kwargs)


def set_random_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


# ----------------------------------------------------------------------------- RRDBNet_arch.py
def make_layer(block, n_layers):
    return nn.Sequential(*[block() for _ in range(n_layers)])


class ResidualDenseBlock_5C(nn.Module):
    def __init__(self, nf=64, gc=32, bias=True):
        super(ResidualDenseBlock_5C, self).__init__()
        self.conv1 = nn.Conv2d(nf, gc, 3, 1, 1, bias=bias)
        self.conv2 = nn.Conv2d(nf + gc, gc, 3, 1, 1, bias=bias)
        self.conv3 = nn.Conv2d(nf + 2 * gc, gc, 3, 1, 1, bias=bias)
        self.conv4 = nn.Conv2d(nf + 3 * gc, gc, 3, 1, 1, bias=bias)
        self.conv5 = nn.Conv2d(nf + 4 * gc, nf, 3, 1, 1, bias=bias)
        self.lrelu = nn.LeakyReLU(negative_slope=0.2, inplace=True)

    def forward(self, x):
        x1 = self.lrelu(self.conv1(x))
        x2 = self.lrelu(self.conv2(torch.cat((x, x1), 1)))
        x3 = self.lrelu(self.conv3(torch.cat((x, x1, x2), 1)))
        x4 = self.lrelu(self.conv4(torch.cat((x, x1, x2, x3), 1)))
        x5 = self.conv5(torch.cat((x, x1, x2, x3, x4), 1))
        return x5 * 0.2 + x


class RRDB(nn.Module):
    def __init__(self, nf, gc=32):
        super(RRDB, self).__init__()
        self.RDB1 = ResidualDenseBlock_5C(nf, gc)
        self.RDB2 = ResidualDenseBlock_5C(nf, gc)
        self.RDB3 = ResidualDenseBlock_5C(nf, gc)

    def forward(self, x):
        out = self.RDB3(self.RDB2(self.RDB1(x)))
        return out * 0.2 + x


class RRDBNet(nn.Module):
    def __init__(self, in_nc=3, out_nc=3, nf=64, nb=23, gc=32):
        super(RRDBNet, self).__init__()
        RRDB_block_f = functools.partial(RRDB, nf=nf, gc=gc)
        self.conv_first = nn.Conv2d(in_nc, nf, 3, 1, 1, bias=True)
        self.RRDB_trunk = make_layer(RRDB_block_f, nb)
        self.trunk_conv = nn.Conv2d(nf, nf, 3, 1, 1, bias=True)
        self.upconv1 = nn.Conv2d(nf, nf, 3, 1, 1, bias=True)
        self.upconv2 = nn.Conv2d(nf, nf, 3, 1, 1, bias=True)
        self.HRconv = nn.Conv2d(nf, nf, 3, 1, 1, bias=True)
        self.conv_last = nn.Conv2d(nf, out_nc, 3, 1, 1, bias=True)
        self.lrelu = nn.LeakyReLU(negative_slope=0.2, inplace=True)

    def forward(self, x):
        fea = self.conv_first(x)
        fea = fea + self.trunk_conv(self.RRDB_trunk(fea))
        fea = self.lrelu(self.upconv1(F.interpolate(fea, scale_factor=2, mode='nearest')))
        fea = self.lrelu(self.upconv2(F.interpolate(fea, scale_factor=2, mode='nearest')))
        return self.conv_last(self.lrelu(self.HRconv(fea)))


class GANLoss(nn.Module):
    def __init__(self, gan_type, real_label_val=1.0, fake_label_val=0.0):
        super(GANLoss, self).__init__()
        self.gan_type = gan_type.lower()
        self.real_label_val = real_label_val
        self.fake_label_val = fake_label_val
        self.loss = nn.BCEWithLogitsLoss() if self.gan_type in ('gan', 'ragan') else nn.MSELoss()

    def forward(self, input, target_is_real):
        target_val = self.real_label_val if target_is_real else self.fake_label_val
        target_label = torch.empty_like(input).fill_(target_val)
        return self.loss(input, target_label)


# ----------------------------------------------------------------------------- models/SRGAN_model.py
class ESRGANModel(object):
    def __init__(self, opt):
        self.opt = opt
        self.device = torch.device('cuda' if opt['gpu_ids'] is not None else 'cpu')
        self.is_train = opt['is_train']
        train_opt = opt['train']
        self.rank = torch.distributed.get_rank() if opt['dist'] else -1

        self.netG = RRDBNet(nf=opt['network_G']['nf'], nb=opt['network_G']['nb']).to(self.device)
        self.netD = Discriminator_VGG_128(in_nc=3, nf=opt['network_D']['nf']).to(self.device)
        if opt['dist']:
            self.netG = DistributedDataParallel(self.netG, device_ids=[torch.cuda.current_device()])
            self.netD = DistributedDataParallel(self.netD, device_ids=[torch.cuda.current_device()])
        else:
            self.netG = DataParallel(self.netG)
            self.netD = DataParallel(self.netD)

        self.cri_pix = nn.L1Loss().to(self.device)
        self.l_pix_w = train_opt['pixel_weight']
        self.netF = VGGFeatureExtractor(feature_layer=34, use_bn=False, use_input_norm=True, device=self.device)
        self.netF = self.netF.to(self.device)
        self.cri_fea = nn.L1Loss().to(self.device)
        self.l_fea_w = train_opt['feature_weight']
        self.cri_gan = GANLoss(train_opt['gan_type']).to(self.device)
        self.l_gan_w = train_opt['gan_weight']

        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=train_opt['lr_G'],
                                            betas=(train_opt['beta1_G'], train_opt['beta2_G']))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=train_opt['lr_D'],
                                            betas=(train_opt['beta1_D'], train_opt['beta2_D']))
        self.schedulers = [torch.optim.lr_scheduler.MultiStepLR(o, train_opt['lr_steps'], train_opt['lr_gamma'])
                           for o in (self.optimizer_G, self.optimizer_D)]
        self.log_dict = OrderedDict()

    def feed_data(self, data):
        self.var_L = data['LQ'].to(self.device)
        self.var_H = data['GT'].to(self.device)

    def optimize_parameters(self, step):
        for p in self.netD.parameters():
            p.requires_grad = False
        self.optimizer_G.zero_grad()
        self.fake_H = self.netG(self.var_L)
        l_g_pix = self.l_pix_w * self.cri_pix(self.fake_H, self.var_H)
        real_fea = self.netF(self.var_H).detach()
        l_g_fea = self.l_fea_w * self.cri_fea(self.netF(self.fake_H), real_fea)
        pred_g_fake = self.netD(self.fake_H)
        pred_d_real = self.netD(self.var_H).detach()
        l_g_gan = self.l_gan_w * (self.cri_gan(pred_d_real - torch.mean(pred_g_fake), False) +
                                  self.cri_gan(pred_g_fake - torch.mean(pred_d_real), True)) / 2
        l_g_total = l_g_pix + l_g_fea + l_g_gan
        l_g_total.backward()
        self.optimizer_G.step()

        for p in self.netD.parameters():
            p.requires_grad = True
        self.optimizer_D.zero_grad()
        pred_d_fake = self.netD(self.fake_H.detach()).detach()
        pred_d_real = self.netD(self.var_H)
        l_d_real = self.cri_gan(pred_d_real - torch.mean(pred_d_fake), True) * 0.5
        l_d_real.backward()
        pred_d_fake = self.netD(self.fake_H.detach())
        l_d_fake = self.cri_gan(pred_d_fake - torch.mean(pred_d_real.detach()), False) * 0.5
        l_d_fake.backward()
        self.optimizer_D.step()

        self.log_dict['l_g_pix'] = l_g_pix.item()
        self.log_dict['l_g_fea'] = l_g_fea.item()
        self.log_dict['l_g_gan'] = l_g_gan.item()
        self.log_dict['l_d_real'] = l_d_real.item()
        self.log_dict['l_d_fake'] = l_d_fake.item()

    def update_learning_rate(self):
        for s in self.schedulers:
            s.step()

    def save(self, iter_label, save_dir):
        for name, net in (('G', self.netG), ('D', self.netD)):
            if isinstance(net, (DataParallel, DistributedDataParallel)):
                net = net.module
            state_dict = {k: v.cpu() for k, v in net.state_dict().items()}
            torch.save(state_dict, os.path.join(save_dir, '{}_{}.pth'.format(iter_label, name)))


# ----------------------------------------------------------------------------- main
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('-opt', type=str, help='Path to option YAML file.')
    parser.add_argument('--launcher', choices=['none', 'pytorch'], default='none', help='job launcher')
    parser.add_argument('--local_rank', type=int, default=0)
    args = parser.parse_args()
    opt = parse_options(args.opt, is_train=True)

    if args.launcher == 'none':
        opt['dist'] = False
        rank = -1
        print('Disabled distributed training.')
    else:
        opt['dist'] = True
        init_dist(backend=opt.get('dist_backend', 'nccl'))
        world_size = torch.distributed.get_world_size()
        rank = torch.distributed.get_rank()

    seed = opt['train'].get('manual_seed') or random.randint(1, 10000)
    set_random_seed(seed)
    torch.backends.cudnn.benchmark = True

    logger = logging.getLogger('base')
    train_loader = None
    for phase, dataset_opt in opt['datasets'].items():
        if phase == 'train':
            train_set = create_dataset(dataset_opt)
            train_size = int(math.ceil(len(train_set) / dataset_opt['batch_size']))
            total_iters = int(opt['train']['niter'])
            if opt['dist']:
                train_sampler = DistIterSampler(train_set, world_size, rank, dataset_enlarge_ratio=100)
            else:
                train_sampler = None
            train_loader = create_dataloader(train_set, dataset_opt, opt, train_sampler)
    assert train_loader is not None

    model = ESRGANModel(opt)
    current_step = 0
    save_dir = opt['path']['models']
    while current_step <= total_iters:
        for _, train_data in enumerate(train_loader):
            current_step += 1
            if current_step > total_iters:
                break
            model.feed_data(train_data)
            model.optimize_parameters(current_step)
            model.update_learning_rate()
            if current_step % opt['logger']['print_freq'] == 0 and rank <= 0:
                logger.info('<iter:{:8,d}> '.format(current_step) +
                            ' '.join('{}: {:.4e}'.format(k, v) for k, v in model.log_dict.items()))
            if current_step % opt['logger']['save_checkpoint_freq'] == 0 and rank <= 0:
                model.save(current_step, save_dir)
    if rank <= 0:
        model.save('latest', save_dir)
        logger.info('End of training.')


if __name__ == '__main__':
    main()
