# GPL License
# Copyright (C) UESTC
# All Rights Reserved
# @Author  : Xiao Wu, LiangJian Deng
# @reference:
import os
import time
import argparse

import h5py
import numpy as np
import scipy.io as sio
import torch

from model import FusionNet

parser = argparse.ArgumentParser(description='FusionNet full-resolution / reduced-resolution test')
parser.add_argument('--test_h5', type=str, default='/Data/DataSet/pansharpening/test_data/WV3/test_wv3_multiExm1.h5')
parser.add_argument('--ckpt', type=str, default='Weights/FusionNet/wv3/400.pth')
parser.add_argument('--spectral_num', type=int, default=8)
parser.add_argument('--img_scale', type=float, default=2047.0, help='2047 for WV3/QB, 1023 for GF2')
parser.add_argument('--save_dir', type=str, default='results/FusionNet/wv3')
parser.add_argument('--gpu', type=str, default='0')
args = parser.parse_args()

os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu


###################################################################
# ------------------- Sub-Functions (will be used) -------------------
###################################################################
def load_set(file_path):
    data = h5py.File(file_path, 'r')  # NxCxHxW

    # tensor type:
    lms = torch.from_numpy(np.array(data['lms'][...], dtype=np.float32) / args.img_scale)   # NxCxHxW = 8x256x256
    pan = torch.from_numpy(np.array(data['pan'][...], dtype=np.float32) / args.img_scale)   # NxCxHxW = 1x256x256
    ms = torch.from_numpy(np.array(data['ms'][...], dtype=np.float32) / args.img_scale)     # NxCxHxW = 8x64x64
    if 'gt' in data.keys():
        gt = np.array(data['gt'][...], dtype=np.float32)
    else:
        gt = None

    return lms, pan, ms, gt


def load_ckpt(model, ckpt):
    weight = torch.load(ckpt)
    # checkpoints written by nn.DataParallel have a "module." prefix
    weight = {k.replace('module.', ''): v for k, v in weight.items()}
    model.load_state_dict(weight)
    return model


###################################################################
# ------------------- Main Test (Run second)----------------------------------
###################################################################
def test(file_path):
    lms_all, pan_all, ms_all, gt_all = load_set(file_path)

    model = FusionNet(spectral_num=args.spectral_num).cuda().eval()   # fixed, important!
    model = load_ckpt(model, args.ckpt)

    os.makedirs(args.save_dir, exist_ok=True)
    n_img = lms_all.shape[0]
    times = []

    with torch.no_grad():
        for k in range(n_img):
            lms = lms_all[k, :, :, :].cuda().unsqueeze(dim=0).float()  # convert to tensor type: 1xCxHxW
            pan = pan_all[k, :, :, :].cuda().unsqueeze(dim=0).float()

            torch.cuda.synchronize()
            t0 = time.time()
            out = model(pan, lms)  # call model
            sr = lms + out
            torch.cuda.synchronize()  # wait for the kernels before stopping the clock
            times.append(time.time() - t0)

            sr = torch.squeeze(sr).permute(1, 2, 0).cpu().detach().numpy()  # HxWxC
            sr = np.clip(sr, 0, 1) * args.img_scale

            save_name = os.path.join(args.save_dir, 'output_mulExm_{}.mat'.format(k))
            sio.savemat(save_name, {'sr': sr})  # save as .mat for Matlab-side evaluation (QNR, Q2n, SAM, ERGAS)

    print('Average inference time per image: {:.4f}s (excluding the first warm-up image)'.format(
        float(np.mean(times[1:])) if len(times) > 1 else float(times[0])))


###################################################################
# ------------------- Main Function (Run first) -------------------
###################################################################
if __name__ == '__main__':
    test(args.test_h5)
