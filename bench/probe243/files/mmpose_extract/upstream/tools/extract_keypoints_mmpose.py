"""Top-down whole-body keypoint extraction (MMDetection person detector + MMPose HRNet)
for CSL-Daily / Phoenix-2014T frame folders.

Writes one pickle per video: {'keypoints': (T, 133, 3) float32, 'img_shape': (H, W)}.
These are the keypoints consumed by the keypoint stream of the two-stream model.

Example (one process per GPU):
    for i in 0 1 2 3; do
        python tools/extract_keypoints_mmpose.py --split train --shard $i --num-shards 4 --device cuda:$i &
    done
"""
import argparse
import os
import os.path as osp
import pickle
import warnings
from glob import glob

import cv2
import mmcv
import numpy as np
import torch
from tqdm import tqdm

from mmpose.apis import (inference_top_down_pose_model, init_pose_model,
                         process_mmdet_results)
from mmpose.datasets import DatasetInfo

try:
    from mmdet.apis import inference_detector, init_detector
    has_mmdet = True
except (ImportError, ModuleNotFoundError):
    has_mmdet = False


def parse_args():
    parser = argparse.ArgumentParser(description='MMPose whole-body keypoints for sign videos')
    parser.add_argument('--det-config', default='demo/mmdetection_cfg/faster_rcnn_r50_fpn_coco.py')
    parser.add_argument('--det-checkpoint',
                        default='https://download.openmmlab.com/mmdetection/v2.0/faster_rcnn/'
                                'faster_rcnn_r50_fpn_1x_coco/faster_rcnn_r50_fpn_1x_coco_20200130-047c8118.pth')
    parser.add_argument('--pose-config',
                        default='configs/wholebody/2d_kpt_sview_rgb_img/topdown_heatmap/coco-wholebody/'
                                'hrnet_w48_coco_wholebody_384x288_dark_plus.py')
    parser.add_argument('--pose-checkpoint',
                        default='https://download.openmmlab.com/mmpose/top_down/hrnet/'
                                'hrnet_w48_coco_wholebody_384x288_dark-f5726563_20200918.pth')
    parser.add_argument('--data-root', default='data/phoenix-2014t/features/fullFrame-210x260px')
    parser.add_argument('--out-dir', default='data/phoenix-2014t/keypoints_hrnet_dark')
    parser.add_argument('--split', default='train', choices=['train', 'dev', 'test'])
    parser.add_argument('--shard', type=int, default=0)
    parser.add_argument('--num-shards', type=int, default=1)
    parser.add_argument('--det-cat-id', type=int, default=1, help='Category id for bounding box detection model')
    parser.add_argument('--bbox-thr', type=float, default=0.3, help='Bounding box score threshold')
    parser.add_argument('--device', default='cuda:0', help='Device used for inference')
    parser.add_argument('--fp16', action='store_true', help='run the pose model in half precision (GPU only)')
    return parser.parse_args()


def largest_person(person_results):
    """Signers are alone and centred; keep the largest box so background people are ignored."""
    if len(person_results) == 0:
        return []
    areas = [(r['bbox'][2] - r['bbox'][0]) * (r['bbox'][3] - r['bbox'][1]) for r in person_results]
    return [person_results[int(np.argmax(areas))]]


def extract_video(frame_paths, det_model, pose_model, dataset, dataset_info, args):
    keypoints = []
    last_box = None
    img_shape = None
    for frame_path in frame_paths:
        img = mmcv.imread(frame_path)
        img_shape = img.shape[:2]
        mmdet_results = inference_detector(det_model, img)
        person_results = process_mmdet_results(mmdet_results, args.det_cat_id)
        person_results = [p for p in person_results if p['bbox'][4] > args.bbox_thr]
        person_results = largest_person(person_results)
        if len(person_results) == 0:
            if last_box is None:
                h, w = img_shape
                person_results = [{'bbox': np.array([0, 0, w, h, 1.0], dtype=np.float32)}]
            else:
                person_results = [{'bbox': last_box}]
        last_box = person_results[0]['bbox']

        pose_results, _ = inference_top_down_pose_model(
            pose_model,
            img,
            person_results,
            bbox_thr=None,
            format='xyxy',
            dataset=dataset,
            dataset_info=dataset_info,
            return_heatmap=False,
            outputs=None)
        keypoints.append(pose_results[0]['keypoints'].astype(np.float32))
    return np.stack(keypoints, axis=0), img_shape


def main():
    args = parse_args()
    assert has_mmdet, 'Please install mmdet to run the demo.'

    if args.device.startswith('cuda'):
        torch.cuda.set_device(int(args.device.split(':')[-1]))

    det_model = init_detector(args.det_config, args.det_checkpoint, device=args.device.lower())
    pose_model = init_pose_model(args.pose_config, args.pose_checkpoint, device=args.device.lower())
    if args.fp16:
        if not torch.cuda.is_available():
            warnings.warn('--fp16 needs a GPU, ignoring it')
        else:
            pose_model = pose_model.half()

    dataset = pose_model.cfg.data['test']['type']
    dataset_info = pose_model.cfg.data['test'].get('dataset_info', None)
    if dataset_info is None:
        warnings.warn(
            'Please set `dataset_info` in the config.'
            'Check https://github.com/open-mmlab/mmpose/pull/663 for details.',
            DeprecationWarning)
    else:
        dataset_info = DatasetInfo(dataset_info)

    video_dirs = sorted(glob(osp.join(args.data_root, args.split, '*')))
    video_dirs = video_dirs[args.shard::args.num_shards]
    out_dir = osp.join(args.out_dir, args.split)
    os.makedirs(out_dir, exist_ok=True)
    print(f'[shard {args.shard}/{args.num_shards}] {len(video_dirs)} videos on {args.device}')

    for vdir in tqdm(video_dirs):
        name = osp.basename(vdir)
        out_file = osp.join(out_dir, name + '.pkl')
        if osp.exists(out_file):
            continue
        frame_paths = sorted(glob(osp.join(vdir, '*.png')))
        if len(frame_paths) == 0:
            continue
        with torch.no_grad():
            kpts, img_shape = extract_video(frame_paths, det_model, pose_model, dataset, dataset_info, args)
        with open(out_file, 'wb') as f:
            pickle.dump({'keypoints': kpts, 'img_shape': img_shape}, f)

    if torch.cuda.is_available():
        print('peak GPU memory: {:.1f} MB'.format(torch.cuda.max_memory_allocated() / 2 ** 20))


if __name__ == '__main__':
    main()
