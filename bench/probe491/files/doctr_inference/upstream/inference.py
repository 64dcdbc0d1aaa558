from seg import U2NETP
from GeoTr import GeoTr
from IllTr import IllTr

import torch
import torch.nn as nn
import torch.nn.functional as F
import skimage.io as io
import numpy as np
import cv2
import glob
import os
from PIL import Image
import argparse
import warnings
warnings.filterwarnings('ignore')


class GeoTr_Seg(nn.Module):
    def __init__(self):
        super(GeoTr_Seg, self).__init__()
        self.msk = U2NETP(3, 1)
        self.GeoTr = GeoTr(num_attn_layers=6)

    def forward(self, x):
        msk, _1,_2,_3,_4,_5,_6 = self.msk(x)
        msk = (msk > 0.5).float()
        x = msk * x

        bm = self.GeoTr(x)
        bm = (2 * (bm / 286.8) - 1) * 0.99

        return bm


def reload_model(model, path=""):
    if not bool(path):
        return model
    else:
        model_dict = model.state_dict()
        pretrained_dict = torch.load(path, map_location='cuda:0')
        print(len(pretrained_dict.keys()))
        pretrained_dict = {k[7:]: v for k, v in pretrained_dict.items() if k[7:] in model_dict}
        print(len(pretrained_dict.keys()))
        model_dict.update(pretrained_dict)
        model.load_state_dict(model_dict)

        return model


def reload_segmodel(model, path=""):
    if not bool(path):
        return model
    else:
        model_dict = model.state_dict()
        seg_dict = torch.load(path, map_location='cuda:0')
        print(len(seg_dict.keys()))
        seg_dict = {k[6:]: v for k, v in seg_dict.items() if k[6:] in model_dict}
        print(len(seg_dict.keys()))
        model_dict.update(seg_dict)
        model.load_state_dict(model_dict)

        return model


# ---------------------------------------------------------------------------
# illumination rectification (IllTr works on 128x128 patches)
# ---------------------------------------------------------------------------

def padCropImg(img):
    H = img.shape[0]
    W = img.shape[1]

    patchRes = 128
    pH = patchRes
    pW = patchRes
    ovlp = int(patchRes * 0.125)  # 32

    padH = (int((H - patchRes) / (patchRes - ovlp) + 1) * (patchRes - ovlp) + patchRes) - H
    padW = (int((W - patchRes) / (patchRes - ovlp) + 1) * (patchRes - ovlp) + patchRes) - W

    padImg = cv2.copyMakeBorder(img, 0, padH, 0, padW, cv2.BORDER_REPLICATE)

    ynum = int((padImg.shape[0] - pH) / (pH - ovlp)) + 1
    xnum = int((padImg.shape[1] - pW) / (pW - ovlp)) + 1

    totalPatch = np.zeros((ynum, xnum, patchRes, patchRes, 3), dtype=np.uint8)

    for j in range(0, ynum):
        for i in range(0, xnum):
            x = int(i * (pW - ovlp))
            y = int(j * (pH - ovlp))

            if j == (ynum - 1) and i == (xnum - 1):
                totalPatch[j, i] = img[-patchRes:, -patchRes:]
            elif j == (ynum - 1):
                totalPatch[j, i] = img[-patchRes:, x:int(x + patchRes)]
            elif i == (xnum - 1):
                totalPatch[j, i] = img[y:int(y + patchRes), -patchRes:]
            else:
                totalPatch[j, i] = padImg[y:int(y + patchRes), x:int(x + patchRes)]

    return totalPatch, padH, padW


def composePatch(totalResults, padH, padW, img):
    ynum = totalResults.shape[0]
    xnum = totalResults.shape[1]
    patchRes = totalResults.shape[2]

    ovlp = int(patchRes * 0.125)
    step = patchRes - ovlp

    resImg = np.zeros((patchRes + (ynum - 1) * step, patchRes + (xnum - 1) * step, 3), np.uint8)
    resImg = np.zeros_like(img).astype('uint8')

    for j in range(0, ynum):
        for i in range(0, xnum):
            sy = int(j * step)
            sx = int(i * step)

            if j == 0 and i != (xnum - 1):
                resImg[sy:(sy + patchRes), sx:(sx + patchRes)] = totalResults[j, i]
            elif i == 0 and j != (ynum - 1):
                resImg[sy + 10:(sy + patchRes), sx:(sx + patchRes)] = totalResults[j, i, 10:]
            elif j == (ynum - 1) and i == (xnum - 1):
                resImg[-patchRes + 10:, -patchRes + 10:] = totalResults[j, i, 10:, 10:]
            elif j == (ynum - 1) and i == 0:
                resImg[-patchRes + 10:, sx:(sx + patchRes)] = totalResults[j, i, 10:]
            elif j == (ynum - 1) and i != 0:
                resImg[-patchRes + 10:, sx + 10:(sx + patchRes)] = totalResults[j, i, 10:, 10:]
            elif i == (xnum - 1) and j == 0:
                resImg[sy:(sy + patchRes), -patchRes + 10:] = totalResults[j, i, :, 10:]
            elif i == (xnum - 1) and j != 0:
                resImg[sy + 10:(sy + patchRes), -patchRes + 10:] = totalResults[j, i, 10:, 10:]
            else:
                resImg[sy + 10:(sy + patchRes), sx + 10:(sx + patchRes)] = totalResults[j, i, 10:, 10:]

    resImg[0, :, :] = 255

    return resImg


def preProcess(img):
    img[:, :, 0] = img[:, :, 0] / 255.0
    img[:, :, 1] = img[:, :, 1] / 255.0
    img[:, :, 2] = img[:, :, 2] / 255.0
    return img


def postProcess(img):
    img = np.clip(img * 255.0, 0, 255).astype(np.uint8)
    return img


def rec_ill(net, img, saveRec):
    totalPatch, padH, padW = padCropImg(img)

    totalResults = np.zeros((totalPatch.shape[0], totalPatch.shape[1], 128, 128, 3), dtype=np.float32)

    for j in range(0, totalPatch.shape[0]):
        for i in range(0, totalPatch.shape[1]):
            patch = totalPatch[j, i] / 255.0
            patch = torch.from_numpy(patch.transpose(2, 0, 1)).unsqueeze(0).float().cuda()
            with torch.no_grad():
                pred = net(patch)
            pred = pred[0].permute(1, 2, 0).cpu().numpy()
            totalResults[j, i] = postProcess(pred)

    resImg = composePatch(totalResults, padH, padW, img)
    cv2.imwrite(saveRec, resImg)


def rec(opt):
    # print(torch.__version__) # 1.5.1
    img_list = os.listdir(opt.distorrted_path)  # distorted images list

    if not os.path.exists(opt.gsave_path):  # create save path
        os.mkdir(opt.gsave_path)
    if not os.path.exists(opt.isave_path):  # create save path
        os.mkdir(opt.isave_path)

    GeoTr_Seg_model = GeoTr_Seg().cuda()
    # reload segmentation model
    reload_segmodel(GeoTr_Seg_model.msk, opt.Seg_path)
    # reload geometric unwarping model
    reload_model(GeoTr_Seg_model.GeoTr, opt.GeoTr_path)

    IllTr_model = IllTr().cuda()
    # reload illumination rectification model
    reload_model(IllTr_model, opt.IllTr_path)

    # To eval mode
    GeoTr_Seg_model.eval()
    IllTr_model.eval()

    for img_path in img_list:
        name = img_path.split('.')[-2]  # image name

        img_path = opt.distorrted_path + img_path  # read image and to tensor
        im_ori = np.array(Image.open(img_path))[:, :, :3] / 255.
        h, w, _ = im_ori.shape
        im = cv2.resize(im_ori, (288, 288))
        im = im.transpose(2, 0, 1)
        im = torch.from_numpy(im).float().unsqueeze(0)

        with torch.no_grad():
            # geometric unwarping
            bm = GeoTr_Seg_model(im.cuda())
            bm = bm.cpu()
            bm0 = cv2.resize(bm[0, 0].numpy(), (w, h))  # x flow
            bm1 = cv2.resize(bm[0, 1].numpy(), (w, h))  # y flow
            bm0 = cv2.blur(bm0, (3, 3))
            bm1 = cv2.blur(bm1, (3, 3))
            lbl = torch.from_numpy(np.stack([bm0, bm1], axis=2)).unsqueeze(0)  # h * w * 2

            out = F.grid_sample(torch.from_numpy(im_ori).permute(2,0,1).unsqueeze(0).float(), lbl, align_corners=True)
            img_geo = ((out[0]*255).permute(1, 2, 0).numpy())[:,:,::-1].astype(np.uint8)
            cv2.imwrite(opt.gsave_path + name + '_geo' + '.png', img_geo)  # save

            # illumination rectification
            if opt.ill_rec:
                ill_savep = opt.isave_path + name + '_ill' + '.png'
                rec_ill(IllTr_model, img_geo, saveRec=ill_savep)

        print('Done: ', img_path)
        # the 288x288 transformer and the 128x128 IllTr patches fragment GPU memory over long runs
        torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--distorrted_path',  default='./distorted/')
    parser.add_argument('--gsave_path',  default='./geo_rec/')
    parser.add_argument('--isave_path',  default='./ill_rec/')
    parser.add_argument('--Seg_path',  default='./model_pretrained/seg.pth')
    parser.add_argument('--GeoTr_path',  default='./model_pretrained/geotr.pth')
    parser.add_argument('--IllTr_path',  default='./model_pretrained/illtr.pth')
    parser.add_argument('--ill_rec',  default=False)

    opt = parser.parse_args()

    rec(opt)


if __name__ == '__main__':
    main()
