from __future__ import print_function, division
import torch
import matplotlib.pyplot as plt
import argparse, os
import pandas as pd
import numpy as np
import random
import math
from torchvision import transforms
import scipy.io as sio

from model import ViT_ST_ST_Compact3_TDC_gra_sharp

from Loadtemporal_data import Normaliztion, ToTensor, RandomHorizontalFlip, VIPL_train
from Loadtemporal_data_test import VIPL_test, Normaliztion_test, ToTensor_test

import torch.nn as nn
import torch.optim as optim
from torch.optim import lr_scheduler
from torch.autograd import Variable
from torch.utils.data import Dataset, DataLoader

from TorchLossComputer import TorchLossComputer

import pdb


class Neg_Pearson(nn.Module):    # Pearson range [-1, 1] so if < 0, abs|loss| ; if >0, 1- loss
    def __init__(self):
        super(Neg_Pearson, self).__init__()
        return

    def forward(self, preds, labels):       # all variable operation
        loss = 0
        for i in range(preds.shape[0]):
            sum_x = torch.sum(preds[i])                # x
            sum_y = torch.sum(labels[i])               # y
            sum_xy = torch.sum(preds[i] * labels[i])        # xy
            sum_x2 = torch.sum(torch.pow(preds[i], 2))  # x^2
            sum_y2 = torch.sum(torch.pow(labels[i], 2))  # y^2
            N = preds.shape[1]
            pearson = (N * sum_xy - sum_x * sum_y) / (torch.sqrt((N * sum_x2 - torch.pow(sum_x, 2)) * (N * sum_y2 - torch.pow(sum_y, 2))))

            loss += 1 - pearson

        loss = loss / preds.shape[0]
        return loss


class AvgrageMeter(object):

    def __init__(self):
        self.reset()

    def reset(self):
        self.avg = 0
        self.sum = 0
        self.cnt = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.cnt += n
        self.avg = self.sum / self.cnt


# main function
def train_test():

    isExists = os.path.exists(args.log)
    if not isExists:
        os.makedirs(args.log)
    log_file = open(args.log + '/' + args.log + '_log.txt', 'w')

    VIPL_root_list = args.input_data + '/VIPL_frames/'
    VIPL_train_list = 'VIPL_fold/train_VIPL_fold' + str(args.fold) + '.txt'
    VIPL_test_list = 'VIPL_fold/test_VIPL_fold' + str(args.fold) + '.txt'

    finetune = args.finetune
    if finetune == True:
        print('finetune!\n')
        log_file.write('finetune!\n')
        log_file.flush()

        model = ViT_ST_ST_Compact3_TDC_gra_sharp(image_size=(160, 128, 128), patches=(4, 4, 4), dim=96, ff_dim=144,
                                                 num_heads=4, num_layers=12, dropout_rate=0.1, theta=0.7)
        model.load_state_dict(torch.load(args.pretrained))
        model = model.cuda()  # move to GPU before the optimizer is built

        lr = args.lr
        optimizer1 = optim.Adam(model.parameters(), lr=lr, weight_decay=0.00005)
        scheduler = optim.lr_scheduler.StepLR(optimizer1, step_size=args.step_size, gamma=args.gamma)

    else:
        print('train from scratch!\n')
        log_file.write('train from scratch!\n')
        log_file.flush()

        model = ViT_ST_ST_Compact3_TDC_gra_sharp(image_size=(160, 128, 128), patches=(4, 4, 4), dim=96, ff_dim=144,
                                                 num_heads=4, num_layers=12, dropout_rate=0.1, theta=0.7)
        model = model.cuda()

        lr = args.lr
        optimizer1 = optim.Adam(model.parameters(), lr=lr, weight_decay=0.00005)
        scheduler = optim.lr_scheduler.StepLR(optimizer1, step_size=args.step_size, gamma=args.gamma)

    print(model)

    criterion_reg = nn.MSELoss()
    criterion_L1loss = nn.L1Loss()
    criterion_class = nn.CrossEntropyLoss()
    criterion_Pearson = Neg_Pearson()

    echo_batches = args.echo_batches
    gamma = args.gamma_loss

    # curriculum weights (a: temporal loss, b: frequency loss)
    a_start = 0.1
    b_start = 1.0
    exp_a = 0.5
    exp_b = 5.0

    # train
    for epoch in range(args.epochs):
        scheduler.step()
        if (epoch + 1) % args.step_size == 0:
            lr *= args.gamma

        loss_rPPG_avg = AvgrageMeter()
        loss_peak_avg = AvgrageMeter()
        loss_kl_avg_test = AvgrageMeter()
        loss_hr_mae = AvgrageMeter()

        model.train()

        # load random 160-frame clips
        VIPL_trainDL = VIPL_train(VIPL_train_list, VIPL_root_list,
                                  transform=transforms.Compose([Normaliztion(), RandomHorizontalFlip(), ToTensor()]))
        dataloader_train = DataLoader(VIPL_trainDL, batch_size=args.batchsize, shuffle=True, num_workers=4)

        for i, sample_batched in enumerate(dataloader_train):
            # get the inputs
            inputs, ecg = sample_batched['video_x'].cuda(), sample_batched['ecg'].cuda()
            clip_average_HR, frame_rate = sample_batched['clip_average_HR'].cuda(), sample_batched['frame_rate'].cuda()

            optimizer1.zero_grad()

            # forward + backward + optimize
            gra_sharp = 2.0
            rPPG, Score1, Score2, Score3 = model(inputs, gra_sharp)

            rPPG = (rPPG - torch.mean(rPPG)) / torch.std(rPPG)       # normalize
            loss_rPPG = criterion_Pearson(rPPG, ecg)

            fre_loss = 0.0
            kl_loss = 0.0
            train_mae = 0.0
            for bb in range(inputs.shape[0]):
                loss_distribution_kl, fre_loss_temp, train_mae_temp = TorchLossComputer.cross_entropy_power_spectrum_DLDL_softmax2(
                    rPPG[bb], clip_average_HR[bb], frame_rate[bb], std=1.0)  # std=1.1
                fre_loss = fre_loss + fre_loss_temp
                kl_loss = kl_loss + loss_distribution_kl
                train_mae = train_mae + train_mae_temp
            fre_loss = fre_loss / inputs.shape[0]
            kl_loss = kl_loss / inputs.shape[0]
            train_mae = train_mae / inputs.shape[0]

            if epoch > 25:
                a = 0.05
                b = 5.0
            else:
                # exp ascend
                a = a_start * math.pow(exp_a, epoch / 25.0)
                # exp descend
                b = b_start * math.pow(exp_b, epoch / 25.0)

            a = 0.1
            loss = a * loss_rPPG + b * (fre_loss + kl_loss)

            loss.backward()
            optimizer1.step()

            n = inputs.size(0)
            loss_rPPG_avg.update(loss_rPPG.data, n)
            loss_peak_avg.update(fre_loss.data, n)
            loss_kl_avg_test.update(kl_loss.data, n)
            loss_hr_mae.update(train_mae, n)

            if i % echo_batches == echo_batches - 1:    # print every 50 mini-batches
                print('epoch:%d, mini-batch:%3d, lr=%f, sharp=%.3f, a=%.3f, NegPearson= %.4f, b=%.3f, kl= %.4f, fre_CEloss= %.4f, hr_mae= %.4f' % (
                    epoch + 1, i + 1, lr, gra_sharp, a, loss_rPPG_avg.avg, b, loss_kl_avg_test.avg, loss_peak_avg.avg, loss_hr_mae.avg))

        # whole epoch average
        log_file.write('epoch:%d, mini-batch:%3d, lr=%f, sharp=%.3f, a=%.3f, NegPearson= %.4f, b=%.3f, kl= %.4f, fre_CEloss= %.4f, hr_mae= %.4f' % (
            epoch + 1, i + 1, lr, gra_sharp, a, loss_rPPG_avg.avg, b, loss_kl_avg_test.avg, loss_peak_avg.avg, loss_hr_mae.avg))
        log_file.write("\n")
        log_file.flush()

        #### validation/test
        if epoch > 10:
            model.eval()

            with torch.no_grad():
                VIPL_testDL = VIPL_test(VIPL_test_list, VIPL_root_list,
                                        transform=transforms.Compose([Normaliztion_test(), ToTensor_test()]))
                dataloader_test = DataLoader(VIPL_testDL, batch_size=1, shuffle=False, num_workers=2)

                map_score_list = []

                for i, sample_batched in enumerate(dataloader_test):
                    # get the inputs
                    inputs = sample_batched['video_x'].cuda()
                    frame_rate = sample_batched['frame_rate'].cuda()

                    rppg_clips = []
                    for clip in range(inputs.shape[1]):
                        rPPG, Score1, Score2, Score3 = model(inputs[:, clip, :, :, :, :], gra_sharp)
                        rppg_clips.append(rPPG[0].cpu().data.numpy())
                    map_score_list.append(np.concatenate(rppg_clips))

                sio.savemat(args.log + '/' + args.log + '_epoch%d_rPPG.mat' % (epoch + 1),
                            {'outputs_rPPG': map_score_list})

        if epoch > 15 and (epoch + 1) % 5 == 0:
            torch.save(model.state_dict(), args.log + '/' + args.log + '_%d_%d.pkl' % (args.fold, epoch))

    print('Finished Training')
    log_file.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="PhysFormer training on VIPL-HR")
    parser.add_argument('--gpu', type=int, default=2, help='the gpu id used for predict')
    parser.add_argument('--input_data', type=str, default="/scratch/project_2003204/")
    parser.add_argument('--lr', type=float, default=0.0001, help='initial learning rate')  # default=0.0001
    parser.add_argument('--batchsize', type=int, default=4, help='initial batchsize')  # default=4
    parser.add_argument('--step_size', type=int, default=50, help='how many epochs lr decays once')  # 50
    parser.add_argument('--gamma', type=float, default=0.5, help='gamma of optim.lr_scheduler.StepLR, decay of lr')
    parser.add_argument('--gamma_loss', type=float, default=1.0, help='gamma of frequency loss')
    parser.add_argument('--echo_batches', type=int, default=50, help='how many batches display once')  # 50
    parser.add_argument('--epochs', type=int, default=25, help='total training epochs')
    parser.add_argument('--fold', type=int, default=1, help='fold index, 1..5')
    parser.add_argument('--finetune', action='store_true', help='start from a pretrained checkpoint')
    parser.add_argument('--pretrained', type=str, default='', help='checkpoint to finetune from')
    parser.add_argument('--log', type=str, default="Physformer_VIPL_fold1", help='log and save model name')

    args = parser.parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)
    train_test()
