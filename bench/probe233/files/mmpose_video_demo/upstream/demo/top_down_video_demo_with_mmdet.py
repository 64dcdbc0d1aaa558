# Copyright (c) OpenMMLab. All rights reserved.
"""Top-down animal pose estimation on a video: mmdet detector + mmpose model.

Example (AP-10K HRNet-w32 on a zoo video, detector = Faster R-CNN on COCO):

    python demo/top_down_video_demo_with_mmdet.py \
        demo/mmdetection_cfg/faster_rcnn_r50_fpn_coco.py \
        https://download.openmmlab.com/mmdetection/v2.0/faster_rcnn/faster_rcnn_r50_fpn_1x_coco/faster_rcnn_r50_fpn_1x_coco_20200130-047c8118.pth \
        configs/animal/2d_kpt_sview_rgb_img/topdown_heatmap/ap10k/hrnet_w32_ap10k_256x256.py \
        https://download.openmmlab.com/mmpose/animal/hrnet/hrnet_w32_ap10k_256x256-18aac840_20211029.pth \
        --video-path demo/resources/zoo.mp4 --out-video-root vis_results --det-cat-id 16
"""
import csv
import os
import time
import warnings
from argparse import ArgumentParser

import cv2
import mmcv
import torch

from mmpose.apis import (inference_top_down_pose_model, init_pose_model,
                         process_mmdet_results, vis_pose_result)
from mmpose.datasets import DatasetInfo

try:
    from mmdet.apis import inference_detector, init_detector
    has_mmdet = True
except (ImportError, ModuleNotFoundError):
    has_mmdet = False


def parse_args():
    parser = ArgumentParser()
    parser.add_argument('det_config', help='Config file for detection')
    parser.add_argument('det_checkpoint', help='Checkpoint file for detection')
    parser.add_argument('pose_config', help='Config file for pose')
    parser.add_argument('pose_checkpoint', help='Checkpoint file for pose')
    parser.add_argument('--video-path', type=str, help='Video path')
    parser.add_argument(
        '--show',
        action='store_true',
        default=False,
        help='whether to show visualizations.')
    parser.add_argument(
        '--out-video-root',
        default='',
        help='Root of the output video file. '
        'Default not saving the visualization video.')
    parser.add_argument(
        '--device', default='cuda:0', help='Device used for inference')
    parser.add_argument(
        '--det-cat-id',
        type=int,
        default=1,
        help='Category id for bounding box detection model')
    parser.add_argument(
        '--bbox-thr',
        type=float,
        default=0.3,
        help='Bounding box score threshold')
    parser.add_argument(
        '--kpt-thr', type=float, default=0.3, help='Keypoint score threshold')
    parser.add_argument(
        '--radius',
        type=int,
        default=4,
        help='Keypoint radius for visualization')
    parser.add_argument(
        '--thickness',
        type=int,
        default=1,
        help='Link thickness for visualization')
    parser.add_argument(
        '--save-keypoints',
        action='store_true',
        help='write per-frame keypoints to a CSV next to the output video')
    parser.add_argument(
        '--timing',
        action='store_true',
        help='report detector / pose model time per frame')
    return parser.parse_args()


def main():
    """Visualize the demo video (support both single-frame and multi-frame).

    Using mmdet to detect the animals.
    """
    args = parse_args()
    assert has_mmdet, 'Please install mmdet to run the demo.'
    assert args.show or (args.out_video_root != '')
    assert args.det_config is not None
    assert args.det_checkpoint is not None

    det_model = init_detector(
        args.det_config, args.det_checkpoint, device=args.device.lower())
    # build the pose model from a config file and a checkpoint file
    pose_model = init_pose_model(
        args.pose_config, args.pose_checkpoint, device=args.device.lower())

    dataset = pose_model.cfg.data['test']['type']
    # get datasetinfo
    dataset_info = pose_model.cfg.data['test'].get('dataset_info', None)
    if dataset_info is None:
        warnings.warn(
            'Please set `dataset_info` in the config.'
            'Check https://github.com/open-mmlab/mmpose/pull/663 for details.',
            DeprecationWarning)
    else:
        dataset_info = DatasetInfo(dataset_info)

    # read video
    video = mmcv.VideoReader(args.video_path)
    assert video.opened, f'Faild to load video file {args.video_path}'

    if args.out_video_root == '':
        save_out_video = False
    else:
        os.makedirs(args.out_video_root, exist_ok=True)
        save_out_video = True

    if save_out_video:
        fps = video.fps
        size = (video.width, video.height)
        fourcc = cv2.VideoWriter_fourcc(*'mp4v')
        videoWriter = cv2.VideoWriter(
            os.path.join(args.out_video_root,
                         f'vis_{os.path.basename(args.video_path)}'), fourcc,
            fps, size)

    keypoint_rows = []
    det_times, pose_times = [], []
    on_gpu = args.device.lower().startswith('cuda')
    # kernels run asynchronously: wait for them so the timings are real
    sync = torch.cuda.synchronize if on_gpu else (lambda: None)

    # whether to return heatmap, optional
    return_heatmap = False

    # return the output of some desired layers,
    # e.g. use ('backbone', ) to return backbone feature
    output_layer_names = None

    print('Running inference...')
    for frame_id, cur_frame in enumerate(mmcv.track_iter_progress(video)):
        # get the detection results of current frame
        # the resulting box is (x1, y1, x2, y2)
        t0 = time.perf_counter()
        mmdet_results = inference_detector(det_model, cur_frame)
        if args.timing:
            sync()
        t1 = time.perf_counter()

        # keep the animal class bounding boxes.
        animal_results = process_mmdet_results(mmdet_results, args.det_cat_id)

        # test a single image, with a list of bboxes.
        pose_results, returned_outputs = inference_top_down_pose_model(
            pose_model,
            cur_frame,
            animal_results,
            bbox_thr=args.bbox_thr,
            format='xyxy',
            dataset=dataset,
            dataset_info=dataset_info,
            return_heatmap=return_heatmap,
            outputs=output_layer_names)
        if args.timing:
            sync()
        t2 = time.perf_counter()
        det_times.append(t1 - t0)
        pose_times.append(t2 - t1)

        if args.save_keypoints:
            for track_id, res in enumerate(pose_results):
                for kpt_id, (x, y, score) in enumerate(res['keypoints']):
                    keypoint_rows.append(
                        [frame_id, track_id, kpt_id, x, y, score])

        # show the results
        vis_frame = vis_pose_result(
            pose_model,
            cur_frame,
            pose_results,
            dataset=dataset,
            dataset_info=dataset_info,
            kpt_score_thr=args.kpt_thr,
            radius=args.radius,
            thickness=args.thickness,
            show=False)

        if args.show:
            cv2.imshow('Frame', vis_frame)

        if save_out_video:
            videoWriter.write(vis_frame)

        if args.show and cv2.waitKey(1) & 0xFF == ord('q'):
            break

    if save_out_video:
        videoWriter.release()
    if args.show:
        cv2.destroyAllWindows()

    if args.save_keypoints and save_out_video:
        csv_path = os.path.join(
            args.out_video_root,
            os.path.splitext(os.path.basename(args.video_path))[0] +
            '_keypoints.csv')
        with open(csv_path, 'w', newline='') as f:
            writer = csv.writer(f)
            writer.writerow(['frame', 'track', 'keypoint', 'x', 'y', 'score'])
            writer.writerows(keypoint_rows)

    if args.timing and det_times:
        n = len(det_times)
        print(f'detector: {1000 * sum(det_times) / n:.1f} ms/frame, '
              f'pose: {1000 * sum(pose_times) / n:.1f} ms/frame '
              f'({n} frames on {args.device})')


if __name__ == '__main__':
    main()
