import argparse
import os

import mmcv
import cv2
import copy
import numpy as np
import torch
from mmcv import Config
from mmcv.parallel import MMDataParallel
from mmcv.runner import load_checkpoint

from mmdet.datasets import build_dataloader, build_dataset
from mmdet.models import build_detector
from tools.condlanenet.common import COLORS, parse_lanes
from tools.condlanenet.post_process import CondLanePostProcessor


def parse_args():
    parser = argparse.ArgumentParser(description='MMDet test detector')
    parser.add_argument('config', help='test config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('--result_dst', default=None, help='path to save the results')
    parser.add_argument('--show', action='store_true')
    parser.add_argument('--show_dst', default='./work_dirs/culane/watch', help='path to save visualized results.')
    parser.add_argument('--hm_thr', type=float, default=0.5)
    args = parser.parse_args()
    return args


def adjust_result(lanes, crop_bbox, img_shape, tgt_shape=(590, 1640)):

    def in_range(pt, img_shape):
        if pt[0] >= 0 and pt[0] < img_shape[1] and pt[1] >= 0 and pt[1] <= img_shape[0]:
            return True
        else:
            return False

    left, top, right, bot = crop_bbox
    h_img, w_img = img_shape[:2]
    crop_width = right - left
    crop_height = bot - top
    ratio_x = crop_width / w_img
    ratio_y = crop_height / h_img
    offset_x = (tgt_shape[1] - crop_width) / 2
    offset_y = top

    results = []
    if lanes is not None:
        for key in range(len(lanes)):
            pts = []
            for pt in lanes[key]['points']:
                pt[0] = float(pt[0] * ratio_x + offset_x)
                pt[1] = float(pt[1] * ratio_y + offset_y)
                pts.append(pt)
            if len(pts) > 1:
                results.append(pts)
    return results


def out_result(lanes, dst=None):
    if dst is not None:
        with open(dst, 'w') as f:
            for lane in lanes:
                for idx, p in enumerate(lane):
                    if idx == len(lane) - 1:
                        print('{:.2f} '.format(p[0]), end='', file=f)
                        print('{:.2f}'.format(p[1]), file=f)
                    else:
                        print('{:.2f} '.format(p[0]), end='', file=f)
                        print('{:.2f} '.format(p[1]), end='', file=f)


def vis_one(results, filename, width=9):
    img = cv2.imread(filename)
    img_gt = cv2.imread(filename)
    img_pil = copy.deepcopy(img)
    for idx, lane in enumerate(results):
        lane_tuple = [tuple(p) for p in lane]
        for i in range(1, len(lane_tuple)):
            pt1 = (int(lane_tuple[i - 1][0]), int(lane_tuple[i - 1][1]))
            pt2 = (int(lane_tuple[i][0]), int(lane_tuple[i][1]))
            cv2.line(img_pil, pt1, pt2, COLORS[idx + 1], thickness=width)
    return img_pil, img_gt


def single_gpu_test(seg_model,
                    data_loader,
                    show=None,
                    hm_thr=0.3,
                    kernel=3,
                    nms_thr=4.,
                    result_dst=None,
                    crop_bbox=[0, 270, 1640, 590],
                    mask_size=(1, 80, 200)):
    seg_model.eval()
    dataset = data_loader.dataset
    post_processor = CondLanePostProcessor(
        mask_size=mask_size, hm_thr=hm_thr, use_offset=True, nms_thr=nms_thr)
    prog_bar = mmcv.ProgressBar(len(dataset))
    for i, data in enumerate(data_loader):
        with torch.no_grad():
            sub_name = data['img_metas'].data[0][0]['sub_img_name']
            img_shape = data['img_metas'].data[0][0]['img_shape']
            sub_dst_name = sub_name.replace('.jpg', '.lines.txt')
            if result_dst is not None:
                dst_dir = os.path.join(result_dst, sub_dst_name)
                dst_folder = os.path.split(dst_dir)[0]
                mmcv.mkdir_or_exist(dst_folder)
            else:
                dst_dir = None
            seeds, _ = seg_model(
                return_loss=False, rescale=False, thr=hm_thr, **data)
            lanes, seeds = post_processor(seeds, mask_size[-1] / img_shape[1])
            result = adjust_result(
                lanes=lanes, crop_bbox=crop_bbox, img_shape=img_shape, tgt_shape=(590, 1640))
            out_result(result, dst=dst_dir)

        if show is not None and show:
            filename = data['img_metas'].data[0][0]['filename']
            img_vis, img_gt_vis = vis_one(result, filename)
            basename = '{}_'.format(sub_name[1:].replace('/', '.'))
            dst_show_dir = os.path.join(show, basename)
            mmcv.mkdir_or_exist(show)
            cv2.imwrite(dst_show_dir, img_vis)

        batch_size = data['img'].data[0].size(0)
        for _ in range(batch_size):
            prog_bar.update()


class DateEnconding(object):
    pass


def main():
    args = parse_args()

    cfg = mmcv.Config.fromfile(args.config)
    # set cudnn_benchmark
    if cfg.get('cudnn_benchmark', False):
        torch.backends.cudnn.benchmark = True
    cfg.model.pretrained = None
    cfg.data.test.test_mode = True

    # build the dataloader
    dataset = build_dataset(cfg.data.test)
    data_loader = build_dataloader(
        dataset,
        samples_per_gpu=1,
        workers_per_gpu=cfg.data.workers_per_gpu,
        dist=False,
        shuffle=False)

    # build the model and load checkpoint
    model = build_detector(cfg.model, train_cfg=None, test_cfg=cfg.test_cfg)
    load_checkpoint(model, args.checkpoint, map_location='cpu')
    model = MMDataParallel(model, device_ids=[0])
    if not args.show:
        show_dst = None
    else:
        show_dst = args.show_dst
    if args.show is not None and args.show:
        if not os.path.exists(args.show_dst):
            os.makedirs(args.show_dst)

    single_gpu_test(
        seg_model=model,
        data_loader=data_loader,
        show=show_dst,
        hm_thr=args.hm_thr,
        result_dst=args.result_dst,
        nms_thr=cfg.nms_thr,
        crop_bbox=cfg.crop_bbox,
        mask_size=cfg.mask_size)


if __name__ == '__main__':
    main()
