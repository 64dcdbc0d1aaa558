"""
Whole-body keypoint extraction for AUTSL / WLASL videos with HRNet-w48 (COCO-WholeBody, 133 kpts).
Produces one <video>_color.mp4.npy per video: (T, 133, 3) = x, y, score.

    python demo.py --video_dir ../../data/sign/train --out_dir ../../data/npy3/train --gpu 0
"""
import os
import argparse
import glob

import cv2
import numpy as np
import torch
import torch.nn as nn
import torchvision.transforms as transforms
from tqdm import tqdm

from config import cfg
from config import update_config
from utils import pose_process, plot_pose
from natsort import natsorted
import pose_hrnet

mean = (0.485, 0.456, 0.406)
std = (0.229, 0.224, 0.225)
index_mirror = np.concatenate([
    [1, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 17, 16],
    [21, 22, 23, 18, 19, 20],
    np.arange(40, 23, -1), np.arange(50, 40, -1),
    np.arange(51, 55), np.arange(59, 54, -1),
    [69, 68, 67, 66, 71, 70], [63, 62, 61, 60, 65, 64],
    np.arange(78, 71, -1), np.arange(83, 78, -1),
    [88, 87, 86, 85, 84, 91, 90, 89],
    np.arange(113, 134), np.arange(92, 113)
]) - 1
assert (index_mirror.shape[0] == 133)

multi_scales = [512, 640]


def norm_numpy_totensor(img):
    img = img.astype(np.float32) / 255.0
    for i in range(3):
        img[:, :, :, i] = (img[:, :, :, i] - mean[i]) / std[i]
    return torch.from_numpy(img).permute(0, 3, 1, 2)


def stack_flip(img):
    img_flip = cv2.flip(img, 1)
    return np.stack([img, img_flip], axis=0)


def merge_hm(hms_list):
    assert isinstance(hms_list, list)
    for hms in hms_list:
        hms[1, :, :, :] = torch.flip(hms[1, index_mirror, :, :], [2])

    hm = torch.cat(hms_list, dim=0)
    # print(hm.size(0))
    hm = torch.mean(hms, dim=0)
    return hm


def parse_args():
    parser = argparse.ArgumentParser(description='HRNet whole-body keypoints for sign videos')
    parser.add_argument('--cfg', default='wholebody_w48_384x288.yaml')
    parser.add_argument('--weights', default='hrnet_w48_coco_wholebody_384x288-6e061c6a_20200922.pth')
    parser.add_argument('--video_dir', required=True)
    parser.add_argument('--out_dir', required=True)
    parser.add_argument('--gpu', type=int, default=0, help='GPU id')
    parser.add_argument('--vis', action='store_true', help='write a visualisation video next to the npy')
    parser.add_argument('opts', nargs=argparse.REMAINDER, default=None)
    return parser.parse_args()


def main():
    args = parse_args()
    with torch.no_grad():
        config = 'wholebody_w48_384x288.yaml'
        cfg.merge_from_file(args.cfg if args.cfg else config)

        os.environ['CUDA_VISIBLE_DEVICES'] = str(args.gpu)
        torch.backends.cudnn.benchmark = True

        newmodel = pose_hrnet.get_pose_net(cfg, is_train=False)
        print(newmodel)
        checkpoint = torch.load(args.weights)

        state_dict = checkpoint['state_dict']

        for k, v in list(state_dict.items()):
            if 'backbone.' in k:
                name = k[9:]  # remove module.
                state_dict[name] = v
                del state_dict[k]
            if 'keypoint_head.' in k:
                name = k[14:]  # remove module.
                state_dict[name] = v
                del state_dict[k]

        newmodel.load_state_dict(state_dict)
        newmodel.cuda().eval()

        transform = transforms.Compose([
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ])

        input_path = args.video_dir
        paths = []
        names = []
        for root, _, fnames in natsorted(os.walk(input_path)):
            for fname in natsorted(fnames):
                path1 = os.path.join(root, fname)
                if 'depth' in fname:
                    continue
                paths.append(path1)
                names.append(fname)
        print(len(paths))
        os.makedirs(args.out_dir, exist_ok=True)

        for i, path in enumerate(tqdm(paths)):
            output_npy = os.path.join(args.out_dir, '{}.npy'.format(names[i]))
            if os.path.exists(output_npy):
                continue

            cap = cv2.VideoCapture(path)
            frame_width = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
            frame_height = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
            output_list = []

            while cap.isOpened():
                success, img = cap.read()
                if not success:
                    # If loading a video, use 'break' instead of 'continue'.
                    break
                img = cv2.resize(img, (256, 256))
                frame_height, frame_width = img.shape[:2]
                img = cv2.flip(img, flipCode=1)
                out = []
                for scale in multi_scales:
                    if scale != 512:
                        img_temp = cv2.resize(img, (scale, scale))
                    else:
                        img_temp = img
                    img_temp = stack_flip(img_temp)
                    img_temp = norm_numpy_totensor(img_temp).cuda()
                    hms = newmodel(img_temp)
                    if scale != 512:
                        out.append(torch.nn.functional.interpolate(hms, (frame_width // 4, frame_height // 4), mode='bilinear'))
                    else:
                        out.append(hms)

                out = merge_hm(out)
                result = out.reshape((133, -1))
                result = torch.argmax(result, dim=1)
                result = result.cpu().numpy().squeeze()

                y = result // (frame_width // 4)
                x = result % (frame_width // 4)
                pred = np.zeros((133, 3), dtype=np.float32)
                pred[:, 0] = x
                pred[:, 1] = y

                hm = out.cpu().numpy().reshape((133, frame_height // 4, frame_height // 4))

                pred = pose_process(pred, hm)
                pred[:, :2] *= 4.0
                assert pred.shape == (133, 3)

                output_list.append(pred)
                if args.vis:
                    img = np.asarray(img)
                    for j in range(133):
                        img = cv2.circle(img, (int(x[j]), int(y[j])), radius=2, color=(255, 0, 0), thickness=-1)
                    img = plot_pose(img, pred)
                    cv2.imwrite('out/{}.png'.format(i), img)
            output_list = np.array(output_list)
            np.save(output_npy, output_list)
            cap.release()
            torch.cuda.empty_cache()


if __name__ == '__main__':
    main()
