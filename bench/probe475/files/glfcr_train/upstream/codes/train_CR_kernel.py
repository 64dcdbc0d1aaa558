import os
import argparse
import random

import numpy as np
import torch
from torch.utils.data import DataLoader

from dataloader import AlignedDataset, get_train_val_test_filelists
from model_CR_net import ModelCRNet
from generic_train_test import Generic_train_test
from metrics import PSNR, SSIM
from tensorboardX import SummaryWriter

##===================================================##
##********** Configure training settings ************##
##===================================================##
parser = argparse.ArgumentParser()
parser.add_argument('--batch_sz', type=int, default=1, help='batch size used for training')

parser.add_argument('--load_size', type=int, default=256)
parser.add_argument('--crop_size', type=int, default=128)
parser.add_argument('--input_data_folder', type=str, default='../data/SEN12MS-CR')
parser.add_argument('--is_use_cloudmask', type=bool, default=True)
parser.add_argument('--cloud_threshold', type=float, default=0.2)  # only useful when is_use_cloudmask=True
parser.add_argument('--data_list_filepath', type=str, default='../data/data.csv')

parser.add_argument('--optimizer', type=str, default='Adam', help='Adam')
parser.add_argument('--lr', type=float, default=1e-4, help='learning rate of optimizer')
parser.add_argument('--lr_step', type=int, default=2, help='lr decay rate')
parser.add_argument('--lr_start_epoch_decay', type=int, default=1, help='epoch to start lr decay')
parser.add_argument('--max_epochs', type=int, default=30)
parser.add_argument('--save_freq', type=int, default=1)
parser.add_argument('--log_iter', type=int, default=10)
parser.add_argument('--val_iter', type=int, default=2000)
parser.add_argument('--save_model_dir', type=str, default='../checkpoints/', help='directory used to store trained networks')
parser.add_argument('--resume', type=str, default='', help='checkpoint to resume from')

parser.add_argument('--gpu_ids', type=str, default='0')
parser.add_argument('--seed', type=int, default=1234)

opts = parser.parse_args()

os.environ['CUDA_VISIBLE_DEVICES'] = opts.gpu_ids

random.seed(opts.seed)
np.random.seed(opts.seed)
torch.manual_seed(opts.seed)
torch.cuda.manual_seed_all(opts.seed)
torch.backends.cudnn.benchmark = True

##===================================================##
##*************** Create dataloader *****************##
##===================================================##
train_filelist, val_filelist, _ = get_train_val_test_filelists(opts.data_list_filepath)

train_data = AlignedDataset(opts, train_filelist)
train_dataloader = DataLoader(dataset=train_data, batch_size=opts.batch_sz, shuffle=True,
                              num_workers=4, pin_memory=True, drop_last=True)

val_data = AlignedDataset(opts, val_filelist)
val_dataloader = DataLoader(dataset=val_data, batch_size=1, shuffle=False, num_workers=2)

##===================================================##
##****************** Create model *******************##
##===================================================##
model = ModelCRNet(opts)
if opts.resume:
    start_epoch = model.load_checkpoint(opts.resume)
else:
    start_epoch = 0

##===================================================##
##**************** Train the network ****************##
##===================================================##
class Train(Generic_train_test):
    def decode_input(self, data):
        return data

    def validate(self):
        self.model.net_G.eval()
        psnr_sum, ssim_sum, n = 0.0, 0.0, 0
        with torch.no_grad():
            for data in val_dataloader:
                self.model.set_input(data)
                pred = self.model.forward()
                psnr_sum += PSNR(pred, self.model.cloudfree_data)
                ssim_sum += SSIM(pred, self.model.cloudfree_data).item()
                n += 1
        self.model.net_G.train()
        torch.cuda.empty_cache()
        return psnr_sum / max(n, 1), ssim_sum / max(n, 1)


writer = SummaryWriter(os.path.join(opts.save_model_dir, 'logs'))
Train(model, opts, train_dataloader, val_dataloader, writer).train(start_epoch)
