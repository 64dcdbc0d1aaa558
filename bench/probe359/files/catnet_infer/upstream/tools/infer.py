"""
Created by Myung-Joon Kwon
Inference script for CAT-Net: reads every image in input/ and writes heat-maps to output_pred/.
Usage (single GPU):
    python tools/infer.py
"""
import sys, os
path = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
if path not in sys.path:
    sys.path.insert(0, path)

import argparse
import pprint
import logging
import timeit
import gc

import numpy as np
from PIL import Image
from tqdm import tqdm

import torch
import torch.nn as nn
import torch.backends.cudnn as cudnn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from lib import models
from lib.config import config
from lib.config import update_config
from lib.utils.utils import get_rank

from Splicing.data.data_core import SplicingDataset as splicing_dataset
from Splicing.data.AbstractDataset import AbstractDataset


def parse_args():
    parser = argparse.ArgumentParser(description='CAT-Net inference')
    parser.add_argument('--cfg', help='experiment configure file name',
                        default='experiments/CAT_full.yaml', type=str)
    parser.add_argument('--model', default='output/splicing_dataset/CAT_full/CAT_full_v2.pth.tar',
                        type=str, help='path to the trained weights')
    parser.add_argument('opts', help="Modify config options using the command-line",
                        default=None, nargs=argparse.REMAINDER)
    args = parser.parse_args()
    update_config(config, args)
    return args


def main():
    args = parse_args()

    # cudnn related setting
    cudnn.benchmark = config.CUDNN.BENCHMARK
    cudnn.deterministic = config.CUDNN.DETERMINISTIC
    cudnn.enabled = config.CUDNN.ENABLED

    # the 'arbitrary' split just lists every file under ./input
    test_dataset = splicing_dataset(crop_size=None, grid_crop=True,
                                    blocks=('RGB', 'DCTvol', 'qtable'),
                                    DCT_channels=1, mode='arbitrary',
                                    read_from_jpeg=True)

    print(test_dataset.get_info())

    testloader = DataLoader(
        test_dataset,
        batch_size=1,  # must be 1 to handle arbitrary input sizes
        shuffle=False,  # must be False to get accurate filename
        num_workers=1,
        pin_memory=False)

    # load model
    model = eval('models.' + config.MODEL.NAME + '.get_seg_model')(config)
    if args.model and os.path.isfile(args.model):
        model_state_file = args.model
    else:
        raise ValueError("Model file is not specified.")
    print('=> loading model from {}'.format(model_state_file))
    model = FullModelWrapper(model)
    checkpoint = torch.load(model_state_file, map_location=lambda storage, loc: storage)
    model.model.load_state_dict(checkpoint['state_dict'])
    print("Epoch: {}".format(checkpoint['epoch']))
    model = model.cuda()
    model.eval()

    dataset_paths = test_dataset.dataset_list[0].get_tamp_list()
    os.makedirs('output_pred', exist_ok=True)

    with torch.no_grad():
        for index, (image, label, qtable) in enumerate(tqdm(testloader)):
            size = label.size()
            image, label = image.cuda(), label.long().cuda()
            if len(qtable.shape) == 1:
                qtable = None
            else:
                qtable = qtable.cuda()
            model.eval()
            _, pred = model(image, label, qtable)
            pred = torch.squeeze(pred, 0)
            pred = F.softmax(pred, dim=0)[1]
            pred = pred.cpu().numpy()

            # filepath = "input/<name>.<ext>"
            filepath = dataset_paths[index]
            filename = os.path.split(filepath)[-1]
            filename = os.path.splitext(filename)[0] + '.png'

            try:
                os.makedirs(os.path.join('output_pred', os.path.dirname(filename)), exist_ok=True)
            except OSError:
                pass
            image_pil = Image.fromarray((pred * 255).astype(np.uint8))
            image_pil.save(os.path.join('output_pred', filename))

            # large JPEGs produce big DCT volumes; keep the device memory flat
            del image, label, qtable, pred
            gc.collect()


class FullModelWrapper(nn.Module):
    """Same signature as lib.utils.utils.FullModel but without the loss."""

    def __init__(self, model):
        super(FullModelWrapper, self).__init__()
        self.model = model

    def forward(self, inputs, labels, qtable=None):
        outputs = self.model(inputs, qtable)
        return None, outputs


if __name__ == '__main__':
    main()
