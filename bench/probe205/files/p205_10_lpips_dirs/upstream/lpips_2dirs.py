"""Compute LPIPS between paired images in two directories, or the mean pairwise
LPIPS inside one directory (sample diversity, as reported by BicycleGAN / MUNIT
style multimodal translation papers).

    python lpips_2dirs.py -d0 imgs/ex_dir0 -d1 imgs/ex_dir1 -o imgs/example_dists.txt --use_gpu
    python lpips_2dirs.py -d0 results/edges2shoes --diversity --use_gpu --gpu_id 1
"""
import argparse
import itertools
import os
import random

import numpy as np
import torch
import lpips

parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
parser.add_argument('-d0', '--dir0', type=str, default='./imgs/ex_dir0')
parser.add_argument('-d1', '--dir1', type=str, default='./imgs/ex_dir1')
parser.add_argument('-o', '--out', type=str, default='./imgs/example_dists.txt')
parser.add_argument('-v', '--version', type=str, default='0.1')
parser.add_argument('--net', type=str, default='alex', choices=['alex', 'vgg', 'squeeze'])
parser.add_argument('--diversity', action='store_true', help='mean pairwise distance inside dir0')
parser.add_argument('--num_pairs', type=int, default=1900, help='number of random pairs for --diversity')
parser.add_argument('--batch_size', type=int, default=16)
parser.add_argument('--use_gpu', action='store_true', help='turn on flag to use GPU')
parser.add_argument('--gpu_id', type=int, default=0, help='which GPU to run on when --use_gpu is set')
parser.add_argument('--seed', type=int, default=0)

IMG_EXTS = ('.png', '.jpg', '.jpeg', '.bmp', '.webp')


class PairDataset(torch.utils.data.Dataset):
    def __init__(self, pairs):
        self.pairs = pairs

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        p0, p1 = self.pairs[i]
        img0 = lpips.im2tensor(lpips.load_image(p0))[0]  # RGB image from [-1,1]
        img1 = lpips.im2tensor(lpips.load_image(p1))[0]
        return img0, img1, os.path.basename(p0)


def list_images(d):
    return sorted(f for f in os.listdir(d) if f.lower().endswith(IMG_EXTS))


def build_pairs(opt):
    if opt.diversity:
        files = [os.path.join(opt.dir0, f) for f in list_images(opt.dir0)]
        all_pairs = list(itertools.combinations(files, 2))
        random.Random(opt.seed).shuffle(all_pairs)
        return all_pairs[:opt.num_pairs]
    pairs = []
    for f in list_images(opt.dir0):
        if os.path.exists(os.path.join(opt.dir1, f)):
            pairs.append((os.path.join(opt.dir0, f), os.path.join(opt.dir1, f)))
    return pairs


def main():
    opt = parser.parse_args()
    torch.manual_seed(opt.seed)

    ## Initializing the model
    loss_fn = lpips.LPIPS(net=opt.net, version=opt.version)
    if opt.use_gpu:
        torch.cuda.set_device(opt.gpu_id)
        loss_fn.cuda()

    pairs = build_pairs(opt)
    if len(pairs) == 0:
        raise SystemExit('no image pairs found')
    loader = torch.utils.data.DataLoader(PairDataset(pairs), batch_size=opt.batch_size,
                                         shuffle=False, num_workers=4, pin_memory=opt.use_gpu)

    dists = []
    with open(opt.out, 'w') as f, torch.no_grad():
        for img0, img1, names in loader:
            if opt.use_gpu:
                img0 = img0.cuda()
                img1 = img1.cuda()

            # Compute distance
            d = loss_fn.forward(img0, img1).view(-1)
            for name, dist01 in zip(names, d.tolist()):
                print('%s: %.3f' % (name, dist01))
                f.writelines('%s: %.6f\n' % (name, dist01))
            dists.append(d.cpu())

    dists = torch.cat(dists).numpy()
    what = 'diversity (mean pairwise LPIPS)' if opt.diversity else 'mean paired LPIPS'
    print('%s over %d pairs: %.4f +/- %.4f' % (what, len(dists), dists.mean(), dists.std() / np.sqrt(len(dists))))
    if opt.use_gpu:
        print('peak GPU memory: %.1f MB' % (torch.cuda.max_memory_allocated() / 2**20))


if __name__ == '__main__':
    main()
