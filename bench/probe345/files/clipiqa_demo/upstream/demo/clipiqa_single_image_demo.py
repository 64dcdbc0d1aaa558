# Copyright (c) OpenMMLab. All rights reserved.
import argparse
import os

import mmcv
import torch

from mmedit.apis import init_model, restoration_inference
from mmedit.core import tensor2img, srocc, plcc

import pandas as pd
from tqdm import tqdm


def parse_args():
    parser = argparse.ArgumentParser(description='CLIP-IQA demo')
    parser.add_argument('--config', default='configs/clipiqa/clipiqa_attribute_test.py', help='test config file path')
    parser.add_argument('--checkpoint', default=None, help='checkpoint file')
    parser.add_argument('--file_path', default='dataset/koniq10k/1024x768/826373.jpg', help='path to input image file')
    parser.add_argument('--device', type=int, default=0, help='CUDA device id')
    args = parser.parse_args()
    return args


def main():
    args = parse_args()

    model = init_model(
        args.config, args.checkpoint, device=torch.device('cuda', args.device))

    output, attributes = restoration_inference(model, os.path.join(args.file_path), return_attributes=True)
    output = output.float().detach().cpu().numpy()
    attributes = attributes.float().detach().cpu().numpy()[0]

    attribute_list = ['Quality', 'Brightness', 'Sharpness', 'Noisiness', 'Colorfulness', 'Contrast']
    for i in range(len(attribute_list)):
        print(attribute_list[i] + ': ' + str(attributes[i]))


def eval_folder(config, checkpoint, folder, csv_path, device_id=0):
    """Evaluate a whole folder and report SROCC / PLCC against the KonIQ csv."""
    model = init_model(config, checkpoint, device=torch.device('cuda', device_id))
    ann = pd.read_csv(csv_path)
    pred_score, gt_score = [], []
    for _, row in tqdm(ann.iterrows(), total=len(ann)):
        img_path = os.path.join(folder, row['image_name'])
        output, attributes = restoration_inference(model, img_path, return_attributes=True)
        pred_score.append(attributes[0][0].item())
        gt_score.append(row['MOS'])
    pred_score = torch.tensor(pred_score)
    gt_score = torch.tensor(gt_score)
    mmcv.dump({'pred': pred_score.tolist(), 'gt': gt_score.tolist()}, 'clipiqa_results.json')
    print('SRCC: {:.4f}, PLCC: {:.4f}'.format(srocc(pred_score, gt_score), plcc(pred_score, gt_score)))


if __name__ == '__main__':
    main()
