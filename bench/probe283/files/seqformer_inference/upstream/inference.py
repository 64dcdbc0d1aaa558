'''
Inference code for SeqFormer
Modified from DETR (https://github.com/facebookresearch/detr)

    python3 inference.py --masks --backbone resnet50 --model_path r50_weight.pth \
        --save_path results.json --ytvis_path ../ytvis19
'''
import argparse
import datetime
import json
import random
import time
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, DistributedSampler

import datasets
import util.misc as utils
from models import build_model
import torchvision.transforms as T
import matplotlib.pyplot as plt
import os
from PIL import Image
import math
import torch.nn.functional as F
import pycocotools.mask as mask_util

from main import get_args_parser as get_main_args_parser


def get_args_parser():
    parser = argparse.ArgumentParser('SeqFormer inference', add_help=False, parents=[get_main_args_parser()])
    parser.add_argument('--model_path', type=str, default=None,
                        help="Path to the model weights.")
    parser.add_argument('--img_path', default='../ytvis/val/JPEGImages/')
    parser.add_argument('--ann_path', default='../ytvis/annotations/instances_val_sub.json')
    parser.add_argument('--save_path', default='results.json')
    parser.add_argument('--max_clip_len', default=36, type=int,
                        help="videos longer than this are run in chunks to stay within GPU memory")
    parser.add_argument('--gpu_id', default=0, type=int,
                        help="which GPU to run the whole validation set on")
    return parser


CLASSES = ['person', 'giant_panda', 'lizard', 'parrot', 'skateboard', 'sedan', 'ape',
           'dog', 'snake', 'monkey', 'hand', 'rabbit', 'duck', 'cat', 'cow', 'fish',
           'train', 'horse', 'turtle', 'bear', 'motorbike', 'giraffe', 'leopard',
           'fox', 'deer', 'owl', 'surfboard', 'airplane', 'truck', 'zebra', 'tiger',
           'elephant', 'snowboard', 'boat', 'shark', 'mouse', 'frog', 'eagle', 'earless_seal',
           'tennis_racket']

transform = T.Compose([
    T.Resize(360),
    T.ToTensor(),
    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
])


def run_clip(model, img, length):
    """Run one (sub-)clip through SeqFormer; returns logits, boxes, masks on host."""
    model.detr.num_frames = length
    outputs = model.inference(img, img.shape[-1], img.shape[-2])
    logits = outputs['pred_logits'][0]
    output_mask = outputs['pred_masks'][0]
    output_boxes = outputs['pred_boxes'][0]
    return logits, output_mask, output_boxes


def main(args):
    torch.cuda.set_device(args.gpu_id)
    device = torch.device(args.device)

    # fix the seed for reproducibility
    seed = args.seed + utils.get_rank()
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)

    with torch.no_grad():
        model, criterion, postprocessors = build_model(args)
        model.to(device)
        state_dict = torch.load(args.model_path)['model']
        model.load_state_dict(state_dict)
        model.eval()
        folder = args.img_path
        videos = json.load(open(args.ann_path, 'rb'))['videos']
        vis_num = len(videos)
        result = []
        tic = time.time()
        for i in range(vis_num):
            print("Process video: ", i)
            id_ = videos[i]['id']
            length = videos[i]['length']
            file_names = videos[i]['file_names']
            vid_len = length

            img_set = []
            for k in range(length):
                im = Image.open(os.path.join(folder, file_names[k]))
                w, h = im.size
                sizes = torch.as_tensor([int(h), int(w)])
                img_set.append(transform(im).unsqueeze(0).cuda())

            img = torch.cat(img_set, 0)

            if length <= args.max_clip_len:
                logits, output_mask, output_boxes = run_clip(model, img, length)
            else:
                logits_l, masks_l, boxes_l = [], [], []
                for s in range(0, length, args.max_clip_len):
                    clip = img[s:s + args.max_clip_len]
                    lg, mk, bx = run_clip(model, clip, clip.shape[0])
                    logits_l.append(lg)
                    masks_l.append(mk.cpu())
                    boxes_l.append(bx)
                    torch.cuda.empty_cache()
                logits = torch.stack(logits_l).mean(0)
                output_mask = torch.cat(masks_l, dim=1).to(device)
                output_boxes = torch.cat(boxes_l, dim=1)

            H = output_mask.shape[-2]
            W = output_mask.shape[-1]

            scores = logits.sigmoid().cpu().detach().numpy()
            hit_dict = {}

            topkv, indices10 = torch.topk(logits.sigmoid().cpu().detach().flatten(0), k=10)
            indices10 = indices10.tolist()
            for idx in indices10:
                queryid = idx // 40
                if queryid in hit_dict.keys():
                    hit_dict[queryid].append(idx % 40)
                else:
                    hit_dict[queryid] = [idx % 40]

            for inst_id in hit_dict.keys():
                masks = output_mask[inst_id]
                pred_masks = F.interpolate(masks[:, None, :, :], (im.size[1], im.size[0]), mode="bilinear")
                pred_masks = pred_masks.sigmoid().cpu().detach().numpy() > 0.5  # shape [100, 36, 720, 1280]
                if pred_masks.max() == 0:
                    print('skip')
                    continue
                for class_id in hit_dict[inst_id]:
                    category_id = class_id
                    score = scores[inst_id, class_id]
                    # print('name:', CLASSES[category_id-1], ', score', score)
                    instance = {'video_id': id_, 'video_name': file_names[0][:10], 'score': float(score), 'category_id': int(category_id)}
                    segmentation = []
                    for n in range(vid_len):
                        if score < 0.001:
                            segmentation.append(None)
                        else:
                            mask = (pred_masks[n, 0]).astype(np.uint8)
                            rle = mask_util.encode(np.array(mask[:, :, np.newaxis], order='F'))[0]
                            rle["counts"] = rle["counts"].decode("utf-8")
                            segmentation.append(rle)
                    instance['segmentations'] = segmentation
                    result.append(instance)
    toc = time.time()
    print("{} videos in {:.1f}s, peak memory {:.0f} MB".format(
        vis_num, toc - tic, torch.cuda.max_memory_allocated() / 1024 / 1024))
    with open(args.save_path, 'w', encoding='utf-8') as f:
        json.dump(result, f)


if __name__ == '__main__':
    parser = argparse.ArgumentParser('SeqFormer inference script', parents=[get_args_parser()])
    args = parser.parse_args()
    main(args)
