# GPL License
# Copyright (C) UESTC
# All Rights Reserved
# @Author  : Xiao Wu, LiangJian Deng
# @reference:
import os
import time
import argparse
import shutil

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.backends.cudnn as cudnn
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter

from data import Dataset_Pro
from model import FusionNet, summaries

###################################################################
# ------------------- Pre-Define Part----------------------
###################################################################
# ============= 1) Pre-Define =================== #
SEED = 10
torch.manual_seed(SEED)
torch.cuda.manual_seed(SEED)
torch.cuda.manual_seed_all(SEED)
# cudnn.benchmark = True  ###自动寻找最优算法
cudnn.deterministic = True
cudnn.benchmark = False

# ============= HYPER PARAMS(Pre-Defined) ==========#
parser = argparse.ArgumentParser(description='FusionNet training (WV3/QB/GF2)')
parser.add_argument('--lr', type=float, default=0.0003)
parser.add_argument('--epochs', type=int, default=400)
parser.add_argument('--ckpt', type=int, default=50, help='save every N epochs')
parser.add_argument('--batch_size', type=int, default=32)
parser.add_argument('--spectral_num', type=int, default=8, help='8 for WV3, 4 for QB/GF2')
parser.add_argument('--train_h5', type=str, default='/Data/DataSet/pansharpening/training_data/train_wv3.h5')
parser.add_argument('--valid_h5', type=str, default='/Data/DataSet/pansharpening/training_data/valid_wv3.h5')
parser.add_argument('--pretrained', type=str, default='Weights/FusionNet/wv3/fusionnet_wv3_pretrained.pth')
parser.add_argument('--out_dir', type=str, default='Weights/FusionNet/wv3')
args = parser.parse_args()

lr = args.lr
epochs = args.epochs
ckpt = args.ckpt
batch_size = args.batch_size
model_path = args.pretrained

# ============= 2) HYPER PARAMS(Pre-Defined) ==========#
model = FusionNet(spectral_num=args.spectral_num).cuda()
if os.path.isfile(model_path):
    model.load_state_dict(torch.load(model_path))   ## Load the pretrained Encoder
    print('FusionNet is Successfully Loaded from %s' % (model_path))

summaries(model, grad=True)    ## Summary the Network
criterion = nn.MSELoss(size_average=True).cuda()  ## Define the Loss function L2Loss

optimizer = optim.Adam(model.parameters(), lr=lr, weight_decay=0)   ## optimizer 1: Adam
lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=200, gamma=0.1)

if os.path.exists('train_logs'):  # for tensorboard: copy dir of train_logs  ## Tensorboard_show: case 2
    shutil.rmtree('train_logs')  # ---> console (see tensorboard): tensorboard --logdir = dir of train_logs
writer = SummaryWriter('train_logs')    ## Tensorboard_show: case 2


def save_checkpoint(model, epoch):  # save model function
    os.makedirs(args.out_dir, exist_ok=True)
    model_out_path = os.path.join(args.out_dir, '{}.pth'.format(epoch))
    torch.save(model.state_dict(), model_out_path)


###################################################################
# ------------------- Main Train (Run second)----------------------------------
###################################################################
def train(training_data_loader, validate_data_loader, start_epoch=0):
    print('Start training...')
    best_val = float('inf')

    for epoch in range(start_epoch, epochs, 1):

        epoch += 1
        epoch_train_loss, epoch_val_loss = [], []
        t_start = time.time()

        # ============Epoch Train=============== #
        model.train()

        for iteration, batch in enumerate(training_data_loader, 1):
            # gt Nx8x64x64
            # lms Nx8x64x64
            # ms_hp Nx8x16x16
            # pan_hp Nx1x64x64
            gt, lms, ms, pan = batch[0].cuda(), batch[1].cuda(), batch[2].cuda(), batch[3].cuda()

            optimizer.zero_grad()  # fixed
            sr = model(pan, lms)  # call model

            loss = criterion(sr, gt)  # compute loss
            epoch_train_loss.append(loss.item())  # save all losses into a vector for one epoch

            loss.backward()  # fixed
            optimizer.step()  # fixed

        lr_scheduler.step()  # if update_lr, activate here!

        t_loss = np.nanmean(np.array(epoch_train_loss))  # compute the mean value of all losses, as one epoch loss
        writer.add_scalar('mse_loss/t_loss', t_loss, epoch)  # write to tensorboard to check
        print('Epoch: {}/{} training loss: {:.7f}  ({:.1f}s)'.format(epochs, epoch, t_loss, time.time() - t_start))

        if epoch % ckpt == 0:  # if each ckpt epochs, then start to save model
            save_checkpoint(model, epoch)

        # ============Epoch Validate=============== #
        model.eval()
        with torch.no_grad():  # fixed
            for iteration, batch in enumerate(validate_data_loader, 1):
                gt, lms, pan = batch[0].cuda(), batch[1].cuda(), batch[3].cuda()

                sr = model(pan, lms)

                loss = criterion(sr, gt)
                epoch_val_loss.append(loss.item())

        if epoch % 10 == 0:
            v_loss = np.nanmean(np.array(epoch_val_loss))
            writer.add_scalar('val/v_loss', v_loss, epoch)
            print('             validate loss: {:.7f}'.format(v_loss))
            if v_loss < best_val:
                best_val = v_loss
                save_checkpoint(model, 'best')

        # validation tensors are not needed any more
        torch.cuda.empty_cache()

    writer.close()  # close tensorboard


###################################################################
# ------------------- Main Function (Run first) -------------------
###################################################################
if __name__ == "__main__":
    train_set = Dataset_Pro(args.train_h5)  # creat data for training
    training_data_loader = DataLoader(dataset=train_set, num_workers=0, batch_size=batch_size, shuffle=True,
                                      pin_memory=True, drop_last=True)  # put training data to DataLoader for batches

    validate_set = Dataset_Pro(args.valid_h5)  # creat data for validation
    validate_data_loader = DataLoader(dataset=validate_set, num_workers=0, batch_size=batch_size, shuffle=True,
                                      pin_memory=True, drop_last=True)  # put training data to DataLoader for batches

    train(training_data_loader, validate_data_loader)  # call train function (call: Line 66)
