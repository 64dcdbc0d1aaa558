#!/usr/bin/python3
#coding=utf-8

import os
import sys
import time
sys.path.insert(0, '../')
sys.dont_write_bytecode = True

import cv2
import numpy as np
import matplotlib.pyplot as plt
plt.ion()

import torch
import dataset
import torch.nn.functional as F
from torch.utils.data import DataLoader
from net  import F3Net


class Test(object):
    def __init__(self, Dataset, Network, path):
        ## dataset
        self.cfg    = Dataset.Config(datapath=path, snapshot='./out/model-32', mode='test')
        self.data   = Dataset.Data(self.cfg)
        self.loader = DataLoader(self.data, batch_size=1, shuffle=False, num_workers=8)
        ## network
        self.net    = Network(self.cfg)
        self.net.train(False)
        self.net.cuda()

    def show(self):
        with torch.no_grad():
            for image, mask, shape, name in self.loader:
                image, mask = image.cuda().float(), mask.cuda().float()
                out1u, out2u, out2r, out3r, out4r, out5r = self.net(image)
                out = out2u

                plt.subplot(221)
                plt.imshow(np.uint8(image[0].permute(1,2,0).cpu().numpy()*self.cfg.std + self.cfg.mean))
                plt.subplot(222)
                plt.imshow(mask[0].cpu().numpy())
                plt.subplot(223)
                plt.imshow(out[0, 0].cpu().numpy())
                plt.subplot(224)
                plt.imshow(torch.sigmoid(out[0, 0]).cpu().numpy())
                plt.show()
                input()

    def speed(self, n_warmup=20, n_iter=200):
        """FPS on a 352x352 dummy batch (the number reported in the paper is on a single 1080Ti)."""
        x = torch.randn(1, 3, 352, 352).cuda()
        with torch.no_grad():
            for _ in range(n_warmup):
                self.net(x)
            torch.cuda.synchronize()
            start = time.time()
            for _ in range(n_iter):
                self.net(x)
            torch.cuda.synchronize()  # wait for the last forward
        fps = n_iter / (time.time() - start)
        print('%s | %.2f FPS' % (self.cfg.datapath, fps))
        return fps

    def evaluate(self, beta2=0.3):
        """MAE and max F-measure computed on the GPU while tuning (no maps written)."""
        mae, cnt = 0.0, 0
        thresholds = torch.linspace(0, 1 - 1e-10, 256).cuda()
        precs, recs = 0.0, 0.0
        with torch.no_grad():
            for image, mask, shape, name in self.loader:
                image = image.cuda(non_blocking=True).float()
                mask  = mask.cuda(non_blocking=True).float()
                out1u, out2u, out2r, out3r, out4r, out5r = self.net(image, shape)
                pred  = torch.sigmoid(out2u[0, 0])
                gt    = (mask[0] > 0.5).float()
                mae  += torch.abs(pred - gt).mean().item()
                binar = (pred[None] >= thresholds[:, None, None]).float()
                tp    = (binar * gt[None]).sum(dim=(1, 2))
                precs = precs + tp / (binar.sum(dim=(1, 2)) + 1e-20)
                recs  = recs + tp / (gt.sum() + 1e-20)
                cnt  += 1
        precs, recs = precs / cnt, recs / cnt
        fmeasure = (1 + beta2) * precs * recs / (beta2 * precs + recs + 1e-20)
        print('%s | MAE=%.4f | maxF=%.4f' % (self.cfg.datapath, mae / cnt, fmeasure.max().item()))
        return mae / cnt, fmeasure.max().item()

    def save(self):
        with torch.no_grad():
            for image, mask, shape, name in self.loader:
                image = image.cuda().float()
                out1u, out2u, out2r, out3r, out4r, out5r = self.net(image, shape)
                out   = out2u
                pred  = (torch.sigmoid(out[0,0])*255).cpu().numpy()
                head  = '../eval/maps/F3Net/'+ self.cfg.datapath.split('/')[-1]
                if not os.path.exists(head):
                    os.makedirs(head)
                cv2.imwrite(head+'/'+name[0]+'.png', np.round(pred))


if __name__=='__main__':
    for path in ['../data/ECSSD', '../data/PASCAL-S', '../data/DUTS', '../data/HKU-IS', '../data/DUT-OMRON']:
        t = Test(dataset, F3Net, path)
        t.save()
        # t.show()
    t.speed()
