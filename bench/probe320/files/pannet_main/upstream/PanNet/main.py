"""PanNet: A deep network architecture for pan-sharpening (Yang et al., ICCV 2017).

PyTorch port of the original MatConvNet/TensorFlow code. High-pass details of
the PAN and up-sampled MS images are fed to a ResNet and the network learns the
missing high-frequency component (spectral preservation + spatial injection).

    python main.py --gpus 0 1 --dataset wv3 --batch_size 32 --epochs 300
"""
from __future__ import print_function

import argparse
import os
import math
import random

import numpy as np
import scipy.io as sio
import h5py
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser(description="PyTorch PanNet")
parser.add_argument("--dataset", default="wv3", type=str, help="wv3 | qb | gf2")
parser.add_argument("--train_h5", default="./data/train_wv3.h5", type=str)
parser.add_argument("--batch_size", type=int, default=32, help="training batch size")
parser.add_argument("--epochs", type=int, default=300, help="number of epochs to train for")
parser.add_argument("--lr", type=float, default=1e-3, help="Learning Rate. Default=1e-3")
parser.add_argument("--step", type=int, default=100, help="lr decay step")
parser.add_argument("--cuda", action="store_true", help="use cuda?")
parser.add_argument("--gpus", default=[0], type=int, nargs="+", help="gpu ids (default: 0)")
parser.add_argument("--resume", default="", type=str, help="path to latest checkpoint (default: none)")
parser.add_argument("--start_epoch", default=1, type=int, help="manual epoch number (useful on restarts)")
parser.add_argument("--threads", type=int, default=4, help="number of threads for data loader to use")
parser.add_argument("--seed", type=int, default=123)
parser.add_argument("--ckpt_dir", default="./checkpoint/", type=str)


# ----------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------
class DatasetFromHdf5(Dataset):
    def __init__(self, file_path, scale=2047.0):
        super(DatasetFromHdf5, self).__init__()
        hf = h5py.File(file_path, "r")
        self.gt = np.array(hf["gt"], dtype=np.float32) / scale       # N x C x 64 x 64
        self.lms = np.array(hf["lms"], dtype=np.float32) / scale     # N x C x 64 x 64 (bicubic up)
        self.ms = np.array(hf["ms"], dtype=np.float32) / scale       # N x C x 16 x 16
        self.pan = np.array(hf["pan"], dtype=np.float32) / scale     # N x 1 x 64 x 64

    def __getitem__(self, index):
        return (torch.from_numpy(self.gt[index]), torch.from_numpy(self.lms[index]),
                torch.from_numpy(self.ms[index]), torch.from_numpy(self.pan[index]))

    def __len__(self):
        return self.gt.shape[0]


def get_edge(data, kernel_size=5):
    """High-pass filter: x - box_blur(x), applied channel-wise on the GPU."""
    c = data.shape[1]
    kernel = torch.ones(c, 1, kernel_size, kernel_size).cuda() / float(kernel_size * kernel_size)
    low = F.conv2d(F.pad(data, [kernel_size // 2] * 4, mode="reflect"), kernel, groups=c)
    return data - low


# ----------------------------------------------------------------------------
# network
# ----------------------------------------------------------------------------
class ResBlock(nn.Module):
    def __init__(self, channels=32):
        super(ResBlock, self).__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, 1, 1)
        self.conv2 = nn.Conv2d(channels, channels, 3, 1, 1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return x + self.conv2(self.relu(self.conv1(x)))


class PanNet(nn.Module):
    def __init__(self, spectral_num=8, channels=32, n_blocks=4):
        super(PanNet, self).__init__()
        # transposed conv upsamples the high-pass MS by 4
        self.deconv = nn.ConvTranspose2d(spectral_num, spectral_num, 8, 4, 2)
        self.conv1 = nn.Conv2d(spectral_num + 1, channels, 3, 1, 1)
        self.res = nn.Sequential(*[ResBlock(channels) for _ in range(n_blocks)])
        self.conv3 = nn.Conv2d(channels, spectral_num, 3, 1, 1)
        self.relu = nn.ReLU(inplace=True)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2. / n))
                if m.bias is not None:
                    m.bias.data.zero_()

    def forward(self, ms_hp, pan_hp, lms):
        up = self.deconv(ms_hp)
        x = torch.cat([up, pan_hp], dim=1)
        x = self.relu(self.conv1(x))
        x = self.res(x)
        return self.conv3(x) + lms


# ----------------------------------------------------------------------------
# train
# ----------------------------------------------------------------------------
def adjust_learning_rate(optimizer, epoch, opt):
    lr = opt.lr * (0.5 ** (epoch // opt.step))
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    return lr


def save_checkpoint(model, epoch, opt):
    if not os.path.exists(opt.ckpt_dir):
        os.makedirs(opt.ckpt_dir)
    model_out_path = os.path.join(opt.ckpt_dir, "pannet_{}_epoch_{}.pth".format(opt.dataset, epoch))
    state = {"epoch": epoch, "model": model}
    torch.save(state, model_out_path)
    print("Checkpoint saved to {}".format(model_out_path))


def train(training_data_loader, optimizer, model, criterion, epoch, opt):
    lr = adjust_learning_rate(optimizer, epoch - 1, opt)
    print("Epoch = {}, lr = {}".format(epoch, optimizer.param_groups[0]["lr"]))
    model.train()

    for iteration, batch in enumerate(training_data_loader, 1):
        gt, lms, ms, pan = Variable(batch[0]), Variable(batch[1]), Variable(batch[2]), Variable(batch[3])

        if opt.cuda:
            gt = gt.type(torch.cuda.FloatTensor)
            lms = lms.type(torch.cuda.FloatTensor)
            ms = ms.type(torch.cuda.FloatTensor)
            pan = pan.type(torch.cuda.FloatTensor)

        ms_hp = get_edge(ms, kernel_size=3)
        pan_hp = get_edge(pan)
        out = model(ms_hp, pan_hp, lms)
        loss = criterion(out, gt)

        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.4)
        optimizer.step()

        if iteration % 100 == 0:
            print("===> Epoch[{}]({}/{}): Loss: {:.10f}".format(epoch, iteration, len(training_data_loader), loss.item()))


def main():
    global opt
    opt = parser.parse_args()
    print(opt)

    cuda = opt.cuda
    if cuda and not torch.cuda.is_available():
        raise Exception("No GPU found, please run without --cuda")

    random.seed(opt.seed)
    torch.manual_seed(opt.seed)
    if cuda:
        torch.cuda.set_device(opt.gpus[0])
        torch.cuda.manual_seed(opt.seed)
        print("=> using {} GPU(s): {}".format(torch.cuda.device_count(), opt.gpus))

    torch.backends.cudnn.benchmark = True

    print("===> Loading datasets")
    train_set = DatasetFromHdf5(opt.train_h5)
    training_data_loader = DataLoader(dataset=train_set, num_workers=opt.threads,
                                      batch_size=opt.batch_size, shuffle=True, drop_last=True)

    print("===> Building model")
    spectral_num = 4 if opt.dataset in ("qb", "gf2") else 8
    model = PanNet(spectral_num=spectral_num)
    criterion = nn.MSELoss(reduction="mean")

    print("===> Setting GPU")
    if cuda:
        if len(opt.gpus) > 1:
            model = nn.DataParallel(model, device_ids=opt.gpus)
        model = model.cuda()
        criterion = criterion.cuda()

    # optionally resume from a checkpoint
    if opt.resume:
        if os.path.isfile(opt.resume):
            print("=> loading checkpoint '{}'".format(opt.resume))
            checkpoint = torch.load(opt.resume)
            opt.start_epoch = checkpoint["epoch"] + 1
            model.load_state_dict(checkpoint["model"].state_dict())
        else:
            print("=> no checkpoint found at '{}'".format(opt.resume))

    print("===> Setting Optimizer")
    optimizer = optim.Adam(model.parameters(), lr=opt.lr, betas=(0.9, 0.999), eps=1e-8)

    print("===> Training")
    for epoch in range(opt.start_epoch, opt.epochs + 1):
        train(training_data_loader, optimizer, model, criterion, epoch, opt)
        if epoch % 10 == 0:
            save_checkpoint(model, epoch, opt)


if __name__ == "__main__":
    main()
