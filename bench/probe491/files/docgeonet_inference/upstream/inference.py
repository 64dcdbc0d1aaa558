"""
DocGeoNet inference: geometric rectification of photographed documents with
3D-shape and text-line representations.

    python inference.py --distorted_path ./distorted/ --save_path ./rec/ --gpu 0
"""
from model.DocGeoNet import DocGeoNet
from seg import U2NETP

import os
import time
import argparse
import warnings

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

warnings.filterwarnings('ignore')


class Net(nn.Module):
    def __init__(self, opt):
        super(Net, self).__init__()
        self.msk = U2NETP(3, 1)
        self.DocTr = DocGeoNet()

    def forward(self, x):
        msk, _1, _2, _3, _4, _5, _6 = self.msk(x)
        msk = (msk > 0.5).float()
        x = msk * x

        bm, _ = self.DocTr(x)
        bm = (2 * (bm / 255.) - 1) * 0.99

        return bm, msk


def reload_rec_model(model, path="", device=None):
    if not bool(path):
        return model
    model_dict = model.state_dict()
    pretrained_dict = torch.load(path, map_location=device)
    print('rec model: {} keys in checkpoint'.format(len(pretrained_dict.keys())))
    pretrained_dict = {k[7:]: v for k, v in pretrained_dict.items() if k[7:] in model_dict}
    print('rec model: {} keys matched'.format(len(pretrained_dict.keys())))
    model_dict.update(pretrained_dict)
    model.load_state_dict(model_dict)
    return model


def reload_seg_model(model, path="", device=None):
    if not bool(path):
        return model
    model_dict = model.state_dict()
    pretrained_dict = torch.load(path, map_location=device)
    pretrained_dict = {k[6:]: v for k, v in pretrained_dict.items() if k[6:] in model_dict}
    model_dict.update(pretrained_dict)
    model.load_state_dict(model_dict)
    return model


def rectify(net, im_ori, device):
    h, w, _ = im_ori.shape
    im = cv2.resize(im_ori, (288, 288))
    im = im.transpose(2, 0, 1)
    im = torch.from_numpy(im).float().unsqueeze(0).to(device)

    bm, msk = net(im)
    bm = bm.cpu()

    # save the rectified image at the original resolution
    bm0 = cv2.resize(bm[0, 0].numpy(), (w, h))  # x flow
    bm1 = cv2.resize(bm[0, 1].numpy(), (w, h))  # y flow
    bm0 = cv2.blur(bm0, (3, 3))
    bm1 = cv2.blur(bm1, (3, 3))
    lbl = torch.from_numpy(np.stack([bm0, bm1], axis=2)).unsqueeze(0)  # h * w * 2

    out = F.grid_sample(torch.from_numpy(im_ori).permute(2, 0, 1).unsqueeze(0).float(), lbl, align_corners=True)
    out = ((out[0] * 255).permute(1, 2, 0).numpy())[:, :, ::-1].astype(np.uint8)
    return out, msk[0, 0].cpu().numpy()


def rec(opt):
    torch.cuda.set_device(opt.gpu)
    device = torch.device('cuda:{}'.format(opt.gpu))
    torch.backends.cudnn.benchmark = True

    img_list = sorted(os.listdir(opt.distorted_path))
    os.makedirs(opt.save_path, exist_ok=True)
    if opt.save_mask:
        os.makedirs(os.path.join(opt.save_path, 'mask'), exist_ok=True)

    net = Net(opt).to(device)
    reload_rec_model(net.DocTr, opt.DocGeoNet_path, device)
    reload_seg_model(net.msk, opt.Seg_path, device)
    net.eval()

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = []

    for img_path in img_list:
        name = img_path.split('.')[-2]
        img_path = os.path.join(opt.distorted_path, img_path)
        im_ori = np.array(Image.open(img_path))[:, :, :3] / 255.

        with torch.no_grad():
            starter.record()
            out, msk = rectify(net, im_ori, device)
            ender.record()
            torch.cuda.synchronize()
            timings.append(starter.elapsed_time(ender))

        cv2.imwrite(os.path.join(opt.save_path, name + '_rec.png'), out)
        if opt.save_mask:
            cv2.imwrite(os.path.join(opt.save_path, 'mask', name + '_msk.png'), (msk * 255).astype(np.uint8))
        print('Done: {}  ({:.1f} ms)'.format(img_path, timings[-1]))

    if timings:
        # skip the first (warm-up / cudnn autotune) iteration
        t = timings[1:] if len(timings) > 1 else timings
        print('mean time: {:.1f} ms/img over {} imgs, peak mem {:.0f} MB'.format(
            float(np.mean(t)), len(t), torch.cuda.max_memory_allocated(device) / 2 ** 20))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--distorted_path', default='./distorted/')
    parser.add_argument('--save_path', default='./rec/')
    parser.add_argument('--Seg_path', default='./model_pretrained/seg.pth')
    parser.add_argument('--DocGeoNet_path', default='./model_pretrained/DocGeoNet.pth')
    parser.add_argument('--gpu', type=int, default=0)
    parser.add_argument('--save_mask', action='store_true')
    opt = parser.parse_args()
    rec(opt)


if __name__ == '__main__':
    main()
