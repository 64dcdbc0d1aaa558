"""Extract 133 COCO-WholeBody keypoints for every frame of a sign language video corpus
(Phoenix-2014T, CSL-Daily, WLASL, MSASL) with MMDetection + MMPose (HRNet-w48 / 384x288).

The result is one pickle per split: {video_name: np.ndarray[T, 133, 3]} (x, y, score), used by
the keypoint stream of TwoStream-SLR and by SignBERT pre-training.

    python tools/extract_keypoints.py \
        --det-config configs/faster_rcnn_r50_fpn_coco.py --det-checkpoint ckpt/faster_rcnn.pth \
        --pose-config configs/hrnet_w48_coco_wholebody_384x288_dark_plus.py \
        --pose-checkpoint ckpt/hrnet_w48_wholebody.pth \
        --video-root data/phoenix2014t/videos --split train --out data/phoenix2014t/keypoints_hrnet_dark_coco_wholebody.train.pkl \
        --device cuda:0 --shard 0 --num-shards 4
"""
import argparse
import glob
import os
import os.path as osp
import pickle
import time
import warnings

import cv2
import numpy as np
import torch
from tqdm import tqdm

try:
    from mmdet.apis import inference_detector, init_detector
    has_mmdet = True
except (ImportError, ModuleNotFoundError):
    has_mmdet = False

from mmpose.apis import (inference_top_down_pose_model, init_pose_model,
                         process_mmdet_results)
from mmpose.datasets import DatasetInfo


def parse_args():
    parser = argparse.ArgumentParser(description='whole-body keypoint extraction for SLR')
    parser.add_argument('--det-config', required=True, help='Config file for detection')
    parser.add_argument('--det-checkpoint', required=True, help='Checkpoint file for detection')
    parser.add_argument('--pose-config', required=True, help='Config file for pose')
    parser.add_argument('--pose-checkpoint', required=True, help='Checkpoint file for pose')
    parser.add_argument('--video-root', required=True, help='folder with one sub-folder (frames) or mp4 per video')
    parser.add_argument('--split', default='train')
    parser.add_argument('--out', required=True, help='output pickle')
    parser.add_argument('--device', default='cuda:0', help='Device used for inference')
    parser.add_argument('--det-cat-id', type=int, default=1, help='Category id for bounding box detection model')
    parser.add_argument('--bbox-thr', type=float, default=0.5, help='Bounding box score threshold')
    parser.add_argument('--batch-frames', type=int, default=64, help='frames per pose forward (fits 24GB)')
    parser.add_argument('--shard', type=int, default=0)
    parser.add_argument('--num-shards', type=int, default=1)
    parser.add_argument('--fp16', action='store_true', help='run the pose model in half precision')
    return parser.parse_args()


def read_frames(path):
    if osp.isdir(path):
        files = sorted(glob.glob(osp.join(path, '*.png')) + glob.glob(osp.join(path, '*.jpg')))
        return [cv2.imread(f) for f in files]
    cap = cv2.VideoCapture(path)
    frames = []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(frame)
    cap.release()
    return frames


def largest_person(det_results, cat_id, thr, img_shape):
    """Signers are (almost) always the biggest person in the frame; fall back to full image."""
    person_results = process_mmdet_results(det_results, cat_id)
    person_results = [p for p in person_results if p['bbox'][4] >= thr]
    if len(person_results) == 0:
        h, w = img_shape[:2]
        return [{'bbox': np.array([0, 0, w, h, 1.0], dtype=np.float32)}]
    areas = [(p['bbox'][2] - p['bbox'][0]) * (p['bbox'][3] - p['bbox'][1]) for p in person_results]
    return [person_results[int(np.argmax(areas))]]


def main():
    args = parse_args()
    assert has_mmdet, 'Please install mmdet to run the demo.'
    torch.backends.cudnn.benchmark = True

    det_model = init_detector(args.det_config, args.det_checkpoint, device=args.device.lower())
    pose_model = init_pose_model(args.pose_config, args.pose_checkpoint, device=args.device.lower())
    if args.fp16:
        from mmcv.runner import wrap_fp16_model
        wrap_fp16_model(pose_model)

    dataset = pose_model.cfg.data['test']['type']
    dataset_info = pose_model.cfg.data['test'].get('dataset_info', None)
    if dataset_info is None:
        warnings.warn('Please set `dataset_info` in the config.', DeprecationWarning)
    else:
        dataset_info = DatasetInfo(dataset_info)

    videos = sorted(os.listdir(osp.join(args.video_root, args.split)))
    videos = videos[args.shard::args.num_shards]
    out_file = args.out if args.num_shards == 1 else args.out.replace('.pkl', f'.shard{args.shard}.pkl')
    results = {}
    if osp.exists(out_file):
        with open(out_file, 'rb') as f:
            results = pickle.load(f)
        print(f'resuming: {len(results)} videos already done')

    t_start = time.time()
    for i, name in enumerate(tqdm(videos, desc=f'shard {args.shard}')):
        if name in results:
            continue
        frames = read_frames(osp.join(args.video_root, args.split, name))
        if len(frames) == 0:
            print(f'[warn] empty video {name}')
            continue
        kps = np.zeros((len(frames), 133, 3), dtype=np.float32)
        for s in range(0, len(frames), args.batch_frames):
            chunk = frames[s:s + args.batch_frames]
            det_results = inference_detector(det_model, chunk)
            for j, (img, det) in enumerate(zip(chunk, det_results)):
                person = largest_person(det, args.det_cat_id, args.bbox_thr, img.shape)
                pose_results, _ = inference_top_down_pose_model(
                    pose_model, img, person, bbox_thr=None, format='xyxy',
                    dataset=dataset, dataset_info=dataset_info, return_heatmap=False, outputs=None)
                if len(pose_results) > 0:
                    kps[s + j] = pose_results[0]['keypoints']
        name = name[:-4] if name.endswith('.mp4') else name
        results[name] = kps
        if (i + 1) % 200 == 0:
            with open(out_file, 'wb') as f:
                pickle.dump(results, f)
            torch.cuda.empty_cache()
            elapsed = time.time() - t_start
            print(f'{i + 1}/{len(videos)} videos, {elapsed / 60:.1f} min, '
                  f'gpu mem {torch.cuda.memory_allocated() / 2 ** 30:.1f}G')

    with open(out_file, 'wb') as f:
        pickle.dump(results, f)
    print(f'done: {len(results)} videos -> {out_file}')


if __name__ == '__main__':
    main()
