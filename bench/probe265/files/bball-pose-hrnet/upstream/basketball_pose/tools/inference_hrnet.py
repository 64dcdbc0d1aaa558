# ------------------------------------------------------------------------------
# Top-down 2D pose for basketball broadcast video.
# HRNet-W32 (COCO-17 keypoints, 384x288) applied to the player boxes produced by
# the tracker; results are written as one JSON per clip for the shot-form analysis.
# Adapted from deep-high-resolution-net.pytorch/tools/inference.py
# ------------------------------------------------------------------------------
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import argparse
import csv
import json
import os
import time

import cv2
import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.nn.parallel
import torch.utils.data
import torchvision.transforms as transforms

import _init_paths
import models
from config import cfg
from config import update_config
from core.inference import get_final_preds
from utils.transforms import get_affine_transform, flip_back

COCO_KEYPOINT_INDEXES = {
    0: 'nose', 1: 'left_eye', 2: 'right_eye', 3: 'left_ear', 4: 'right_ear',
    5: 'left_shoulder', 6: 'right_shoulder', 7: 'left_elbow', 8: 'right_elbow',
    9: 'left_wrist', 10: 'right_wrist', 11: 'left_hip', 12: 'right_hip',
    13: 'left_knee', 14: 'right_knee', 15: 'left_ankle', 16: 'right_ankle'
}
FLIP_PAIRS = [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11, 12], [13, 14], [15, 16]]
SKELETON = [[1, 3], [1, 0], [2, 4], [2, 0], [0, 5], [0, 6], [5, 7], [7, 9], [6, 8], [8, 10], [5, 11],
            [6, 12], [11, 12], [11, 13], [13, 15], [12, 14], [14, 16]]


def parse_args():
    parser = argparse.ArgumentParser(description='Basketball pose inference')
    parser.add_argument('--cfg', type=str, default='experiments/coco/hrnet/w32_384x288_adam_lr1e-3.yaml')
    parser.add_argument('--video', type=str, required=True)
    parser.add_argument('--tracks', type=str, required=True, help='MOT-format csv with player boxes')
    parser.add_argument('--outputDir', type=str, default='/output/')
    parser.add_argument('--writeBoxFrames', action='store_true')
    parser.add_argument('--batch', type=int, default=64, help='person crops per forward pass')
    parser.add_argument('--fp16', action='store_true')
    parser.add_argument('opts', help='Modify config options using the command-line',
                        default=None, nargs=argparse.REMAINDER)
    args = parser.parse_args()

    # args expected by supporting codebase
    args.modelDir = ''
    args.logDir = ''
    args.dataDir = ''
    args.prevModelDir = ''
    return args


def box_to_center_scale(box, model_image_width, model_image_height):
    """convert a box to center,scale information required for pose transformation
    Parameters
    ----------
    box : list of tuple
        list of length 2 with two tuples of floats representing
        bottom left and top right corner of a box
    model_image_width : int
    model_image_height : int

    Returns
    -------
    (numpy array, numpy array)
        Two numpy arrays, coordinates for the center of the box and the scale of the box
    """
    center = np.zeros((2), dtype=np.float32)

    bottom_left_corner = box[0]
    top_right_corner = box[1]
    box_width = top_right_corner[0] - bottom_left_corner[0]
    box_height = top_right_corner[1] - bottom_left_corner[1]
    bottom_left_x = bottom_left_corner[0]
    bottom_left_y = bottom_left_corner[1]
    center[0] = bottom_left_x + box_width * 0.5
    center[1] = bottom_left_y + box_height * 0.5

    aspect_ratio = model_image_width * 1.0 / model_image_height
    pixel_std = 200

    if box_width > aspect_ratio * box_height:
        box_height = box_width * 1.0 / aspect_ratio
    elif box_width < aspect_ratio * box_height:
        box_width = box_height * aspect_ratio
    scale = np.array(
        [box_width * 1.0 / pixel_std, box_height * 1.0 / pixel_std],
        dtype=np.float32)
    if center[0] != -1:
        scale = scale * 1.25

    return center, scale


def read_tracks(path):
    """frame,id,x,y,w,h,conf,... -> {frame: [(track_id, [(x1, y1), (x2, y2)]), ...]}"""
    per_frame = {}
    with open(path) as f:
        for row in csv.reader(f):
            frame, tid = int(row[0]), int(row[1])
            x, y, w, h = map(float, row[2:6])
            per_frame.setdefault(frame, []).append((tid, [(x, y), (x + w, y + h)]))
    return per_frame


def get_pose_estimation_prediction(pose_model, image, centers, scales, transform, use_fp16):
    rotation = 0

    # pose estimation transformation
    model_inputs = []
    for center, scale in zip(centers, scales):
        trans = get_affine_transform(center, scale, rotation, cfg.MODEL.IMAGE_SIZE)
        # Crop smaller image of people
        model_input = cv2.warpAffine(
            image,
            trans,
            (int(cfg.MODEL.IMAGE_SIZE[0]), int(cfg.MODEL.IMAGE_SIZE[1])),
            flags=cv2.INTER_LINEAR)

        # hwc -> 1chw
        model_input = transform(model_input)  # .unsqueeze(0)
        model_inputs.append(model_input)

    # n * 1chw -> nchw
    model_inputs = torch.stack(model_inputs).cuda(non_blocking=True)
    if use_fp16:
        model_inputs = model_inputs.half()

    # compute output heatmap
    output = pose_model(model_inputs)
    if cfg.TEST.FLIP_TEST:
        input_flipped = model_inputs.flip(3)
        output_flipped = pose_model(input_flipped)
        output_flipped = flip_back(output_flipped.float().cpu().numpy(), FLIP_PAIRS)
        output_flipped = torch.from_numpy(output_flipped.copy()).cuda()
        # feature is not aligned, shift flipped heatmap for higher accuracy
        if cfg.TEST.SHIFT_HEATMAP:
            output_flipped[:, :, :, 1:] = output_flipped.clone()[:, :, :, 0:-1]
        output = (output.float() + output_flipped) * 0.5

    coords, maxvals = get_final_preds(
        cfg,
        output.float().cpu().detach().numpy(),
        np.asarray(centers),
        np.asarray(scales))

    return coords, maxvals


def draw_pose(keypoints, img):
    """draw the keypoints and the skeletons.
    :params keypoints: the shape should be equal to [17,2]
    :params img:
    """
    assert keypoints.shape == (17, 2)
    for i in range(len(SKELETON)):
        kpt_a, kpt_b = SKELETON[i][0], SKELETON[i][1]
        x_a, y_a = keypoints[kpt_a][0], keypoints[kpt_a][1]
        x_b, y_b = keypoints[kpt_b][0], keypoints[kpt_b][1]
        cv2.circle(img, (int(x_a), int(y_a)), 4, (255, 0, 0), -1)
        cv2.circle(img, (int(x_b), int(y_b)), 4, (255, 0, 0), -1)
        cv2.line(img, (int(x_a), int(y_a)), (int(x_b), int(y_b)), (0, 255, 0), 2)


def main():
    # cudnn related setting
    cudnn.benchmark = cfg.CUDNN.BENCHMARK
    torch.backends.cudnn.deterministic = cfg.CUDNN.DETERMINISTIC
    torch.backends.cudnn.enabled = cfg.CUDNN.ENABLED

    args = parse_args()
    update_config(cfg, args)

    pose_transform = transforms.Compose([
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406],
                             std=[0.229, 0.224, 0.225]),
    ])

    pose_model = eval('models.' + cfg.MODEL.NAME + '.get_pose_net')(
        cfg, is_train=False
    )

    if cfg.TEST.MODEL_FILE:
        print('=> loading model from {}'.format(cfg.TEST.MODEL_FILE))
        pose_model.load_state_dict(torch.load(cfg.TEST.MODEL_FILE), strict=False)
    else:
        print('expected model defined in config at TEST.MODEL_FILE')

    pose_model = torch.nn.DataParallel(pose_model, device_ids=cfg.GPUS)
    pose_model.cuda()
    pose_model.eval()
    if args.fp16:
        pose_model.half()

    tracks = read_tracks(args.tracks)
    os.makedirs(args.outputDir, exist_ok=True)
    vidcap = cv2.VideoCapture(args.video)
    fps = vidcap.get(cv2.CAP_PROP_FPS)
    if fps < 25:
        raise ValueError('desired fps is 25 (NBA broadcast), got {}'.format(fps))

    if args.writeBoxFrames:
        fourcc = cv2.VideoWriter_fourcc(*'mp4v')
        w = int(vidcap.get(cv2.CAP_PROP_FRAME_WIDTH))
        h = int(vidcap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        outcap = cv2.VideoWriter('{}/{}_pose.mp4'.format(args.outputDir, os.path.splitext(os.path.basename(args.video))[0]),
                                 fourcc, fps, (w, h))

    results = []
    count = 0
    t_total = 0.0
    while vidcap.isOpened():
        ret, image_bgr = vidcap.read()
        count += 1
        if not ret:
            break
        image_rgb = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2RGB)
        frame_tracks = tracks.get(count, [])
        if not frame_tracks:
            if args.writeBoxFrames:
                outcap.write(image_bgr)
            continue

        centers, scales = [], []
        for _, box in frame_tracks:
            center, scale = box_to_center_scale(box, cfg.MODEL.IMAGE_SIZE[0], cfg.MODEL.IMAGE_SIZE[1])
            centers.append(center)
            scales.append(scale)

        torch.cuda.synchronize()
        t0 = time.time()
        all_coords, all_scores = [], []
        with torch.no_grad():
            for s in range(0, len(centers), args.batch):
                coords, maxvals = get_pose_estimation_prediction(
                    pose_model, image_rgb, centers[s:s + args.batch], scales[s:s + args.batch],
                    pose_transform, args.fp16)
                all_coords.append(coords)
                all_scores.append(maxvals)
        torch.cuda.synchronize()  # include the queued kernels in the timing
        t_total += time.time() - t0

        coords = np.concatenate(all_coords)
        scores = np.concatenate(all_scores)
        for (tid, box), kpts, sc in zip(frame_tracks, coords, scores):
            results.append({'frame': count, 'track_id': tid, 'box': [*box[0], *box[1]],
                            'keypoints': kpts.tolist(), 'scores': sc[:, 0].tolist()})
            if args.writeBoxFrames:
                draw_pose(kpts, image_bgr)
        if args.writeBoxFrames:
            outcap.write(image_bgr)

    vidcap.release()
    if args.writeBoxFrames:
        outcap.release()

    out_json = os.path.join(args.outputDir, os.path.splitext(os.path.basename(args.video))[0] + '_pose.json')
    with open(out_json, 'w') as f:
        json.dump(results, f)
    print('{} poses written to {} ({:.1f} ms/frame on {})'.format(
        len(results), out_json, 1000 * t_total / max(count, 1), torch.cuda.get_device_name()))


if __name__ == '__main__':
    main()
