import argparse
import logging
import os
import sys
import time

import cv2
import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
import torchvision
from PIL import Image
from scipy.special import expit
from skimage import filters
from skimage.morphology import skeletonize, remove_small_objects
from torch.utils.data import DataLoader
from tqdm import tqdm

from scripts.model import Generator_main, Generator_branch
from scripts.dataset import SEDataset_out
from scripts.utils import Define_image_size

AUTOMORPH_DATA = os.getenv('AUTOMORPH_DATA', '..')

torch.backends.cudnn.benchmark = True
if torch.cuda.is_available():
    device = torch.device('cuda:0')
else:
    device = torch.device('cpu')


def filter_frag(data_path):
    if os.path.isdir(data_path + 'resize_binary/.ipynb_checkpoints'):
        os.rmdir(data_path + 'resize_binary/.ipynb_checkpoints')
    image_list = os.listdir(data_path + 'resize_binary')
    for image_path in image_list:
        image = cv2.imread(data_path + 'resize_binary/' + image_path, 0)
        image_label = np.zeros_like(image)
        n, labels, stats, centroids = cv2.connectedComponentsWithStats(image.astype(np.uint8))
        for i in range(1, n):
            if stats[i, cv2.CC_STAT_AREA] >= 30:
                image_label[labels == i] = 255
        cv2.imwrite(data_path + 'binary_process/' + image_path, image_label)


def segment_fundus(data_path, net_list, loader, dataset_name, n_classes=1):
    total_time = 0.0
    n_img = 0
    seg_results_small_path = data_path + 'resize/'
    seg_results_raw_path = data_path + 'raw/'
    for p in [seg_results_small_path, seg_results_raw_path, data_path + 'resize_binary/',
              data_path + 'raw_binary/', data_path + 'binary_process/', data_path + 'uncertainty/']:
        os.makedirs(p, exist_ok=True)

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)

    with tqdm(total=len(loader), desc='Vessel segmentation', unit='batch', leave=False) as pbar:
        for batch in loader:
            imgs = batch['image']
            ori_width = batch['width']
            ori_height = batch['height']
            img_name = batch['name']
            imgs = imgs.to(device=device, dtype=torch.float32)

            starter.record()
            with torch.no_grad():
                outputs = []
                for net in net_list:
                    _, _, mask_pred = net(imgs)
                    outputs.append(torch.sigmoid(mask_pred))
                ensemble = torch.stack(outputs, dim=0)
                mask_pred_mean = ensemble.mean(dim=0)
                mask_uncertainty = ensemble.std(dim=0)
            ender.record()
            torch.cuda.synchronize()
            total_time += starter.elapsed_time(ender)
            n_img += imgs.shape[0]

            for i in range(imgs.shape[0]):
                prob = mask_pred_mean[i, 0].cpu().numpy()
                unc = mask_uncertainty[i, 0].cpu().numpy()
                binary = (prob >= 0.5).astype(np.uint8) * 255

                cv2.imwrite(seg_results_small_path + img_name[i] + '.png', np.uint8(prob * 255))
                cv2.imwrite(data_path + 'resize_binary/' + img_name[i] + '.png', binary)
                cv2.imwrite(data_path + 'uncertainty/' + img_name[i] + '.png', np.uint8(unc * 255))

                prob_raw = cv2.resize(prob, (int(ori_width[i]), int(ori_height[i])), interpolation=cv2.INTER_LINEAR)
                cv2.imwrite(seg_results_raw_path + img_name[i] + '.png', np.uint8(prob_raw * 255))
                cv2.imwrite(data_path + 'raw_binary/' + img_name[i] + '.png',
                            (prob_raw >= 0.5).astype(np.uint8) * 255)
            pbar.update(1)

    if n_img:
        logging.info('Average inference time per image: %.2f ms' % (total_time / n_img))
    filter_frag(data_path)


def get_args():
    parser = argparse.ArgumentParser(description='Vessel segmentation on outside data',
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument('--batch-size', type=int, nargs='?', default=8, help='Batch size', dest='batchsize')
    parser.add_argument('--dataset', type=str, default='ALL-SIX', help='training dataset name', dest='dataset')
    parser.add_argument('--checkstart', type=int, default=1, help='first checkpoint', dest='checkstart')
    parser.add_argument('--checkend', type=int, default=11, help='last checkpoint', dest='checkend')
    parser.add_argument('--uniform', type=str, default='True', help='uniform image size', dest='uniform')
    parser.add_argument('--jn', type=str, default='20210630_uniform_thres40_ALL-SIX', help='job name', dest='jn')
    parser.add_argument('--worker_num', type=int, default=2, help='DataLoader workers', dest='worker_num')
    return parser.parse_args()


if __name__ == '__main__':
    logging.basicConfig(level=logging.INFO, format='%(levelname)s: %(message)s')
    args = get_args()
    logging.info(f'Using device {device}')

    img_size = Define_image_size(args.uniform, args.dataset)
    dataset_name = args.dataset
    checkpoint_saved = dataset_name + '/' + args.jn + '/Discriminator_unet/'
    csv_path = f'{AUTOMORPH_DATA}/Results/M1/Good_quality/'
    test_dir = f'{AUTOMORPH_DATA}/Results/M1/Good_quality/'
    data_path = f'{AUTOMORPH_DATA}/Results/M2/binary_vessel/'

    dataset = SEDataset_out(test_dir, img_size, dataset_name, train_or=False)
    test_loader = DataLoader(dataset, batch_size=args.batchsize, shuffle=False, num_workers=args.worker_num,
                             pin_memory=torch.cuda.is_available(), drop_last=False)

    net_list = []
    for i in range(args.checkstart, args.checkend):
        net_G_1 = Generator_main(input_channels=3, n_filters=32, n_classes=1, bilinear=False)
        net_G_A_1 = Generator_branch(input_channels=3, n_filters=32, n_classes=1, bilinear=False)
        checkpoint = os.path.join(checkpoint_saved, 'CP_best_F1_all_%d.pth' % i)
        state = torch.load(checkpoint, map_location=device)
        net_G_1.load_state_dict(state['main'])
        net_G_A_1.load_state_dict(state['branch'])
        net_G_1.eval()
        net_G_A_1.eval()
        net_G_1.to(device=device)
        net_G_A_1.to(device=device)

        class _Ensemble(torch.nn.Module):
            def __init__(self, g, ga):
                super().__init__()
                self.g, self.ga = g, ga

            def forward(self, x):
                feat = self.ga(x)
                return self.g(x, feat)

        net_list.append(_Ensemble(net_G_1, net_G_A_1))

    logging.info('Loaded %d checkpoints' % len(net_list))
    segment_fundus(data_path, net_list, test_loader, dataset_name)
    torch.cuda.empty_cache()
