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
    parser.add_argument('--file_path', default='../dataset/koniq10k/1024x768/826373.jpg', help='path to input image file')
    parser.add_argument('--csv_path', default=None, help='optional csv with image names and MOS for SROCC/PLCC')
    parser.add_argument('--device', type=int, default=0, help='CUDA device id')
    args = parser.parse_args()
    return args


ATTRIBUTES = ['Quality', 'Brightness', 'Sharpness', 'Noisiness', 'Colorfulness', 'Contrast',
              'Aesthetic', 'Happy', 'Natural', 'New', 'Scary', 'Complex']


def main():
    args = parse_args()

    model = init_model(
        args.config, args.checkpoint, device=torch.device('cuda', args.device))

    if args.csv_path is None:
        output, attributes = restoration_inference(model, args.file_path, return_attributes=True)
        output = output.float().detach().cpu().numpy()
        attributes = attributes.float().detach().cpu().numpy()[0]
        print(f'{os.path.basename(args.file_path)}:')
        for name, value in zip(ATTRIBUTES, attributes):
            print(f'  {name:<13s}{value:.4f}')
        return

    # batch evaluation on a labelled csv (KonIQ-10k style: image_name, MOS)
    df = pd.read_csv(args.csv_path)
    root = os.path.dirname(args.file_path)
    pred_scores, mos = [], []
    for _, row in tqdm(df.iterrows(), total=len(df)):
        img_path = os.path.join(root, row['image_name'])
        output, _ = restoration_inference(model, img_path, return_attributes=True)
        pred_scores.append(float(output.float().detach().cpu().numpy()))
        mos.append(float(row['MOS']))
        if len(pred_scores) % 500 == 0:
            torch.cuda.empty_cache()

    mmcv.mkdir_or_exist('./results')
    pd.DataFrame({'image_name': df['image_name'], 'pred': pred_scores}).to_csv('./results/clipiqa_pred.csv', index=False)
    print(f'SRCC: {srocc(pred_scores, mos):.4f}  PLCC: {plcc(pred_scores, mos):.4f}')


if __name__ == '__main__':
    main()
