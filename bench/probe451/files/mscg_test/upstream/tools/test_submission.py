from __future__ import division

import os
import sys
import cv2
import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm
from PIL import Image

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib.utils.measure import *
from lib.utils.visual import *
from tools.model import get_net
from data.AgricultureVision.pre_process import *
from config.configs_kf import *

os.environ["CUDA_VISIBLE_DEVICES"] = "0"

output_path = os.path.join('../submission', 'results')
check_mkdir(output_path)

checkpoint1 = {
    'core': 'MSCG-Rx50',
    'data': 'Agriculture',
    'bands': ['NIR', 'RGB'],
    'snapshot': '../ckpt/epoch_8_loss_0.99527_acc_0.82278_acc-cls_0.60967_mean-iu_0.48098_fwavacc_0.70217_f1_0.62914_lr_0.0000982.pth'
}

checkpoint2 = {
    'core': 'MSCG-Rx101',
    'data': 'Agriculture',
    'bands': ['NIR', 'RGB'],
    'snapshot': '../ckpt/epoch_15_loss_1.03019_acc_0.83204_acc-cls_0.62527_mean-iu_0.48837_fwavacc_0.71593_f1_0.63631_lr_0.0000618.pth'
}


def main():
    check_mkdir(output_path)
    nets = []

    net1 = get_net(checkpoint1['snapshot'], name=checkpoint1['core'])
    net2 = get_net(checkpoint2['snapshot'], name=checkpoint2['core'])

    nets.append(net1.cuda())
    nets.append(net2.cuda())

    test_files = get_real_test_list(bands=['NIR', 'RGB'])
    tta_real_test(nets, stride=600, batch_size=1,
                  norm=False, window_size=(512, 512), labels=land_classes,
                  test_set=test_files, all=True)


def fusion_prediction(nets, image, scales, batch_size=1, num_class=7, wsize=(512, 512)):
    pred_all = np.zeros(image.shape[:2] + (num_class,))
    for scale_rate in scales:
        img = image.copy()
        img = scale(img, scale_rate)
        pred = np.zeros(img.shape[:2] + (num_class,))
        stride = img.shape[1]
        window_size = img.shape[:2]
        total = count_sliding_window(img, step=stride, window_size=window_size) // batch_size
        for i, coords in enumerate(
                tqdm(grouper(batch_size, sliding_window(img, step=stride, window_size=window_size)), total=total,
                     leave=False)):

            image_patches = [np.copy(img[x:x + w, y:y + h]).transpose((2, 0, 1)) for x, y, w, h in coords]
            imgs_flip = [patch[:, ::-1, :] for patch in image_patches]
            imgs_mirror = [patch[:, :, ::-1] for patch in image_patches]

            image_patches = np.concatenate((image_patches, imgs_flip, imgs_mirror), axis=0)
            image_patches = np.asarray(image_patches)
            image_patches = torch.from_numpy(image_patches).cuda()

            for net in nets:
                outs = net(image_patches)  # + Fn.torch_rot270(model(Fn.torch_rot90(image_patches)))
                outs = outs.data.cpu().numpy()

                b, _, _, _ = outs.shape

                # Fill in the results array
                for out, (x, y, w, h) in zip(outs[0:b // 3, :, :, :], coords):
                    out = out.transpose((1, 2, 0))
                    pred[x:x + w, y:y + h] += out

                for out, (x, y, w, h) in zip(outs[b // 3:2 * b // 3, :, :, :], coords):
                    out = out[:, ::-1, :]  # flip back
                    out = out.transpose((1, 2, 0))
                    pred[x:x + w, y:y + h] += out

                for out, (x, y, w, h) in zip(outs[2 * b // 3: b, :, :, :], coords):
                    out = out[:, :, ::-1]  # mirror back
                    out = out.transpose((1, 2, 0))
                    pred[x:x + w, y:y + h] += out

                del (outs)

        pred_all += scale(pred, 1.0 / scale_rate)

    return pred_all


def tta_real_test(nets, all=False, labels=land_classes, norm=False,
                  test_set=None, stride=600, batch_size=5, window_size=(512, 512)):
    test_files = (
        test_set[test_id] for test_id in test_set.keys()
    )
    for net in nets:
        net.eval()

    for img_file in tqdm(test_files, total=len(test_set), leave=False):
        image = np.asarray(np.concatenate(
            [np.asarray(Image.open(f).convert('L' if 'nir' in f else 'RGB'), dtype='float32')[..., None]
             if 'nir' in f else np.asarray(Image.open(f).convert('RGB'), dtype='float32')
             for f in img_file], axis=2), dtype='float32')
        if norm:
            image = Normalize(image)
        else:
            image = image / 255.

        with torch.no_grad():
            pred = fusion_prediction(nets, image, scales=[1.0],
                                     batch_size=batch_size, num_class=len(labels), wsize=window_size)

        pred = np.argmax(pred, axis=-1)

        for key in ['boundaries', 'masks']:
            pred = pred * np.array(cv2.imread(os.path.join(DATASET_ROOT, 'test', key,
                                                           os.path.basename(img_file[0]).replace('.jpg', '.png')),
                                              -1) / 255, dtype=int)
        filename = './{}.png'.format(os.path.basename(img_file[0]).split('.')[0])
        cv2.imwrite(os.path.join(output_path, filename), pred)


def check_mkdir(dir_name):
    if not os.path.exists(dir_name):
        os.makedirs(dir_name)


if __name__ == '__main__':
    main()
