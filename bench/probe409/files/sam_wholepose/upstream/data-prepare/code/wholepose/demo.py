# ------------------------------------------------------------------------------
# Extract 133 whole-body keypoints per frame with HRNet-w48 (COCO-WholeBody).
# Writes one .npy of shape (T, 133, 3) per video.
# ------------------------------------------------------------------------------
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import argparse
import os
import cv2
import numpy as np
from tqdm import tqdm

import torch
import torch.backends.cudnn as cudnn
import torch.nn.parallel
import torchvision.transforms as transforms
import torch.multiprocessing

from config import cfg
from config import update_config
from utils import pose_process, plot_pose
from natsort import natsorted
from pose_hrnet import get_pose_net

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
    # assert isinstance(hms_list, list)
    for hms in hms_list:
        hms[1, :, :, :] = torch.flip(hms[1, index_mirror, :, :], [2])

    hm = torch.cat(hms_list, dim=0)
    # print(hm.size(0))
    hm = torch.mean(hms, dim=0)
    return hm


def main():
    parser = argparse.ArgumentParser(description='Train keypoints network')
    parser.add_argument('--cfg', type=str, default='wholebody_w48_384x288.yaml')
    parser.add_argument('--opts', default=None, nargs=argparse.REMAINDER)
    parser.add_argument('--modelDir', type=str, default='')
    parser.add_argument('--logDir', type=str, default='')
    parser.add_argument('--dataDir', type=str, default='')
    parser.add_argument('--prevModelDir', type=str, default='')
    parser.add_argument('--input-path', type=str, default='../../data/test')
    parser.add_argument('--output-npy-path', type=str, default='../../data/npy3')
    args = parser.parse_args()

    update_config(cfg, args)
    # cudnn related setting
    cudnn.benchmark = cfg.CUDNN.BENCHMARK
    torch.backends.cudnn.deterministic = cfg.CUDNN.DETERMINISTIC
    torch.backends.cudnn.enabled = cfg.CUDNN.ENABLED

    with torch.no_grad():
        config = cfg
        input_path = args.input_path
        output_npy = args.output_npy_path
        if not os.path.exists(output_npy):
            os.makedirs(output_npy)

        newmodel = get_pose_net(config, is_train=False)
        print(newmodel)
        checkpoint = torch.load('hrnet_w48_coco_wholebody_384x288-6e061c6a_20200922.pth')

        state_dict = checkpoint['state_dict']

        new_state_dict = OrderedDict()
        for k, v in state_dict.items():
            if 'backbone.' in k:
                name = k[9:]  # remove module.
            if 'keypoint_head.' in k:
                name = k[14:]  # remove module.
            new_state_dict[name] = v
        newmodel.load_state_dict(new_state_dict)

        newmodel.cuda().eval()

        transform = transforms.Compose([
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406],
                                 std=[0.229, 0.224, 0.225]),
        ])

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
        # paths = paths[:4]
        # names = names[:4]
        step = 600
        start_step = 6
        # paths = paths[start_step*step:(start_step+1)*step]
        # names = names[start_step*step:(start_step+1)*step]
        paths = paths[4200:]
        names = names[4200:]
        # paths = paths[::-1]
        # names = names[::-1]

        for i, path in enumerate(paths):
            # if i > 1:
            #     break
            output_list = []

            name = names[i]
            print(path)
            print(name)
            cap = cv2.VideoCapture(path)

            frame_width = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
            frame_height = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
            # frame_width = 256
            # frame_height = 256
            while cap.isOpened():
                success, img = cap.read()
                if not success:
                    # If loading a video, use 'break' instead of 'continue'.
                    break
                img = cv2.resize(img, (512, 512))
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
                # print(out.size())
                # hm, _ = torch.max(out, 1)
                # hm = hm.cpu().numpy()
                # print(hm.shape)
                # np.save('hm.npy', hm)
                result = out.reshape((133, -1))
                result = torch.argmax(result, dim=1)
                # print(result)
                result = result.cpu().numpy().squeeze()

                # print(result.shape)
                y = result // (frame_width // 4)
                x = result % (frame_width // 4)
                pred = np.zeros((133, 3), dtype=np.float32)
                pred[:, 0] = x
                pred[:, 1] = y

                hm = out.cpu().numpy().reshape((133, frame_height // 4, frame_height // 4))

                pred = pose_process(pred, hm)
                pred[:, :2] *= 4.0
                # print(pred.shape)
                assert pred.shape == (133, 3)

                # print(arg.cpu().numpy())
                # np.save('npy/{}.npy'.format(names[i]), np.array([x,y,score]).transpose())
                output_list.append(pred)
                # img = np.asarray(img)
                # for j in range(133):
                #     img = cv2.circle(img, (int(x[j]), int(y[j])), radius=2, color=(255,0,0), thickness=-1)
                # img = plot_pose(img, pred)
                # cv2.imwrite('out/{}.png'.format(names[i]), img)
            output_list = np.array(output_list)
            # print(output_list.shape)
            np.save(os.path.join(output_npy, '{}.npy'.format(names[i])), output_list)
            cap.release()
            # writer.release()
            # break


from collections import OrderedDict  # noqa: E402

if __name__ == '__main__':
    main()
