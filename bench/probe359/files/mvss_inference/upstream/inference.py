import os
import argparse

import cv2
import numpy as np
import torch
from tqdm import tqdm

from models.mvssnet import get_mvss
from common.tools import inference_single
from common.utils import calculate_pixel_f1, calculate_img_score


def parse_args():
    parser = argparse.ArgumentParser(description='MVSS-Net inference')
    parser.add_argument("--model_path", type=str, default="ckpt/mvssnet_casia.pt",
                        help="path to the pretrained model")
    parser.add_argument("--test_file", type=str, default="data/CASIAv1plus.txt",
                        help="txt file listing '<img> <mask> <label>' per line")
    parser.add_argument("--save_dir", type=str, default="save_out/")
    parser.add_argument("--resize", type=int, default=512)
    parser.add_argument("--th", type=float, default=0.5)
    parser.add_argument("--gpu", type=str, default="0", help="which GPU to run on")
    return parser.parse_args()


def read_paths(path):
    items = []
    with open(path, "r") as f:
        for line in f.readlines():
            parts = line.strip().split(' ')
            if len(parts) == 3:
                items.append((parts[0], parts[1], int(parts[2])))
            elif len(parts) == 1:
                items.append((parts[0], 'None', 1))
    return items


def main():
    args = parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

    model_type = os.path.basename(args.model_path).split('.')[0]
    if model_type.startswith('mvssnet'):
        model = get_mvss(backbone='resnet50',
                         pretrained_base=True,
                         nclass=1,
                         sobel=True,
                         constrain=True,
                         n_input=3)
    else:
        print("Unsupported model type: %s" % model_type)
        return

    if os.path.exists(args.model_path):
        checkpoint = torch.load(args.model_path, map_location='cpu')
        model.load_state_dict(checkpoint, strict=True)
        print("load %s finish" % os.path.basename(args.model_path))
    else:
        print("%s not exist" % args.model_path)
        return
    model.cuda()
    model.eval()

    save_path = os.path.join(args.save_dir, model_type)
    os.makedirs(save_path, exist_ok=True)

    items = read_paths(args.test_file)
    scores, labels = [], []
    f1s = [[], []]
    with torch.no_grad():
        for ix, (img_path, mask_path, label) in enumerate(tqdm(items, mininterval=60)):
            img = cv2.imread(img_path)
            ori_size = img.shape
            img = cv2.resize(img, (args.resize, args.resize))
            seg, score = inference_single(img=img, model=model, th=0)
            seg = cv2.resize(seg, (ori_size[1], ori_size[0]))
            save_seg_path = os.path.join(save_path, 'pred', os.path.split(img_path)[-1].split('.')[0] + '.png')
            os.makedirs(os.path.split(save_seg_path)[0], exist_ok=True)
            cv2.imwrite(save_seg_path, seg.astype(np.uint8))

            scores.append(score)
            labels.append(label)
            if mask_path != 'None':
                gt = cv2.imread(mask_path, 0)
                f1, p, r = calculate_pixel_f1(seg.flatten() / 255.0 > args.th, gt.flatten() / 255.0 > 0.5)
                f1s[label].append(f1)

    img_auc, img_f1, img_sen, img_spe = calculate_img_score(np.array(scores) > args.th, np.array(labels))
    mean_f1 = np.mean(f1s[1]) if len(f1s[1]) else 0.0
    print("pixel-f1: %.4f  img-auc: %.4f  img-f1: %.4f  sen: %.4f  spe: %.4f" % (
        mean_f1, img_auc, img_f1, img_sen, img_spe))
    print("combined f1: %.4f" % (2 * mean_f1 * img_f1 / (mean_f1 + img_f1 + 1e-6)))


if __name__ == '__main__':
    main()
