from __future__ import print_function, division
import torch
import matplotlib.pyplot as plt
import argparse, os
import pandas as pd
import cv2
import numpy as np
import random
import math
from torchvision import transforms

from models.CDCNs import Conv2d_cd, CDCN, CDCNpp

from Load_OULUNPU_valtest import Spoofing_valtest, Normaliztion_valtest, ToTensor_valtest

import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader
import torch.nn as nn
import torch.optim as optim

import copy
import pdb

from utils import AvgrageMeter, accuracy, performances


##########    Dataset root    ##########

# root_dir
val_image_dir = '/wrk/yuzitong/DONOTREMOVE/OULU/Dev_images/'
test_image_dir = '/wrk/yuzitong/DONOTREMOVE/OULU/Test_images/'

# map_dir
val_map_dir = '/wrk/yuzitong/DONOTREMOVE/OULU/Dev_images/'
test_map_dir = '/wrk/yuzitong/DONOTREMOVE/OULU/Test_images/'

# train_list
val_list = '/wrk/yuzitong/DONOTREMOVE/OULU/Protocols/Protocol_1/Dev.txt'
test_list = '/wrk/yuzitong/DONOTREMOVE/OULU/Protocols/Protocol_1/Test.txt'


def run_split(model, info_list, image_dir, map_dir, out_filename):
    data = Spoofing_valtest(info_list, image_dir, map_dir,
                            transform=transforms.Compose([Normaliztion_valtest(), ToTensor_valtest()]))
    dataloader = DataLoader(data, batch_size=1, shuffle=False, num_workers=4)

    map_score_list = []

    for i, sample_batched in enumerate(dataloader):
        # get the inputs
        inputs = sample_batched['image_x'].cuda()
        binary_mask, spoof_label = sample_batched['val_map_x'].cuda(), sample_batched['spoofing_label']

        #pdb.set_trace()
        map_score = 0.0
        for frame_t in range(inputs.shape[1]):
            map_x, embedding, x_Block1, x_Block2, x_Block3, x_input = model(inputs[:, frame_t, :, :, :])

            score_norm = torch.sum(map_x) / torch.sum(binary_mask[:, frame_t, :, :])
            map_score += score_norm

        map_score = map_score / inputs.shape[1]

        if map_score > 1:
            map_score = 1.0

        map_score_list.append('{} {}\n'.format(map_score, spoof_label[0][0]))

    with open(out_filename, 'w') as file:
        file.writelines(map_score_list)

    return out_filename


# main function
def train_test():

    isExists = os.path.exists(args.log)
    if not isExists:
        os.makedirs(args.log)
    log_file = open(args.log + '/' + args.log + '_log_P1_test.txt', 'w')

    log_file.write('Oulu-NPU, P1:\n ')
    log_file.flush()

    print('test!\n')
    log_file.write('test!\n')
    log_file.flush()

    model = CDCNpp(basic_conv=Conv2d_cd, theta=0.7)
    #model = CDCN(basic_conv=Conv2d_cd, theta=0.7)

    model.load_state_dict(torch.load('CDCNpp_BinaryMask_P1_07/CDCNpp_BinaryMask_P1_07_30.pkl', map_location='cuda:0'))

    model = model.cuda()

    print(model)

    model.eval()

    with torch.no_grad():
        ###########################################
        '''                val             '''
        ###########################################
        # val for threshold
        map_score_val_filename = run_split(model, val_list, val_image_dir, val_map_dir,
                                           args.log + '/' + args.log + '_map_score_val.txt')
        print(' val  done ')

        ###########################################
        '''                test             '''
        ##########################################
        # test for ACC
        map_score_test_filename = run_split(model, test_list, test_image_dir, test_map_dir,
                                            args.log + '/' + args.log + '_map_score_test.txt')
        print(' test  done ')

    log_file.write('map scores written to %s and %s\n' % (map_score_val_filename, map_score_test_filename))
    log_file.flush()

    print('Finished testing')
    log_file.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="save quality using landmarkpose model")
    parser.add_argument('--gpus', type=str, default='0', help='the gpu id used for predict')
    parser.add_argument('--lr', type=float, default=0.0001, help='initial learning rate')
    parser.add_argument('--batchsize', type=int, default=32, help='initial batchsize')
    parser.add_argument('--step_size', type=int, default=20, help='how many epochs lr decays once')
    parser.add_argument('--gamma', type=float, default=0.5, help='gamma of optim.lr_scheduler.StepLR, decay of lr')
    parser.add_argument('--echo_batches', type=int, default=50, help='how many batches display once')
    parser.add_argument('--epochs', type=int, default=60, help='total training epochs')
    parser.add_argument('--log', type=str, default="CDCNpp_BinaryMask_P1_07", help='log and save model name')
    parser.add_argument('--finetune', action='store_true', default=False, help='whether finetune other models')

    args = parser.parse_args()
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus
    train_test()
