"""Evaluate a trained CSRNet checkpoint on ShanghaiTech.

Converted from val.ipynb so it can be run on the GPU box without jupyter:

    python val.py --root /data/ShanghaiTech --part A --ckpt 0model_best.pth.tar

Prints the running MAE per image and the final MAE / MSE.
"""
import argparse
import glob
import os

import h5py
import numpy as np
import PIL.Image as Image
import scipy.io as io
import torch
from matplotlib import cm as CM
from matplotlib import pyplot as plt
from torchvision import transforms
import torchvision.transforms.functional as F

from model import CSRNet

transform = transforms.Compose([
    transforms.ToTensor(), transforms.Normalize(mean=[0.485, 0.456, 0.406],
                                                std=[0.229, 0.224, 0.225]),
])


def get_args():
    parser = argparse.ArgumentParser(description='CSRNet evaluation')
    parser.add_argument('--root', default='/home/leeyh/Downloads/Shanghai/', type=str)
    parser.add_argument('--part', default='A', choices=['A', 'B'])
    parser.add_argument('--ckpt', default='0model_best.pth.tar', type=str)
    parser.add_argument('--vis', action='store_true', help='save density map pngs')
    parser.add_argument('--vis_dir', default='./vis', type=str)
    parser.add_argument('--raw_mean', action='store_true',
                        help='subtract the raw ImageNet means (x255) like the original notebook')
    return parser.parse_args()


def collect_images(root, part):
    part_train = os.path.join(root, 'part_%s_final/train_data' % part, 'images')
    part_test = os.path.join(root, 'part_%s_final/test_data' % part, 'images')
    path_sets = [part_test]
    img_paths = []
    for path in path_sets:
        for img_path in glob.glob(os.path.join(path, '*.jpg')):
            img_paths.append(img_path)
    img_paths.sort()
    print('found %d test images (train dir: %s)' % (len(img_paths), part_train))
    return img_paths


def load_image(path, raw_mean=False):
    if raw_mean:
        img = 255.0 * F.to_tensor(Image.open(path).convert('RGB'))
        img[0, :, :] = img[0, :, :] - 92.8207477031
        img[1, :, :] = img[1, :, :] - 95.2757037428
        img[2, :, :] = img[2, :, :] - 104.877445883
        return img
    return transform(Image.open(path).convert('RGB'))


def save_density(density, out_path):
    plt.figure()
    plt.imshow(density, cmap=CM.jet)
    plt.axis('off')
    plt.savefig(out_path, bbox_inches='tight', pad_inches=0)
    plt.close()


def main():
    args = get_args()
    img_paths = collect_images(args.root, args.part)

    model = CSRNet()
    model = model.cuda()
    checkpoint = torch.load(args.ckpt)
    model.load_state_dict(checkpoint['state_dict'])
    model.eval()

    if args.vis and not os.path.isdir(args.vis_dir):
        os.makedirs(args.vis_dir)

    mae = 0.0
    mse = 0.0
    with torch.no_grad():
        for i in range(len(img_paths)):
            img = load_image(img_paths[i], args.raw_mean)
            img = img.cuda()
            # img = transform(Image.open(img_paths[i]).convert('RGB')).cuda()
            gt_file = h5py.File(img_paths[i].replace('.jpg', '.h5').replace('images', 'ground_truth'), 'r')
            groundtruth = np.asarray(gt_file['density'])
            gt_file.close()
            output = model(img.unsqueeze(0))
            pred = output.detach().cpu().sum().numpy()
            diff = pred - np.sum(groundtruth)
            mae += abs(diff)
            mse += diff * diff
            print(i, mae)
            if args.vis:
                name = os.path.basename(img_paths[i]).replace('.jpg', '.png')
                save_density(output.squeeze().cpu().numpy(), os.path.join(args.vis_dir, name))

    n = len(img_paths)
    print('MAE: %.3f  MSE: %.3f' % (mae / n, np.sqrt(mse / n)))


if __name__ == '__main__':
    main()
