# -*- coding: utf-8 -*-
"""Training script for DuDoNet on the synthesised DeepLesion MAR data."""
from __future__ import print_function
import argparse
import os
import time
import random
import numpy as np
import h5py
import torch
import torch.nn as nn
import torch.optim as optim
import torch.backends.cudnn as cudnn
from torch.utils.data import DataLoader
from tensorboardX import SummaryWriter

from network.dudonet import DuDoNet, DuDoLoss
from utils.dataset import MARTrainDataset

parser = argparse.ArgumentParser()
parser.add_argument("--data_path", type=str, default="./data/train/", help='txt path to training data')
parser.add_argument('--workers', type=int, help='number of data loading workers', default=4)
parser.add_argument('--batchSize', type=int, default=1, help='input batch size')
parser.add_argument('--patchSize', type=int, default=416, help='the height / width of the input image to network')
parser.add_argument('--niter', type=int, default=100, help='total number of training epochs')
parser.add_argument('--batchnum', type=int, default=1000, help='the number of batch')
parser.add_argument('--base_ch', type=int, default=32, help='channels of the first U-Net stage')
parser.add_argument('--ril_pad', type=int, default=8, help='angular padding of the Radon inversion layer')
parser.add_argument('--w_se', type=float, default=1.0)
parser.add_argument('--w_rc', type=float, default=1.0)
parser.add_argument('--w_ie', type=float, default=1.0)
parser.add_argument('--resume', type=int, default=0, help='continue to train from epoch')
parser.add_argument("--milestone", type=int, default=[40, 80], help="When to decay learning rate")
parser.add_argument('--lr', type=float, default=0.0002, help='learning rate')
parser.add_argument("--use_gpu", type=bool, default=True, help='use GPU or not')
parser.add_argument("--gpu_id", type=str, default="0", help='GPU id')
parser.add_argument('--log_dir', default='./logs/', help='tensorboard logs')
parser.add_argument('--model_dir', default='./models/', help='saving model')
parser.add_argument('--manualSeed', type=int, help='manual seed')
opt = parser.parse_args()

if opt.use_gpu:
    os.environ["CUDA_VISIBLE_DEVICES"] = opt.gpu_id

try:
    os.makedirs(opt.model_dir)
except OSError:
    pass

if opt.manualSeed is None:
    opt.manualSeed = random.randint(1, 10000)
print("Random Seed: ", opt.manualSeed)
random.seed(opt.manualSeed)
np.random.seed(opt.manualSeed)
torch.manual_seed(opt.manualSeed)
cudnn.benchmark = True


def validate(net, val_data, epoch, writer):
    """Quick check on a fixed subset of 50 (image, mask) pairs; reports RMSE in HU."""
    net.eval()
    rmse_sum = 0.0
    with torch.no_grad():
        for sample in val_data:
            Xma, XLI, Xgt, mask, Sma, SLI, Sgt, Tr = [t.unsqueeze(0).cuda() for t in sample]
            _, _, X_out = net(SLI / 255.0, XLI / 255.0, 1 - Tr)
            non_mask = 1 - mask
            diff = (X_out.clamp(0, 0.5) - (Xgt / 255.0).clamp(0, 0.5)) * non_mask
            rmse_sum += torch.sqrt((diff ** 2).sum() / non_mask.sum()).item() * 1000.0 / 0.192
    rmse = rmse_sum / len(val_data)
    writer.add_scalar('Val RMSE (HU)', rmse, epoch)
    print('validation RMSE: {:.2f} HU'.format(rmse))
    net.train()
    return rmse


def train_model(net, criterion, optimizer, scheduler, datasets):
    data_loader = DataLoader(datasets, batch_size=opt.batchSize, shuffle=True,
                             num_workers=int(opt.workers), pin_memory=True)
    num_data = len(datasets)
    num_iter_epoch = int(np.ceil(num_data / opt.batchSize))
    writer = SummaryWriter(opt.log_dir)
    val_data = [datasets[i] for i in range(0, min(len(datasets), 5000), 100)]
    step = 0
    for epoch in range(opt.resume, opt.niter):
        mse_per_epoch = 0
        tic = time.time()
        # train stage
        lr = optimizer.param_groups[0]['lr']
        net.train()
        for ii, data in enumerate(data_loader):
            Xma, XLI, Xgt, mask, Sma, SLI, Sgt, Tr = [x.cuda() for x in data]
            optimizer.zero_grad()
            net.zero_grad()
            # 1 outside metal, 0 inside
            non_mask = 1 - mask
            S_se, X_se, X_out = net(SLI / 255.0, XLI / 255.0, 1 - Tr)
            loss, parts = criterion(S_se, X_se, X_out, Sgt / 255.0, Xgt / 255.0, non_mask)
            loss.backward()
            optimizer.step()
            mse_iter = loss.item()
            mse_per_epoch += mse_iter
            if ii % 200 == 0:
                template = '[Epoch:{:>2d}/{:<2d}] {:0>5d}/{:0>5d}, Loss={:5.2e}, se={:5.2e}, rc={:5.2e}, ie={:5.2e}, lr={:.2e}'
                print(template.format(epoch + 1, opt.niter, ii, num_iter_epoch, mse_iter,
                                      parts['se'], parts['rc'], parts['ie'], lr))
                writer.add_scalar('Train Loss Iter', mse_iter, step)
            step += 1
        mse_per_epoch /= (ii + 1)
        print('Loss={:+.2e}'.format(mse_per_epoch))
        print('-' * 100)
        scheduler.step()
        validate(net, val_data, epoch, writer)
        # save model
        torch.save(net.state_dict(), os.path.join(opt.model_dir, 'DuDoNet_latest.pt'))
        if (epoch + 1) % 20 == 0:
            model_prefix = 'DuDoNet_'
            save_path_model = os.path.join(opt.model_dir, model_prefix + str(epoch + 1))
            torch.save({
                'epoch': epoch + 1,
                'step': step + 1,
            }, save_path_model)
            torch.save(net.state_dict(), os.path.join(opt.model_dir, 'DuDoNet_state_%d.pt' % (epoch + 1)))
        toc = time.time()
        print('This epoch take time {:.2f}'.format(toc - tic))
        # ODL moves every sinogram through host memory; release cached blocks between epochs
        torch.cuda.empty_cache()
    writer.close()
    print('Reach the maximal epochs! Finish training')


if __name__ == '__main__':
    net = DuDoNet(opt).cuda()
    criterion = DuDoLoss(opt.w_se, opt.w_rc, opt.w_ie)
    optimizer = optim.Adam(net.parameters(), betas=(0.5, 0.999), lr=opt.lr)
    scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=opt.milestone, gamma=0.5)
    for _ in range(opt.resume):
        scheduler.step()
    if opt.resume:
        net.load_state_dict(torch.load(os.path.join(opt.model_dir, 'DuDoNet_state_' + str(opt.resume) + '.pt')))
        print('loaded checkpoints, epoch{:d}'.format(opt.resume))
    train_mask = np.load(os.path.join(opt.data_path, 'trainmask.npy'))
    train_dataset = MARTrainDataset(opt.data_path, opt.patchSize, int(opt.batchSize * opt.batchnum), train_mask)
    train_model(net, criterion, optimizer, scheduler, train_dataset)
